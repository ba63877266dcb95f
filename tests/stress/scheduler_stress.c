/* SPDX-License-Identifier: MIT */
/* Thread stress of what a scheduler calls (issue 13): gpufit_plan, gpufit_recommend,
 * gpufit_max_fitting, gpufit_evaluate_summary, the ranked mitigations and the list entries
 * with their change sets (gpufit_job_apply_mitigation, gpufit_job_apply_list_entry), the readers
 * (Hugging Face config.json, GGUF and safetensors headers, from buffers) and gpufit_apply_json. The
 * models, jobs, buffers, the results whose mitigations are read and applied, and one plan and one
 * recommend list per job are SHARED: made once by main, then only read (const) by every thread, as
 * gpufit.h allows.
 *
 * Every task turns its answer into a text (every number, string, status and error message it
 * got). Single-threaded first, each task runs once and its text is kept as the reference. Then
 * THREADS threads, released together, run every task ROUNDS times (each thread starting at a
 * different task) and compare each text with the reference: a race that changes a number fails
 * the run even where ThreadSanitizer (`make check-tsan`) sees nothing, and under TSan any data
 * race fails it too.
 *
 * Usage (from the repository root: it reads fixtures under tests/):
 *   scheduler_stress [THREADS [ROUNDS [-v]]]   (defaults 8 and 3; -v prints the references)
 * Plain C11 + pthreads: Criterion aborts under ThreadSanitizer (Snaipe/Criterion#274). */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */

#include "gpufit.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Jobs the advice functions run on (shared const model and job each). max: the parameter
 * gpufit_max_fitting is asked for. */
static const struct {
    const char *spec;
    int32_t max;
    uint32_t nodes; /* gpufit_plan on 8 x nodes GPUs */
} jobs[] = {
    {"model=llama-3-8b task=pretrain gpu=h100 pp=4 pp_schedule=gpipe", GPUFIT_JOB_MICRO_BATCH, 2},
    {"model=llama-3-70b task=inference framework=vllm gpu=h100 context_len=8192",
     GPUFIT_JOB_CONTEXT_LEN, 1},
    {"model=mixtral-8x7b task=finetune gpu=a100-80gb seq_len=2048", GPUFIT_JOB_MICRO_BATCH, 2},
    {"model=llama-3-70b task=pretrain gpu=rtx-4090 seq_len=4096", GPUFIT_JOB_SEQ_LEN, 4},
    {"model=qwen2.5-7b task=qlora gpu=t4 precision=fp16 seq_len=1024", GPUFIT_JOB_MICRO_BATCH, 1},
    {"model=llama-3.1-8b task=inference framework=llamacpp gpu=rtx-3090 weight_dtype=q4_k_m "
     "context_len=32768",
     GPUFIT_JOB_CONTEXT_LEN, 1},
    {"model=deepseek-v2-lite task=inference framework=sglang gpu=l4 batch=64", GPUFIT_JOB_BATCH, 1},
};
#define N_JOBS (sizeof jobs / sizeof jobs[0])

/* Inputs of the readers and of gpufit_apply_json, read once by main. */
static const char *const hf_files[] = {
    "tests/data/hf/meta-llama-3-8b.json", "tests/data/hf/mixtral-8x7b-v0.1.json",
    "tests/data/hf/t5-base.json",         "tests/data/hf/deepseek-v2-lite.json",
    "tests/data/hf/gemma-3-4b-it.json",
};
static const char *const gguf_files[] = {
    "tests/fuzz/corpus/gguf/llama_q4_k_m.gguf",
    "tests/fuzz/corpus/gguf/deepseek2_mla.gguf",
    "tests/fuzz/corpus/gguf/qwen3moe_v2.gguf",
    "tests/fuzz/corpus/gguf/t5.gguf",
};
static const char *const safetensors_files[] = {
    "tests/fuzz/corpus/safetensors/tiny_llama.safetensors",
    "tests/fuzz/corpus/safetensors/tied.safetensors",
    "tests/fuzz/corpus/safetensors/dtypes.safetensors",
    "tests/fuzz/corpus/safetensors/model.safetensors.index.json",
};
static const char *const json_files[] = {
    "tests/fuzz/corpus/json/scenario_md.json",
    "tests/fuzz/corpus/json/public_megatron_training.json",
    "tests/fuzz/corpus/json/public_vllm_moe.json",
    "tests/fuzz/corpus/json/public_llamacpp_inference.json",
    "tests/fuzz/corpus/json/lists.json",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

enum op {
    OP_SUMMARY,
    OP_MAX_FITTING,
    OP_MITIGATIONS,
    OP_RECOMMEND,
    OP_PLAN,
    OP_SHARED_LISTS,
    N_JOB_OPS
};
static const char *const op_names[] = {"evaluate_summary", "max_fitting", "mitigations",
                                       "recommend",        "plan",        "shared lists"};

typedef struct buffer {
    char *b;
    size_t n;
} buffer;

static gpufit_model *job_model[N_JOBS]; /* shared, only read by the threads */
static gpufit_job *job_job[N_JOBS];
static gpufit_result *job_result[N_JOBS]; /* shared results: their mitigations are read */
static gpufit_list *shared_rec[N_JOBS];   /* shared lists, read by every thread */
static gpufit_list *shared_plan[N_JOBS];
static gpufit_job *reader_job; /* the job the read models are evaluated with */
static buffer hf_buf[COUNT(hf_files)], gguf_buf[COUNT(gguf_files)],
    st_buf[COUNT(safetensors_files)], json_buf[COUNT(json_files)];

#define N_TASKS                                                                                    \
    (N_JOBS * N_JOB_OPS + COUNT(hf_files) + COUNT(gguf_files) + COUNT(safetensors_files) +         \
     COUNT(json_files))
static char *reference[N_TASKS];
static int rounds = 3;
static atomic_int failures;
static atomic_long tasks_run;
static pthread_barrier_t start;

/* A growing text: what a task saw. Allocation failure aborts (a test). */
typedef struct text {
    char *s;
    size_t n, cap;
    unsigned failed;  /* calls that returned an error */
    unsigned applied; /* mitigations and list entries applied */
} text;

#if defined(__GNUC__)
#define PRINTF_LIKE __attribute__((format(printf, 2, 3)))
#else
#define PRINTF_LIKE
#endif
static void put(text *t, const char *fmt, ...) PRINTF_LIKE;
static void put(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0)
            abort();
        if (t->s != NULL && t->n + (size_t)k < t->cap) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = (t->cap + (size_t)k + 1) * 2;
        char *s = realloc(t->s, cap);
        if (s == NULL)
            abort();
        t->s = s;
        t->cap = cap;
    }
}

static void put_status(text *t, const char *what, int32_t st, const gpufit_error *err)
{
    put(t, "%s: %d", what, st);
    t->failed += st != GPUFIT_OK;
    if (st != GPUFIT_OK)
        put(t, " param %d offset %llu '%s'", err->param, (unsigned long long)err->offset,
            err->message);
    put(t, "\n");
}

static void put_summary(text *t, const gpufit_summary *s)
{
    put(t,
        "fits %d roles %u worst %u notes %u cap %llu peak %llu head %lld params %llu/%llu "
        "host %llu mit %u\n",
        s->fits, s->n_roles, s->worst_role, s->n_notes, (unsigned long long)s->capacity_bytes,
        (unsigned long long)s->peak_bytes, (long long)s->headroom_bytes,
        (unsigned long long)s->n_params, (unsigned long long)s->n_active_params,
        (unsigned long long)s->host_bytes, s->n_mitigations);
}

/* The summary and JSON report of a full evaluation of m and j. */
static void put_evaluation(text *t, const gpufit_model *m, const gpufit_job *j)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_result *r = NULL;
    int32_t st = gpufit_evaluate(&r, m, j, &err);
    put_status(t, "evaluate", st, &err);
    if (st != GPUFIT_OK)
        return;
    gpufit_summary s = {.struct_size = sizeof s};
    put_status(t, "summary", gpufit_result_summary(r, &s), &err);
    put_summary(t, &s);
    size_t need = 0;
    if (gpufit_result_to_json(r, NULL, 0, &need, NULL) == GPUFIT_E_BUFFER_TOO_SMALL) {
        char *json = malloc(need + 1);
        if (json == NULL)
            abort();
        put_status(t, "json", gpufit_result_to_json(r, json, need + 1, NULL, &err), &err);
        put(t, "%s\n", json);
        free(json);
    } else {
        put(t, "json: no length\n");
    }
    gpufit_result_free(r);
}

/* The fast path on the shared handles. */
static void op_summary(text *t, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_summary s = {.struct_size = sizeof s};
    put_status(t, "evaluate_summary", gpufit_evaluate_summary(job_model[k], job_job[k], &s, &err),
               &err);
    put_summary(t, &s);
}

static void op_max_fitting(text *t, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    int64_t v = -1;
    put_status(t, "max_fitting",
               gpufit_max_fitting(job_model[k], job_job[k], jobs[k].max, &v, &err), &err);
    put(t, "value %lld\n", (long long)v);
}

/* The shared result's mitigations; each applied to a private copy of the shared job, which is
 * then evaluated (fast path) against the shared model. */
static void op_mitigations(text *t, size_t k)
{
    const gpufit_result *r = job_result[k];
    gpufit_summary s = {.struct_size = sizeof s};
    gpufit_error err = GPUFIT_ERROR_INIT;
    put_status(t, "summary", gpufit_result_summary(r, &s), &err);
    for (uint32_t i = 0; i < s.n_mitigations; i++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        put_status(t, "mitigation", gpufit_result_mitigation(r, i, &mi), &err);
        put(t, "%u: kind %d fits %d n %u peak %llu saved %lld cost %.17g '%s' '%s' %s\n", i,
            mi.kind, mi.fits_after, mi.n_changes, (unsigned long long)mi.peak_bytes_after,
            (long long)mi.saved_bytes, mi.cost, mi.text ? mi.text : "(null)",
            mi.changes ? mi.changes : "(null)", mi.changes_json ? mi.changes_json : "(null)");
        gpufit_job *jc = NULL;
        put_status(t, "copy", gpufit_job_copy(&jc, job_job[k], &err), &err);
        if (jc == NULL)
            continue;
        int32_t st = gpufit_job_apply_mitigation(jc, r, i, &err);
        put_status(t, "apply", st, &err);
        if (st == GPUFIT_OK) {
            t->applied++;
            gpufit_summary after = {.struct_size = sizeof after};
            put_status(t, "after", gpufit_evaluate_summary(job_model[k], jc, &after, &err), &err);
            put_summary(t, &after);
        }
        gpufit_job_free(jc);
    }
}

static int32_t make_recommend(gpufit_list **l, size_t k, gpufit_error *err)
{
    return gpufit_recommend(l, job_model[k], job_job[k], NULL, 0, 8, err);
}

static int32_t make_plan(gpufit_list **l, size_t k, gpufit_error *err)
{
    return gpufit_plan(l, job_model[k], job_job[k], 8, jobs[k].nodes, 5, err);
}

static void put_recommendations(text *t, const gpufit_list *l)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    uint32_t n = gpufit_list_count(l);
    put(t, "%u of %llu\n", n, (unsigned long long)gpufit_list_evaluated(l));
    for (uint32_t i = 0; i < n; i++) {
        gpufit_recommendation rec = {.struct_size = sizeof rec};
        put_status(t, "rec", gpufit_list_recommendation(l, i, &rec), &err);
        put(t,
            "%u: gpu %d x%u fits %d nvl %d/%d peak %llu head %lld $%.17g tf %.17g %.17g '%s' "
            "'%s'\n",
            i, rec.gpu_id, rec.count, rec.fits, rec.needs_nvlink, rec.has_nvlink,
            (unsigned long long)rec.peak_bytes, (long long)rec.headroom_bytes, rec.price_usd,
            rec.tflops, rec.tflops_per_kusd, rec.gpu_name ? rec.gpu_name : "(null)",
            rec.reason ? rec.reason : "(null)");
        put(t, "   '%s' %s\n", rec.spec ? rec.spec : "(null)",
            rec.spec_json ? rec.spec_json : "(null)");
    }
}

static void put_layouts(text *t, const gpufit_list *l)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    uint32_t n = gpufit_list_count(l);
    put(t, "%u of %llu\n", n, (unsigned long long)gpufit_list_evaluated(l));
    for (uint32_t i = 0; i < n; i++) {
        gpufit_layout lay = {.struct_size = sizeof lay};
        put_status(t, "layout", gpufit_list_layout(l, i, &lay), &err);
        put(t, "%u: %u %u %u %u %u %u %u %u %d peak %llu head %lld cost %.17g kv %llu '%s' '%s'\n",
            i, lay.tp, lay.pp, lay.vpp, lay.dp, lay.cp, lay.ep, lay.zero, lay.micro_batch,
            lay.checkpointing, (unsigned long long)lay.peak_bytes, (long long)lay.headroom_bytes,
            lay.cost, (unsigned long long)lay.kv_capacity_tokens, lay.spec ? lay.spec : "(null)",
            lay.placement ? lay.placement : "(null)");
        put(t, "   %s\n", lay.spec_json ? lay.spec_json : "(null)");
    }
}

/* gpufit_recommend on the shared handles, into a list of this thread's own. */
static void op_recommend(text *t, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_list *l = NULL;
    int32_t st = make_recommend(&l, k, &err);
    put_status(t, "recommend", st, &err);
    if (st == GPUFIT_OK)
        put_recommendations(t, l);
    gpufit_list_free(l);
}

static void op_plan(text *t, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_list *l = NULL;
    int32_t st = make_plan(&l, k, &err);
    put_status(t, "plan", st, &err);
    if (st == GPUFIT_OK)
        put_layouts(t, l);
    gpufit_list_free(l);
}

/* Every entry of shared list l applied (gpufit_job_apply_list_entry) to a private copy of job
 * k, which is then evaluated against the shared model. */
static void put_applied_entries(text *t, const gpufit_list *l, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    for (uint32_t i = 0; i < gpufit_list_count(l); i++) {
        gpufit_job *jc = NULL;
        put_status(t, "copy", gpufit_job_copy(&jc, job_job[k], &err), &err);
        if (jc == NULL)
            continue;
        int32_t st = gpufit_job_apply_list_entry(jc, l, i, &err);
        put_status(t, "apply entry", st, &err);
        if (st == GPUFIT_OK) {
            t->applied++;
            gpufit_summary after = {.struct_size = sizeof after};
            put_status(t, "after", gpufit_evaluate_summary(job_model[k], jc, &after, &err), &err);
            put_summary(t, &after);
        }
        gpufit_job_free(jc);
    }
}

/* The lists made once by main, read by every thread and applied to private job copies. */
static void op_shared_lists(text *t, size_t k)
{
    if (shared_rec[k] != NULL) {
        put_recommendations(t, shared_rec[k]);
        put_applied_entries(t, shared_rec[k], k);
    }
    if (shared_plan[k] != NULL) {
        put_layouts(t, shared_plan[k]);
        put_applied_entries(t, shared_plan[k], k);
    }
    put(t, "shared lists %d %d\n", shared_rec[k] != NULL, shared_plan[k] != NULL);
}

/* A model read by a reader: its counts and name, and its evaluation with the reader job. */
static void
put_read_model(text *t, const char *what, int32_t st, gpufit_model *m, const gpufit_error *err)
{
    put_status(t, what, st, err);
    if (st != GPUFIT_OK)
        return;
    uint64_t total = 0, active = 0;
    gpufit_error e = GPUFIT_ERROR_INIT;
    put_status(t, "param_count", gpufit_model_param_count(m, &total, &active, &e), &e);
    put(t, "'%s' %llu %llu\n", gpufit_model_name(m), (unsigned long long)total,
        (unsigned long long)active);
    put_evaluation(t, m, reader_job);
    gpufit_model_free(m);
}

static void op_hf(text *t, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    int32_t st = gpufit_model_from_hf_config(&m, hf_buf[k].b, hf_buf[k].n, &err);
    put_read_model(t, "from_hf_config", st, m, &err);
}

static void op_gguf(text *t, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    uint64_t need = 0;
    int32_t st = gpufit_model_from_gguf(&m, gguf_buf[k].b, gguf_buf[k].n, &need, &err);
    put(t, "needed %llu\n", (unsigned long long)need);
    put_read_model(t, "from_gguf", st, m, &err);
}

/* A safetensors header, and its check against the first job's (shared) model. */
static void op_safetensors(text *t, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_safetensors_info in = {.struct_size = sizeof in};
    uint64_t need = 0;
    int32_t st = gpufit_safetensors_read(&in, st_buf[k].b, st_buf[k].n, &need, &err);
    put_status(t, "safetensors_read", st, &err);
    put(t, "needed %llu: %u %llu %llu %llu %llu %llu %llu %llu\n", (unsigned long long)need,
        in.n_tensors, (unsigned long long)in.n_params, (unsigned long long)in.total_bytes,
        (unsigned long long)in.header_bytes, (unsigned long long)in.bytes_fp32,
        (unsigned long long)in.bytes_16bit, (unsigned long long)in.bytes_8bit,
        (unsigned long long)in.bytes_other);
    if (st == GPUFIT_OK)
        put_status(t, "check", gpufit_model_check_safetensors(job_model[0], &in, &err), &err);
}

/* A JSON scenario applied to private handles, then evaluated. */
static void op_json(text *t, size_t k)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    if (gpufit_model_new(&m, &err) != GPUFIT_OK || gpufit_job_new(&j, &err) != GPUFIT_OK) {
        put_status(t, "new", err.status, &err);
    } else {
        int32_t st = gpufit_apply_json(m, j, json_buf[k].b, json_buf[k].n, &err);
        put_status(t, "apply_json", st, &err);
        if (st == GPUFIT_OK)
            put_evaluation(t, m, j);
    }
    gpufit_model_free(m);
    gpufit_job_free(j);
}

/* Runs task i: its text into *t (reset first), its name into name. */
static void run_task(size_t i, text *t, char *name, size_t cap)
{
    t->n = 0;
    t->failed = t->applied = 0;
    if (t->s != NULL)
        t->s[0] = '\0';
    if (i < N_JOBS * N_JOB_OPS) {
        size_t k = i / N_JOB_OPS, op = i % N_JOB_OPS;
        snprintf(name, cap, "%s on '%s'", op_names[op], jobs[k].spec);
        switch (op) {
        case OP_SUMMARY:
            op_summary(t, k);
            break;
        case OP_MAX_FITTING:
            op_max_fitting(t, k);
            break;
        case OP_MITIGATIONS:
            op_mitigations(t, k);
            break;
        case OP_RECOMMEND:
            op_recommend(t, k);
            break;
        case OP_PLAN:
            op_plan(t, k);
            break;
        default:
            op_shared_lists(t, k);
            break;
        }
        return;
    }
    i -= N_JOBS * N_JOB_OPS;
    if (i < COUNT(hf_files)) {
        snprintf(name, cap, "gpufit_model_from_hf_config(%s)", hf_files[i]);
        op_hf(t, i);
        return;
    }
    i -= COUNT(hf_files);
    if (i < COUNT(gguf_files)) {
        snprintf(name, cap, "gpufit_model_from_gguf(%s)", gguf_files[i]);
        op_gguf(t, i);
        return;
    }
    i -= COUNT(gguf_files);
    if (i < COUNT(safetensors_files)) {
        snprintf(name, cap, "gpufit_safetensors_read(%s)", safetensors_files[i]);
        op_safetensors(t, i);
        return;
    }
    i -= COUNT(safetensors_files);
    snprintf(name, cap, "gpufit_apply_json(%s)", json_files[i]);
    op_json(t, i);
}

static void *worker(void *arg)
{
    size_t id = (size_t)(uintptr_t)arg;
    text t = {0};
    char name[256];
    pthread_barrier_wait(&start);
    for (int r = 0; r < rounds; r++) {
        for (size_t n = 0; n < N_TASKS; n++) {
            size_t i = (n + id * 7) % N_TASKS; /* threads start at different tasks */
            run_task(i, &t, name, sizeof name);
            atomic_fetch_add(&tasks_run, 1);
            if (t.s == NULL || strcmp(t.s, reference[i]) != 0) {
                const char *a = reference[i], *b = t.s ? t.s : "";
                size_t at = 0; /* start of the first line that differs */
                for (size_t p = 0; a[p] == b[p]; p++)
                    if (a[p] == '\n')
                        at = p + 1;
                fprintf(stderr,
                        "scheduler_stress: thread %zu round %d: %s differs from the "
                        "single-threaded answer\n  reference: %.*s\n  thread:    %.*s\n",
                        id, r, name, (int)strcspn(a + at, "\n"), a + at, (int)strcspn(b + at, "\n"),
                        b + at);
                atomic_fetch_add(&failures, 1);
            }
        }
    }
    free(t.s);
    return NULL;
}

static int slurp(const char *path, buffer *out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (size_t k; b != NULL && (k = fread(b + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (nb == NULL)
                free(b);
            b = nb;
        }
    }
    int bad = ferror(f) || b == NULL;
    fclose(f);
    if (bad) {
        free(b);
        return -1;
    }
    out->b = b;
    out->n = n;
    return 0;
}

static int load(const char *const *paths, buffer *bufs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (slurp(paths[i], &bufs[i]) != 0) {
            fprintf(stderr, "scheduler_stress: cannot read %s (run from the repository root)\n",
                    paths[i]);
            return -1;
        }
    }
    return 0;
}

static void unload(buffer *bufs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(bufs[i].b);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (threads < 1 || threads > 1024 || rounds < 1) {
        fprintf(stderr, "usage: scheduler_stress [THREADS [ROUNDS [-v]]]\n");
        return 2;
    }
    if (load(hf_files, hf_buf, COUNT(hf_files)) != 0 ||
        load(gguf_files, gguf_buf, COUNT(gguf_files)) != 0 ||
        load(safetensors_files, st_buf, COUNT(safetensors_files)) != 0 ||
        load(json_files, json_buf, COUNT(json_files)) != 0)
        return 1;
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *scratch = NULL;
    if (gpufit_model_new(&scratch, &err) != GPUFIT_OK ||
        gpufit_job_new(&reader_job, &err) != GPUFIT_OK ||
        gpufit_apply_spec(scratch, reader_job, "task=inference gpu=h100 context_len=4096 batch=4",
                          &err) != GPUFIT_OK) {
        fprintf(stderr, "scheduler_stress: reader job: %s\n", err.message);
        return 1;
    }
    gpufit_model_free(scratch);
    for (size_t k = 0; k < N_JOBS; k++) {
        if (gpufit_model_new(&job_model[k], &err) != GPUFIT_OK ||
            gpufit_job_new(&job_job[k], &err) != GPUFIT_OK ||
            gpufit_apply_spec(job_model[k], job_job[k], jobs[k].spec, &err) != GPUFIT_OK ||
            gpufit_evaluate(&job_result[k], job_model[k], job_job[k], &err) != GPUFIT_OK) {
            fprintf(stderr, "scheduler_stress: job '%s': %s\n", jobs[k].spec, err.message);
            return 1;
        }
        if (make_recommend(&shared_rec[k], k, NULL) != GPUFIT_OK)
            shared_rec[k] = NULL; /* the error is the recommend task's */
        if (make_plan(&shared_plan[k], k, NULL) != GPUFIT_OK)
            shared_plan[k] = NULL;
    }
    /* The single-threaded reference. Every kind of task must succeed at least once there, or
     * the run would only compare error messages. */
    text t = {0};
    char name[256];
    size_t ok = 0, mitigations = 0;
    for (size_t i = 0; i < N_TASKS; i++) {
        run_task(i, &t, name, sizeof name);
        reference[i] = strdup(t.s);
        if (reference[i] == NULL)
            return 1;
        ok += t.failed == 0;
        if (argc > 3 && strcmp(argv[3], "-v") == 0)
            printf("=== %s\n%s", name, t.s);
        mitigations += t.applied;
    }
    free(t.s);
    if (ok * 2 < N_TASKS || mitigations == 0) {
        fprintf(stderr,
                "scheduler_stress: only %zu of %zu tasks succeed single-threaded and %zu "
                "mitigations apply: the fixtures no longer exercise the library\n",
                ok, (size_t)N_TASKS, mitigations);
        return 1;
    }

    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (tid == NULL || pthread_barrier_init(&start, NULL, (unsigned)threads) != 0) {
        fprintf(stderr, "scheduler_stress: setup failed\n");
        return 1;
    }
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)i) != 0) {
            fprintf(stderr, "scheduler_stress: pthread_create failed\n");
            return 1; /* the barrier would never open */
        }
    }
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&start);
    free(tid);

    for (size_t i = 0; i < N_TASKS; i++)
        free(reference[i]);
    for (size_t k = 0; k < N_JOBS; k++) {
        gpufit_result_free(job_result[k]);
        gpufit_list_free(shared_rec[k]);
        gpufit_list_free(shared_plan[k]);
        gpufit_model_free(job_model[k]);
        gpufit_job_free(job_job[k]);
    }
    gpufit_job_free(reader_job);
    unload(hf_buf, COUNT(hf_files));
    unload(gguf_buf, COUNT(gguf_files));
    unload(st_buf, COUNT(safetensors_files));
    unload(json_buf, COUNT(json_files));
    int f = atomic_load(&failures);
    printf("scheduler_stress: %d threads x %d rounds x %zu tasks (%zu succeed, %zu mitigations "
           "and list entries applied): %ld runs, %d failure(s)\n",
           threads, rounds, (size_t)N_TASKS, ok, mitigations, atomic_load(&tasks_run), f);
    return f == 0 ? 0 : 1;
}
