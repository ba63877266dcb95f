/* SPDX-License-Identifier: MIT */
/* The cold path (issue 16): new handles, gpufit_apply_json, free. Its shortcuts must give what
 * the reference paths give: the generated default initialisers what the table walk writes. */
#include <criterion/criterion.h>

#include "class_sums.h"
#include "internal.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

Test(cold, model_defaults_equal_the_table_walk)
{
    static struct gpufit_model a, b;
    memset(&a, 0xA5, sizeof a); /* the copy must write every parameter byte */
    gpufit__model_defaults(&a);
    gpufit__model_defaults_walk(&b);
    cr_assert_eq(memcmp(&a, &b, offsetof(struct gpufit_model, gguf_layer_bytes)), 0);
    cr_assert_eq(a.cache_state, 0);
    cr_assert_eq(a.cache_ng, 0);
    cr_assert_eq(a.from_unknown_type, 0);
    cr_assert_str_eq(a.name, "custom");
}

/* A new model handle says its defaults do not resolve (cache_state 3), so that a document that
 * leaves the model alone does not try again (gpufit_apply_json). */
Test(cold, a_new_model_does_not_resolve)
{
    static struct gpufit_model a;
    gpufit__shape s;
    gpufit__model_defaults(&a);
    cr_assert_neq(gpufit__model_resolve(&a, &s, NULL), GPUFIT_OK);
    gpufit_model *m = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(m->cache_state, 3);
    gpufit__model_refresh(m);
    cr_assert_eq(m->cache_state, 3);
    gpufit_model_free(m);
}

Test(cold, job_defaults_equal_the_table_walk)
{
    static struct gpufit_job a, b;
    memset(&a, 0xA5, sizeof a);
    gpufit__job_defaults(&a);
    gpufit__job_defaults_walk(&b);
    cr_assert_eq(memcmp(&a, &b, offsetof(struct gpufit_job, plan)), 0); /* the plan is stale */
    cr_assert_eq(a.plan_state, 0);
}

Test(cold, every_default_reads_back_as_the_table_says)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info info = {.struct_size = sizeof info};
        cr_assert_eq(gpufit_param_get_info(p, &info), GPUFIT_OK);
        if (info.type == GPUFIT_TYPE_LIST)
            continue;
        double d = 0.0;
        int32_t st = info.domain == GPUFIT_DOMAIN_MODEL ? gpufit_model_get_float(m, p, &d, NULL)
                                                        : gpufit_job_get_float(j, p, &d, NULL);
        cr_assert_eq(st, GPUFIT_OK, "%s", info.name);
        cr_assert_eq(d, info.default_float, "%s: %g, the table says %g", info.name, d,
                     info.default_float);
    }
    gpufit_model_free(m);
    gpufit_job_free(j);
}

/* Every preset's generated record (lib/model/preset_record.inc) is the cache derived from it:
 * a field tools/gen_index.c does not print, or a stale file, fails here. */
Test(cold, preset_records_equal_the_derived_caches)
{
    static struct gpufit_model a, b;
    const char *name;
    for (size_t i = 0; gpufit__preset_get(i, NULL, &name, NULL, NULL) == GPUFIT_OK; i++) {
        memset(&a, 0xA5, sizeof a); /* the same bytes where neither writes */
        cr_assert_eq(gpufit__preset_get(i, &a, NULL, NULL, NULL), GPUFIT_OK);
        cr_assert_eq(a.cache_state, 2, "%s", name);
        a.cache_state = 0;
        gpufit__model_refresh(&a); /* derived */
        cr_assert_eq(a.cache_state, 1, "%s", name);
        memset(&b, 0xA5, sizeof b);
        cr_assert_eq(gpufit__preset_load(&b, name, strlen(name), NULL), GPUFIT_OK, "%s", name);
        cr_assert_eq(b.cache_state, 2, "%s", name);
        gpufit__model_refresh(&b); /* copied from the record */
        cr_assert_eq(b.cache_state, 1, "%s", name);
        cr_assert_eq(memcmp(&a, &b, offsetof(struct gpufit_model, cache_groups)), 0, "%s", name);
        cr_assert_eq(memcmp(a.cache_groups, b.cache_groups, a.cache_ng * sizeof a.cache_groups[0]),
                     0, "%s", name);
        /* the class sums the evaluation reads (the record leaves the others unwritten) */
        cr_assert_eq(class_sums_differ(&a.cache_shape, &a.cache_agg, &b.cache_agg), -1, "%s",
                     name);
        cr_assert_eq(a.from_unknown_type, b.from_unknown_type, "%s", name);
    }
}

/* The class sums a preset's record leaves unwritten (layer classes outside [w_first, w_end), the
 * vision side of a model without one) are read by nothing: every preset, under jobs that take
 * the closed forms, the tensor walk, the block rests, Megatron's dummies and a server, gives
 * the same report with those bytes poisoned. */
Test(cold, unwritten_class_sums_are_not_read)
{
    static const char *const jobs[] = {
        "task=inference gpu=rtx-4090 context_len=4096",
        ("task=pretrain gpu=h100 tp=2 pp=2 dp=2 zero=1 precision=bf16 framework=megatron "
         "seq_len=2048 global_batch=16"),
        "task=qlora gpu=a100-80gb precision=bf16 seq_len=1024",
        "task=finetune gpu=h100 precision=bf16 zero=3 dp=8 framework=deepspeed seq_len=2048",
        "task=inference gpu=h100 framework=vllm context_len=8192",
    };
    static char ja[1 << 16], jb[1 << 16];
    const char *name;
    for (size_t i = 0; gpufit__preset_get(i, NULL, &name, NULL, NULL) == GPUFIT_OK; i++) {
        for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
            char spec[512];
            snprintf(spec, sizeof spec, "model=%s %s", name, jobs[k]);
            gpufit_model *m = NULL;
            gpufit_job *j = NULL;
            cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
            cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
            cr_assert_eq(gpufit_apply_spec(m, j, spec, NULL), GPUFIT_OK, "%s", spec);
            size_t la = 0, lb = 0;
            gpufit_result *r = NULL;
            int32_t sa = gpufit_evaluate(&r, m, j, NULL);
            if (sa == GPUFIT_OK)
                cr_assert_eq(gpufit_result_to_json(r, ja, sizeof ja, &la, NULL), GPUFIT_OK);
            gpufit_result_free(r);
            const gpufit__shape *s = &m->cache_shape;
            for (int w = 0; w < GPUFIT__W_COUNT; w++)
                if (w < s->w_first || w >= s->w_end)
                    memset(&m->cache_agg.layer[w], 0x5A, sizeof m->cache_agg.layer[w]);
            if (s->v_layers == 0)
                memset(&m->cache_agg.glob[3], 0x5A, sizeof m->cache_agg.glob[3]);
            r = NULL;
            cr_assert_eq(gpufit_evaluate(&r, m, j, NULL), sa, "%s", spec);
            if (sa == GPUFIT_OK) {
                cr_assert_eq(gpufit_result_to_json(r, jb, sizeof jb, &lb, NULL), GPUFIT_OK);
                cr_assert(la == lb && memcmp(ja, jb, la) == 0, "%s", spec);
            }
            gpufit_result_free(r);
            gpufit_model_free(m);
            gpufit_job_free(j);
        }
    }
}

/* A row without a record: the cache is derived. */
Test(cold, a_record_of_another_preset_is_not_used)
{
    static struct gpufit_model m;
    cr_assert_eq(gpufit__preset_load(&m, "gpt2", 4, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__preset_record_fill(&m, 1000000), 0); /* no such row */
    m.cache_ng = 1000000;
    gpufit__model_refresh(&m); /* then the cache is derived */
    cr_assert_eq(m.cache_state, 1);
    cr_assert_eq(m.cache_counts.total, 124439808); /* gpt2 */
}

/* ---- gpufit__bytes_eq: equal to memcmp on every length and every differing position ---- */
Test(cold, bytes_eq_agrees_with_memcmp)
{
    char a[48], b[48];
    for (size_t n = 0; n <= 40; n++) {
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = (char)('a' + (i * 7) % 26);
        cr_assert(gpufit__bytes_eq(a, b, n), "n=%zu", n);
        for (size_t d = 0; d < n; d++) { /* one byte differs, including high bytes */
            b[d] = (char)0xC3;
            cr_assert_eq(gpufit__bytes_eq(a, b, n), memcmp(a, b, n) == 0, "n=%zu d=%zu", n, d);
            b[d] = a[d];
        }
    }
}

/* ---- the parameter names through the generated hash table ---- */
static void agree(const char *name, size_t len)
{
    cr_assert_eq(gpufit__param_find_name(name, len), gpufit__param_find_name_linear(name, len),
                 "'%.*s'", (int)len, name);
}

Test(cold, hashed_name_lookup_equals_the_linear_scan)
{
    char buf[512];
    for (size_t i = 0; gpufit__param_at(i) != NULL; i++) {
        const gpufit__param_entry *e = gpufit__param_at(i);
        size_t n = strlen(e->name);
        cr_assert_eq(gpufit__param_find_name(e->name, n), e, "%s", e->name);
        /* keys that differ only in case, by one byte, or by length are other keys (or none) */
        memcpy(buf, e->name, n);
        for (size_t k = 0; k < n; k++) {
            char c = buf[k];
            buf[k] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
            agree(buf, n);
            buf[k] = (char)(c ^ 1);
            agree(buf, n);
            buf[k] = (char)0xE9; /* a non-ASCII byte */
            agree(buf, n);
            buf[k] = c;
        }
        agree(e->name, n - 1);
        memcpy(buf + n, "_x", 2);
        agree(buf, n + 2);
        for (const char *a = e->aliases; a != NULL && *a != '\0';) { /* every alias */
            size_t an = strcspn(a, " ");
            cr_assert_eq(gpufit__param_find_name(a, an), e, "alias %.*s", (int)an, a);
            a += an;
            a += strspn(a, " ");
        }
    }
    agree("", 0);
    memset(buf, 't', sizeof buf); /* very long keys */
    for (size_t n = 1; n <= sizeof buf; n *= 2)
        agree(buf, n);
}

/* ---- gpufit_apply_json: keys and values read in place must report as the decoder does ---- */
typedef struct json_case {
    const char *json;
    int32_t status;
    uint64_t offset;
    const char *message; /* NULL: the scenario applies */
} json_case;

static void check_json(const json_case *c, size_t len)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    int32_t st = gpufit_apply_json(m, j, c->json, len, &err);
    cr_assert_eq(st, c->status, "%s: %d (%s)", c->json, st, err.message);
    if (c->message != NULL) {
        cr_assert_eq(err.offset, c->offset, "%s: offset %llu", c->json,
                     (unsigned long long)err.offset);
        cr_assert_str_eq(err.message, c->message, "%s", c->json);
    }
    gpufit_model_free(m);
    gpufit_job_free(j);
}

Test(cold, json_keys_and_values_in_place_or_decoded)
{
    static const json_case cases[] = {
        {"{\"t\\u0070\": 2}", GPUFIT_OK, 0, NULL}, /* an escaped key is the same key */
        {"{\"\\u0074p\": 2, \"task\": \"pre\\u0074rain\"}", GPUFIT_OK, 0, NULL},
        {"{\"tp\": 2, \"t\\u0070\": 2}", GPUFIT_E_INVALID_ARG, 10,
         "duplicate key 'tp' (at bytes 1 and 10; 'tp' the second time): give each key once"},
        {"{\"TP\": 2}", GPUFIT_E_UNKNOWN_PARAM, 1,
         "unknown key 'TP' (see 'gpufit params' and scenario.md); did you mean 'etp'?"},
        {"{\"Task\": \"pretrain\"}", GPUFIT_E_UNKNOWN_PARAM, 1,
         "unknown key 'Task' (see 'gpufit params' and scenario.md)"},
        {"{\"t\x7fp\": 2}", GPUFIT_E_UNKNOWN_PARAM, 1,
         "unknown key 't?p' (it contains a control character)"},
        {"{\"task\": \"pre\x7f\"}", GPUFIT_E_INVALID_ARG, 9,
         "value of 'task' contains a control character"},
        {"{\"task\": \"pre\\u0000train\"}", GPUFIT_E_INVALID_ARG, 9,
         "value of 'task' contains a control character"},
        {"{\"task\": \"pretrain\\n\"}", GPUFIT_E_INVALID_ARG, 9,
         "value of 'task' contains a control character"},
        {"{\"ta\\ud83d\\ude00sk\": 1}", GPUFIT_E_UNKNOWN_PARAM, 1,
         "unknown key 'ta\xf0\x9f\x98\x80sk' (see 'gpufit params' and scenario.md)"},
        {"{\"tp\xc3\xa9\": 2}", GPUFIT_E_UNKNOWN_PARAM, 1,
         "unknown key 'tp\xc3\xa9' (see 'gpufit params' and scenario.md)"},
        {"{\"t\xffp\": 2}", GPUFIT_E_UNKNOWN_PARAM, 1,
         "unknown key 't\xffp' (see 'gpufit params' and scenario.md); did you mean 'tp'?"},
        {"{\"mod", GPUFIT_E_PARSE, 5,
         "JSON: unterminated string (opened at byte 1): expected '\"' at byte 5"},
        {"{\"model\": \"lla", GPUFIT_E_PARSE, 14,
         "JSON: unterminated string (opened at byte 10): expected '\"' at byte 14"},
        {"{\"task\": \"\\x\"}", GPUFIT_E_PARSE, 10,
         "JSON: invalid escape: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX after "
         "'\\', found 'x' at byte 10"},
        {"{\"model\": {\"preset\": \"llama-3-8b\", \"name\": \"mine\"}, \"gpu\": \"H100\", "
         "\"precision\": \"BF16\", \"sp\": true, \"tp\": 2.0}",
         GPUFIT_OK, 0, NULL},
        {"{\"model\": {\"model\": 1}}", GPUFIT_E_INVALID_ARG, 11,
         "'model.model' is not a model key: put it at the top level"},
        {"{\"model\": {\"gpu\": 1}}", GPUFIT_E_INVALID_ARG, 11,
         "'model.gpu' is not a model key: put it at the top level"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_json(&cases[i], strlen(cases[i].json));
}

Test(cold, json_long_keys_and_values)
{
    static char doc[4096];
    /* a key of KEY_MAX (128) bytes is read (and unknown); one more byte is too long, also when
     * its escapes decode to that many */
    for (int n = 127; n <= 129; n++) {
        int w = snprintf(doc, sizeof doc, "{\"%0*d\": 1}", n, 0);
        json_case c = {doc, GPUFIT_E_UNKNOWN_PARAM, 1, NULL};
        check_json(&c, (size_t)w);
    }
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model_new(&m, NULL);
    gpufit_job_new(&j, NULL);
    int w = snprintf(doc, sizeof doc, "{\"%0*d\": 1}", 129, 0);
    gpufit_apply_json(m, j, doc, (size_t)w, &err);
    cr_assert(strstr(err.message, "(longer than 128 bytes)") != NULL, "%s", err.message);
    size_t o = 0;
    o += (size_t)snprintf(doc, sizeof doc, "{\"");
    for (int k = 0; k < 130; k++)
        o += (size_t)snprintf(doc + o, sizeof doc - o, "\\u0061");
    o += (size_t)snprintf(doc + o, sizeof doc - o, "\": 1}");
    gpufit_apply_json(m, j, doc, o, &err);
    cr_assert(strstr(err.message, "(longer than 128 bytes)") != NULL, "%s", err.message);
    /* values: 1024 bytes are read, 1025 are too long */
    for (int n = 1024; n <= 1025; n++) {
        w = snprintf(doc, sizeof doc, "{\"task\": \"%0*d\"}", n, 0);
        err = (gpufit_error)GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_apply_json(m, j, doc, (size_t)w, &err), GPUFIT_E_INVALID_ARG);
        cr_assert_eq(err.offset, 9);
        cr_assert_eq(strstr(err.message, "is longer than 1024 bytes") != NULL, n == 1025, "%s",
                     err.message);
    }
    /* a document cut anywhere inside a string value or key is a parse error, never a read
     * past the length */
    static const char full[] = "{\"model\": \"llama-3-8b\", \"task\": \"inference\"}";
    for (size_t cut = 1; cut < sizeof full - 1; cut++) {
        err = (gpufit_error)GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_apply_json(m, j, full, cut, &err), GPUFIT_E_PARSE, "cut %zu", cut);
        cr_assert_leq(err.offset, cut);
    }
    gpufit_model_free(m);
    gpufit_job_free(j);
}

/* check_applies compares fields by the offsets in its own table: they must be the table's */
Test(cold, applies_rows_name_their_fields)
{
    cr_assert(gpufit__applies_consistent());
}

/* gpufit__name_hash_find over a small hand-built table: hits, misses, a full probe cycle, and
 * a table whose size is not a power of two */
Test(cold, name_hash_find_probes_and_stops)
{
    static const gpufit__name_row rows[] = {{"ab", 2, 7}, {"ba", 2, 9}, {"abc", 3, 11}};
    uint16_t slots[8] = {0};
    for (uint16_t i = 0; i < 3; i++) { /* as tools/gen_index.c fills it */
        size_t h = gpufit__name_hash(rows[i].name, rows[i].len) & 7;
        while (slots[h] != 0)
            h = (h + 1) & 7;
        slots[h] = (uint16_t)(i + 1);
    }
    cr_assert_eq(gpufit__name_hash_find(rows, 3, slots, 8, "ab", 2), 7);
    cr_assert_eq(gpufit__name_hash_find(rows, 3, slots, 8, "ba", 2), 9);
    cr_assert_eq(gpufit__name_hash_find(rows, 3, slots, 8, "abc", 3), 11);
    cr_assert_eq(gpufit__name_hash_find(rows, 3, slots, 8, "AB", 2), -1); /* exact case */
    cr_assert_eq(gpufit__name_hash_find(rows, 3, slots, 8, "a", 1), -1);
    cr_assert_eq(gpufit__name_hash_find(rows, 3, slots, 8, "", 0), -1);
    cr_assert_eq(gpufit__name_hash_find(rows, 3, slots, 6, "ab", 2), -1);
    /* every slot taken by keys of another length: the probe ends after one cycle */
    uint16_t full[4] = {3, 3, 3, 3};
    cr_assert_eq(gpufit__name_hash_find(rows, 3, full, 4, "zz", 2), -1);
    /* a slot past the rows (a stale table) ends the probe */
    uint16_t stale[4] = {9, 9, 9, 9};
    cr_assert_eq(gpufit__name_hash_find(rows, 3, stale, 4, "ab", 2), -1);
}

/* a key given twice, or both capacity keys, is reported with both offsets whatever the slot
 * (the seen bits, not zeroed offsets, say which were given); offset 0 is an offset */
Test(cold, duplicates_in_every_slot)
{
    for (size_t i = 0; gpufit__param_at(i) != NULL; i++) {
        const gpufit__param_entry *e = gpufit__param_at(i);
        size_t n = strlen(e->name);
        gpufit__doc_keys d;
        memset(&d, 0xA5, sizeof d); /* only the init may matter */
        gpufit__doc_keys_init(&d);
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit__doc_key(&d, e->name, n, 0, &err), GPUFIT_OK, "%s", e->name);
        cr_assert_eq(gpufit__doc_key(&d, e->name, n, 9, &err), GPUFIT_E_INVALID_ARG, "%s",
                     e->name);
        cr_assert(strstr(err.message, "(at bytes 0 and 9;") != NULL, "%s: %s", e->name,
                  err.message);
    }
    gpufit__doc_keys d;
    gpufit__doc_keys_init(&d);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__doc_key(&d, "model", 5, 3, &err), GPUFIT_OK);
    cr_assert_eq(gpufit__doc_key(&d, "gpu_memory_gib", 14, 20, &err), GPUFIT_OK);
    cr_assert_eq(gpufit__doc_key(&d, "gpu_memory_bytes", 16, 40, &err), GPUFIT_E_INCONSISTENT);
    cr_assert_str_eq(err.message, "'gpu_memory_gib' (byte 20) and 'gpu_memory_bytes' (byte 40) "
                                  "both set the GPU capacity: give one of them");
    cr_assert_eq(gpufit__doc_key(&d, "model", 5, 50, &err), GPUFIT_E_INVALID_ARG);
    cr_assert(strstr(err.message, "'model' (at bytes 3 and 50;") != NULL, "%s", err.message);
    cr_assert_eq(gpufit__doc_key(&d, "bogus", 5, 60, &err), GPUFIT_OK); /* unknown: passes */
}

/* ---- gpufit__json_member_scalar: the same tokens as two gpufit__json_next calls, or 0 with
 * the cursor untouched ---- */
#include "json.h"

static int same_token(const gpufit__json_token *a, const gpufit__json_token *b)
{
    return a->type == b->type && a->escaped == b->escaped && a->depth == b->depth &&
           a->offset == b->offset && a->len == b->len && a->text == b->text;
}

/* Reads doc (len bytes) member by member both ways and compares; returns how many members the
 * fast path read. Stops at the first member the fast path leaves to the full path. */
static int walk_both(const char *doc, size_t len)
{
    gpufit__json p, q;
    gpufit__json_token t, k, v, k2, v2;
    if (gpufit__json_init(&p, doc, len, NULL) != GPUFIT_OK ||
        gpufit__json_next(&p, &t, NULL) != GPUFIT_OK || t.type != GPUFIT__JSON_OBJECT)
        return -1;
    int fast = 0;
    for (;;) {
        q = p;
        if (!gpufit__json_member_scalar(&p, &k, &v)) {
            cr_assert_eq(memcmp(&p, &q, sizeof p), 0, "%s: the cursor moved", doc);
            return fast;
        }
        fast++;
        cr_assert_eq(gpufit__json_next(&q, &k2, NULL), GPUFIT_OK, "%s", doc);
        cr_assert_eq(gpufit__json_next(&q, &v2, NULL), GPUFIT_OK, "%s", doc);
        cr_assert(same_token(&k, &k2) && same_token(&v, &v2), "%s: member %d", doc, fast);
        cr_assert_eq(p.pos, q.pos, "%s", doc);
        cr_assert_eq(p.state, q.state, "%s", doc);
        cr_assert_eq(p.depth, q.depth, "%s", doc);
    }
}

Test(cold, member_scalar_equals_json_next)
{
    static const struct {
        const char *doc;
        int fast; /* members the fast path reads before it leaves the rest */
    } cases[] = {
        {"{\"a\": \"x\", \"bb\" :\t12 ,\n\"c\":true,\"d\": false}", 4},
        {"{ \"tp\": 8, \"pp\": 4}", 2},
        {"{}", 0},
        {"{\"a\": 1,}", 1},                    /* trailing comma: the full path reports it */
        {"{\"a\": -1}", 0},                    /* negative numbers */
        {"{\"a\": 1.5}", 0},                   /* fractions */
        {"{\"a\": 1e3}", 0},                   /* exponents */
        {"{\"a\": 0}", 0},                     /* zero (and leading zeros) */
        {"{\"a\": 012}", 0},
        {"{\"a\": null}", 0},
        {"{\"a\": [1]}", 0},
        {"{\"a\": {\"b\": 1}}", 0},
        {"{\"a\\u0062\": 1}", 0},              /* an escaped key */
        {"{\"a\": \"x\\ny\"}", 0},             /* an escaped value */
        {"{\"a\x7f\": 1}", 0},                 /* DEL in a key */
        {"{\"a\": \"\x7f\"}", 0},              /* DEL in a value */
        {"{\"a\": \"x\x01\"}", 0},             /* a raw control byte */
        {"{\"a\" 1}", 0},                      /* no colon */
        {"{\"a\": 1 \"b\": 2}", 1},            /* no comma: left to the full path */
        {"{\"a\": tru}", 0},
        {"{\"a\": truex}", 1},                 /* the literal, then the full path's error */
        {"{\"a\": 12x}", 1},
        {"{\"\xc3\xa9\": \"\xff\"}", 1},       /* non-ASCII and invalid UTF-8 pass through */
        {"{\"a\": \"b\"", 1},                  /* truncated after a member */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(walk_both(cases[i].doc, strlen(cases[i].doc)), cases[i].fast, "%s",
                     cases[i].doc);
    /* every truncation of a document: never a read past the length, never a token the full
     * path would not give */
    static const char full[] = "{\"model\": \"llama-3-8b\", \"tp\": 8, \"sp\": true, \"x\": false}";
    for (size_t cut = 1; cut < sizeof full; cut++)
        walk_both(full, cut);
    /* a number longer than the tokenizer's limit is left to the full path (which refuses it) */
    static char big[GPUFIT__JSON_NUMBER_MAX + 32];
    size_t o = (size_t)snprintf(big, sizeof big, "{\"a\": ");
    for (int d = 0; d <= GPUFIT__JSON_NUMBER_MAX; d++)
        big[o++] = '1';
    big[o++] = '}';
    cr_assert_eq(walk_both(big, o), 0);
    /* outside an object, or on a failed cursor: 0 */
    gpufit__json p;
    gpufit__json_token k, v;
    cr_assert_eq(gpufit__json_init(&p, "[\"a\", 1]", 8, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_member_scalar(&p, &k, &v), 0);
    cr_assert_eq(gpufit__json_next(&p, &k, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_member_scalar(&p, &k, &v), 0);
}

/* Every byte value at every position of a 20-byte key and of a 20-byte string value (the
 * string scan's eight-byte steps and its tail): the fast path reads the member exactly when
 * the byte is one a plain string may hold (not below 0x21, the quote, the backslash or DEL),
 * and then gives the full path's tokens (walk_both). A quote inside the value ends it there. */
Test(cold, member_scalar_string_scan_every_byte)
{
    char doc[64];
    for (int c = 0; c < 256; c++) {
        int plain = c >= 0x21 && c != '"' && c != '\\' && c != 0x7f;
        for (int pos = 0; pos < 20; pos++) {
            char s[21];
            memset(s, 'a', 20);
            s[20] = '\0';
            s[pos] = (char)c;
            size_t n = 0;
            doc[n++] = '{';
            doc[n++] = '"';
            memcpy(doc + n, s, 20);
            n += 20;
            memcpy(doc + n, "\": 1}", 5);
            n += 5;
            cr_assert_eq(walk_both(doc, n), plain, "key byte 0x%02x at %d", c, pos);
            n = 0;
            memcpy(doc + n, "{\"k\": \"", 7);
            n += 7;
            memcpy(doc + n, s, 20);
            n += 20;
            memcpy(doc + n, "\"}", 2);
            n += 2;
            cr_assert_eq(walk_both(doc, n), plain || c == '"', "value byte 0x%02x at %d", c, pos);
        }
    }
}

/* Reads doc's members with gpufit__json_members_scalar (runs of at most max) and one by one
 * with gpufit__json_member_scalar: the same tokens and the same cursor after each run. */
static size_t batch_both(const char *doc, size_t len, size_t max)
{
    gpufit__json p, q;
    gpufit__json_token t, k[8], v[8], k1, v1;
    cr_assert(max <= 8);
    cr_assert_eq(gpufit__json_init(&p, doc, len, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_next(&p, &t, NULL), GPUFIT_OK);
    q = p;
    size_t total = 0;
    for (;;) {
        gpufit__json before = p;
        size_t got = gpufit__json_members_scalar(&p, k, v, max);
        cr_assert_leq(got, max, "%s", doc);
        for (size_t i = 0; i < got; i++) {
            cr_assert(gpufit__json_member_scalar(&q, &k1, &v1), "%s: member %zu", doc, total + i);
            cr_assert(same_token(&k[i], &k1) && same_token(&v[i], &v1), "%s: member %zu", doc,
                      total + i);
        }
        total += got;
        cr_assert_eq(memcmp(&p, &q, sizeof p), 0, "%s: the cursors differ after %zu", doc, total);
        if (got < max) {
            cr_assert_eq(gpufit__json_member_scalar(&q, &k1, &v1), 0, "%s", doc);
            if (got == 0)
                cr_assert_eq(memcmp(&p, &before, sizeof p), 0, "%s: the cursor moved", doc);
            return total;
        }
    }
}

Test(cold, members_scalar_runs_equal_single_members)
{
    static const char doc[] = "{\"model\": \"llama-3-70b\", \"task\": \"pretrain\",\"tp\":8 , "
                              "\"sp\": true,\n\"x\": false, \"checkpointing\": \"selective\", "
                              "\"a\": 1.5, \"b\": 2}";
    for (size_t max = 1; max <= 8; max++) {
        cr_assert_eq(batch_both(doc, sizeof doc - 1, max), 6, "max %zu", max);
        for (size_t cut = 1; cut < sizeof doc; cut++) /* never past the length */
            batch_both(doc, cut, max);
    }
    cr_assert_eq(batch_both("{}", 2, 4), 0);
    cr_assert_eq(batch_both("{\"a\": null, \"b\": 1}", 19, 4), 0);
    cr_assert_eq(batch_both("{\"a\": 1,}", 9, 4), 1); /* the trailing comma is left */
    gpufit__json p;
    gpufit__json_token k, v;
    cr_assert_eq(gpufit__json_init(&p, "{\"a\": 1}", 8, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__json_members_scalar(&p, &k, &v, 4), 0); /* before the '{' */
}

/* ---- value names and the integer rows: what gpufit__apply_entry's fast paths rely on ---- */
Test(cold, value_names_are_lower_case_and_int_rows_plain)
{
    size_t plain = 0;
    for (size_t i = 0; gpufit__param_at(i) != NULL; i++) {
        const gpufit__param_entry *e = gpufit__param_at(i);
        for (const gpufit__enum_value *ev = e->values; ev != NULL && ev->name != NULL; ev++) {
            cr_assert_eq(ev->len, strlen(ev->name), "%s: %s", e->name, ev->name);
            for (const char *c = ev->name; *c != '\0'; c++)
                cr_assert(!(*c >= 'A' && *c <= 'Z'), "%s: %s has a capital", e->name, ev->name);
        }
        int special = e->id == GPUFIT_JOB_GPU || e->id == GPUFIT_JOB_LORA_MODULES ||
                      e->id == GPUFIT_JOB_FRAMEWORK_VERSION || e->id == GPUFIT_JOB_CUDA_VERSION;
        cr_assert_eq(e->plain_int, e->type == GPUFIT_TYPE_INT && !special, "%s", e->name);
        if (e->type == GPUFIT_TYPE_INT)
            cr_assert(e->values == NULL && !e->is_double, "%s", e->name);
        plain += e->plain_int;
    }
    cr_assert_eq(plain, 71); /* the table's integer rows but gpu, lora_modules and the versions */
}

/* ---- gpufit__lower8 and gpufit__bytes_eq_lower against a byte at a time ---- */
static unsigned char lower1(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

Test(cold, lower8_folds_exactly_the_capitals)
{
    for (unsigned c = 0; c < 256; c++)
        for (unsigned pos = 0; pos < 8; pos++) {
            unsigned char in[8], out[8];
            for (unsigned k = 0; k < 8; k++) /* neighbours at the classes' edges */
                in[k] = (unsigned char)("@AZ[`az{"[k] ^ (k == 7 ? 0x80 : 0));
            in[pos] = (unsigned char)c;
            uint64_t x;
            memcpy(&x, in, 8);
            x = gpufit__lower8(x);
            memcpy(out, &x, 8);
            for (unsigned k = 0; k < 8; k++)
                cr_assert_eq(out[k], lower1(in[k]), "byte 0x%02X at %u: 0x%02X", in[k], k, out[k]);
        }
    char in[32], out[33];
    for (size_t n = 0; n <= 24; n++) { /* gpufit__lower_copy: n bytes, none past them */
        for (size_t i = 0; i < n; i++)
            in[i] = (char)("AZaz@[`{\xC1\xDA"
                           "09-_Mq"[i % 16]);
        memset(out, '#', sizeof out);
        gpufit__lower_copy(out, in, n);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq((unsigned char)out[i], lower1((unsigned char)in[i]), "n=%zu i=%zu", n, i);
        cr_assert_eq(out[n], '#', "n=%zu: a byte past the copy", n);
    }
    char a[32], low[32];
    for (size_t n = 0; n <= 24; n++) {
        for (size_t i = 0; i < n; i++) {
            low[i] = (char)("abz_09-x"[i % 8]);
            a[i] = (char)(i % 3 == 0 ? toupper((unsigned char)low[i]) : low[i]);
        }
        cr_assert(gpufit__bytes_eq_lower(a, low, n), "n=%zu", n);
        for (size_t d = 0; d < n; d++) { /* one byte differs: near misses of folding too */
            static const unsigned char other[] = {'@', '[', '`', '{', 0xC1, 0xE1, 0x00, 'y'};
            char keep = a[d];
            for (size_t o = 0; o < sizeof other; o++) {
                a[d] = (char)other[o];
                int want = lower1(other[o]) == (unsigned char)low[d];
                cr_assert_eq(gpufit__bytes_eq_lower(a, low, n), want, "n=%zu d=%zu 0x%02X", n, d,
                             other[o]);
            }
            a[d] = keep;
        }
    }
}

/* ---- gpufit__apply_entry: value names in any case and decimal digits store what the
 * reference paths give (gpufit_param_value_by_name; the range) ---- */
static int64_t
field_int(const gpufit__param_entry *e, const struct gpufit_model *m, const struct gpufit_job *j)
{
    int64_t v;
    memcpy(&v,
           (const char *)(e->domain == GPUFIT_DOMAIN_MODEL ? (const void *)m : (const void *)j) +
               e->offset,
           sizeof v);
    return v;
}

Test(cold, apply_entry_names_and_digits)
{
    static struct gpufit_model m;
    static struct gpufit_job j;
    char buf[64];
    for (size_t i = 0; gpufit__param_at(i) != NULL; i++) {
        const gpufit__param_entry *e = gpufit__param_at(i);
        for (const gpufit__enum_value *ev = e->values; ev != NULL && ev->name != NULL; ev++) {
            for (int form = 0; form < 3; form++) { /* as written, upper case, capitalised */
                size_t n = strlen(ev->name);
                for (size_t k = 0; k <= n; k++)
                    buf[k] = (char)(form == 1 || (form == 2 && k == 0)
                                        ? toupper((unsigned char)ev->name[k])
                                        : ev->name[k]);
                int64_t want;
                cr_assert_eq(gpufit_param_value_by_name(e->id, buf, &want), GPUFIT_OK, "%s", buf);
                gpufit__model_defaults(&m);
                gpufit__job_defaults(&j);
                cr_assert_eq(gpufit__apply_entry(&m, &j, e, buf, n, 0, NULL), GPUFIT_OK, "%s=%s",
                             e->name, buf);
                cr_assert_eq(field_int(e, &m, &j), want, "%s=%s", e->name, buf);
            }
        }
        if (!e->plain_int)
            continue;
        const struct {
            int width; /* zero-padded to */
            int64_t v;
            int ok;
        } digits[] = {
            {1, e->min_i < 0 ? 0 : e->min_i, 1},
            {1, e->max_i, 1},
            {1, e->max_i + 1, 0},
            {15, e->max_i, 1}, /* 15 digits: the fast path */
            {16, e->max_i, 1}, /* 16: the general path, the same value */
            {1, 999999999999999, e->max_i >= 999999999999999},
        };
        for (size_t d = 0; d < sizeof digits / sizeof digits[0]; d++) {
            int n = snprintf(buf, sizeof buf, "%0*lld", digits[d].width, (long long)digits[d].v);
            gpufit__model_defaults(&m);
            gpufit__job_defaults(&j);
            int32_t st = gpufit__apply_entry(&m, &j, e, buf, (size_t)n, 0, NULL);
            cr_assert_eq(st == GPUFIT_OK, digits[d].ok, "%s=%s: %d", e->name, buf, (int)st);
            if (digits[d].ok)
                cr_assert_eq(field_int(e, &m, &j), digits[d].v, "%s=%s", e->name, buf);
        }
    }
}

/* ---- gpufit__doc_find: what gpufit__param_find_name then gpufit__doc_entry give ---- */
Test(cold, doc_find_records_as_find_and_doc_entry)
{
    for (size_t i = 0; gpufit__param_at(i) != NULL; i++) {
        const gpufit__param_entry *e = gpufit__param_at(i), *got = NULL;
        gpufit__doc_keys d;
        gpufit__doc_keys_init(&d);
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit__doc_find(&d, e->name, strlen(e->name), 7, &got, &err), GPUFIT_OK);
        cr_assert_eq(got, e, "%s", e->name);
        for (const char *a = e->aliases; a != NULL && *a != '\0';) { /* an alias: the same key */
            size_t an = strcspn(a, " ");
            got = NULL;
            cr_assert_eq(gpufit__doc_find(&d, a, an, 30, &got, &err), GPUFIT_E_INVALID_ARG);
            cr_assert_eq(got, e);
            cr_assert(strstr(err.message, "(at bytes 7 and 30;") != NULL, "%s", err.message);
            a += an;
            a += strspn(a, " ");
        }
        cr_assert_eq(gpufit__doc_find(&d, e->name, strlen(e->name), 40, &got, &err),
                     GPUFIT_E_INVALID_ARG, "%s", e->name);
        cr_assert(strstr(err.message, "(at bytes 7 and 40;") != NULL, "%s", err.message);
    }
    gpufit__doc_keys d;
    gpufit__doc_keys_init(&d);
    gpufit_error err = GPUFIT_ERROR_INIT;
    const gpufit__param_entry *got = gpufit__param_at(0);
    cr_assert_eq(gpufit__doc_find(&d, "bogus", 5, 1, &got, &err), GPUFIT_OK); /* unknown */
    cr_assert_null(got);
    cr_assert_eq(gpufit__doc_find(&d, "gpu_memory_gib", 14, 20, &got, &err), GPUFIT_OK);
    cr_assert_eq(gpufit__doc_find(&d, "gpu_memory_bytes", 16, 40, &got, &err),
                 GPUFIT_E_INCONSISTENT);
    cr_assert_str_eq(err.message, "'gpu_memory_gib' (byte 20) and 'gpu_memory_bytes' (byte 40) "
                                  "both set the GPU capacity: give one of them");
}

/* ---- gpufit_apply_json applies the job in place: on error every byte of its parameters is
 * restored, the plan untouched ---- */
Test(cold, a_failed_document_leaves_the_job_bytes)
{
    static const char *const docs[] = {
        ("{\"gpu\": {\"name\": \"my card\", \"memory_gib\": 20}, \"tp\": 2, \"task\": \"pretrain\", "
         "\"sp\": true, \"tensor_split\": [3, 1], \"bogus\": 1}"),
        "{\"model\": \"llama-3-8b\", \"gpu\": \"h100\", \"seq_len\": 4096, \"zero\": 9}",
        "{\"framework\": \"vllm\", \"gpu_memory_gib\": 10, \"gpu_memory_bytes\": 5}",
        "{\"pp\": 2, \"device_gpus\": [\"h100\", \"a100-80gb-sxm4\"], \"tp\": [1]}",
    };
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    static const char spec[] = "model=llama-3-8b task=lora gpu=rtx-4090 lora_rank=8";
    cr_assert_eq(gpufit_apply_spec(m, j, spec, NULL), GPUFIT_OK);
    gpufit_summary sum = {.struct_size = sizeof sum};
    cr_assert_eq(gpufit_evaluate_summary(m, j, &sum, NULL), GPUFIT_OK); /* a resolved plan */
    static struct gpufit_job before;
    memcpy(&before, j, sizeof before);
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_neq(gpufit_apply_json(m, j, docs[i], strlen(docs[i]), &err), GPUFIT_OK, "%s",
                      docs[i]);
        cr_assert_eq(memcmp(j, &before, sizeof before), 0, "%s: the job changed", docs[i]);
    }
    gpufit_model_free(m);
    gpufit_job_free(j);
}

/* ---- a "model" preset name is loaded into the handle at the end (no working copy), or into
 * the working copy when a top-level model key follows: the same model either way ---- */
static void model_of_json(const char *json, struct gpufit_model *out)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, "model=gpt2", NULL), GPUFIT_OK); /* another model first */
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_json(m, j, json, strlen(json), &err), GPUFIT_OK, "%s: %s", json,
                 err.message);
    memcpy(out, m, offsetof(struct gpufit_model, gguf_layer_bytes));
    out->cache_state = m->cache_state;
    out->cache_counts = m->cache_counts;
    gpufit_model_free(m);
    gpufit_job_free(j);
}

Test(cold, a_preset_loads_the_same_with_or_without_model_keys)
{
    static struct gpufit_model a, b, c;
    model_of_json("{\"model\": \"Llama-3-8B\", \"tp\": 2}", &a);
    model_of_json("{\"model\": {\"preset\": \"Llama-3-8B\"}, \"tp\": 2}", &b);
    cr_assert_eq(memcmp(&a, &b, offsetof(struct gpufit_model, gguf_layer_bytes)), 0);
    cr_assert_str_eq(a.name, "llama-3-8b");
    cr_assert_eq(a.cache_state, 1);
    cr_assert_eq(a.cache_counts.total, b.cache_counts.total);
    /* a model key after the preset, wherever it stands */
    model_of_json("{\"n_layers\": 7, \"model\": \"llama-3-8b\", \"tp\": 2}", &a);
    model_of_json("{\"model\": {\"preset\": \"llama-3-8b\", \"n_layers\": 7}, \"tp\": 2}", &b);
    cr_assert_eq(memcmp(&a, &b, offsetof(struct gpufit_model, gguf_layer_bytes)), 0);
    cr_assert_eq(a.n_layers, 7);
    cr_assert_eq(a.cache_counts.total, b.cache_counts.total);
    model_of_json("{\"model\": \"llama-3-8b\", \"tp\": 2}", &c);
    cr_assert_neq(a.cache_counts.total, c.cache_counts.total); /* 7 layers, not 32 */
    /* a failed document leaves the model as it was, preset and all */
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, "model=gpt2", NULL), GPUFIT_OK);
    memcpy(&a, m, offsetof(struct gpufit_model, gguf_layer_bytes));
    static const char bad[] = "{\"model\": \"llama-3-8b\", \"n_layers\": 7, \"tp\": \"x\"}";
    cr_assert_neq(gpufit_apply_json(m, j, bad, sizeof bad - 1, NULL), GPUFIT_OK);
    cr_assert_eq(memcmp(&a, m, offsetof(struct gpufit_model, gguf_layer_bytes)), 0);
    cr_assert_str_eq(gpufit_model_name(m), "gpt2");
    gpufit_model_free(m);
    gpufit_job_free(j);
}

/* ---- apply_plain looks a key up before it tests for the ignored keys: none is a parameter
 * name or alias ---- */
static int ignored_name(const char *s, size_t n)
{
    return (n == 2 && memcmp(s, "id", 2) == 0) || (n == 7 && memcmp(s, "comment", 7) == 0) ||
           (n == 7 && memcmp(s, "$schema", 7) == 0) || (n > 0 && s[0] == '_');
}

Test(cold, no_ignored_key_is_a_parameter)
{
    for (size_t i = 0; gpufit__param_at(i) != NULL; i++) {
        const gpufit__param_entry *e = gpufit__param_at(i);
        cr_assert(!ignored_name(e->name, strlen(e->name)), "%s", e->name);
        for (const char *a = e->aliases; a != NULL && *a != '\0';) {
            size_t an = strcspn(a, " ");
            cr_assert(!ignored_name(a, an), "%s: alias %.*s", e->name, (int)an, a);
            a += an;
            a += strspn(a, " ");
        }
    }
    static const char doc[] = "{\"id\": 1, \"comment\": \"x\", \"$schema\": \"s\", \"_a\": 2, "
                              "\"model\": \"gpt2\", \"id\": 3}";
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_json(m, j, doc, sizeof doc - 1, &err), GPUFIT_OK, "%s", err.message);
    static const char bad[] = "{\"ids\": 1}";
    cr_assert_eq(gpufit_apply_json(m, j, bad, sizeof bad - 1, &err), GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(err.offset, 1);
    gpufit_model_free(m);
    gpufit_job_free(j);
}

/* ---- gpufit__json_begin_top_object: the cursor gpufit__json_next leaves after the '{', or
 * 0 with the cursor untouched ---- */
Test(cold, begin_top_object_equals_json_next)
{
    static const struct {
        const char *doc;
        int ok;
    } cases[] = {{"{}", 1},
                 {" \t\r\n{\"a\": 1}", 1},
                 {"\xEF\xBB\xBF{}", 1},
                 {"\xEF\xBB\xBF {}", 1},
                 {"[]", 0},
                 {"", 0},
                 {"   ", 0},
                 {"x{", 0},
                 {"\"{\"", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpufit__json p, q;
        gpufit__json_token t;
        size_t n = strlen(cases[i].doc);
        cr_assert_eq(gpufit__json_init(&p, cases[i].doc, n, NULL), GPUFIT_OK);
        q = p;
        cr_assert_eq(gpufit__json_begin_top_object(&p), cases[i].ok, "'%s'", cases[i].doc);
        if (!cases[i].ok) {
            cr_assert_eq(memcmp(&p, &q, sizeof p), 0, "'%s': the cursor moved", cases[i].doc);
            continue;
        }
        cr_assert_eq(gpufit__json_next(&q, &t, NULL), GPUFIT_OK);
        cr_assert_eq(t.type, GPUFIT__JSON_OBJECT);
        cr_assert_eq(memcmp(&p, &q, sizeof p), 0, "'%s': another cursor", cases[i].doc);
        /* and a second time: not at the top any more */
        cr_assert_eq(gpufit__json_begin_top_object(&p), 0);
    }
}
