/* SPDX-License-Identifier: MIT */
/* gen_index: writes the sorted lookup indexes that the library compiles in.
 *
 *   gen_index PARAM_INC PRESET_INC RECORD_INC           write the three files
 *   gen_index --check PARAM_INC PRESET_INC RECORD_INC   exit 1 when any is not what it would
 *                                                       write
 *
 * lib/table/param_index.inc: every parameter name and alias with its row in the parameter
 * table (names before aliases, the first row wins, as gpufit__param_find_name_linear decides),
 * and every parameter id with its row. lib/model/preset_index.inc: every preset name, alias
 * and Hugging Face id (variant ids included) in lower case with its preset's row (the lowest
 * row wins, as gpufit__preset_find_linear decides). Both sorted by gpufit__name_cmp.
 * lib/model/preset_record.inc: each preset's derived cache (shape, counts, tensor groups,
 * aggregates), so that loading a preset copies it instead of deriving it.
 *
 * Linked with the static library: it reads the tables through the internal accessors, which
 * work whatever the committed indexes hold. `make index` runs it; `make check` runs --check. */
#include "internal.h"
#include "model/preset_fields.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 4096
#define KEY_MAX 160

typedef struct key {
    char name[KEY_MAX];
    size_t len;
    size_t row;
} key;

typedef struct keys {
    key k[MAX_KEYS];
    size_t n;
} keys;

static void die(const char *what)
{
    fprintf(stderr, "gen_index: %s\n", what);
    exit(2);
}

/* Adds name[0..len) -> row unless the key is there already (the earlier source wins). */
static void add(keys *ks, const char *name, size_t len, size_t row, int lower)
{
    if (len == 0)
        return;
    if (len >= KEY_MAX || ks->n == MAX_KEYS || row > 65535)
        die("a key, the key count or a row is out of range: raise the limits");
    key k;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        k.name[i] = lower && c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    k.len = len;
    k.row = row;
    for (size_t i = 0; i < ks->n; i++)
        if (ks->k[i].len == len && memcmp(ks->k[i].name, k.name, len) == 0) {
            if (row < ks->k[i].row && lower) /* presets: the lowest row wins */
                ks->k[i].row = row;
            return;
        }
    ks->k[ks->n++] = k;
}

static void add_words(keys *ks, const char *words, size_t row, int lower)
{
    for (const char *p = words; p != NULL && *p != '\0';) {
        size_t n = strcspn(p, " ");
        add(ks, p, n, row, lower);
        p += n;
        p += strspn(p, " ");
    }
}

static int by_name(const void *a, const void *b)
{
    const key *x = a, *y = b;
    return gpufit__name_cmp(x->name, x->len, y->name, y->len);
}

static int by_id(const void *a, const void *b)
{
    int32_t x = (*(const gpufit__param_entry *const *)a)->id;
    int32_t y = (*(const gpufit__param_entry *const *)b)->id;
    return (x > y) - (x < y);
}

typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int w = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (w < 0)
            die("vsnprintf failed");
        if ((size_t)w < t->cap - t->n) {
            t->n += (size_t)w;
            return;
        }
        t->cap = t->cap * 2 + (size_t)w + 1;
        if ((t->s = realloc(t->s, t->cap)) == NULL)
            die("out of memory");
    }
}

/* The open-addressing table over ks (sorted, as put_names leaves it): the smallest power of
 * two at least 4 times the keys, each key at its gpufit__name_hash slot or the next free one.
 * A slot holds 1 + the key's index in the array (rows = 0), or for the parameters (rows = 1)
 * 1 + the key's row in the table, with PARAM_HASH_ALIAS set when the key is an alias. */
static void put_hash(text *t, const char *array, const keys *ks, int rows)
{
    size_t n_slots = 1;
    while (n_slots < 4 * ks->n)
        n_slots *= 2;
    if (ks->n >= 65535)
        die("too many keys for a 16-bit hash slot");
    uint16_t *slots = calloc(n_slots, sizeof *slots);
    if (slots == NULL)
        die("out of memory");
    for (size_t i = 0; i < ks->n; i++) {
        size_t h = gpufit__name_hash(ks->k[i].name, ks->k[i].len) & (n_slots - 1);
        while (slots[h] != 0)
            h = (h + 1) & (n_slots - 1);
        if (!rows) {
            slots[h] = (uint16_t)(i + 1);
            continue;
        }
        const gpufit__param_entry *e = gpufit__param_at(ks->k[i].row);
        int alias = strlen(e->name) != ks->k[i].len ||
                    memcmp(e->name, ks->k[i].name, ks->k[i].len) != 0;
        if (ks->k[i].row + 1 >= 0x8000)
            die("a parameter row does not fit a hash slot");
        slots[h] = (uint16_t)((ks->k[i].row + 1) | (alias ? 0x8000u : 0u));
    }
    if (rows)
        put(t, "/* 1 + the table row of the name hashed there, | PARAM_HASH_ALIAS when it is an "
               "alias; 0 = empty */\n#define PARAM_HASH_ALIAS 0x8000\n");
    else
        put(t, "/* 1 + the index in %s of the name hashed there (gpufit__name_hash_find), 0 = "
               "empty */\n",
            array);
    put(t, "#define %s_SLOTS %zu\n", array, n_slots);
    put(t, "static const uint16_t %s_hash[%zu] = {", array, n_slots);
    for (size_t h = 0; h < n_slots; h++)
        put(t, "%s%u,", h % 16 == 0 ? "\n    " : " ", (unsigned)slots[h]);
    put(t, "\n};\n");
    free(slots);
}

static void put_names(text *t, const char *array, keys *ks)
{
    qsort(ks->k, ks->n, sizeof ks->k[0], by_name);
    put(t, "static const gpufit__name_row %s[] = {\n", array);
    for (size_t i = 0; i < ks->n; i++) {
        for (size_t c = 0; c < ks->k[i].len; c++)
            if (ks->k[i].name[c] == '"' || ks->k[i].name[c] == '\\' ||
                (unsigned char)ks->k[i].name[c] < 0x20)
                die("a key holds a quote, a backslash or a control character");
        put(t, "    {\"%.*s\", %zu, %zu},\n", (int)ks->k[i].len, ks->k[i].name, ks->k[i].len,
            ks->k[i].row);
    }
    put(t, "};\n");
}

#define HEAD                                                                                       \
    "/* SPDX-License-Identifier: MIT */\n"                                                        \
    "/* clang-format off */\n"                                                                    \
    "/* Generated by tools/gen_index.c (`make index`) from %s: do not edit.\n"                     \
    " * Sorted by gpufit__name_cmp; `make check` fails when this file is stale. */\n"

/* 1 when parameter e belongs to domain `want`, is a scalar and its default is not all-zero
 * bytes (the rows a generated default initialiser must set) */
static int default_row(const gpufit__param_entry *e, int32_t want)
{
    static const double zero = 0.0;
    int nonzero = e->is_double ? memcmp(&e->def_f, &zero, sizeof zero) != 0 : e->def_i != 0;
    return e->domain == want && e->type != GPUFIT_TYPE_LIST && nonzero;
}

static void param_index(text *t)
{
    static keys ks;
    static const gpufit__param_entry *by[MAX_KEYS];
    size_t n = gpufit__param_count();
    if (n > MAX_KEYS)
        die("too many parameters");
    put(t, HEAD, "the parameter table in lib/table/params.c");
    for (size_t i = 0; i < n; i++)
        add(&ks, gpufit__param_at(i)->name, strlen(gpufit__param_at(i)->name), i, 0);
    for (size_t i = 0; i < n; i++)
        add_words(&ks, gpufit__param_at(i)->aliases, i, 0);
    put_names(t, "param_names", &ks);
    put_hash(t, "param_names", &ks, 1);
    for (size_t i = 0; i < n; i++)
        by[i] = gpufit__param_at(i);
    qsort(by, n, sizeof by[0], by_id);
    int32_t max_id = by[n - 1]->id;
    if (by[0]->id < 0 || max_id > 32767)
        die("a parameter id is outside 0..32767");
    put(t, "#define PARAM_ID_MAX %d\n", (int)max_id);
    put(t, "/* the row of each id, -1 where no parameter has it */\n");
    put(t, "static const int16_t param_row_of_id[PARAM_ID_MAX + 1] = {");
    size_t k = 0;
    for (int32_t id = 0; id <= max_id; id++) {
        int row = -1;
        if (k < n && by[k]->id == id) {
            if (k > 0 && by[k - 1]->id == id)
                die("two parameters share an id");
            row = (int)(by[k] - gpufit__param_at(0));
            k++;
        }
        put(t, "%s%d,", id % 16 == 0 ? "\n    " : " ", row);
    }
    put(t, "\n};\n");
    /* the rows whose default is not all-zero bytes: defaults are a memset and these (when the
     * table has PARAM_INDEX_ROWS rows; otherwise the library walks every row) */
    put(t, "#define PARAM_INDEX_ROWS %zu\n", n);
    for (int dom = 0; dom < 2; dom++) {
        int32_t want = dom == 0 ? GPUFIT_DOMAIN_MODEL : GPUFIT_DOMAIN_JOB;
        put(t, "static const uint16_t %s_default_rows[] = {", dom == 0 ? "model" : "job");
        size_t c = 0;
        for (size_t i = 0; i < n; i++) {
            const gpufit__param_entry *e = gpufit__param_at(i);
            if (!default_row(e, want))
                continue;
            put(t, "%s%zu,", c++ % 16 == 0 ? "\n    " : " ", i);
        }
        if (c == 0)
            put(t, "\n    UINT16_MAX, /* none: the loop skips it */");
        put(t, "\n};\n");
    }
    /* the same defaults as one initialiser per handle, copied in one go (the members are named
     * as their parameters; a row whose name is no member fails to compile, and
     * tests/unit/test_fastpath.c checks the copy against the walk) */
    for (int dom = 0; dom < 2; dom++) {
        int32_t want = dom == 0 ? GPUFIT_DOMAIN_MODEL : GPUFIT_DOMAIN_JOB;
        put(t, "static const struct gpufit_%s %s_default = {\n", dom == 0 ? "model" : "job",
            dom == 0 ? "model" : "job");
        for (size_t i = 0; i < n; i++) {
            const gpufit__param_entry *e = gpufit__param_at(i);
            if (!default_row(e, want))
                continue;
            if (e->is_double)
                put(t, "    .%s = %a,\n", e->name, e->def_f);
            else
                put(t, "    .%s = INT64_C(%lld),\n", e->name, (long long)e->def_i);
        }
        put(t, "};\n");
    }
}

static void preset_index(text *t)
{
    static keys ks;
    const char *name, *aliases, *hf, *vid, *vpreset;
    put(t, HEAD, "the presets in lib/model/model_presets.c and lib/model/model_hf_ids.c");
    for (size_t i = 0; gpufit__preset_get(i, NULL, &name, &aliases, &hf) == GPUFIT_OK; i++) {
        add(&ks, name, strlen(name), i, 1);
        add(&ks, hf, strlen(hf), i, 1);
        add_words(&ks, aliases, i, 1);
    }
    for (size_t v = 0; gpufit__preset_hf_variant_at(v, &vid, &vpreset); v++) {
        size_t row = SIZE_MAX;
        for (size_t i = 0; gpufit__preset_get(i, NULL, &name, NULL, NULL) == GPUFIT_OK; i++)
            if (strcmp(name, vpreset) == 0) {
                row = i;
                break;
            }
        if (row == SIZE_MAX)
            die("a Hugging Face variant names no preset");
        add(&ks, vid, strlen(vid), row, 1);
    }
    size_t longest = 0;
    for (size_t i = 0; i < ks.n; i++)
        longest = ks.k[i].len > longest ? ks.k[i].len : longest;
    put(t, "#define PRESET_KEY_MAX %zu /* the longest key: longer names are not in the index */\n",
        longest);
    put_names(t, "preset_names", &ks);
    put_hash(t, "preset_names", &ks, 0);
}

/* ---- preset_record.inc: each preset's derived cache (model_presets.c) ------------------- */
/* The fields of the cached structs (internal.h), each printed when it is not 0: a field left
 * out here reads 0 in the record, which tests/unit/test_cold.c catches (it compares every
 * preset's record with the cache derived from it). */
/* clang-format off */
#define SHAPE_I32(X)                                                                               \
    X(arch) X(mlp) X(norm) X(gated) X(w_first) X(w_end) X(qkv_bias) X(o_bias) X(mlp_bias)          \
    X(emb_norm) X(qk_norm) X(pooler) X(router_bias) X(shexp_gate) X(quant) X(reserved_q)           \
    X(v_style) X(v_proj)
#define SHAPE_U64(X)                                                                               \
    X(h) X(nq) X(nkv) X(dh) X(q) X(c) X(f) X(f_moe) X(f_sh) X(V) X(E) X(k) X(n_shared) X(mla)      \
    X(r_q) X(r_kv) X(d_n) X(d_r) X(d_v) X(n_layers) X(tied) X(max_position) X(rope_rows)           \
    X(rope_dim) X(n_params_generic) X(type_vocab) X(rel_buckets) X(v_layers) X(v_h) X(v_heads)     \
    X(v_f) X(v_patch) X(v_grid) X(v_merge) X(v_tiles) X(v_pos) X(v_pix) X(v_tokens)                \
    X(v_proj_mid) X(swa_window) X(swa_period) X(n_cross) X(cross_tokens)
#define COUNTS_U64(X)                                                                              \
    X(total) X(active) X(global) X(embedding) X(output) X(largest_layer) X(largest_matrix)         \
    X(vision)
#define AGG_U64(X)                                                                                 \
    X(lin_el) X(exp_el) X(kv_n) X(kv_cols) X(other2d_el) X(oned_el) X(lin_rows) X(exp_rows)        \
    X(lin_cols) X(exp_cols) X(rows_gcd) X(blk_nf4) X(dum_att) X(dum_kv_el) X(dum_kv_cols)      \
    X(dum_rest) X(dum_exp)
#define AGG_I32(X) X(cols256) X(reserved)
/* clang-format on */

static void put_u64s(text *t, const char *name, const uint64_t *v, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= v[i] != 0;
    if (!any)
        return;
    put(t, " .%s = {", name);
    for (size_t i = 0; i < n; i++)
        put(t, "%s%" PRIu64 "u", i ? ", " : "", v[i]);
    put(t, "},");
}

/* " .f = v," for field f of *o when it is not 0 (a designated initialiser leaves the rest 0),
 * in the field's C form: for the X-macro field lists of the records */
#define PUT_U64(o, f)                                                                              \
    if ((o)->f != 0)                                                                               \
        put(t, " ." #f " = %" PRIu64 "u,", (uint64_t)(o)->f);
#define PUT_U32(o, f)                                                                              \
    if ((o)->f != 0)                                                                               \
        put(t, " ." #f " = %u,", (unsigned)(o)->f);
#define PUT_INT(o, f)                                                                              \
    if ((o)->f != 0)                                                                               \
        put(t, " ." #f " = %d,", (int)(o)->f);

static void put_agg(text *t, const gpufit__class_agg *a)
{
#define X(f) PUT_U64(a, f)
    AGG_U64(X)
#undef X
#define X(f) PUT_U32(a, f)
    AGG_I32(X)
#undef X
    put_u64s(t, "lora_rc", a->lora_rc, GPUFIT__LORA_BITS);
    put_u64s(t, "lora_rc_exp", a->lora_rc_exp, GPUFIT__LORA_BITS);
    put_u64s(t, "blk_w", a->blk_w, 3);
    put_u64s(t, "blk_t", a->blk_t, 3);
    put_u64s(t, "blk_other", a->blk_other, 3);
}

static void preset_record(text *t)
{
    static struct gpufit_model m;
    gpufit__aggregates empty;
    gpufit__aggregates_clear(&empty);
    const char *name;
    text groups = {0}, aggs = {0};
    size_t n_groups = 0, n_aggs = 0;
    put(t, "/* SPDX-License-Identifier: MIT */\n/* clang-format off */\n/* Generated by "
           "tools/gen_index.c (`make index`) from the presets in lib/model/model_presets.c: do "
           "not edit.\n * Each preset's derived cache, in preset order; `make check` fails when "
           "this file is stale. */\n");
    put(t, "static const preset_record preset_records[] = {\n");
    for (size_t i = 0; gpufit__preset_get(i, &m, &name, NULL, NULL) == GPUFIT_OK; i++) {
        m.cache_state = 0; /* derived, not copied from the record this writes */
        gpufit__model_refresh(&m);
        if (m.cache_state != 1)
            die("a preset does not resolve");
        if (n_groups + m.cache_ng > 65535 || n_aggs + 9 > 65535)
            die("too many records: widen preset_record's indexes");
        const gpufit__shape *s = &m.cache_shape;
        const gpufit__counts *c = &m.cache_counts;
        put(t, "    {/* %s */\n     .a = {", name);
        const gpufit__arch_values *av = gpufit__preset_arch(i);
#define X(f) PUT_INT(av, f)
        PRESET_FIELDS(X)
#undef X
        size_t nagg = 0, agg0 = n_aggs;
        for (int k = 0; k < GPUFIT__W_COUNT + 4; k++) {
            const gpufit__class_agg *a = k < GPUFIT__W_COUNT
                                             ? &m.cache_agg.layer[k]
                                             : &m.cache_agg.glob[k - GPUFIT__W_COUNT];
            const gpufit__class_agg *e =
                k < GPUFIT__W_COUNT ? &empty.layer[k] : &empty.glob[k - GPUFIT__W_COUNT];
            if (memcmp(a, e, sizeof *a) == 0)
                continue;
            put(&aggs, "    {%d, 0, {", k);
            put_agg(&aggs, a);
            put(&aggs, "}}, /* %s */\n", name);
            nagg++;
            n_aggs++;
        }
        put(t, "},\n     .group0 = %zu, .ng = %u, .agg0 = %zu, .nagg = %zu, .glob_dense = %u,\n",
            n_groups, (unsigned)m.cache_ng, agg0, nagg, (unsigned)m.cache_agg.glob_dense);
        put(t, "     .shape = {");
#define X(f) PUT_INT(s, f)
        SHAPE_I32(X)
#undef X
#define X(f) PUT_U64(s, f)
        SHAPE_U64(X)
#undef X
        put_u64s(t, "layers", s->layers, GPUFIT__W_COUNT);
        int any_dt = 0;
        for (int k = 0; k < 5; k++)
            any_dt |= s->mod_dt[k] != 0;
        if (any_dt)
            put(t, " .mod_dt = {%lld, %lld, %lld, %lld, %lld},", (long long)s->mod_dt[0],
                (long long)s->mod_dt[1], (long long)s->mod_dt[2], (long long)s->mod_dt[3],
                (long long)s->mod_dt[4]);
        if (s->act_bytes_per_token != 0.0)
            put(t, " .act_bytes_per_token = %a,", s->act_bytes_per_token);
        put(t, "},\n     .counts = {");
#define X(f) PUT_U64(c, f)
        COUNTS_U64(X)
#undef X
        put_u64s(t, "per_layer", c->per_layer, GPUFIT__W_COUNT);
        put(t, "}},\n");
        put(&groups, "    /* %s */\n", name);
        for (uint32_t g = 0; g < m.cache_ng; g++, n_groups++) {
            const gpufit__tgroup *x = &m.cache_groups[g];
            put(&groups, "    {%u, %u, %u, %" PRIu64 "u, %" PRIu64 "u},\n", (unsigned)x->kind,
                (unsigned)x->where, (unsigned)x->copies, x->rows, x->cols);
        }
    }
    put(t, "};\n/* the tensor groups of every record, in order */\n");
    put(t, "static const gpufit__tgroup preset_record_groups[] = {\n%s};\n",
        groups.s != NULL ? groups.s : "");
    put(t,
        "/* the class sums that are not empty (slot 0-4: layer[slot], 5-8: glob[slot - 5]) */\n");
    put(t, "static const preset_agg preset_record_aggs[] = {\n%s};\n",
        aggs.s != NULL ? aggs.s : "");
    free(groups.s);
    free(aggs.s);
}

/* 0 when path holds exactly t */
static int same(const char *path, const text *t)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 1;
    char *buf = malloc(t->n + 1);
    if (buf == NULL)
        die("out of memory");
    size_t got = fread(buf, 1, t->n + 1, f);
    fclose(f);
    int diff = got != t->n || memcmp(buf, t->s, t->n) != 0;
    free(buf);
    return diff;
}

static void write_file(const char *path, const text *t)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(t->s, 1, t->n, f) != t->n || fclose(f) != 0)
        die("cannot write an index file");
}

int main(int argc, char **argv)
{
    int check = argc == 5 && strcmp(argv[1], "--check") == 0;
    if (argc != 4 + check) {
        fprintf(stderr, "usage: gen_index [--check] PARAM_INC PRESET_INC RECORD_INC\n");
        return 2;
    }
    text out[3] = {{0}, {0}, {0}};
    param_index(&out[0]);
    preset_index(&out[1]);
    preset_record(&out[2]);
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        const char *path = argv[1 + check + i];
        if (!check)
            write_file(path, &out[i]);
        else if (same(path, &out[i])) {
            fprintf(stderr, "gen_index: %s is stale: run `make index`\n", path);
            bad = 1;
        }
        free(out[i].s);
    }
    return bad;
}
