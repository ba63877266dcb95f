/* SPDX-License-Identifier: MIT */
/* Bounded JSON pull parser for hostile input (internal; not API).
 *
 * The parser reads a (buffer, length) pair that need not be NUL-terminated and never allocates.
 * A gpufit__json cursor is a flat struct: copying it by value saves the parse position, and the
 * copy can be resumed later (scenario_json.c uses this to apply "model" before other keys).
 *
 * Grammar: RFC 8259. The cursor checks the whole grammar as it goes: ':' and ',' are consumed
 * internally, so the caller only sees values, keys and container ends. A leading UTF-8 byte order
 * mark is skipped. Limits: input length <= GPUFIT__JSON_LEN_MAX, nesting depth <=
 * GPUFIT__JSON_DEPTH_MAX, number text <= GPUFIT__JSON_NUMBER_MAX bytes. Strings are checked while
 * scanning: unescaped control characters (U+0000-U+001F), unknown escapes, malformed \uXXXX and
 * unpaired surrogates are errors; other bytes (including invalid UTF-8) pass through unchanged.
 *
 * Every error is GPUFIT_E_PARSE (GPUFIT_E_INVALID_ARG for a NULL argument), reported through
 * gpufit__fail() with the byte offset where the problem was found and a message saying what was
 * expected. After an error the cursor stays failed: further calls return GPUFIT_E_PARSE.
 */
#ifndef GPUFIT_JSON_H
#define GPUFIT_JSON_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

#define GPUFIT__JSON_DEPTH_MAX  64                /* deepest accepted nesting of [ and { */
#define GPUFIT__JSON_LEN_MAX    ((size_t)1 << 24) /* longest accepted input, bytes (16 MiB) */
#define GPUFIT__JSON_NUMBER_MAX 256               /* longest accepted number text, bytes */

/* Token types returned by gpufit__json_next(). */
typedef enum gpufit__json_type {
    GPUFIT__JSON_END = 0,        /* end of input after a complete top-level value */
    GPUFIT__JSON_OBJECT = 1,     /* '{' */
    GPUFIT__JSON_OBJECT_END = 2, /* '}' */
    GPUFIT__JSON_ARRAY = 3,      /* '[' */
    GPUFIT__JSON_ARRAY_END = 4,  /* ']' */
    GPUFIT__JSON_KEY = 5,        /* an object member name (a string); its value comes next */
    GPUFIT__JSON_STRING = 6,     /* a string value */
    GPUFIT__JSON_NUMBER = 7,     /* a number (text checked against the JSON grammar) */
    GPUFIT__JSON_TRUE = 8,
    GPUFIT__JSON_FALSE = 9,
    GPUFIT__JSON_NULL = 10
} gpufit__json_type;

/* One token. text/len is the raw span inside the input buffer (not NUL-terminated):
 * strings and keys: the bytes between the quotes, escapes not decoded;
 * numbers: the number text; literals: "true", "false", "null"; punctuation: the one character;
 * END: empty (text points at the end of the input). */
typedef struct gpufit__json_token {
    int32_t type;    /* gpufit__json_type */
    int32_t escaped; /* strings and keys: 1 when the raw span contains a backslash escape */
    uint32_t depth;  /* containers open around this token (a '{' token: before it opens) */
    uint32_t reserved;
    size_t offset;    /* byte offset of the token's first byte (a string's opening quote) */
    const char *text; /* raw span (see above) */
    size_t len;       /* bytes in the raw span */
} gpufit__json_token;

/* Parser cursor. Treat the fields as private; a copy is an independent saved position. */
typedef struct gpufit__json {
    const char *buf;
    size_t len;
    size_t pos;
    int32_t state;  /* what the grammar expects next */
    int32_t failed; /* 1 after an error */
    uint32_t depth; /* open containers */
    uint32_t reserved;
    unsigned char stack[GPUFIT__JSON_DEPTH_MAX]; /* '{' or '[' per open container */
} gpufit__json;

/* Starts a cursor over buf[0, len). buf may be NULL only when len is 0. Fails when len exceeds
 * GPUFIT__JSON_LEN_MAX. */
int32_t gpufit__json_init(gpufit__json *p, const char *buf, size_t len, gpufit_error *err);

/* A parser whose next token is the value that starts at byte `offset` of buf: one that a
 * complete parse of buf found there (a reader that recorded the value's token comes back to
 * walk it). Its containers count depth from 0, and after the value it expects the end of
 * input: read the value and stop. Offsets stay those of buf. */
int32_t gpufit__json_at(gpufit__json *p, const char *buf, size_t len, size_t offset,
                        gpufit_error *err);

/* Reads the next token into *t. Returns GPUFIT_OK, or GPUFIT_E_PARSE with err filled. After the
 * complete top-level value and trailing whitespace it returns a GPUFIT__JSON_END token (again on
 * every further call); anything else after the top-level value is an error. */
int32_t gpufit__json_next(gpufit__json *p, gpufit__json_token *t, gpufit_error *err);

/* Skips the rest of the value that starts with token *first (just returned by
 * gpufit__json_next): for '{' or '[' reads up to and including the matching close; for a
 * scalar does nothing. Returns GPUFIT_OK or the parse error. */
int32_t gpufit__json_skip(gpufit__json *p, const gpufit__json_token *first, gpufit_error *err);

/* Parses the whole of buf[0, len) and reports the first error (GPUFIT_OK if valid JSON). */
int32_t gpufit__json_validate(const char *buf, size_t len, gpufit_error *err);

/* Decodes a STRING or KEY token into out (capacity cap, including the NUL terminator, which is
 * always written when cap > 0): escapes are replaced, \uXXXX (and surrogate pairs) become UTF-8,
 * other bytes are copied. *out_len (optional) receives the decoded length without the NUL, also
 * when the result is GPUFIT_E_BUFFER_TOO_SMALL (then out holds a truncated prefix). \u0000
 * decodes to a NUL byte: check out_len against strlen where that matters. */
int32_t gpufit__json_decode(
    const gpufit__json_token *t, char *out, size_t cap, size_t *out_len, gpufit_error *err);

/* Reads the next member of an object whose '{' has been read: its key into *k and the first
 * token of its value into *v. Returns 1 for a member, 0 at the object's end (the '}' in *k), or
 * the parse error (a negative status). */
int32_t gpufit__json_member(gpufit__json *p, gpufit__json_token *k, gpufit__json_token *v,
                            gpufit_error *err);

/* The fast path of the usual object member, a key and a scalar value: inside an object (after
 * its '{' or after a member), reads [,] "key" : value where the key is a string without escapes,
 * control bytes or DEL (0x7F) and the value is such a string, an integer without sign, fraction or
 * exponent, true or false, into *k and *v exactly as two gpufit__json_next calls would, and
 * returns 1. Anything else (the object's end, escapes, other numbers, null, containers, any
 * error) returns 0 and leaves the cursor as it was: read it with gpufit__json_next, which
 * also reports the errors. */
int gpufit__json_member_scalar(gpufit__json *p, gpufit__json_token *k, gpufit__json_token *v);

/* gpufit__json_member_scalar for a run of such members: reads up to max of them into k[] and
 * v[] and returns how many (0 leaves the cursor as it was; after fewer than max, the next
 * member, the object's end or an error is left to gpufit__json_next). */
size_t gpufit__json_members_scalar(gpufit__json *p,
                                   gpufit__json_token *k,
                                   gpufit__json_token *v,
                                   size_t max);

/* The fast path of a document's start: at the top level (nothing read yet but a byte order
 * mark), whitespace and '{'. Returns 1 and leaves the cursor where gpufit__json_next would
 * after reading the '{'; anything else returns 0 and leaves the cursor as it was. */
int gpufit__json_begin_top_object(gpufit__json *p);

/* The fast path of a document's end: inside the top-level object (after its '{' or after a
 * member), whitespace, its '}' and only whitespace to the end of input. Returns 1 and leaves
 * the cursor where gpufit__json_next would after reading the '}' and the end; anything else
 * returns 0 and leaves the cursor as it was. */
int gpufit__json_end_top_object(gpufit__json *p);

/* 1 when a STRING or KEY token's decoded value equals the C string lit (case-sensitive). */
int gpufit__json_equals(const gpufit__json_token *t, const char *lit);

#endif /* GPUFIT_JSON_H */
