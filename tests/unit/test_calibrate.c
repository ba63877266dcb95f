/* SPDX-License-Identifier: MIT */
/* Calibration (docs/calibration.md): profiles applied to a job, and constants fitted from
 * measured runs, bytes by hand. */
#include <stdio.h>
#include <string.h>

#include "run.h"

#define MIB ((uint64_t)1 << 20)
#define JOB "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192"

static int32_t apply(gpufit_job *j, const char *json, gpufit_error *err)
{
    *err = (gpufit_error)GPUFIT_ERROR_INIT;
    return gpufit_job_apply_profile(j, json, strlen(json), err);
}

/* A profile's CUDA context replaces the table's 512 MiB, its range the band's. */
Test(calibrate, profile_moves_the_context_by_hand)
{
    run_s a, b;
    cr_assert_eq(run(&a, JOB), GPUFIT_OK);
    cr_assert_eq(run(&b, JOB), GPUFIT_OK);
    gpufit_result_free(b.r);
    gpufit_error err;
    cr_assert_eq(apply(b.j, "{\"gpufit_profile\": 1, \"runs\": 2, \"constants\": "
                            "{\"cuda_context\": {\"point\": 419430400, \"low\": 400000000, "
                            "\"high\": 440000000, \"runs\": 2}}}",
                       &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(gpufit_evaluate(&b.r, b.m, b.j, &err), GPUFIT_OK);
    uint64_t x = 0, y = 0, lo = 0, hi = 0;
    gpufit_result_bytes(a.r, 0, GPUFIT_MEM_RUNTIME_CONTEXT, &x);
    gpufit_result_bytes(b.r, 0, GPUFIT_MEM_RUNTIME_CONTEXT, &y);
    cr_assert_eq(x, 512 * MIB);
    cr_assert_eq(y, 400 * MIB);
    /* fitted from 2 runs (< GPUFIT__PROF_NARROW_RUNS): the documented 300-600 MiB stays */
    gpufit_result_bytes_band(b.r, 0, GPUFIT_MEM_RUNTIME_CONTEXT, &lo, &hi);
    cr_assert(lo == 300 * MIB && hi == 600 * MIB, "%llu %llu", (unsigned long long)lo,
              (unsigned long long)hi);
    cr_assert_eq(role(&a, 0).device_used_bytes - role(&b, 0).device_used_bytes, 112 * MIB);
    /* from 3 runs, or written by hand (no runs), the profile's range is taken as it is */
    static const char *const narrow[] = {
        "{\"gpufit_profile\": 1, \"constants\": {\"cuda_context\": {\"point\": 419430400, "
        "\"low\": 400000000, \"high\": 440000000, \"runs\": 3}}}",
        "{\"gpufit_profile\": 1, \"constants\": {\"cuda_context\": {\"point\": 419430400, "
        "\"low\": 400000000, \"high\": 440000000}}}"};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(apply(b.j, narrow[k], &err), GPUFIT_OK, "%s", err.message);
        gpufit_result_free(b.r);
        cr_assert_eq(gpufit_evaluate(&b.r, b.m, b.j, &err), GPUFIT_OK);
        gpufit_result_bytes_band(b.r, 0, GPUFIT_MEM_RUNTIME_CONTEXT, &lo, &hi);
        cr_assert(lo == 400000000 && hi == 440000000, "profile %d", k);
    }
    /* a count of runs is a whole number */
    cr_assert_eq(apply(b.j, "{\"gpufit_profile\": 1, \"constants\": {\"cuda_context\": "
                            "{\"point\": 1, \"low\": 1, \"high\": 1, \"runs\": 2.5}}}",
                       &err),
                 GPUFIT_E_INVALID_ARG);
    /* a value the job gives still wins */
    cr_assert_eq(gpufit_apply_spec(NULL, b.j, "cuda_context_bytes=1GiB", &err), GPUFIT_OK);
    gpufit_result_free(b.r);
    cr_assert_eq(gpufit_evaluate(&b.r, b.m, b.j, &err), GPUFIT_OK);
    gpufit_result_bytes(b.r, 0, GPUFIT_MEM_RUNTIME_CONTEXT, &y);
    cr_assert_eq(y, 1024 * MIB);
    done(&a);
    done(&b);
}

Test(calibrate, bad_profiles_are_errors_and_change_nothing)
{
    static const struct {
        const char *json;
        int32_t st;
    } bad[] = {
        {"[]", GPUFIT_E_PARSE},
        {"{\"constants\": {}}", GPUFIT_E_INVALID_ARG}, /* no version */
        {"{\"gpufit_profile\": 2, \"constants\": {}}", GPUFIT_E_UNSUPPORTED},
        {"{\"gpufit_profile\": 1, \"constants\": {\"cuda_ctx\": {}}}", GPUFIT_E_UNKNOWN_PARAM},
        {"{\"gpufit_profile\": 1, \"constants\": {\"cuda_context\": {\"point\": 5, \"low\": 6, "
         "\"high\": 7}}}",
         GPUFIT_E_INVALID_ARG},
        {"{\"gpufit_profile\": 1, \"constants\": {\"cuda_context\": {\"point\": -1, \"low\": 0, "
         "\"high\": 7}}}",
         GPUFIT_E_INVALID_ARG},
        {"{\"gpufit_profile\": 1, \"constants\": {\"allocator_slack\": {\"point\": 0.2, "
         "\"low\": 0.1, \"high\": 0.3}, \"allocator_slack\": {\"point\": 0.2, \"low\": 0.1, "
         "\"high\": 0.3}}}",
         GPUFIT_E_INVALID_ARG},
        {"{\"gpufit_profile\": 1, \"extra\": 1}", GPUFIT_E_UNKNOWN_PARAM},
        {"{\"gpufit_profile\": 1, \"constants\": {\"nccl_per_comm\": {\"point\": 1, \"low\": 1, "
         "\"high\": 1}}",
         GPUFIT_E_PARSE}, /* truncated */
    };
    run_s s;
    cr_assert_eq(run(&s, JOB), GPUFIT_OK);
    uint64_t before = role(&s, 0).device_used_bytes;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpufit_error err;
        cr_assert_eq(apply(s.j, bad[i].json, &err), bad[i].st, "%s: %s", bad[i].json,
                     err.message);
        cr_assert(err.message[0] != '\0');
    }
    gpufit_result_free(s.r);
    cr_assert_eq(gpufit_evaluate(&s.r, s.m, s.j, NULL), GPUFIT_OK);
    cr_assert_eq(role(&s, 0).device_used_bytes, before);
    cr_assert_eq(gpufit_job_apply_profile(NULL, "{}", 2, NULL), GPUFIT_E_INVALID_ARG);
    done(&s);
}

/* Two device_used runs of one job, 400 and 600 MiB above the predicted peak reserved (no
 * NCCL on one GPU): the context is their median, 500 MiB, its range 400-600 MiB. A run
 * measured at another level constrains nothing. */
Test(calibrate, context_from_device_used_runs)
{
    run_s s;
    cr_assert_eq(run(&s, JOB), GPUFIT_OK);
    uint64_t reserved = role(&s, 0).peak_reserved_bytes;
    done(&s);
    static const char *const scen = "{\"model\": \"llama-3-8b\", \"task\": \"inference\", "
                                    "\"gpu\": \"rtx-4090\", \"context_len\": 8192}";
    char runs[2048];
    snprintf(runs, sizeof runs,
             "{\"id\": \"a\", \"scenario\": %s, \"measurements\": [{\"level\": "
             "\"device_used_bytes\", \"role\": \"all\", \"bytes\": %llu}]}\n"
             "\n"
             "{\"id\": \"b\", \"scenario\": %s, \"measurements\": [{\"level\": "
             "\"device_used_bytes\", \"role\": \"all\", \"bytes\": %llu}]}\n"
             "{\"id\": \"c\", \"scenario\": %s, \"measurements\": [{\"level\": "
             "\"component:weights\", \"role\": \"all\", \"bytes\": 1}]}\n",
             scen, (unsigned long long)(reserved + 400 * MIB), scen,
             (unsigned long long)(reserved + 600 * MIB), scen);
    char prof[1024];
    size_t len = 0;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_calibrate(runs, strlen(runs), prof, sizeof prof, &len, &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(len, strlen(prof));
    cr_assert(strstr(prof, "\"runs\": 3,") != NULL, "%s", prof);
    cr_assert(strstr(prof, "\"runs_used\": 2,") != NULL, "%s", prof);
    cr_assert(strstr(prof, "\"cuda_context\": {\"point\": 524288000, \"low\": 419430400, "
                           "\"high\": 629145600, \"runs\": 2}") != NULL,
              "%s", prof);
    cr_assert(strstr(prof, "allocator_slack") == NULL); /* no run constrained it */
    /* the profile applies as written */
    cr_assert_eq(run(&s, JOB), GPUFIT_OK);
    cr_assert_eq(gpufit_job_apply_profile(s.j, prof, len, &err), GPUFIT_OK, "%s", err.message);
    gpufit_result_free(s.r);
    cr_assert_eq(gpufit_evaluate(&s.r, s.m, s.j, NULL), GPUFIT_OK);
    cr_assert_eq(role(&s, 0).device_used_bytes, reserved + 500 * MIB);
    done(&s);
    /* the buffer protocol: too small says how much is needed */
    size_t full = strlen(prof), need = 0;
    cr_assert_eq(gpufit_calibrate(runs, strlen(runs), prof, 10, &need, &err),
                 GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(need, full);
    cr_assert_eq(strlen(prof), 9); /* truncated, NUL-terminated */
}

/* vLLM's CUDA graphs from the device's use (docs/calibration.md): Llama-3-8B on one H100 at
 * 0.19 captures 102 sizes over 32 layers (3,264 units, test_serving.c), on top of its budget:
 * predicted device use 78,014,893,261 B. Two runs 3,264 x 100 KiB and 3,264 x 200 KiB above it
 * fit 280 + 100 and 280 + 200 KiB per unit: point 440,320 B (the median), range 389,120 -
 * 491,520. Applied (2 runs: the table's 96-450 KiB range is kept around it), the graphs grow by
 * 3,264 x (440,320 - 286,720) = 501,350,400 B, and the device's use with them. */
Test(calibrate, vllm_graphs_from_device_used_runs)
{
    static const char *const scen = "{\"model\": \"llama-3-8b\", \"task\": \"inference\", "
                                    "\"gpu\": \"h100\", \"framework\": \"vllm\", "
                                    "\"framework_version\": \"0.19\"}";
    char runs[2048];
    snprintf(runs, sizeof runs,
             "{\"scenario\": %s, \"measurements\": [{\"level\": \"device_used_bytes\", "
             "\"role\": \"all\", \"bytes\": 78349126861}]}\n"
             "{\"scenario\": %s, \"measurements\": [{\"level\": \"device_used_bytes\", "
             "\"role\": \"all\", \"bytes\": 78683360461}]}\n",
             scen, scen);
    char prof[1024];
    size_t len = 0;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_calibrate(runs, strlen(runs), prof, sizeof prof, &len, &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert(strstr(prof, "\"vllm_cuda_graph\": {\"point\": 440320, \"low\": 389120, "
                           "\"high\": 491520, \"runs\": 2}") != NULL,
              "%s", prof);
    cr_assert(strstr(prof, "cuda_context") == NULL, "%s", prof); /* a server's: not the context */
    run_s s;
    const char *job = "model=llama-3-8b task=inference gpu=h100 framework=vllm "
                      "framework_version=0.19";
    cr_assert_eq(run(&s, job), GPUFIT_OK);
    uint64_t before = role(&s, 0).device_used_bytes;
    cr_assert_eq(before, UINT64_C(78014893261));
    cr_assert_eq(gpufit_job_apply_profile(s.j, prof, len, &err), GPUFIT_OK, "%s", err.message);
    gpufit_result_free(s.r);
    cr_assert_eq(gpufit_evaluate(&s.r, s.m, s.j, NULL), GPUFIT_OK);
    cr_assert_eq(role(&s, 0).device_used_bytes, before + UINT64_C(501350400));
    uint64_t ws = 0, lo = 0, hi = 0;
    cr_assert_eq(gpufit_result_bytes(s.r, 0, GPUFIT_MEM_WORKSPACE, &ws), GPUFIT_OK);
    cr_assert_eq(ws, UINT64_C(1860829184));
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, GPUFIT_MEM_WORKSPACE, &lo, &hi), GPUFIT_OK);
    /* 250 MiB + 3,264 x 96 KiB + the pool; 700 MiB + 3,264 x 491,520 + the pool */
    cr_assert_eq(lo, UINT64_C(639631360));
    cr_assert_eq(hi, UINT64_C(734003200) + UINT64_C(3264) * 491520 + UINT64_C(56623104));
    done(&s);
    /* a hand-written profile sets it too; a bad one names the constant */
    cr_assert_eq(run(&s, job), GPUFIT_OK);
    cr_assert_eq(apply(s.j,
                       "{\"gpufit_profile\": 1, \"constants\": {\"vllm_cuda_graph\": "
                       "{\"point\": 200000, \"low\": 300000, \"high\": 400000}}}",
                       &err),
                 GPUFIT_E_INVALID_ARG);
    cr_assert(strstr(err.message, "vllm_cuda_graph") != NULL, "%s", err.message);
    done(&s);
}

/* A bad run is an error with the byte offset of its line (plus the offset inside it). */
Test(calibrate, bad_runs_name_the_line)
{
    const char *runs = "{\"scenario\": {\"model\": \"llama-3-8b\"}, \"measurements\": []}\n"
                       "{\"scenario\": {\"model\": \"no-such-model\"}, \"measurements\": []}\n";
    char prof[512];
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_neq(gpufit_calibrate(runs, strlen(runs), prof, sizeof prof, NULL, &err),
                  GPUFIT_OK);
    size_t line2 = strchr(runs, '\n') - runs + 1;
    cr_assert(err.offset >= line2 && err.offset < strlen(runs), "%llu: %s",
              (unsigned long long)err.offset, err.message);
    const char *no_meas = "{\"scenario\": {\"model\": \"llama-3-8b\"}}\n";
    cr_assert_eq(gpufit_calibrate(no_meas, strlen(no_meas), prof, sizeof prof, NULL, &err),
                 GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_calibrate("not json\n", 9, prof, sizeof prof, NULL, &err),
                 GPUFIT_E_PARSE);
}
