/* Unit tests of the names users type (issue 15 item 3): GPUs by nvidia-smi, torch, Kubernetes
 * and Slurm names (lib/gpu_catalog.c), presets by Hugging Face id (lib/model_hf_ids.c), and the
 * "did you mean" hints (lib/suggest.c). Exact resolution to catalogue keys and preset names. */
#include <criterion/criterion.h>

#include "internal.h"

#include <string.h>

static const struct {
    const char *typed, *key;
} gpu_names[] = {
    /* nvidia-smi / torch.cuda.get_device_name() */
    {"NVIDIA A100-SXM4-80GB", "a100-80gb-sxm4"},
    {"NVIDIA A100-SXM4-40GB", "a100-40gb-sxm4"},
    {"NVIDIA A100-PCIE-40GB", "a100-40gb-pcie"},
    {"NVIDIA A100 80GB PCIe", "a100-80gb-pcie"},
    {"NVIDIA GeForce RTX 4090", "rtx-4090"},
    {"NVIDIA GeForce RTX 3090", "rtx-3090"},
    {"NVIDIA H100 80GB HBM3", "h100-sxm5"},
    {"NVIDIA H100 PCIe", "h100-pcie"},
    {"NVIDIA H100 NVL", "h100-nvl"},
    {"NVIDIA H200", "h200-sxm"},
    {"NVIDIA B200", "b200-hgx"},
    {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
    {"Tesla V100-SXM2-16GB", "v100-sxm2-16gb"},
    {"Tesla T4", "t4"},
    {"NVIDIA L40S", "l40s"},
    {"NVIDIA L4", "l4"},
    {"NVIDIA A10", "a10"},
    {"NVIDIA RTX A6000", "rtx-a6000"},
    {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
    {"AMD Instinct MI300X", "mi300x"},
    {"NVIDIA GeForce RTX 4080", "rtx-4080"},
    {"NVIDIA GeForce RTX 4080 SUPER", "rtx-4080-super"},
    {"NVIDIA GeForce RTX 4070 Ti", "rtx-4070-ti"},
    {"NVIDIA GeForce RTX 4070 Ti SUPER", "rtx-4070-ti-super"},
    {"NVIDIA GeForce RTX 4070", "rtx-4070"},
    {"NVIDIA GeForce RTX 5080", "rtx-5080"},
    {"NVIDIA GeForce RTX 5070 Ti", "rtx-5070-ti"},
    {"NVIDIA GeForce RTX 5070", "rtx-5070"},
    {"NVIDIA H20", "h20"},
    /* Kubernetes nvidia.com/gpu.product labels */
    {"NVIDIA-A100-SXM4-80GB", "a100-80gb-sxm4"},
    {"NVIDIA-GeForce-RTX-4090", "rtx-4090"},
    {"NVIDIA-H100-80GB-HBM3", "h100-sxm5"},
    {"NVIDIA-H20", "h20"},
    /* Slurm GRES types */
    {"a100_80gb", "a100-80gb-sxm4"},
    {"a100-40gb", "a100-40gb-sxm4"},
    {"h100", "h100-sxm5"},
    {"rtx4090", "rtx-4090"},
    {"RTX_4090", "rtx-4090"},
    {"mi300x", "mi300x"},
    {"rtx_4060_ti_16gb", "rtx-4060-ti-16gb"},
    {"4060-ti-8gb", "rtx-4060-ti-8gb"},
    {"rtx4080", "rtx-4080"},
};

Test(names, gpu_names_resolve_exactly)
{
    for (size_t i = 0; i < sizeof gpu_names / sizeof gpu_names[0]; i++) {
        const gpufit__gpu *g = gpufit__gpu_find(gpu_names[i].typed, strlen(gpu_names[i].typed));
        cr_assert_not_null(g, "%s", gpu_names[i].typed);
        cr_assert_str_eq(g->key, gpu_names[i].key, "%s", gpu_names[i].typed);
    }
}

Test(names, bare_a100_is_ambiguous_not_a_guess)
{
    cr_assert_null(gpufit__gpu_find("a100", 4));
    cr_assert_null(gpufit__gpu_find("NVIDIA A100", 11));
    cr_assert_str_eq(gpufit__gpu_ambiguous("A100", 4),
                     "a100-40gb-sxm4, a100-80gb-sxm4, a100-40gb-pcie, a100-80gb-pcie");
    cr_assert_null(gpufit__gpu_ambiguous("h100", 4));
    /* nvidia-smi names both RTX 4060 Ti cards alike: memory decides */
    cr_assert_null(gpufit__gpu_find("NVIDIA GeForce RTX 4060 Ti", 26));
    cr_assert_str_eq(gpufit__gpu_ambiguous("NVIDIA GeForce RTX 4060 Ti", 26),
                     "rtx-4060-ti-16gb, rtx-4060-ti-8gb");
    /* vendor words alone, and unknown cards, are no GPU */
    cr_assert_null(gpufit__gpu_find("NVIDIA GeForce", 14));
    cr_assert_null(gpufit__gpu_find("rtx-9999", 8));
}

Test(names, quoted_gpu_name_in_a_spec)
{
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(NULL, j, "gpu=\"NVIDIA GeForce RTX 4090\"", &err), GPUFIT_OK,
                 "%s", err.message);
    cr_assert_eq(j->gpu, gpufit__gpu_find("rtx-4090", 8)->id);
    cr_assert_neq(gpufit_apply_spec(NULL, j, "gpu=a100", &err), GPUFIT_OK);
    cr_assert_not_null(strstr(err.message, "ambiguous"), "%s", err.message);
    cr_assert_not_null(strstr(err.message, "a100-80gb-pcie"), "%s", err.message);
    gpufit_job_free(j);
}

static const struct {
    const char *typed, *preset;
} hf_ids[] = {
    {"meta-llama/Meta-Llama-3-8B", "meta-llama-3-8b"},
    {"META-LLAMA/meta-llama-3-8b", "meta-llama-3-8b"},
    {"meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama-3-8b"},
    {"meta-llama/Llama-3.1-8B-Instruct", "meta-llama-3.1-8b"},
    {"Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"},
    {"Qwen/Qwen2.5-7B", "qwen2.5-7b"},
    {"mistralai/Mistral-7B-v0.1", "mistral-7b-v0.1"},
    {"mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b-v0.1"},
    {"meta-llama/Llama-2-7b-chat-hf", "llama-2-7b-hf"},
};

Test(names, presets_by_hugging_face_id)
{
    for (size_t i = 0; i < sizeof hf_ids / sizeof hf_ids[0]; i++) {
        struct gpufit_model got, want;
        memset(&got, 0, sizeof got); /* loading leaves the arrays' unused tails alone */
        memset(&want, 0, sizeof want);
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit__preset_load(&got, hf_ids[i].typed, strlen(hf_ids[i].typed), &err),
                     GPUFIT_OK, "%s: %s", hf_ids[i].typed, err.message);
        cr_assert_eq(gpufit__preset_load(&want, hf_ids[i].preset, strlen(hf_ids[i].preset), &err),
                     GPUFIT_OK);
        /* same architecture; the name is the one the user typed */
        memcpy(got.name, want.name, sizeof got.name);
        cr_assert_eq(memcmp(&got, &want, sizeof got), 0, "%s", hf_ids[i].typed);
    }
}

Test(names, edit_distance)
{
    cr_assert_eq(gpufit__edit_distance("task", 4, "task", 4), 0);
    cr_assert_eq(gpufit__edit_distance("tsk", 3, "task", 4), 1);
    cr_assert_eq(gpufit__edit_distance("rtx-4900", 8, "rtx-4090", 8), 1); /* transposition */
    cr_assert_eq(gpufit__edit_distance("Micro_Batch", 11, "micro-batch", 11), 0);
    cr_assert_eq(gpufit__edit_distance("abc", 3, "xyz", 3), 3);
}

static void expect_hint(int32_t st, const gpufit_error *err, const char *hint)
{
    cr_assert_neq(st, GPUFIT_OK);
    cr_assert_not_null(strstr(err->message, hint), "%s", err->message);
}

Test(names, did_you_mean)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    expect_hint(gpufit_apply_spec(NULL, j, "tsk=inference", &err), &err,
                "; did you mean 'task'?");
    expect_hint(gpufit_apply_spec(NULL, j, "task=infrence", &err), &err,
                "; did you mean 'inference'?");
    expect_hint(gpufit_apply_spec(NULL, j, "gpu=rtx4900", &err), &err,
                "; did you mean 'rtx-4090'?");
    expect_hint(gpufit_apply_spec(m, NULL, "model=llama-3-8", &err), &err,
                "; did you mean 'llama-3-8b'?");
    /* nothing close: no hint */
    cr_assert_neq(gpufit_apply_spec(NULL, j, "zzzzzzzz=1", &err), GPUFIT_OK);
    cr_assert_null(strstr(err.message, "did you mean"), "%s", err.message);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* An unknown model_type with the standard keys reads as a Llama-style decoder, with a note;
 * the same numbers as the llama type; without them, an error naming the missing keys. */
#define STD_KEYS                                                                                   \
    "\"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "             \
    "\"num_key_value_heads\": 8, \"intermediate_size\": 14336, \"vocab_size\": 128256}"

static int has_unknown_type_note(const gpufit_model *m, uint64_t *peak)
{
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(NULL, j, "task=inference gpu=rtx-4090", &err), GPUFIT_OK);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s", err.message);
    gpufit_summary s = {.struct_size = sizeof s};
    cr_assert_eq(gpufit_result_summary(r, &s), GPUFIT_OK);
    *peak = s.peak_bytes;
    int found = 0;
    for (uint32_t i = 0; i < s.n_notes; i++) {
        const char *t = NULL;
        cr_assert_eq(gpufit_result_note(r, i, &t), GPUFIT_OK);
        found |= strstr(t, "model_type is not known: read as a Llama-style decoder") != NULL;
    }
    gpufit_result_free(r);
    gpufit_job_free(j);
    return found;
}

Test(names, unknown_model_type_reads_as_llama_decoder)
{
    static const char foo[] = "{\"model_type\": \"foo_lm\", " STD_KEYS;
    static const char llama[] = "{\"model_type\": \"llama\", " STD_KEYS;
    gpufit_model *a = NULL, *b = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_hf_config(&a, foo, sizeof foo - 1, &err), GPUFIT_OK, "%s",
                 err.message);
    cr_assert_eq(gpufit_model_from_hf_config(&b, llama, sizeof llama - 1, &err), GPUFIT_OK);
    uint64_t pa, pb;
    cr_assert(has_unknown_type_note(a, &pa));
    cr_assert(!has_unknown_type_note(b, &pb));
    cr_assert_eq(pa, pb);
    gpufit_model_free(a);
    gpufit_model_free(b);
    static const char bad[] = "{\"model_type\": \"foo_lm\", \"hidden_size\": 64}";
    cr_assert_eq(gpufit_model_from_hf_config(&a, bad, sizeof bad - 1, &err),
                 GPUFIT_E_UNSUPPORTED);
    cr_assert_not_null(strstr(err.message, "num_hidden_layers, num_attention_heads, "
                                           "intermediate_size, vocab_size"),
                       "%s", err.message);
}
