/* Hugging Face repository ids of releases that share a built-in preset's architecture: the
 * -Instruct / -chat / -it fine-tunes (same config.json shapes and vocabulary as the base, read
 * from each repository's config.json) and renamed repositories. A preset's own hf_repo is
 * matched in model_presets.c; this table adds the variants, compared case-insensitively. */
#include "internal.h"

#include <stddef.h>

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
