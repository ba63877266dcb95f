/* SPDX-License-Identifier: MIT */
/* examples/basic.c: the smallest complete use of gpufit.
 *
 * Does Llama-3-8B inference with an 8192-token context fit on an RTX 4090?
 *
 * Build against an installed gpufit:
 *     cc -std=c11 basic.c $(pkg-config --cflags --libs gpufit) -o basic
 * `make check` builds and runs this file against a DESTDIR install (tests/install).
 *
 * The pattern shown here is the one every gpufit call follows: fallible functions return a
 * gpufit_status (0 = GPUFIT_OK, negative = failure) and take an optional gpufit_error as their
 * last argument, which receives a one-line message; output structs are size-prefixed, so
 * their struct_size is set before the call. */
#include <gpufit.h>

#include <inttypes.h>
#include <stdio.h>

/* Prints the failure of `what` and returns 1, or returns 0 on success. Calls that take no
 * gpufit_error (err == NULL) are described by gpufit_status_str(). */
static int failed(int32_t status, const char *what, const gpufit_error *err)
{
    if (status == GPUFIT_OK)
        return 0;
    if (err != NULL && err->message[0] != '\0')
        fprintf(stderr, "basic: %s: %s\n", what, err->message);
    else
        fprintf(stderr, "basic: %s: %s\n", what, gpufit_status_str(status));
    return 1;
}

/* Byte counts are exact uint64_t; GiB are only for display. */
static double gib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0 * 1024.0);
}

int main(void)
{
    gpufit_error err = GPUFIT_ERROR_INIT; /* struct_size set, offset = none */
    gpufit_model *model = NULL;
    gpufit_job *job = NULL;
    gpufit_result *result = NULL;
    gpufit_summary summary = {.struct_size = sizeof(gpufit_summary)};
    int rc = 1;

    /* 1. The library loaded at run time must be the one this program was compiled against. */
    if (gpufit_version_number() != GPUFIT_VERSION_NUMBER) {
        fprintf(stderr, "basic: compiled against gpufit %s but running with %s\n",
                GPUFIT_VERSION_STRING, gpufit_version_string());
        return 1;
    }

    /* 2. A model from the built-in catalogue, and a job with every parameter at its default. */
    if (failed(gpufit_model_from_preset(&model, "llama-3-8b", &err), "model", &err))
        goto done;
    if (failed(gpufit_job_new(&job, &err), "job", &err))
        goto done;

    /* 3. Describe the job with a spec string (typed setters such as gpufit_job_set_int() do the
     *    same). On error err.offset is the byte offset of the bad token. */
    if (failed(gpufit_apply_spec(model, job, "task=inference gpu=rtx-4090 context_len=8192", &err),
               "spec", &err))
        goto done;

    /* 4. Evaluate. Not fitting is a verdict in the result, not an error. */
    if (failed(gpufit_evaluate(&result, model, job, &err), "evaluate", &err))
        goto done;

    if (failed(gpufit_result_summary(result, &summary), "summary", NULL))
        goto done;
    printf("gpufit %s: %s, %" PRIu64 " parameters\n", gpufit_version_string(),
           gpufit_model_name(model), summary.n_params);
    printf("verdict:  %s\n", summary.fits ? "fits" : "does not fit (OOM)");
    printf("peak:     %.2f GiB of %.2f GiB (headroom %+.2f GiB)\n", gib(summary.peak_bytes),
           gib(summary.capacity_bytes),
           (double)summary.headroom_bytes / (1024.0 * 1024.0 * 1024.0));

    /* 5. Each device role (one for a single GPU; first/middle/last stages under pipeline
     *    parallelism) and its components, which add up to the role's device_used_bytes. */
    for (uint32_t i = 0; i < summary.n_roles; i++) {
        gpufit_role_info role = {.struct_size = sizeof(gpufit_role_info)};
        if (failed(gpufit_result_role(result, i, &role), "role", NULL))
            goto done;
        printf("role %s (%" PRIu32 " device(s)): %.2f GiB used, %s\n", role.name, role.n_devices,
               gib(role.device_used_bytes), role.fits ? "fits" : "OOM");
        for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
            uint64_t bytes = 0;
            if (failed(gpufit_result_bytes(result, i, c, &bytes), "component", NULL))
                goto done;
            printf("  %-18s %10.3f GiB  (%" PRIu64 " bytes)\n", gpufit_component_name(c),
                   gib(bytes), bytes);
        }
    }

    /* 6. Notes: the assumptions and warnings behind the numbers; owned by the result. */
    for (uint32_t i = 0; i < summary.n_notes; i++) {
        const char *note = NULL;
        if (gpufit_result_note(result, i, &note) == GPUFIT_OK)
            printf("note: %s\n", note);
    }
    rc = 0;

done:
    /* 7. Every *_free accepts NULL, so one cleanup path serves every exit. */
    gpufit_result_free(result);
    gpufit_job_free(job);
    gpufit_model_free(model);
    return rc;
}
