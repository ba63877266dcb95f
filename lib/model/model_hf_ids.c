/* Hugging Face repository ids of releases that share a built-in preset's architecture: the
 * -Instruct / -chat / -it fine-tunes (same config.json shapes and vocabulary as the base, read
 * from each repository's config.json) and renamed repositories. A preset's own hf_repo is
 * matched in model_presets.c; this table adds the variants, compared case-insensitively. */
#include "internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *hf_id, *preset;
} variants[] = {
    {"meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama-3-8b"},
    {"meta-llama/Meta-Llama-3-70B-Instruct", "meta-llama-3-70b"},
    {"meta-llama/Llama-3.1-8B", "meta-llama-3.1-8b"},
    {"meta-llama/Llama-3.1-8B-Instruct", "meta-llama-3.1-8b"},
    {"meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama-3.1-8b"},
    {"meta-llama/Llama-3.1-70B", "meta-llama-3.1-70b"},
    {"meta-llama/Llama-3.1-70B-Instruct", "meta-llama-3.1-70b"},
    {"meta-llama/Meta-Llama-3.1-70B-Instruct", "meta-llama-3.1-70b"},
    {"meta-llama/Llama-3.1-405B", "meta-llama-3.1-405b"},
    {"meta-llama/Llama-3.1-405B-Instruct", "meta-llama-3.1-405b"},
    {"meta-llama/Meta-Llama-3.1-405B-Instruct", "meta-llama-3.1-405b"},
    {"meta-llama/Llama-3.2-1B-Instruct", "llama-3.2-1b"},
    {"meta-llama/Llama-3.2-3B-Instruct", "llama-3.2-3b"},
    {"meta-llama/Llama-2-7b-chat-hf", "llama-2-7b-hf"},
    {"meta-llama/Llama-2-13b-chat-hf", "llama-2-13b-hf"},
    {"meta-llama/Llama-2-70b-chat-hf", "llama-2-70b-hf"},
    {"mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b-v0.1"},
    {"mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"},
    {"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b-v0.1"},
    {"mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b-v0.1"},
    {"Qwen/Qwen2.5-0.5B-Instruct", "qwen2.5-0.5b"},
    {"Qwen/Qwen2.5-1.5B-Instruct", "qwen2.5-1.5b"},
    {"Qwen/Qwen2.5-3B-Instruct", "qwen2.5-3b"},
    {"Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"},
    {"Qwen/Qwen2.5-14B-Instruct", "qwen2.5-14b"},
    {"Qwen/Qwen2.5-32B-Instruct", "qwen2.5-32b"},
    {"Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"},
    {"google/gemma-2b-it", "gemma-2b"},
    {"google/gemma-7b-it", "gemma-7b"},
};

const char *gpufit__preset_hf_variant(const char *id, size_t len)
{
    for (size_t i = 0; id != NULL && i < sizeof variants / sizeof variants[0]; i++) {
        if (gpufit__streq_ci(id, len, variants[i].hf_id))
            return variants[i].preset;
    }
    return NULL;
}

int gpufit__preset_hf_variant_at(size_t i, const char **hf_id, const char **preset)
{
    if (i >= sizeof variants / sizeof variants[0])
        return 0;
    *hf_id = variants[i].hf_id;
    *preset = variants[i].preset;
    return 1;
}

/* "Did you mean" over the presets' names, aliases and Hugging Face ids (suggest.c's rule). */
static void consider(const char *q, size_t qlen, const char *c, size_t clen, const char **best,
                     size_t *best_len, size_t *best_d)
{
    size_t d = gpufit__edit_distance(q, qlen, c, clen);
    if (gpufit__suggest_close(d, qlen, clen) && d < *best_d) {
        *best = c;
        *best_len = clen;
        *best_d = d;
    }
}

size_t gpufit__suggest_preset(const char *q, size_t qlen, char *out, size_t cap)
{
    const char *name, *aliases, *hf, *best = NULL;
    size_t best_len = 0, best_d = SIZE_MAX;
    for (size_t i = 0; gpufit__preset_get(i, NULL, &name, &aliases, &hf) == GPUFIT_OK; i++) {
        consider(q, qlen, name, strlen(name), &best, &best_len, &best_d);
        consider(q, qlen, hf, strlen(hf), &best, &best_len, &best_d);
        for (const char *p = aliases; *p != '\0';) {
            size_t n = strcspn(p, " ");
            if (n > 0)
                consider(q, qlen, p, n, &best, &best_len, &best_d);
            p += n;
            p += strspn(p, " ");
        }
    }
    if (cap == 0)
        return 0;
    out[0] = '\0';
    if (best == NULL)
        return 0;
    int n = snprintf(out, cap, "; did you mean '%.*s'?", (int)best_len, best);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}
