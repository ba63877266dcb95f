/* SPDX-License-Identifier: MIT */
/* Bounded JSON pull parser for hostile input: no allocation, every read bounds-checked.
 * Grammar: RFC 8259 (https://www.rfc-editor.org/rfc/rfc8259), sections 2-7. See json.h. */
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* What the grammar expects next. */
enum {
    S_TOP = 0,   /* the top-level value */
    S_DONE,      /* only whitespace may follow */
    S_OBJ_FIRST, /* after '{': a key or '}' */
    S_OBJ_KEY,   /* after ',' in an object: a key */
    S_OBJ_COLON, /* after a key: ':' */
    S_VALUE,     /* after ':': a value */
    S_ARR_FIRST, /* after '[': a value or ']' */
    S_ARR_VALUE, /* after ',' in an array: a value */
    S_AFTER      /* after a member or element: ',' or the container's close */
};

#if defined(__GNUC__)
#define GPUFIT__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GPUFIT__PRINTF(a, b)
#endif

GPUFIT__COLD static int32_t perr(gpufit__json *p, gpufit_error *err, size_t off,
                                 const char *fmt, ...) GPUFIT__PRINTF(4, 5);

/* Reports a parse error at byte off and marks the cursor failed. */
static int32_t perr(gpufit__json *p, gpufit_error *err, size_t off, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p != NULL)
        p->failed = 1;
    return gpufit__fail(err, GPUFIT_E_PARSE, 0, (uint64_t)off, "JSON: %s at byte %zu", msg, off);
}

/* Describes the byte at off for a message: 'x', byte 0x1F, or end of input. */
GPUFIT__COLD static const char *describe(const gpufit__json *p, size_t off, char out[24])
{
    if (off >= p->len) {
        snprintf(out, 24, "end of input");
        return out;
    }
    unsigned char c = (unsigned char)p->buf[off];
    if (c >= 0x21 && c < 0x7F && c != '\'')
        snprintf(out, 24, "'%c'", (char)c);
    else
        snprintf(out, 24, "byte 0x%02X", (unsigned)c);
    return out;
}

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int hex_val(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads 4 hex digits at s[i] (s has n bytes). Returns 0 and *out, or 1 with *bad = index of the
 * first byte that is missing or not a hex digit. */
static int hex4(const char *s, size_t n, size_t i, uint32_t *out, size_t *bad)
{
    uint32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
        if (i + k >= n) {
            *bad = i + k;
            return 1;
        }
        int h = hex_val((unsigned char)s[i + k]);
        if (h < 0) {
            *bad = i + k;
            return 1;
        }
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return 0;
}

int32_t gpufit__json_init(gpufit__json *p, const char *buf, size_t len, gpufit_error *err)
{
    if (p == NULL || (buf == NULL && len != 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "JSON: NULL buffer");
    memset(p, 0, sizeof *p);
    p->buf = buf;
    p->len = len;
    p->state = S_TOP;
    if (len > GPUFIT__JSON_LEN_MAX)
        return perr(p, err, GPUFIT__JSON_LEN_MAX, "input longer than the limit of %zu bytes",
                    GPUFIT__JSON_LEN_MAX);
    /* RFC 8259 section 8.1: a parser may ignore a leading byte order mark. */
    if (len >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB &&
        (unsigned char)buf[2] == 0xBF)
        p->pos = 3;
    return GPUFIT_OK;
}

int32_t gpufit__json_at(gpufit__json *p, const char *buf, size_t len, size_t offset,
                        gpufit_error *err)
{
    int32_t st = gpufit__json_init(p, buf, len, err);
    if (st != GPUFIT_OK)
        return st;
    if (offset > len)
        return perr(p, err, len, "internal: a value offset %zu past the end", offset);
    p->pos = offset; /* state S_TOP: the next token is the value there */
    return GPUFIT_OK;
}

static void skip_ws(gpufit__json *p)
{
    while (p->pos < p->len && is_ws((unsigned char)p->buf[p->pos]))
        p->pos++;
}

static void set_tok(const gpufit__json *p,
                    gpufit__json_token *t,
                    int32_t type,
                    size_t offset,
                    size_t start,
                    size_t len)
{
    t->type = type;
    t->escaped = 0;
    t->depth = p->depth;
    t->reserved = 0;
    t->offset = offset;
    t->text = p->buf == NULL ? "" : p->buf + start;
    t->len = len;
}

static void after_value(gpufit__json *p)
{
    p->state = p->depth == 0 ? S_DONE : S_AFTER;
}

/* Scans the string whose opening quote is at p->pos. */
static int32_t scan_string(gpufit__json *p, gpufit__json_token *t, int32_t type, gpufit_error *err)
{
    const char *s = p->buf;
    size_t n = p->len, start = p->pos, i = p->pos + 1;
    int escaped = 0;
    for (;;) {
        if (i >= n)
            return perr(p, err, n, "unterminated string (opened at byte %zu): expected '\"'",
                        start);
        unsigned char c = (unsigned char)s[i];
        if (c == '"')
            break;
        if (c < 0x20)
            return perr(p, err, i, "control character 0x%02X in a string: it must be escaped",
                        (unsigned)c);
        if (c != '\\') {
            i++;
            continue;
        }
        escaped = 1;
        if (i + 1 >= n)
            return perr(p, err, n, "unterminated string (opened at byte %zu): expected '\"'",
                        start);
        unsigned char e = (unsigned char)s[i + 1];
        switch (e) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
            i += 2;
            continue;
        case 'u':
            break;
        default: {
            char d[24];
            return perr(p, err, i,
                        "invalid escape: expected one of \\\" \\\\ \\/ \\b \\f \\n "
                        "\\r \\t \\uXXXX after '\\', found %s",
                        describe(p, i + 1, d));
        }
        }
        uint32_t u = 0, lo = 0;
        size_t bad = 0;
        if (hex4(s, n, i + 2, &u, &bad))
            return perr(p, err, bad, "invalid \\u escape: expected 4 hex digits");
        if (u >= 0xDC00 && u <= 0xDFFF)
            return perr(p, err, i, "unpaired low surrogate \\u%04X", (unsigned)u);
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (i + 7 >= n || s[i + 6] != '\\' || s[i + 7] != 'u')
                return perr(p, err, i,
                            "unpaired high surrogate \\u%04X: expected a \\uDC00-\\uDFFF escape "
                            "after it",
                            (unsigned)u);
            if (hex4(s, n, i + 8, &lo, &bad))
                return perr(p, err, bad, "invalid \\u escape: expected 4 hex digits");
            if (lo < 0xDC00 || lo > 0xDFFF)
                return perr(p, err, i,
                            "unpaired high surrogate \\u%04X: expected a \\uDC00-\\uDFFF escape "
                            "after it",
                            (unsigned)u);
            i += 12;
        } else {
            i += 6;
        }
    }
    set_tok(p, t, type, start, start + 1, i - start - 1);
    t->escaped = escaped;
    p->pos = i + 1;
    return GPUFIT_OK;
}

/* Scans the number that starts at p->pos ('-' or a digit). */
static int32_t scan_number(gpufit__json *p, gpufit__json_token *t, gpufit_error *err)
{
    const char *s = p->buf;
    size_t n = p->len, start = p->pos, i = p->pos;
    char d[24];
    if (s[i] == '-')
        i++;
    if (i >= n || !is_digit((unsigned char)s[i]))
        return perr(p, err, i, "expected a digit after '-', found %s", describe(p, i, d));
    if (s[i] == '0') {
        i++;
        if (i < n && is_digit((unsigned char)s[i]))
            return perr(p, err, i, "leading zeros are not allowed in numbers");
    } else {
        while (i < n && is_digit((unsigned char)s[i]))
            i++;
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || !is_digit((unsigned char)s[i]))
            return perr(p, err, i, "expected a digit after '.', found %s", describe(p, i, d));
        while (i < n && is_digit((unsigned char)s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !is_digit((unsigned char)s[i]))
            return perr(p, err, i, "expected a digit in the exponent, found %s", describe(p, i, d));
        while (i < n && is_digit((unsigned char)s[i]))
            i++;
    }
    if (i - start > GPUFIT__JSON_NUMBER_MAX)
        return perr(p, err, start, "number longer than %d bytes", GPUFIT__JSON_NUMBER_MAX);
    set_tok(p, t, GPUFIT__JSON_NUMBER, start, start, i - start);
    p->pos = i;
    after_value(p);
    return GPUFIT_OK;
}

/* Reads a value at p->pos (whitespace already skipped). */
static int32_t read_value(gpufit__json *p, gpufit__json_token *t, gpufit_error *err)
{
    char d[24];
    size_t pos = p->pos;
    if (pos >= p->len)
        return perr(p, err, pos, "unexpected end of input: expected a value");
    unsigned char c = (unsigned char)p->buf[pos];
    switch (c) {
    case '{':
    case '[':
        if (p->depth >= GPUFIT__JSON_DEPTH_MAX)
            return perr(p, err, pos, "nesting deeper than %d levels", GPUFIT__JSON_DEPTH_MAX);
        set_tok(p, t, c == '{' ? GPUFIT__JSON_OBJECT : GPUFIT__JSON_ARRAY, pos, pos, 1);
        p->stack[p->depth++] = c;
        p->pos = pos + 1;
        p->state = c == '{' ? S_OBJ_FIRST : S_ARR_FIRST;
        return GPUFIT_OK;
    case '"': {
        int32_t st = scan_string(p, t, GPUFIT__JSON_STRING, err);
        if (st == GPUFIT_OK)
            after_value(p);
        return st;
    }
    case 't':
    case 'f':
    case 'n': {
        const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t ll = strlen(lit);
        if (p->len - pos < ll || memcmp(p->buf + pos, lit, ll) != 0)
            return perr(p, err, pos, "invalid literal: expected '%s'", lit);
        set_tok(p, t,
                c == 't'   ? GPUFIT__JSON_TRUE
                : c == 'f' ? GPUFIT__JSON_FALSE
                           : GPUFIT__JSON_NULL,
                pos, pos, ll);
        p->pos = pos + ll;
        after_value(p);
        return GPUFIT_OK;
    }
    default:
        if (c == '-' || is_digit(c))
            return scan_number(p, t, err);
        if (c == ']' && p->state == S_ARR_VALUE)
            return perr(p, err, pos, "trailing comma before ']': expected a value");
        return perr(p, err, pos, "expected a value, found %s", describe(p, pos, d));
    }
}

/* Reads the close of the innermost container at p->pos. */
static int32_t close_container(gpufit__json *p, gpufit__json_token *t)
{
    size_t pos = p->pos;
    unsigned char c = (unsigned char)p->buf[pos];
    p->depth--;
    set_tok(p, t, c == '}' ? GPUFIT__JSON_OBJECT_END : GPUFIT__JSON_ARRAY_END, pos, pos, 1);
    p->pos = pos + 1;
    after_value(p);
    return GPUFIT_OK;
}

int32_t gpufit__json_next(gpufit__json *p, gpufit__json_token *t, gpufit_error *err)
{
    char d[24];
    if (p == NULL || t == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "JSON: NULL argument");
    if (p->failed)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, (uint64_t)p->pos,
                            "JSON: parser used after an error at byte %zu", p->pos);
    for (;;) {
        skip_ws(p);
        size_t pos = p->pos;
        int at_end = pos >= p->len;
        unsigned char c = at_end ? 0 : (unsigned char)p->buf[pos];
        switch (p->state) {
        case S_DONE:
            if (!at_end)
                return perr(p, err, pos, "unexpected %s after the top-level value",
                            describe(p, pos, d));
            set_tok(p, t, GPUFIT__JSON_END, pos, pos, 0);
            return GPUFIT_OK;
        case S_TOP:
        case S_VALUE:
        case S_ARR_VALUE:
            return read_value(p, t, err);
        case S_ARR_FIRST:
            if (!at_end && c == ']')
                return close_container(p, t);
            return read_value(p, t, err);
        case S_OBJ_FIRST:
        case S_OBJ_KEY:
            if (!at_end && c == '"') {
                int32_t st = scan_string(p, t, GPUFIT__JSON_KEY, err);
                if (st == GPUFIT_OK)
                    p->state = S_OBJ_COLON;
                return st;
            }
            if (!at_end && c == '}') {
                if (p->state == S_OBJ_FIRST)
                    return close_container(p, t);
                return perr(p, err, pos, "trailing comma before '}': expected a key string");
            }
            if (at_end)
                return perr(p, err, pos, "unexpected end of input: expected a key string%s",
                            p->state == S_OBJ_FIRST ? " or '}'" : "");
            return perr(p, err, pos, "expected a key string%s, found %s",
                        p->state == S_OBJ_FIRST ? " or '}'" : "", describe(p, pos, d));
        case S_OBJ_COLON:
            if (at_end || c != ':')
                return perr(p, err, pos, "expected ':' after the key, found %s",
                            describe(p, pos, d));
            p->pos++;
            p->state = S_VALUE;
            continue;
        case S_AFTER: {
            unsigned char open = p->stack[p->depth - 1];
            unsigned char close = open == '{' ? '}' : ']';
            const char *what = open == '{' ? "an object member" : "an array element";
            if (at_end)
                return perr(p, err, pos, "unexpected end of input: expected ',' or '%c' after %s",
                            close, what);
            if (c == ',') {
                p->pos++;
                p->state = open == '{' ? S_OBJ_KEY : S_ARR_VALUE;
                continue;
            }
            if (c == close)
                return close_container(p, t);
            return perr(p, err, pos, "expected ',' or '%c' after %s, found %s", close, what,
                        describe(p, pos, d));
        }
        default:
            return perr(p, err, pos, "internal parser state %d", (int)p->state);
        }
    }
}

/* Byte classes for gpufit__json_member_scalar: bytes that end or leave a plain string (the
 * quote, a backslash, control bytes, DEL) and whitespace. */
enum { C_STOP = 1, C_WS = 2 };
static const unsigned char byte_class[256] = {
    /* 0x00-0x1F: control bytes; tab, line feed and carriage return are also whitespace */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 1, 1, 3, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* ' ', '"' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* '\\' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, /* DEL */
};

/* Whitespace from b[i]: the index of the first other byte (n at the end). */
static inline size_t ws_end(const char *b, size_t i, size_t n)
{
    while (i < n && (byte_class[(unsigned char)b[i]] & C_WS) != 0)
        i++;
    return i;
}

/* The fast path of gpufit__json_member_scalar: whitespace, then the byte at i if it is c;
 * returns the index after it, or 0 (no match: index 0 is never after a member's byte). */
static inline size_t expect_after_ws(const char *b, size_t i, size_t n, char c)
{
    if (i < n && b[i] == c) /* the usual cases: no whitespace before it, or one space */
        return i + 1;
    if (n - i >= 2 && b[i] == ' ' && b[i + 1] == c)
        return i + 2;
    i = ws_end(b, i, n);
    return i < n && b[i] == c ? i + 1 : 0;
}

/* The end of a string of plain bytes whose opening quote is at b[i - 1]: the index of its
 * closing quote, or 0 when a backslash, a control byte, DEL or the end of input comes first. */
static inline size_t plain_string_end(const char *b, size_t i, size_t n)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* eight bytes at a time while eight remain. In each byte, (b & 0x7f) + k carries into the
     * top bit iff (b & 0x7f) >= 0x80 - k, and never past it (at most 0x7f + 0x7f), so no byte
     * touches its neighbour and no sum wraps: a byte is flagged (its top bit in `stop`) exactly
     * when it is below 0x21 (control bytes and the space: byte_class's stops and whitespace),
     * the quote, the backslash or DEL; bytes >= 0x80 never are (| x), as byte_class leaves
     * them 0. */
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7fu, high = 0x8080808080808080u;
    const uint64_t ones = 0x0101010101010101u;
    for (; n - i >= 8; i += 8) {
        uint64_t x, q, bs, del;
        memcpy(&x, b + i, 8);
        q = x ^ (ones * '"'); /* a zero byte where x has the quote */
        bs = x ^ (ones * '\\');
        del = x ^ (ones * 0x7f);
        uint64_t above = ((x & low7) + ones * 0x5f) | x; /* top bit: b >= 0x21 */
        uint64_t nq = ((q & low7) + low7) | q, nb = ((bs & low7) + low7) | bs;
        uint64_t nd = ((del & low7) + low7) | del; /* top bit: the byte is not that one */
        uint64_t stop = ~(above & nq & nb & nd) & high;
        if (stop != 0) {
            size_t at = i + (size_t)(__builtin_ctzll(stop) >> 3);
            return b[at] == '"' ? at : 0;
        }
    }
#endif
    /* four bytes per bounds check while four remain (i < last: i + 4 <= n) */
    size_t last = n >= 3 ? n - 3 : 0;
    for (; i < last; i += 4) {
        if (byte_class[(unsigned char)b[i]] != 0)
            return b[i] == '"' ? i : 0;
        if (byte_class[(unsigned char)b[i + 1]] != 0)
            return b[i + 1] == '"' ? i + 1 : 0;
        if (byte_class[(unsigned char)b[i + 2]] != 0)
            return b[i + 2] == '"' ? i + 2 : 0;
        if (byte_class[(unsigned char)b[i + 3]] != 0)
            return b[i + 3] == '"' ? i + 3 : 0;
    }
    while (i < n && byte_class[(unsigned char)b[i]] == 0)
        i++;
    return i < n && b[i] == '"' ? i : 0;
}

/* One member of the usual form at b[i] (after the separator): its tokens at depth d into *k
 * and *v; returns the index after the value, or 0 when it is not of that form. */
static inline size_t plain_member(
    const char *b, size_t i, size_t n, uint32_t d, gpufit__json_token *k, gpufit__json_token *v)
{
    size_t ks = expect_after_ws(b, i, n, '"'), ke; /* the key's first byte */
    if (ks == 0 || (ke = plain_string_end(b, ks, n)) == 0)
        return 0;
    size_t vs = expect_after_ws(b, ke + 1, n, ':');
    if (vs == 0)
        return 0;
    if (vs < n && b[vs] == ' ') /* the usual ": " */
        vs++;
    if ((vs = ws_end(b, vs, n)) >= n)
        return 0;
    size_t ve = vs; /* the value's text is b[ts, ve) */
    size_t ts = vs, after;
    int32_t type;
    unsigned char c = (unsigned char)b[vs];
    if (c == '"') {
        if ((ve = plain_string_end(b, vs + 1, n)) == 0)
            return 0;
        type = GPUFIT__JSON_STRING;
        ts = vs + 1;
        after = ve + 1;
    } else if (c >= '1' && c <= '9') { /* a plain integer; other numbers take the full path */
        while (ve < n && is_digit((unsigned char)b[ve]))
            ve++;
        if (ve - vs > GPUFIT__JSON_NUMBER_MAX ||
            (ve < n && (b[ve] == '.' || b[ve] == 'e' || b[ve] == 'E')))
            return 0;
        type = GPUFIT__JSON_NUMBER;
        after = ve;
    } else if (c == 't' && n - vs >= 4 && memcmp(b + vs, "true", 4) == 0) {
        after = ve = vs + 4;
        type = GPUFIT__JSON_TRUE;
    } else if (c == 'f' && n - vs >= 5 && memcmp(b + vs, "false", 5) == 0) {
        after = ve = vs + 5;
        type = GPUFIT__JSON_FALSE;
    } else {
        return 0;
    }
    /* as gpufit__json_next gives them: the key, then the value (set_tok's fields) */
    *k = (gpufit__json_token){GPUFIT__JSON_KEY, 0, d, 0, ks - 1, b + ks, ke - ks};
    *v = (gpufit__json_token){type, 0, d, 0, vs, b + ts, ve - ts};
    return after;
}

size_t gpufit__json_members_scalar(gpufit__json *p,
                                   gpufit__json_token *k,
                                   gpufit__json_token *v,
                                   size_t max)
{
    if (p == NULL || k == NULL || v == NULL || p->failed || p->depth == 0 || p->buf == NULL ||
        p->stack[p->depth - 1] != '{' || (p->state != S_OBJ_FIRST && p->state != S_AFTER))
        return 0;
    const char *b = p->buf;
    size_t n = p->len, i = p->pos, got = 0;
    uint32_t d = p->depth;
    int first = p->state == S_OBJ_FIRST;
    /* one cursor update for the run: the locals stay in registers */
    for (; got < max; got++, first = 0) {
        size_t j = first ? i : expect_after_ws(b, i, n, ',');
        if (j == 0 || (j = plain_member(b, j, n, d, &k[got], &v[got])) == 0)
            break;
        i = j;
    }
    if (got > 0) {
        p->pos = i;
        p->state = S_AFTER;
    }
    return got;
}

int gpufit__json_member_scalar(gpufit__json *p, gpufit__json_token *k, gpufit__json_token *v)
{
    return gpufit__json_members_scalar(p, k, v, 1) == 1;
}

int gpufit__json_begin_top_object(gpufit__json *p)
{
    if (p == NULL || p->failed || p->state != S_TOP || p->depth != 0 || p->buf == NULL)
        return 0;
    size_t i = ws_end(p->buf, p->pos, p->len);
    if (i >= p->len || p->buf[i] != '{')
        return 0;
    p->stack[p->depth++] = '{'; /* read_value's '{' */
    p->pos = i + 1;
    p->state = S_OBJ_FIRST;
    return 1;
}

int gpufit__json_end_top_object(gpufit__json *p)
{
    if (p == NULL || p->failed || p->depth != 1 || p->stack[0] != '{' ||
        (p->state != S_OBJ_FIRST && p->state != S_AFTER))
        return 0;
    const char *b = p->buf;
    size_t n = p->len, i = expect_after_ws(b, p->pos, n, '}');
    if (i == 0 || ws_end(b, i, n) != n)
        return 0; /* trailing bytes: gpufit__json_next reports them */
    p->depth = 0;
    p->state = S_DONE;
    p->pos = n;
    return 1;
}

int32_t gpufit__json_skip(gpufit__json *p, const gpufit__json_token *first, gpufit_error *err)
{
    if (p == NULL || first == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "JSON: NULL argument");
    if (first->type != GPUFIT__JSON_OBJECT && first->type != GPUFIT__JSON_ARRAY)
        return GPUFIT_OK;
    /* Each iteration consumes at least one byte, so this ends within p->len iterations. */
    uint32_t level = 1;
    while (level > 0) {
        gpufit__json_token t = {0}; /* (json_next sets it; gcc -O3 -flto cannot tell) */
        int32_t st = gpufit__json_next(p, &t, err);
        if (st != GPUFIT_OK)
            return st;
        switch (t.type) {
        case GPUFIT__JSON_OBJECT:
        case GPUFIT__JSON_ARRAY:
            level++;
            break;
        case GPUFIT__JSON_OBJECT_END:
        case GPUFIT__JSON_ARRAY_END:
            level--;
            break;
        case GPUFIT__JSON_END: /* cannot happen inside a container; defensive */
            return perr(p, err, t.offset, "unexpected end of input inside a container");
        default:
            break;
        }
    }
    return GPUFIT_OK;
}

int32_t gpufit__json_validate(const char *buf, size_t len, gpufit_error *err)
{
    gpufit__json p;
    gpufit__json_token t;
    int32_t st = gpufit__json_init(&p, buf, len, err);
    while (st == GPUFIT_OK) {
        st = gpufit__json_next(&p, &t, err);
        if (st == GPUFIT_OK && t.type == GPUFIT__JSON_END)
            break;
    }
    return st;
}

/* Appends byte b at out[*n] when it fits before the terminator; always counts it. */
static void put(char *out, size_t cap, size_t *n, unsigned char b)
{
    if (*n + 1 < cap)
        out[*n] = (char)b;
    (*n)++;
}

static void put_utf8(char *out, size_t cap, size_t *n, uint32_t cp)
{
    if (cp < 0x80) {
        put(out, cap, n, (unsigned char)cp);
    } else if (cp < 0x800) {
        put(out, cap, n, (unsigned char)(0xC0 | (cp >> 6)));
        put(out, cap, n, (unsigned char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        put(out, cap, n, (unsigned char)(0xE0 | (cp >> 12)));
        put(out, cap, n, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
        put(out, cap, n, (unsigned char)(0x80 | (cp & 0x3F)));
    } else {
        put(out, cap, n, (unsigned char)(0xF0 | (cp >> 18)));
        put(out, cap, n, (unsigned char)(0x80 | ((cp >> 12) & 0x3F)));
        put(out, cap, n, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
        put(out, cap, n, (unsigned char)(0x80 | (cp & 0x3F)));
    }
}

int32_t gpufit__json_decode(
    const gpufit__json_token *t, char *out, size_t cap, size_t *out_len, gpufit_error *err)
{
    if (t == NULL || (out == NULL && cap != 0) ||
        (t->type != GPUFIT__JSON_STRING && t->type != GPUFIT__JSON_KEY) ||
        (t->text == NULL && t->len != 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "JSON: decode needs a string token and a buffer");
    const char *s = t->text;
    size_t len = t->len, n = 0, i = 0;
    size_t base = t->offset + 1; /* offset of s[0] in the input */
    if (!t->escaped) { /* the common case: the raw span is the text, copied in one go */
        while (i < len && (unsigned char)s[i] >= 0x20 && s[i] != '\\')
            i++;
        if (i == len) {
            if (cap > 0)
                memcpy(out, s, len < cap ? len : cap - 1);
            n = len;
        }
        i = i == len ? len : 0; /* else the loop below decodes (and reports) from the start */
    }
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (c != '\\') {
            if (c < 0x20)
                return perr(NULL, err, base + i, "control character 0x%02X in a string",
                            (unsigned)c);
            put(out, cap, &n, c);
            i++;
            continue;
        }
        if (i + 1 >= len)
            return perr(NULL, err, base + i, "incomplete escape at the end of a string");
        unsigned char e = (unsigned char)s[i + 1];
        unsigned char simple = 0;
        switch (e) {
        case '"':
            simple = '"';
            break;
        case '\\':
            simple = '\\';
            break;
        case '/':
            simple = '/';
            break;
        case 'b':
            simple = '\b';
            break;
        case 'f':
            simple = '\f';
            break;
        case 'n':
            simple = '\n';
            break;
        case 'r':
            simple = '\r';
            break;
        case 't':
            simple = '\t';
            break;
        case 'u':
            break;
        default:
            return perr(NULL, err, base + i, "invalid escape in a string");
        }
        if (e != 'u') {
            put(out, cap, &n, simple);
            i += 2;
            continue;
        }
        uint32_t u = 0, lo = 0;
        size_t bad = 0;
        if (hex4(s, len, i + 2, &u, &bad))
            return perr(NULL, err, base + bad, "invalid \\u escape: expected 4 hex digits");
        if (u >= 0xDC00 && u <= 0xDFFF)
            return perr(NULL, err, base + i, "unpaired low surrogate \\u%04X", (unsigned)u);
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (i + 7 >= len || s[i + 6] != '\\' || s[i + 7] != 'u' ||
                hex4(s, len, i + 8, &lo, &bad) || lo < 0xDC00 || lo > 0xDFFF)
                return perr(NULL, err, base + i, "unpaired high surrogate \\u%04X", (unsigned)u);
            put_utf8(out, cap, &n, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
            i += 12;
        } else {
            put_utf8(out, cap, &n, u);
            i += 6;
        }
    }
    if (out_len != NULL)
        *out_len = n;
    if (cap > 0)
        out[n < cap ? n : cap - 1] = '\0';
    if (n + 1 > cap)
        return gpufit__fail(err, GPUFIT_E_BUFFER_TOO_SMALL, 0, (uint64_t)t->offset,
                            "JSON: string of %zu bytes does not fit in %zu", n, cap);
    return GPUFIT_OK;
}

int32_t gpufit__json_member(gpufit__json *p, gpufit__json_token *k, gpufit__json_token *v,
                            gpufit_error *err)
{
    int32_t st = gpufit__json_next(p, k, err);
    if (st != GPUFIT_OK)
        return st;
    if (k->type == GPUFIT__JSON_OBJECT_END)
        return 0;
    if (k->type != GPUFIT__JSON_KEY) /* the caller is not at an object's members (it read a
                                        container's start without skipping it): never loop */
        return gpufit__fail(err, GPUFIT_E_INTERNAL, 0, k->offset,
                            "internal: JSON reader out of step at byte %llu",
                            (unsigned long long)k->offset);
    st = gpufit__json_next(p, v, err); /* the grammar makes a key's next token its value */
    return st != GPUFIT_OK ? st : 1;
}

int gpufit__json_equals(const gpufit__json_token *t, const char *lit)
{
    if (t == NULL || lit == NULL || (t->type != GPUFIT__JSON_STRING && t->type != GPUFIT__JSON_KEY))
        return 0;
    size_t ll = strlen(lit);
    if (!t->escaped)
        return t->len == ll && (ll == 0 || memcmp(t->text, lit, ll) == 0);
    /* Escaped: decode (a decoded string is never longer than its raw span). */
    char buf[256];
    size_t n = 0;
    if (ll >= sizeof buf || gpufit__json_decode(t, buf, sizeof buf, &n, NULL) != GPUFIT_OK)
        return 0;
    return n == ll && memcmp(buf, lit, ll) == 0;
}
