/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/core/json.c (the bounded JSON pull parser) and lib/io/scenario_json.c
 * (gpufit_apply_json). Run from the repository root: the scenario suite reads
 * ../shared/validation/public.jsonl and is skipped when that file is absent. */
#include "json.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------- */
#define MAX_TOKS 256

/* Tokenizes buf[0, n) to the end; stores the token types and returns the status. */
static int32_t tokenize(const char *buf, size_t n, int32_t *types, size_t *count, gpufit_error *err)
{
    gpufit__json p;
    gpufit__json_token t;
    size_t c = 0;
    int32_t st = gpufit__json_init(&p, buf, n, err);
    while (st == GPUFIT_OK) {
        st = gpufit__json_next(&p, &t, err);
        if (st != GPUFIT_OK)
            break;
        if (types != NULL && c < MAX_TOKS)
            types[c] = t.type;
        c++;
        if (t.type == GPUFIT__JSON_END)
            break;
    }
    if (count != NULL)
        *count = c;
    return st;
}

/* Asserts that buf[0, n) fails with GPUFIT_E_PARSE at byte `offset`. */
static void expect_parse_error_n(const char *buf, size_t n, uint64_t offset)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = tokenize(buf, n, NULL, NULL, &err);
    cr_assert_eq(st, GPUFIT_E_PARSE, "status %d for input of %zu bytes", st, n);
    cr_assert_eq(err.status, GPUFIT_E_PARSE);
    cr_assert_eq(err.offset, offset, "offset %llu, expected %llu (%s)",
                 (unsigned long long)err.offset, (unsigned long long)offset, err.message);
    cr_assert(strstr(err.message, "JSON") != NULL, "message: %s", err.message);
    cr_assert(strchr(err.message, '\n') == NULL);
}

static void expect_parse_error(const char *s, uint64_t offset)
{
    expect_parse_error_n(s, strlen(s), offset);
}

static void expect_valid(const char *s)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit__json_validate(s, strlen(s), &err);
    cr_assert_eq(st, GPUFIT_OK, "'%s': %s", s, err.message);
}

/* ---------------------------------------------------------------------------------------
 * Tokenizer: valid documents
 * ------------------------------------------------------------------------------------- */
Test(json_tokens, object_token_sequence_and_offsets)
{
    const char *s = " {\"a\": [1, -2.5e+3, true, false, null, \"x\\\"y\"], \"b\": {}} ";
    gpufit__json p;
    gpufit__json_token t;
    gpufit_error err = GPUFIT_ERROR_INIT;
    static const struct {
        int32_t type;
        size_t offset;
        const char *text;
        uint32_t depth;
    } want[] = {
        {GPUFIT__JSON_OBJECT, 1, "{", 0},        {GPUFIT__JSON_KEY, 2, "a", 1},
        {GPUFIT__JSON_ARRAY, 7, "[", 1},         {GPUFIT__JSON_NUMBER, 8, "1", 2},
        {GPUFIT__JSON_NUMBER, 11, "-2.5e+3", 2}, {GPUFIT__JSON_TRUE, 20, "true", 2},
        {GPUFIT__JSON_FALSE, 26, "false", 2},    {GPUFIT__JSON_NULL, 33, "null", 2},
        {GPUFIT__JSON_STRING, 39, "x\\\"y", 2},  {GPUFIT__JSON_ARRAY_END, 45, "]", 1},
        {GPUFIT__JSON_KEY, 48, "b", 1},          {GPUFIT__JSON_OBJECT, 53, "{", 1},
        {GPUFIT__JSON_OBJECT_END, 54, "}", 1},   {GPUFIT__JSON_OBJECT_END, 55, "}", 0},
        {GPUFIT__JSON_END, 57, "", 0},
    };
    cr_assert_eq(gpufit__json_init(&p, s, strlen(s), &err), GPUFIT_OK);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cr_assert_eq(gpufit__json_next(&p, &t, &err), GPUFIT_OK, "token %zu: %s", i, err.message);
        cr_assert_eq(t.type, want[i].type, "token %zu type %d", i, t.type);
        cr_assert_eq(t.offset, want[i].offset, "token %zu offset %zu", i, t.offset);
        cr_assert_eq(t.len, strlen(want[i].text), "token %zu len", i);
        cr_assert(memcmp(t.text, want[i].text, t.len) == 0, "token %zu text", i);
        cr_assert_eq(t.depth, want[i].depth, "token %zu depth %u", i, t.depth);
    }
    /* END repeats */
    cr_assert_eq(gpufit__json_next(&p, &t, &err), GPUFIT_OK);
    cr_assert_eq(t.type, GPUFIT__JSON_END);
}

Test(json_tokens, string_escape_flag)
{
    gpufit__json p;
    gpufit__json_token t;
    const char *s = "[\"plain\", \"esc\\n\"]";
    cr_assert_eq(gpufit__json_init(&p, s, strlen(s), NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(t.type, GPUFIT__JSON_STRING);
    cr_assert_eq(t.escaped, 0);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(t.escaped, 1);
}

Test(json_tokens, valid_documents)
{
    static const char *docs[] = {
        "{}",
        "[]",
        " \t\r\n{ } \n",
        "[[[]]]",
        "{\"a\":{\"b\":{\"c\":[]}}}",
        "0",
        "-0",
        "0.5",
        "-0.0e0",
        "1e5",
        "1E-5",
        "1.0e+10",
        "-123.456e7",
        "1e999999",
        "\"\"",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "\"\\u00e9\\u00E9\"",
        "\"\\ud83d\\ude00\"",
        "true",
        "false",
        "null",
        "[1,2,3]",
        "{\"a\":1,\"b\":[true,{\"c\":null}]}",
        "{\"\":0}",
        "{\"a\":1,\"a\":2}",
        "\"\xc3\xa9\"",
        "\"\xff\xfe invalid utf-8 passes\"",
        "\"\x7f\"",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        expect_valid(docs[i]);
}

Test(json_tokens, scalar_top_level_is_valid_json)
{
    int32_t types[MAX_TOKS];
    size_t n = 0;
    cr_assert_eq(tokenize(" 42 ", 4, types, &n, NULL), GPUFIT_OK);
    cr_assert_eq(n, 2);
    cr_assert_eq(types[0], GPUFIT__JSON_NUMBER);
    cr_assert_eq(types[1], GPUFIT__JSON_END);
}

Test(json_tokens, buffer_need_not_be_nul_terminated)
{
    /* Only the first 7 bytes are the document; what follows must never be read. */
    char buf[16];
    memcpy(buf, "{\"a\":1}garbage", 14);
    cr_assert_eq(gpufit__json_validate(buf, 7, NULL), GPUFIT_OK);
    /* A number running into the end of the buffer. */
    memcpy(buf, "[12345", 6);
    char one[1] = {'7'};
    cr_assert_eq(gpufit__json_validate(one, 1, NULL), GPUFIT_OK);
    expect_parse_error_n(buf, 6, 6);
}

Test(json_tokens, byte_order_mark_skipped)
{
    const char *s = "\xEF\xBB\xBF{\"a\":1}";
    gpufit__json p;
    gpufit__json_token t;
    cr_assert_eq(gpufit__json_init(&p, s, strlen(s), NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(t.type, GPUFIT__JSON_OBJECT);
    cr_assert_eq(t.offset, 3);
    expect_parse_error("\xEF\xBB{}", 0);
}

Test(json_tokens, depth_64_accepted)
{
    char buf[128];
    for (int i = 0; i < 64; i++) {
        buf[i] = '[';
        buf[64 + i] = ']';
    }
    cr_assert_eq(gpufit__json_validate(buf, 128, NULL), GPUFIT_OK);
}

Test(json_tokens, longest_number_accepted)
{
    char buf[GPUFIT__JSON_NUMBER_MAX];
    memset(buf, '9', sizeof buf);
    cr_assert_eq(gpufit__json_validate(buf, sizeof buf, NULL), GPUFIT_OK);
}

/* ---------------------------------------------------------------------------------------
 * Tokenizer: malformed input, each with its byte offset
 * ------------------------------------------------------------------------------------- */
Test(json_errors, truncated)
{
    expect_parse_error("", 0);
    expect_parse_error("   ", 3);
    expect_parse_error("{", 1);
    expect_parse_error("{\"a\"", 4);
    expect_parse_error("{\"a\":", 5);
    expect_parse_error("{\"a\": ", 6);
    expect_parse_error("{\"a\":1", 6);
    expect_parse_error("{\"a\":1,", 7);
    expect_parse_error("[1,2", 4);
    expect_parse_error("[", 1);
    expect_parse_error("\"abc", 4);
    expect_parse_error("\"a\\", 3);
    expect_parse_error("{\"ab", 4);
    expect_parse_error("tru", 0);
    expect_parse_error("nul", 0);
    expect_parse_error("fals", 0);
    expect_parse_error("-", 1);
    expect_parse_error("1.", 2);
    expect_parse_error("1e", 2);
    expect_parse_error("1e+", 3);
    expect_parse_error("\"\\u12", 5);
    expect_parse_error("\"\\u", 3);
}

Test(json_errors, end_of_input_message)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_validate("{\"a\":", 5, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "expected a value") != NULL, "%s", err.message);
    cr_assert_eq(gpufit__json_validate("{\"a\":1", 6, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "expected ',' or '}'") != NULL, "%s", err.message);
    cr_assert_eq(gpufit__json_validate("\"abc", 4, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "unterminated string") != NULL, "%s", err.message);
}

Test(json_errors, structure)
{
    expect_parse_error("{\"a\":1,}", 7); /* trailing comma */
    expect_parse_error("[1,]", 3);       /* trailing comma */
    expect_parse_error("[1 2]", 3);
    expect_parse_error("{\"a\" 1}", 5);
    expect_parse_error("{\"a\":1 \"b\":2}", 7);
    expect_parse_error("{1:2}", 1); /* keys are strings */
    expect_parse_error("{'a':1}", 1);
    expect_parse_error("{a:1}", 1);
    expect_parse_error("[,1]", 1);
    expect_parse_error("{,}", 1);
    expect_parse_error("{\"a\":}", 5);
    expect_parse_error("[}", 1);
    expect_parse_error("{]", 1);
    expect_parse_error("[1}", 2);
    expect_parse_error("{\"a\":1]", 6);
    expect_parse_error("]", 0);
    expect_parse_error(":", 0);
    expect_parse_error("{\"a\"::1}", 5);
    expect_parse_error("[1,,2]", 3);
}

Test(json_errors, trailing_garbage)
{
    expect_parse_error("{} x", 3);
    expect_parse_error("{}{}", 2);
    expect_parse_error("1 2", 2);
    expect_parse_error("{}]", 2);
    expect_parse_error("truex", 4);
    expect_parse_error("123abc", 3);
    expect_parse_error("{}\n\n/* comment */", 4);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_validate("{} x", 4, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "after the top-level value") != NULL, "%s", err.message);
}

Test(json_errors, numbers)
{
    expect_parse_error("01", 1); /* leading zeros */
    expect_parse_error("-01", 2);
    expect_parse_error("00", 1);
    expect_parse_error("[007]", 2);
    expect_parse_error("-a", 1);
    expect_parse_error("1.e5", 2);
    expect_parse_error(".5", 0);
    expect_parse_error("+1", 0);
    expect_parse_error("1e+x", 3);
    expect_parse_error("0x10", 1);
    expect_parse_error("NaN", 0);
    expect_parse_error("Infinity", 0);
    expect_parse_error("-Infinity", 1);
    expect_parse_error("True", 0);
    expect_parse_error("[1.5.5]", 4);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_validate("01", 2, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "leading zeros") != NULL, "%s", err.message);
}

Test(json_errors, huge_number)
{
    char buf[GPUFIT__JSON_NUMBER_MAX + 3];
    buf[0] = '[';
    memset(buf + 1, '1', GPUFIT__JSON_NUMBER_MAX + 1);
    buf[GPUFIT__JSON_NUMBER_MAX + 2] = ']';
    expect_parse_error_n(buf, sizeof buf, 1);
}

Test(json_errors, bad_escapes)
{
    expect_parse_error("\"\\x\"", 1);
    expect_parse_error("\"ab\\a\"", 3);
    expect_parse_error("\"\\U0041\"", 1);
    expect_parse_error("\"\\'\"", 1);
    expect_parse_error("\"\\0\"", 1);
    expect_parse_error("\"\\u12G4\"", 5);
    expect_parse_error("\"\\u12\"", 5);
    expect_parse_error("\"\\u-123\"", 3);
    expect_parse_error("{\"k\\q\":1}", 3); /* in a key too */
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_validate("\"\\x\"", 4, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "escape") != NULL, "%s", err.message);
}

Test(json_errors, lone_surrogates)
{
    expect_parse_error("\"\\ud800\"", 1); /* high, then the closing quote */
    expect_parse_error("\"ab\\uDBFF\"", 3);
    expect_parse_error("\"\\ud800\\u0041\"", 1);         /* high, then not a low surrogate */
    expect_parse_error("\"\\ud800\\ud800\"", 1);         /* high, high */
    expect_parse_error("\"\\udc00\"", 1);                /* lone low */
    expect_parse_error("\"\\ud83d\\ude00\\ude00\"", 13); /* a pair, then a lone low */
    expect_parse_error("\"\\ud800", 1);                  /* truncated after a high surrogate */
    expect_parse_error("\"\\ud800\\u12\"", 11);          /* bad hex in the low half */
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_validate("\"\\udc00\"", 8, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "surrogate") != NULL, "%s", err.message);
}

Test(json_errors, control_characters_in_strings)
{
    expect_parse_error("\"a\x01"
                       "b\"",
                       2);
    expect_parse_error("\"line\nbreak\"", 5);
    expect_parse_error("\"tab\there\"", 4);
    expect_parse_error("{\"k\x1f\":1}", 3);
}

Test(json_errors, nul_bytes)
{
    expect_parse_error_n("\"a\0b\"", 5, 2);    /* inside a string */
    expect_parse_error_n("{\"a\":1}\0", 8, 7); /* after the value */
    expect_parse_error_n("{\0}", 3, 1);
    expect_parse_error_n("\0", 1, 0);
    expect_parse_error_n("[1,\0]", 5, 3);
    expect_parse_error_n("[1\0]", 4, 2);
}

Test(json_errors, depth_65)
{
    char buf[130];
    for (int i = 0; i < 65; i++) {
        buf[i] = i % 2 ? '[' : '[';
        buf[65 + i] = ']';
    }
    expect_parse_error_n(buf, 130, 64);
    /* the same with objects */
    char obj[65 * 6];
    size_t n = 0;
    for (int i = 0; i < 65; i++) {
        memcpy(obj + n, "{\"a\":", 5);
        n += 5;
    }
    expect_parse_error_n(obj, n, 64 * 5);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_validate(buf, 130, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "nesting") != NULL, "%s", err.message);
}

Test(json_errors, deep_nesting_is_bounded)
{
    /* 100000 '[' fail at the 65th, without recursion. */
    size_t n = 100000;
    char *buf = malloc(n);
    cr_assert_not_null(buf);
    memset(buf, '[', n);
    expect_parse_error_n(buf, n, 64);
    free(buf);
}

Test(json_errors, input_too_long)
{
    size_t n = GPUFIT__JSON_LEN_MAX + 1;
    char *buf = malloc(n);
    cr_assert_not_null(buf);
    memset(buf, ' ', n);
    gpufit__json p;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_init(&p, buf, n, &err), GPUFIT_E_PARSE);
    cr_assert_eq(err.offset, GPUFIT__JSON_LEN_MAX);
    /* the longest accepted input is fine (whitespace only: then 'expected a value' at the end) */
    expect_parse_error_n(buf, GPUFIT__JSON_LEN_MAX, GPUFIT__JSON_LEN_MAX);
    free(buf);
}

Test(json_errors, sticky_after_error)
{
    gpufit__json p;
    gpufit__json_token t;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_init(&p, "[1,]", 4, &err), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, &err), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, &err), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, &err), GPUFIT_E_PARSE);
    cr_assert_eq(err.offset, 3);
    cr_assert_eq(gpufit__json_next(&p, &t, &err), GPUFIT_E_PARSE);
    cr_assert_eq(gpufit__json_next(&p, &t, &err), GPUFIT_E_PARSE);
}

Test(json_errors, null_arguments)
{
    gpufit__json p;
    gpufit__json_token t;
    cr_assert_eq(gpufit__json_init(NULL, "{}", 2, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit__json_init(&p, NULL, 2, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit__json_init(&p, NULL, 0, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_E_PARSE); /* empty input */
    cr_assert_eq(gpufit__json_next(NULL, &t, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit__json_skip(NULL, &t, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit__json_decode(NULL, NULL, 0, NULL, NULL), GPUFIT_E_INVALID_ARG);
}

Test(json_errors, error_struct_too_small_gets_what_fits)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    err.struct_size = 8; /* struct_size and status only */
    err.offset = 7;
    cr_assert_eq(gpufit__json_validate("[", 1, &err), GPUFIT_E_PARSE);
    cr_assert_eq(err.status, GPUFIT_E_PARSE);
    cr_assert_eq(err.offset, 7);
}

/* ---------------------------------------------------------------------------------------
 * Decoding, equality, skipping, saved cursors
 * ------------------------------------------------------------------------------------- */
static gpufit__json_token first_string(const char *s)
{
    gpufit__json p;
    gpufit__json_token t;
    cr_assert_eq(gpufit__json_init(&p, s, strlen(s), NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(t.type, GPUFIT__JSON_STRING);
    return t;
}

Test(json_decode, escapes)
{
    char out[64];
    size_t n = 0;
    gpufit__json_token t = first_string("\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\"");
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, &n, NULL), GPUFIT_OK);
    cr_assert_eq(n, 17);
    cr_assert(memcmp(out, "a\"b\\c/d\be\ff\ng\rh\ti", 18) == 0);
}

Test(json_decode, unicode_escapes_to_utf8)
{
    char out[64];
    size_t n = 0;
    gpufit__json_token t = first_string("\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\\uFFFF\"");
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, &n, NULL), GPUFIT_OK);
    const char want[] = "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbf";
    cr_assert_eq(n, sizeof want - 1);
    cr_assert(memcmp(out, want, sizeof want) == 0);
    /* U+10FFFF, the last code point */
    t = first_string("\"\\udbff\\udfff\"");
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, &n, NULL), GPUFIT_OK);
    cr_assert_eq(n, 4);
    cr_assert(memcmp(out, "\xf4\x8f\xbf\xbf", 4) == 0);
}

Test(json_decode, nul_escape_reported_by_length)
{
    char out[16];
    size_t n = 0;
    gpufit__json_token t = first_string("\"a\\u0000b\"");
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, &n, NULL), GPUFIT_OK);
    cr_assert_eq(n, 3);
    cr_assert_eq(out[1], '\0');
    cr_assert_eq(out[2], 'b');
}

Test(json_decode, raw_bytes_pass_through)
{
    char out[16];
    size_t n = 0;
    gpufit__json_token t = first_string("\"\xff\xc3\xa9\"");
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, &n, NULL), GPUFIT_OK);
    cr_assert_eq(n, 3);
    cr_assert(memcmp(out, "\xff\xc3\xa9", 4) == 0);
}

Test(json_decode, buffer_too_small)
{
    char out[4];
    size_t n = 0;
    gpufit__json_token t = first_string("\"abcdef\"");
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, &n, &err), GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(n, 6);
    cr_assert_str_eq(out, "abc");
    /* exactly fits with its NUL */
    char out7[7];
    cr_assert_eq(gpufit__json_decode(&t, out7, sizeof out7, &n, NULL), GPUFIT_OK);
    cr_assert_str_eq(out7, "abcdef");
    /* length only */
    cr_assert_eq(gpufit__json_decode(&t, NULL, 0, &n, NULL), GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(n, 6);
    /* multi-byte escape at the edge is never split past the buffer */
    t = first_string("\"ab\\u20ac\"");
    memset(out, 'x', sizeof out);
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, &n, NULL), GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(n, 5);
    cr_assert_eq(out[3], '\0');
}

Test(json_decode, rejects_forged_tokens)
{
    /* A token not produced by the tokenizer is still checked. */
    gpufit__json_token t;
    memset(&t, 0, sizeof t);
    t.type = GPUFIT__JSON_STRING;
    t.offset = 10;
    char out[16];
    gpufit_error err = GPUFIT_ERROR_INIT;
    t.text = "a\\qb";
    t.len = 4;
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, NULL, &err), GPUFIT_E_PARSE);
    cr_assert_eq(err.offset, 12);
    t.text = "ab\\";
    t.len = 3;
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, NULL, &err), GPUFIT_E_PARSE);
    t.text = "\\ud800";
    t.len = 6;
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, NULL, &err), GPUFIT_E_PARSE);
    t.text = "\\u12";
    t.len = 4;
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, NULL, &err), GPUFIT_E_PARSE);
    t.type = GPUFIT__JSON_NUMBER;
    t.text = "1";
    t.len = 1;
    cr_assert_eq(gpufit__json_decode(&t, out, sizeof out, NULL, &err), GPUFIT_E_INVALID_ARG);
}

Test(json_decode, equals)
{
    gpufit__json p;
    gpufit__json_token t;
    const char *s = "{\"model\":1,\"mod\\u0065l\":2,\"models\":3,\"\":4}";
    cr_assert_eq(gpufit__json_init(&p, s, strlen(s), NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    int want[] = {1, 1, 0};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
        cr_assert_eq(t.type, GPUFIT__JSON_KEY);
        cr_assert_eq(gpufit__json_equals(&t, "model"), want[i], "key %d", i);
        cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
        cr_assert_eq(gpufit__json_equals(&t, "model"), 0); /* a number is never equal */
    }
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_equals(&t, ""), 1);
    cr_assert_eq(gpufit__json_equals(&t, NULL), 0);
}

Test(json_cursor, skip_values)
{
    gpufit__json p;
    gpufit__json_token t;
    const char *s = "{\"a\":{\"x\":[1,{\"y\":[]}],\"z\":\"s\"},\"b\":[[],[[]]],\"c\":7}";
    cr_assert_eq(gpufit__json_init(&p, s, strlen(s), NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    const char *keys[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
        cr_assert_eq(t.type, GPUFIT__JSON_KEY);
        cr_assert(gpufit__json_equals(&t, keys[i]));
        cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
        cr_assert_eq(gpufit__json_skip(&p, &t, NULL), GPUFIT_OK);
    }
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(t.type, GPUFIT__JSON_OBJECT_END);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(t.type, GPUFIT__JSON_END);
}

Test(json_cursor, skip_reports_errors_inside)
{
    gpufit__json p;
    gpufit__json_token t;
    gpufit_error err = GPUFIT_ERROR_INIT;
    const char *s = "{\"a\":[1,{\"b\":01}]}";
    cr_assert_eq(gpufit__json_init(&p, s, strlen(s), NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_skip(&p, &t, &err), GPUFIT_E_PARSE);
    cr_assert_eq(err.offset, 14);
}

Test(json_cursor, saved_copy_resumes)
{
    gpufit__json p, saved;
    gpufit__json_token t;
    const char *s = "[1,[2,3],4]";
    cr_assert_eq(gpufit__json_init(&p, s, strlen(s), NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    saved = p;
    for (int pass = 0; pass < 2; pass++) {
        gpufit__json q = saved;
        cr_assert_eq(gpufit__json_next(&q, &t, NULL), GPUFIT_OK);
        cr_assert_eq(t.type, GPUFIT__JSON_ARRAY);
        cr_assert_eq(gpufit__json_skip(&q, &t, NULL), GPUFIT_OK);
        cr_assert_eq(gpufit__json_next(&q, &t, NULL), GPUFIT_OK);
        cr_assert_eq(t.type, GPUFIT__JSON_NUMBER);
        cr_assert_eq(t.offset, 9);
    }
}

/* ---------------------------------------------------------------------------------------
 * Scenarios through the public API (need the whole library)
 * ------------------------------------------------------------------------------------- */
typedef struct handles {
    gpufit_model *m;
    gpufit_job *j;
} handles;

static handles fresh(void)
{
    handles h = {NULL, NULL};
    cr_assert_eq(gpufit_model_new(&h.m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&h.j, NULL), GPUFIT_OK);
    return h;
}

static void release(handles h)
{
    gpufit_model_free(h.m);
    gpufit_job_free(h.j);
}

static int32_t apply(handles h, const char *json, gpufit_error *err)
{
    return gpufit_apply_json(h.m, h.j, json, strlen(json), err);
}

static int64_t job_int(handles h, int32_t p)
{
    int64_t v = -12345;
    cr_assert_eq(gpufit_job_get_int(h.j, p, &v, NULL), GPUFIT_OK, "param %d", p);
    return v;
}

static int64_t model_int(handles h, int32_t p)
{
    int64_t v = -12345;
    cr_assert_eq(gpufit_model_get_int(h.m, p, &v, NULL), GPUFIT_OK, "param %d", p);
    return v;
}

static void expect_fail(const char *json, int32_t status, uint64_t offset, const char *needle)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = apply(h, json, &err);
    cr_assert_eq(st, status, "'%s': status %d (%s), expected %d", json, st, err.message, status);
    cr_assert_eq(err.status, status);
    cr_assert_eq(err.offset, offset, "'%s': offset %llu, expected %llu (%s)", json,
                 (unsigned long long)err.offset, (unsigned long long)offset, err.message);
    if (needle != NULL)
        cr_assert(strstr(err.message, needle) != NULL, "'%s': message '%s' lacks '%s'", json,
                  err.message, needle);
    release(h);
}

Test(scenario, example_from_scenario_md)
{
    const char *s = "{\n"
                    "  \"model\": \"llama-3-70b\",\n"
                    "  \"gpu\": \"h100-sxm-80gb\",\n"
                    "  \"task\": \"pretrain\",\n"
                    "  \"precision\": \"amp_bf16\",\n"
                    "  \"optimizer\": \"adamw\",\n"
                    "  \"micro_batch\": 1, \"seq_len\": 4096, \"global_batch\": 1024,\n"
                    "  \"checkpointing\": \"selective\",\n"
                    "  \"tp\": 8, \"pp\": 4, \"dp\": 16, \"sp\": true, \"zero\": 1\n"
                    "}\n";
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(apply(h, s, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(err.status, GPUFIT_OK);
    cr_assert_str_eq(gpufit_model_name(h.m), "llama-3-70b");
    gpufit_gpu_info g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    cr_assert_eq(gpufit_gpu_by_name("h100-sxm-80gb", &g), GPUFIT_OK);
    cr_assert_eq(job_int(h, GPUFIT_JOB_GPU), g.id);
    cr_assert_eq(job_int(h, GPUFIT_JOB_TASK), GPUFIT_TASK_PRETRAIN);
    cr_assert_eq(job_int(h, GPUFIT_JOB_PRECISION), GPUFIT_PRECISION_AMP_BF16);
    cr_assert_eq(job_int(h, GPUFIT_JOB_OPTIMIZER), GPUFIT_OPT_ADAMW);
    cr_assert_eq(job_int(h, GPUFIT_JOB_MICRO_BATCH), 1);
    cr_assert_eq(job_int(h, GPUFIT_JOB_SEQ_LEN), 4096);
    cr_assert_eq(job_int(h, GPUFIT_JOB_GLOBAL_BATCH), 1024);
    cr_assert_eq(job_int(h, GPUFIT_JOB_CHECKPOINTING), GPUFIT_CKPT_SELECTIVE);
    cr_assert_eq(job_int(h, GPUFIT_JOB_TP), 8);
    cr_assert_eq(job_int(h, GPUFIT_JOB_PP), 4);
    cr_assert_eq(job_int(h, GPUFIT_JOB_DP), 16);
    cr_assert_eq(job_int(h, GPUFIT_JOB_SP), 1);
    cr_assert_eq(job_int(h, GPUFIT_JOB_ZERO), 1);
    release(h);
}

/* Reads ../shared/validation/public.jsonl; NULL (and the test skipped) when absent. */
static char *read_public(size_t *len)
{
    FILE *f = fopen("../shared/validation/public.jsonl", "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* In the JSON object line[0, n), finds the value of top-level key `name`: its span. */
static int find_member(const char *line, size_t n, const char *name, size_t *start, size_t *end)
{
    gpufit__json p;
    gpufit__json_token t;
    cr_assert_eq(gpufit__json_init(&p, line, n, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    if (t.type != GPUFIT__JSON_OBJECT)
        return 0;
    for (;;) {
        cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
        if (t.type != GPUFIT__JSON_KEY)
            return 0;
        int hit = gpufit__json_equals(&t, name);
        cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
        size_t s = t.offset;
        cr_assert_eq(gpufit__json_skip(&p, &t, NULL), GPUFIT_OK);
        if (hit) {
            *start = s;
            *end = p.pos;
            return 1;
        }
    }
}

/* The integer value of number member `name` of the object span, or -1 when absent. */
static int64_t member_int(const char *obj, size_t n, const char *name)
{
    size_t s = 0, e = 0;
    if (!find_member(obj, n, name, &s, &e))
        return -1;
    char buf[32];
    cr_assert(e - s < sizeof buf);
    memcpy(buf, obj + s, e - s);
    buf[e - s] = '\0';
    return strtoll(buf, NULL, 10);
}

Test(scenario, every_public_validation_scenario_applies)
{
    size_t len = 0;
    char *buf = read_public(&len);
    if (buf == NULL)
        cr_skip_test("../shared/validation/public.jsonl not found (run from the repo root)");
    size_t lines = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl != NULL ? (size_t)(nl - buf) : len;
        size_t n = end - pos;
        const char *line = buf + pos;
        pos = end + 1;
        if (n == 0)
            continue;
        lines++;
        size_t s = 0, e = 0;
        cr_assert(find_member(line, n, "scenario", &s, &e), "line %zu has no scenario", lines);
        const char *sc = line + s;
        size_t sn = e - s;
        handles h = fresh();
        gpufit_error err = GPUFIT_ERROR_INIT;
        /* The span is not NUL-terminated: the rest of the line follows it. */
        int32_t st = gpufit_apply_json(h.m, h.j, sc, sn, &err);
        cr_assert_eq(st, GPUFIT_OK, "line %zu: status %d at byte %llu: %s", lines, st,
                     (unsigned long long)err.offset, err.message);
        /* Spot checks against the JSON itself. */
        static const struct {
            const char *key;
            int32_t param;
        } ints[] = {{"tp", GPUFIT_JOB_TP},
                    {"pp", GPUFIT_JOB_PP},
                    {"gpus", GPUFIT_JOB_GPUS},
                    {"micro_batch", GPUFIT_JOB_MICRO_BATCH},
                    {"seq_len", GPUFIT_JOB_SEQ_LEN},
                    {"batch", GPUFIT_JOB_BATCH},
                    {"context_len", GPUFIT_JOB_CONTEXT_LEN}};
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
            int64_t want = member_int(sc, sn, ints[i].key);
            if (want >= 0)
                cr_assert_eq(job_int(h, ints[i].param), want, "line %zu: %s", lines, ints[i].key);
        }
        size_t gs = 0, ge = 0;
        if (find_member(sc, sn, "gpu", &gs, &ge) && sc[gs] == '{') {
            int64_t bytes = member_int(sc + gs, ge - gs, "memory_bytes");
            if (bytes >= 0) {
                cr_assert_eq(job_int(h, GPUFIT_JOB_GPU_MEMORY_BYTES), bytes, "line %zu", lines);
                /* a catalogue name keeps its GPU (with the capacity override); others none */
                size_t ns = 0, ne = 0;
                int named = find_member(sc + gs, ge - gs, "name", &ns, &ne);
                gpufit_gpu_info gi = {.struct_size = sizeof gi};
                char nm[96] = {0};
                if (named && ne - ns < sizeof nm + 2 && sc[gs + ns] == '"')
                    memcpy(nm, sc + gs + ns + 1, ne - ns - 2);
                int64_t want = named && gpufit_gpu_by_name(nm, &gi) == GPUFIT_OK ? gi.id : -1;
                cr_assert_eq(job_int(h, GPUFIT_JOB_GPU), want, "line %zu (%s)", lines, nm);
            }
        }
        size_t ms = 0, me = 0;
        if (find_member(sc, sn, "model", &ms, &me) && sc[ms] == '{') {
            int64_t layers = member_int(sc + ms, me - ms, "n_layers");
            if (layers >= 0)
                cr_assert_eq(model_int(h, GPUFIT_MODEL_N_LAYERS), layers, "line %zu", lines);
            int64_t hidden = member_int(sc + ms, me - ms, "hidden_size");
            if (hidden >= 0)
                cr_assert_eq(model_int(h, GPUFIT_MODEL_HIDDEN_SIZE), hidden, "line %zu", lines);
        }
        release(h);
    }
    free(buf);
    cr_assert(lines > 0, "public.jsonl is empty");
}

Test(scenario, model_applied_first_wherever_it_stands)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(apply(h, "{\"n_layers\": 16, \"model\": \"llama-3-8b\"}", &err), GPUFIT_OK, "%s",
                 err.message);
    cr_assert_str_eq(gpufit_model_name(h.m), "llama-3-8b");
    cr_assert_eq(model_int(h, GPUFIT_MODEL_N_LAYERS), 16);
    release(h);
}

Test(scenario, model_preset_with_overrides)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    /* "preset" is loaded first even when it is not the first member */
    cr_assert_eq(apply(h, "{\"model\": {\"n_layers\": 16, \"preset\": \"llama-3-8b\"}}", &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_str_eq(gpufit_model_name(h.m), "llama-3-8b");
    cr_assert_eq(model_int(h, GPUFIT_MODEL_N_LAYERS), 16);
    cr_assert(model_int(h, GPUFIT_MODEL_HIDDEN_SIZE) > 0);
    release(h);
}

Test(scenario, model_object_without_preset_starts_from_defaults)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(apply(h, "{\"model\": \"llama-3-8b\"}", &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(apply(h,
                       "{\"model\": {\"arch\": \"decoder\", \"n_layers\": 2, \"hidden_size\": 64,"
                       " \"n_heads\": 4, \"vocab_size\": 100, \"tied_embeddings\": true}}",
                       &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_str_eq(gpufit_model_name(h.m), "custom");
    cr_assert_eq(model_int(h, GPUFIT_MODEL_N_LAYERS), 2);
    cr_assert_eq(model_int(h, GPUFIT_MODEL_TIED_EMBEDDINGS), 1);
    cr_assert_eq(model_int(h, GPUFIT_MODEL_FFN_HIDDEN_SIZE), 0); /* not left from the preset */
    release(h);
}

Test(scenario, gpu_forms)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(apply(h, "{\"gpu\": {\"memory_gib\": 24}}", &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(job_int(h, GPUFIT_JOB_GPU), -1);
    cr_assert_eq(job_int(h, GPUFIT_JOB_GPU_MEMORY_BYTES), (int64_t)24 << 30);
    cr_assert_eq(
        apply(h, "{\"gpu\": {\"memory_bytes\": 16944988160, \"name\": \"Tesla P100\"}}", &err),
        GPUFIT_OK, "%s", err.message);
    cr_assert_eq(job_int(h, GPUFIT_JOB_GPU), -1);
    cr_assert_eq(job_int(h, GPUFIT_JOB_GPU_MEMORY_BYTES), 16944988160);
    cr_assert_eq(apply(h, "{\"gpu\": \"h100\"}", &err), GPUFIT_OK, "%s", err.message);
    cr_assert(job_int(h, GPUFIT_JOB_GPU) > 0);
    cr_assert_eq(job_int(h, GPUFIT_JOB_GPU_MEMORY_BYTES), 0);
    cr_assert_eq(apply(h, "{\"gpu\": {\"name\": \"a100-80gb\"}}", &err), GPUFIT_OK, "%s",
                 err.message);
    cr_assert(job_int(h, GPUFIT_JOB_GPU) > 0);
    release(h);
}

Test(scenario, duplicates_are_errors_ignored_keys_are_not)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(apply(h,
                       "{\"id\": \"x\", \"comment\": [1, {\"a\": null}], \"$schema\": \"u\","
                       " \"_note\": {\"n\": 1}, \"tp\": 8, \"model\": \"llama-3-8b\"}",
                       &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(job_int(h, GPUFIT_JOB_TP), 8);
    cr_assert_str_eq(gpufit_model_name(h.m), "llama-3-8b");
    /* a key given twice (also escaped) names both offsets and changes nothing */
    cr_assert_eq(apply(h, "{\"tp\": 2, \"t\\u0070\": 4}", &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(err.param, GPUFIT_JOB_TP);
    cr_assert_eq(err.offset, 10);
    cr_assert(strstr(err.message, "bytes 1 and 10") != NULL, "%s", err.message);
    cr_assert_eq(job_int(h, GPUFIT_JOB_TP), 8);
    release(h);
}

Test(scenario, values_as_text)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(apply(h, "{\"tp\": \"2\", \"sp\": false, \"dropout\": 1e-1, \"pp\": 2.0}", &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(job_int(h, GPUFIT_JOB_TP), 2);
    cr_assert_eq(job_int(h, GPUFIT_JOB_SP), 0);
    cr_assert_eq(job_int(h, GPUFIT_JOB_PP), 2);
    double d = 0;
    cr_assert_eq(gpufit_job_get_float(h.j, GPUFIT_JOB_DROPOUT, &d, NULL), GPUFIT_OK);
    cr_assert_float_eq(d, 0.1, 1e-12);
    release(h);
}

Test(scenario, atomic_on_error)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(apply(h, "{\"tp\": 2}", &err), GPUFIT_OK);
    cr_assert_eq(apply(h, "{\"model\": \"llama-3-8b\", \"tp\": 4, \"bogus_key\": 1}", &err),
                 GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(job_int(h, GPUFIT_JOB_TP), 2);
    cr_assert_str_eq(gpufit_model_name(h.m), "custom");
    cr_assert_eq(apply(h, "{\"tp\": 4, \"pp\": [1]}", &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(job_int(h, GPUFIT_JOB_TP), 2);
    cr_assert_eq(apply(h, "{\"tp\": 4, \"pp\": 2", &err), GPUFIT_E_PARSE); /* truncated */
    cr_assert_eq(job_int(h, GPUFIT_JOB_TP), 2);
    release(h);
}

Test(scenario, errors_with_offsets)
{
    /* top level */
    expect_fail("[1]", GPUFIT_E_PARSE, 0, "object");
    expect_fail("  42", GPUFIT_E_PARSE, 2, "object");
    expect_fail("\"tp\"", GPUFIT_E_PARSE, 0, "object");
    expect_fail("", GPUFIT_E_PARSE, 0, NULL);
    expect_fail("{\"tp\": 2} x", GPUFIT_E_PARSE, 10, NULL);
    expect_fail("{\"tp\": 2,}", GPUFIT_E_PARSE, 9, NULL);
    expect_fail("{\"tp\": 02}", GPUFIT_E_PARSE, 8, NULL);
    /* syntax errors are found before any semantic error, wherever they are */
    expect_fail("{\"bogus\": 1, \"tp\": [01]}", GPUFIT_E_PARSE, 21, NULL);
    /* keys and values */
    expect_fail("{\"tp\": 2, \"bogus\": 1}", GPUFIT_E_UNKNOWN_PARAM, 10, "bogus");
    expect_fail("{\"tp\": null}", GPUFIT_E_INVALID_ARG, 7, "tp");
    expect_fail("{\"tp\": [8]}", GPUFIT_E_INVALID_ARG, 7, "tp");
    expect_fail("{\"tp\": {\"a\": 1}}", GPUFIT_E_INVALID_ARG, 7, "tp");
    expect_fail("{\"tp\": \"many\"}", GPUFIT_E_INVALID_ARG, 7, "tp");
    expect_fail("{\"tp\": -3}", GPUFIT_E_INVALID_ARG, 7, "tp");
    expect_fail("{\"tp\": 1e999}", GPUFIT_E_INVALID_ARG, 7, "tp");
    expect_fail("{\"task\": \"dance\"}", GPUFIT_E_INVALID_ARG, 9, "task");
    expect_fail("{\"task\": \"pre\\u0000train\"}", GPUFIT_E_INVALID_ARG, 9, "task");
    expect_fail("{\"k\\nx\": 1}", GPUFIT_E_UNKNOWN_PARAM, 1, NULL);
    expect_fail("{\"model\": \"H100\\n\"}", GPUFIT_E_INVALID_ARG, 10, "control character");
    expect_fail("{\"gpu\": \"h\\t100\"}", GPUFIT_E_INVALID_ARG, 8, "control character");
    /* model */
    expect_fail("{\"model\": \"no-such-model\"}", GPUFIT_E_NOT_FOUND, 10, NULL);
    expect_fail("{\"model\": 7}", GPUFIT_E_INVALID_ARG, 10, "model");
    expect_fail("{\"model\": null}", GPUFIT_E_INVALID_ARG, 10, "model");
    expect_fail("{\"model\": {\"hf_config\": {}}}", GPUFIT_E_UNSUPPORTED, 11, "hf_config");
    expect_fail("{\"model\": {\"path\": \"m.gguf\"}}", GPUFIT_E_UNSUPPORTED, 11, "path");
    expect_fail("{\"model\": {\"preset\": 3}}", GPUFIT_E_INVALID_ARG, 21, "preset");
    expect_fail("{\"model\": {\"micro_batch\": 3}}", GPUFIT_E_INVALID_ARG, 11, "job key");
    expect_fail("{\"model\": {\"gpu\": \"h100\"}}", GPUFIT_E_INVALID_ARG, 11, "gpu");
    expect_fail("{\"model\": {\"n_layerz\": 3}}", GPUFIT_E_UNKNOWN_PARAM, 11, "model.n_layerz");
    expect_fail("{\"model\": {\"n_layers\": 0}}", GPUFIT_E_INVALID_ARG, 23, "n_layers");
    /* gpu */
    expect_fail("{\"gpu\": \"no-such-gpu\"}", GPUFIT_E_NOT_FOUND, 8, "gpu");
    expect_fail("{\"gpu\": {}}", GPUFIT_E_INVALID_ARG, 8, "gpu");
    expect_fail("{\"gpu\": {\"memory_gb\": 24}}", GPUFIT_E_UNKNOWN_PARAM, 9, "gpu.memory_gb");
    expect_fail("{\"gpu\": {\"memory_gib\": -1}}", GPUFIT_E_INVALID_ARG, 23, NULL);
    expect_fail("{\"gpu\": {\"memory_gib\": 24, \"name\": 5}}", GPUFIT_E_INVALID_ARG, 35,
                "gpu.name");
    expect_fail("{\"gpu\": [\"h100\"]}", GPUFIT_E_INVALID_ARG, 8, "gpu");
    expect_fail("{\"gpu\": {\"name\": \"no-such-gpu\"}}", GPUFIT_E_NOT_FOUND, 17, "no-such-gpu");
    expect_fail("{\"gpu\": null}", GPUFIT_E_INVALID_ARG, 8, "gpu");
}

Test(scenario, long_string_value_names_the_key)
{
    char buf[400];
    int n = snprintf(buf, sizeof buf, "{\"task\": \"%0300d\"}", 0);
    cr_assert(n > 0 && (size_t)n < sizeof buf);
    expect_fail(buf, GPUFIT_E_INVALID_ARG, 9, "task");
    /* a long key is an unknown key */
    char key[400];
    memset(key, 'k', sizeof key);
    memcpy(key, "{\"", 2);
    memcpy(key + 302, "\": 1}", 6);
    expect_fail(key, GPUFIT_E_UNKNOWN_PARAM, 1, NULL);
}

Test(scenario, long_gpu_name_truncated)
{
    char buf[400];
    int n = snprintf(buf, sizeof buf, "{\"gpu\": {\"memory_gib\": 8, \"name\": \"%s\"}}",
                     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    cr_assert(n > 0 && (size_t)n < sizeof buf);
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(apply(h, buf, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(job_int(h, GPUFIT_JOB_GPU), -1);
    release(h);
}

Test(scenario, null_arguments)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_json(NULL, h.j, "{}", 2, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_apply_json(h.m, NULL, "{}", 2, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_apply_json(h.m, h.j, NULL, 0, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_apply_json(h.m, h.j, "{}", 2, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_json(h.m, h.j, "{}", 2, &err), GPUFIT_OK);
    cr_assert_eq(err.status, GPUFIT_OK);
    cr_assert_eq(err.offset, UINT64_MAX);
    cr_assert_str_eq(err.message, "");
    release(h);
}

/* gpufit_apply_json records the members it checked (64 of them) and reads the rest live: a
 * document with more members applies the same, and duplicates across the boundary are found. */
Test(apply_json, more_members_than_recorded)
{
    char doc[4096];
    size_t n = 0;
    n += (size_t)snprintf(doc + n, sizeof doc - n, "{");
    for (int i = 0; i < 70; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n, "\"_k%d\": [%d, {\"x\": 1}], ", i, i);
    n += (size_t)snprintf(doc + n, sizeof doc - n,
                          "\"model\": \"llama-3-70b\", \"task\": \"inference\", \"framework\": "
                          "\"llamacpp\", \"gpus\": 2, \"tensor_split\": [3, 1], \"gpu\": "
                          "\"rtx-3090\"}");
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_json(m, j, doc, n, &err), GPUFIT_OK, "%s", err.message);
    double split[4] = {0};
    uint32_t got = 0;
    cr_assert_eq(gpufit_job_get_list(j, GPUFIT_JOB_TENSOR_SPLIT, split, 4, &got, NULL), GPUFIT_OK);
    cr_assert_eq(got, 2);
    cr_assert_float_eq(split[0], 3.0, 0.0);
    cr_assert_float_eq(split[1], 1.0, 0.0);
    /* a key before member 64 and again after it */
    n = 0;
    n += (size_t)snprintf(doc + n, sizeof doc - n, "{\"tp\": 2, ");
    for (int i = 0; i < 70; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n, "\"_k%d\": %d, ", i, i);
    n += (size_t)snprintf(doc + n, sizeof doc - n, "\"model\": \"llama-3-8b\", \"tp\": 4}");
    err = (gpufit_error)GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_json(m, j, doc, n, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_not_null(strstr(err.message, "duplicate key 'tp'"), "%s", err.message);
    gpufit_job_free(j);
    gpufit_model_free(m);
}
