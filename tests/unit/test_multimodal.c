/* SPDX-License-Identifier: MIT */
/* Multimodal models (docs/memory/multimodal.md): the vision encoder's exact parameter counts
 * against published totals, its weights per role and framework, the Hugging Face reader's
 * vision_config per family, and vLLM's encoder profile (the KV budget with and without it),
 * every number worked out by hand in the comments from the frameworks' code. */
#include <criterion/criterion.h>

#include "eval.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------- */
typedef struct run_t {
    gpufit_model *m;
    gpufit_job *j;
    gpufit_result *r;
    gpufit_error err;
} run_t;

static int32_t run(run_t *s, const char *spec)
{
    s->err = (gpufit_error)GPUFIT_ERROR_INIT;
    s->r = NULL;
    cr_assert_eq(gpufit_model_new(&s->m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&s->j, NULL), GPUFIT_OK);
    int32_t st = gpufit_apply_spec(s->m, s->j, spec, &s->err);
    if (st == GPUFIT_OK)
        st = gpufit_evaluate(&s->r, s->m, s->j, &s->err);
    return st;
}

static void done(run_t *s)
{
    gpufit_result_free(s->r);
    gpufit_job_free(s->j);
    gpufit_model_free(s->m);
}

static uint64_t comp(const run_t *s, uint32_t role, int32_t c)
{
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(s->r, role, c, &b), GPUFIT_OK);
    return b;
}

static gpufit_role_info role_of(const run_t *s, uint32_t i)
{
    gpufit_role_info ri;
    memset(&ri, 0, sizeof ri);
    ri.struct_size = sizeof ri;
    cr_assert_eq(gpufit_result_role(s->r, i, &ri), GPUFIT_OK);
    return ri;
}

static uint64_t total_of(const gpufit_model *m)
{
    uint64_t t = 0, a = 0;
    cr_assert_eq(gpufit_model_param_count(m, &t, &a, NULL), GPUFIT_OK);
    cr_assert_eq(t, a); /* dense: the vision tower counts in the active parameters too */
    return t;
}

static uint64_t preset_total(const char *name)
{
    gpufit_model *m = NULL;
    cr_assert_eq(gpufit_model_from_preset(&m, name, NULL), GPUFIT_OK, "%s", name);
    uint64_t t = total_of(m);
    gpufit_model_free(m);
    return t;
}

static uint64_t vision_of(const gpufit_model *m)
{
    gpufit__shape s;
    gpufit__counts c;
    cr_assert_eq(gpufit__model_resolve(m, &s, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit__model_count(&s, &c, NULL), GPUFIT_OK);
    return c.vision;
}

/* ---------------------------------------------------------------------------------------
 * Exact counts against published totals
 * ------------------------------------------------------------------------------------- */
/* Sources: llava-1.5-7b-hf sum(p.numel()) = 7,063,427,072 (HF printouts in public code);
 * Qwen2-VL-7B-Instruct safetensors total_size 16,582,751,232 / 2 = 8,291,375,616 (and the
 * safetensors parameter_count of Qwen2-VL-2B, 2,208,985,600); Qwen2.5-VL-7B-Instruct
 * 8,292,166,656 with visual = 676,550,144 (a fine-tuning script's printout); Mistral Small 3.1
 * 24,011,361,280 (keras-hub preset metadata). */
Test(multimodal, published_totals)
{
    static const struct {
        const char *name;
        uint64_t total, vision;
    } t[] = {
        /* CLIP ViT-L/14-336: conv 3·14²·1024 = 602,112 (no bias) + class 1,024 + positions
         * 577·1,024 = 590,848 + pre/post LN 4,096 + 24 layers x (4 (1024² + 1024) + 2·1024·4096
         * + 4096 + 1024 + 4·1024 = 12,596,224) = 302,309,376 -> 303,507,456; projector
         * 1024·4096 + 4096 + 4096² + 4096 = 20,979,712 */
        {"llava-1.5-7b", 7063427072ULL, 324487168ULL},
        /* Qwen2-VL ViT: Conv3d 3·2·14²·1280 = 1,505,280 + 32 x (4·1280² + 4·1280 (qkv, proj
         * with biases) + 2·1280·5120 + 5120 + 1280 + 4·1280 (2 LN)) = 629,678,080; merger
         * LN 2,560 + 5120² + 5120 + 5120·3584 + 3584 = 44,575,744 -> 675,759,104 */
        {"qwen2-vl-7b", 8291375616ULL, 675759104ULL},
        /* 2B: merger into 1536: 2,560 + 26,219,520 + 5120·1536 + 1536 = 34,087,936 */
        {"qwen2-vl-2b", 2208985600ULL, 665271296ULL},
        /* Qwen2.5-VL: RMSNorm blocks 2·1280 + qkv 4,919,040 + proj 1,639,680 + gate/up
         * 2 (1280·3420 + 3420) + down 3420·1280 + 1280 = 19,702,200 x 32 = 630,470,400;
         * merger RMS 1,280 + 26,219,520 + 18,353,664 -> 676,550,144 (published) */
        {"qwen2.5-vl-7b", 8292166656ULL, 676550144ULL},
        /* Pixtral 1540 px: conv 3·14²·1024 = 602,112 + ln_pre 1,024 + 24 x (4·1024² +
         * 3·1024·4096 + 2·1024) = 402,702,336 -> 403,305,472; Mistral3 projector RMS 1,024 +
         * merger 4·1024² + 1024·5120 + 5120² = 35,652,608 -> 438,958,080 */
        {"mistral-small-3.1-24b", 24011361280ULL, 438958080ULL},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gpufit_model *m = NULL;
        cr_assert_eq(gpufit_model_from_preset(&m, t[i].name, NULL), GPUFIT_OK);
        cr_assert_eq(total_of(m), t[i].total, "%s: %llu", t[i].name,
                     (unsigned long long)total_of(m));
        cr_assert_eq(vision_of(m), t[i].vision, "%s: vision %llu", t[i].name,
                     (unsigned long long)vision_of(m));
        gpufit_model_free(m);
    }
    /* the text model alone is the text preset: Qwen2-VL-7B's text is Qwen2.5-7B's shape */
    cr_assert_eq(preset_total("qwen2-vl-7b") - 675759104ULL, preset_total("qwen2.5-7b"));
}

/* Gemma 3 4B and Llama 3.2 11B Vision: the towers by hand equal the published totals less
 * the text models (Gemma3 text by hand with its four norms per layer; Mllama's text with its
 * cross-attention layers, which gpufit models apart). */
Test(multimodal, gemma3_and_mllama_towers)
{
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    /* SigLIP-so400m at 896 px (gemma-3-4b-it config.json): conv 1152·588 + 1152 = 678,528,
     * positions 4096·1152 = 4,718,592, 27 x (4 (1152² + 1152) + 2·1152·4304 + 4304 + 1152 +
     * 4·1152 = 15,239,504) = 411,466,608, post LN 2,304; projector RMS 1,152 + 1152·2560 =
     * 2,949,120 -> 419,816,304. Text (4 norms/layer): 262208·2560 + 34 x (2560·2048 +
     * 2·2560·1024 + 2048·2560 + 3·2560·10240 + 4·2560 + 2·256) + 2560 = 3,880,263,168;
     * 3,880,263,168 + 419,816,304 = 4,300,079,472, the published total. */
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, NULL,
                                   "arch=decoder n_layers=34 hidden_size=2560 n_heads=8 "
                                   "n_kv_heads=4 head_dim=256 ffn_hidden_size=10240 mlp=geglu "
                                   "vocab_size=262208 tied_embeddings=1 qk_norm=1 "
                                   "vision_layers=27 vision_hidden_size=1152 vision_heads=16 "
                                   "vision_ffn_hidden_size=4304 vision_patch_size=14 "
                                   "vision_image_size=896 vision_merge=4 vision_style=siglip "
                                   "vision_projector=gemma3",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(vision_of(m), 419816304ULL);
    cr_assert_eq(4300079472ULL - 3880263168ULL, 419816304ULL);
    gpufit_model_free(m);
    /* Mllama (Llama-3.2-11B-Vision): conv 3·14²·1280 = 752,640, class 1,280, positions
     * 1601·1280 + gate = 2,049,281, tile_embedding 9·4·1601·1280 = 73,774,080 (9 = 1 + 8
     * aspect ratios of <= 4 tiles), pre/post tile embeddings 2 (9·4·1280 + 1) = 92,162, LN
     * pre/post 5,120, 40 layers x (4·1280² + 2·1280·5120 + 5120 + 1280 + 4·1280 =
     * 19,672,320) = 786,892,800 + 16 gates -> 863,567,379; projector 7680·4096 + 4096 =
     * 31,461,376 -> 895,028,755. Published 10,670,220,835 - 895,028,755 = 9,775,192,080, the
     * text model by hand (128264·4096 embedding + 128256·4096 head + 32 self-attention layers
     * and 8 cross-attention layers with q/k norms and gates + final norm). */
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, NULL,
                                   "model=llama-3-8b vision_layers=40 vision_hidden_size=1280 "
                                   "vision_heads=16 vision_ffn_hidden_size=5120 "
                                   "vision_patch_size=14 vision_image_size=560 "
                                   "vision_style=mllama vision_projector=mllama vision_tiles=4",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(vision_of(m), 895028755ULL);
    uint64_t text = 128264ULL * 4096 + 128256ULL * 4096 +
                    32 * (4096ULL * 4096 * 2 + 2 * 4096ULL * 1024 + 3 * 4096ULL * 14336 +
                          2 * 4096) +
                    8 * (4096ULL * 4096 * 2 + 2 * 4096ULL * 1024 + 3 * 4096ULL * 14336 +
                         2 * 4096 + 2 * 128 + 2) +
                    4096;
    cr_assert_eq(text + 895028755ULL, 10670220835ULL);
    gpufit_model_free(m);
}

/* ---------------------------------------------------------------------------------------
 * Weights by role and framework
 * ------------------------------------------------------------------------------------- */
/* Vision weights are 2 bytes per parameter in bf16; under vLLM every pipeline stage holds the
 * tower (Qwen2VLForConditionalGeneration builds self.visual unconditionally), and
 * mm_items_per_prompt=0 (limit_mm_per_prompt 0) leaves it out (self.visual = None). */
Test(multimodal, vllm_weights_every_stage_and_text_only)
{
    /* rope_positions=0: the two models' RoPE tables differ (test_rope.c); the tower is compared */
    static const char *base =
        "task=inference framework=vllm gpu=h100 precision=bf16 pp=2 rope_positions=0";
    char spec[256];
    run_t vl, txt, off;
    snprintf(spec, sizeof spec, "model=qwen2-vl-7b %s", base);
    cr_assert_eq(run(&vl, spec), GPUFIT_OK, "%s", vl.err.message);
    snprintf(spec, sizeof spec, "model=qwen2.5-7b %s", base);
    cr_assert_eq(run(&txt, spec), GPUFIT_OK, "%s", txt.err.message);
    snprintf(spec, sizeof spec, "model=qwen2-vl-7b %s mm_items_per_prompt=0", base);
    cr_assert_eq(run(&off, spec), GPUFIT_OK, "%s", off.err.message);
    for (uint32_t r = 0; r < 2; r++) {
        cr_assert_eq(comp(&vl, r, GPUFIT_MEM_WEIGHTS),
                     comp(&txt, r, GPUFIT_MEM_WEIGHTS) + 2 * 675759104ULL, "role %u", r);
        cr_assert_eq(comp(&off, r, GPUFIT_MEM_WEIGHTS), comp(&txt, r, GPUFIT_MEM_WEIGHTS));
    }
    done(&vl);
    done(&txt);
    done(&off);
}

/* Training: the tower sits with the token embedding (first stage only); full fine-tuning
 * trains it (transformers leaves requires_grad on), LoRA adapts text layers only. amp_bf16:
 * fp32 weights (4 B) + the autocast bf16 copy (2 B) per trained parameter. */
Test(multimodal, training_first_stage_and_lora)
{
    run_t vl, txt;
    /* a fused step: the states alone (no step temporaries, test_optimizer_step.c) */
    cr_assert_eq(run(&vl, "model=qwen2-vl-7b task=finetune precision=amp_bf16 pp=2 gpu=h100 "
                          "optimizer_impl=fused"),
                 GPUFIT_OK, "%s", vl.err.message);
    cr_assert_eq(run(&txt, "model=qwen2.5-7b task=finetune precision=amp_bf16 pp=2 gpu=h100 "
                           "optimizer_impl=fused"),
                 GPUFIT_OK);
    cr_assert_eq(comp(&vl, 0, GPUFIT_MEM_WEIGHTS),
                 comp(&txt, 0, GPUFIT_MEM_WEIGHTS) + 6 * 675759104ULL);
    cr_assert_eq(comp(&vl, 0, GPUFIT_MEM_GRADIENTS),
                 comp(&txt, 0, GPUFIT_MEM_GRADIENTS) + 4 * 675759104ULL);
    cr_assert_eq(comp(&vl, 0, GPUFIT_MEM_OPTIMIZER_STATES),
                 comp(&txt, 0, GPUFIT_MEM_OPTIMIZER_STATES) + 8 * 675759104ULL);
    cr_assert_eq(comp(&vl, 1, GPUFIT_MEM_WEIGHTS), comp(&txt, 1, GPUFIT_MEM_WEIGHTS));
    done(&vl);
    done(&txt);
    cr_assert_eq(run(&vl, "model=qwen2-vl-7b task=lora precision=bf16 gpu=h100"), GPUFIT_OK);
    cr_assert_eq(run(&txt, "model=qwen2.5-7b task=lora precision=bf16 gpu=h100"), GPUFIT_OK);
    cr_assert_eq(comp(&vl, 0, GPUFIT_MEM_WEIGHTS),
                 comp(&txt, 0, GPUFIT_MEM_WEIGHTS) + 2 * 675759104ULL);
    cr_assert_eq(comp(&vl, 0, GPUFIT_MEM_GRADIENTS), comp(&txt, 0, GPUFIT_MEM_GRADIENTS));
    cr_assert_eq(comp(&vl, 0, GPUFIT_MEM_OPTIMIZER_STATES),
                 comp(&txt, 0, GPUFIT_MEM_OPTIMIZER_STATES));
    done(&vl);
    done(&txt);
}

/* ---------------------------------------------------------------------------------------
 * vLLM's encoder profile
 * ------------------------------------------------------------------------------------- */
/* LLaVA-1.5-7B on an H100 (vLLM V1 defaults: max_num_batched_tokens 8192, max_num_seqs 1024,
 * max_model_len = context_len 4096, limit 999). compute_mm_encoder_budget: budget =
 * max(8192, 576) = 8192; _get_max_items: per prompt min(999, 4096 / 576 = 7) = 7, items =
 * min(8192 / 576 = 14, 1024 x 7) = 14 images = 8,078 patches (577 each) and 8,064 tokens.
 * Pixels 14 x 576 x 588 x 2 B = 9,483,264; encoder layer max(qkv 2·8078·3072 = 49,631,232,
 * MLP 2·8078·2·4096 = 132,349,952) + 3·2·8078·1024 = 181,981,184; projector 2·8078·1024 +
 * 2·8064 (2·4096 + 4096) = 214,724,608; encoder cache 2·8064·4096 = 66,060,288. The text
 * profile (forward 742,391,808 B, sampler larger) exceeds 214,724,608 - 66,060,288, so the
 * peak is pixels + cache + text: +75,543,552 B of activations; the KV budget loses that and
 * the tower's 2 x 324,487,168 = 648,974,336 B of weights. */
Test(multimodal, vllm_profile_llava_text_dominated)
{
    run_t on, off;
    cr_assert_eq(run(&on, "model=llava-1.5-7b task=inference framework=vllm gpu=h100"),
                 GPUFIT_OK, "%s", on.err.message);
    cr_assert_eq(run(&off, "model=llava-1.5-7b task=inference framework=vllm gpu=h100 "
                           "mm_items_per_prompt=0"),
                 GPUFIT_OK);
    uint64_t a_on = comp(&on, 0, GPUFIT_MEM_ACTIVATIONS), a_off = comp(&off, 0,
                                                                       GPUFIT_MEM_ACTIVATIONS);
    cr_assert(a_off >= 742391808ULL);
    cr_assert_eq(a_on - a_off, 9483264ULL + 66060288ULL);
    cr_assert_eq(comp(&on, 0, GPUFIT_MEM_WEIGHTS) - comp(&off, 0, GPUFIT_MEM_WEIGHTS),
                 648974336ULL);
    gpufit_role_info r_on = role_of(&on, 0), r_off = role_of(&off, 0);
    cr_assert_eq(r_off.kv_capacity_bytes - r_on.kv_capacity_bytes,
                 648974336ULL + 75543552ULL);
    /* the items vLLM profiles with */
    cr_assert_eq(gpufit__vision_items(&on.j->plan, &on.m->cache_shape), 14);
    done(&on);
    done(&off);
}

/* Qwen2-VL-7B, max_num_seqs 64: one image of 3584² px = 65,536 patches -> 16,384 tokens
 * (budget max(8192, 16384) = 16384 -> 1 item). Pixels 65536 x 1176 x 2 = 154,140,672; layer
 * max(2·65536·3·1280 = 503,316,480, 2·65536·2·5120 = 1,342,177,280) + 3·2·65536·1280 =
 * 1,845,493,760; projector 2·65536·1280 + 2·16384 (2·5120 + 3584) = 620,756,992; cache
 * 2·16384·3584 = 117,440,512; text forward 2·8192·3·18944 + 3·2·8192·3584 = 1,107,296,256
 * (sampler of 64 rows smaller). 1,845,493,760 > 117,440,512 + 1,107,296,256: the encoder
 * sets the peak, 154,140,672 + 1,845,493,760 = 1,999,634,432 B. Eager attention adds the
 * scores: (2 + 4) x 16 heads x 65536² per image, 412 GB, which vLLM never uses for a ViT
 * but the model keeps for an explicit attention=eager. */
Test(multimodal, vllm_profile_qwen2_vl_encoder_dominated)
{
    run_t on, off;
    cr_assert_eq(run(&on, "model=qwen2-vl-7b task=inference framework=vllm gpu=h100 "
                          "max_num_seqs=64"),
                 GPUFIT_OK, "%s", on.err.message);
    cr_assert_eq(run(&off, "model=qwen2-vl-7b task=inference framework=vllm gpu=h100 "
                           "max_num_seqs=64 mm_items_per_prompt=0"),
                 GPUFIT_OK);
    cr_assert_eq(comp(&off, 0, GPUFIT_MEM_ACTIVATIONS), 1107296256ULL);
    cr_assert_eq(comp(&on, 0, GPUFIT_MEM_ACTIVATIONS), 1999634432ULL);
    gpufit_role_info r_on = role_of(&on, 0), r_off = role_of(&off, 0);
    cr_assert_eq(r_off.kv_capacity_bytes - r_on.kv_capacity_bytes,
                 2 * 675759104ULL + (1999634432ULL - 1107296256ULL));
    done(&on);
    done(&off);
    cr_assert_eq(run(&on, "model=qwen2-vl-7b task=inference framework=vllm gpu=h100 "
                          "max_num_seqs=64 attention=eager"),
                 GPUFIT_OK);
    uint64_t scores = 6ULL * 16 * 65536 * 65536;
    cr_assert_eq(comp(&on, 0, GPUFIT_MEM_ACTIVATIONS), 154140672ULL + scores + 503316480ULL);
    cr_assert_eq(on.r->fits, 0); /* no room left for the KV cache */
    done(&on);
}

/* Items per batch, V1 and V0, from the plan (gpufit__vision_items). */
Test(multimodal, profile_items_v1_and_v0)
{
    run_t s;
    cr_assert_eq(run(&s, "model=llava-1.5-7b task=inference framework=vllm gpu=rtx-4090 "
                         "context_len=1024"),
                 GPUFIT_OK);
    gpufit__plan p = s.j->plan;
    const gpufit__shape *sh = &s.m->cache_shape;
    /* V1: per prompt min(999, 1024 / 576 = 1) = 1; items min(8192 / 576 = 14, 256 x 1) = 14 */
    cr_assert_eq(gpufit__vision_items(&p, sh), 14);
    p.max_num_seqs = 5; /* decoder side caps: 5 x 1 */
    cr_assert_eq(gpufit__vision_items(&p, sh), 5);
    p.max_num_seqs = 256;
    p.prompt = 512; /* budget max(512, 576) = 576: one item */
    cr_assert_eq(gpufit__vision_items(&p, sh), 1);
    /* V0 (model_runner.py profile_run): seqs = min(max_num_seqs, 8192 / (limit x 576)) */
    p.prompt = 8192;
    p.mm_v0 = 1;
    p.mm_items = -1; /* V0's default limit: 1 -> 14 sequences of 1 image */
    cr_assert_eq(gpufit__vision_items(&p, sh), 14);
    p.mm_items = 3; /* 8192 / 1728 = 4 sequences x 3 images */
    cr_assert_eq(gpufit__vision_items(&p, sh), 12);
    p.mm_items = 20; /* 8192 / 11520 = 0 -> at least 1 sequence, of 20 images */
    cr_assert_eq(gpufit__vision_items(&p, sh), 20);
    done(&s);
    /* an explicit limit caps V1 too: 2 images per prompt x 4 sequences < 14 */
    cr_assert_eq(run(&s, "model=llava-1.5-7b task=inference framework=vllm gpu=rtx-4090 "
                         "mm_items_per_prompt=2 max_num_seqs=4"),
                 GPUFIT_OK);
    cr_assert_eq(gpufit__vision_items(&s.j->plan, &s.m->cache_shape), 8);
    done(&s);
}

/* The release picks the profile rule: V0 before 0.8.0 (V1 the default engine from 0.8.0). */
Test(multimodal, release_selects_v0_profile)
{
    static const struct {
        const char *ver;
        int v0;
    } cases[] = {{"0.7.3", 1}, {"0.6.3", 1}, {"0.8.0", 0}, {"0.19", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_t s;
        char spec[256];
        snprintf(spec, sizeof spec,
                 "model=llava-1.5-7b task=inference framework=vllm gpu=h100 "
                 "framework_version=%s",
                 cases[i].ver);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", spec);
        cr_assert_eq(s.j->plan.mm_v0, cases[i].v0, "%s", cases[i].ver);
        /* V0: 256 sequences everywhere; V1 (0.8 on): 1024 on a >= 70 GiB GPU */
        cr_assert_eq(s.j->plan.max_num_seqs, cases[i].v0 ? 256u : 1024u, "%s", cases[i].ver);
        done(&s);
    }
}

/* SGLang and transformers: weights only (no vLLM profile). */
Test(multimodal, no_profile_outside_vllm)
{
    run_t vl, txt;
    /* rope_positions=0: the two models' RoPE tables differ (test_rope.c) */
    cr_assert_eq(run(&vl, "model=qwen2-vl-7b task=inference framework=sglang gpu=h100 "
                          "rope_positions=0"),
                 GPUFIT_OK);
    cr_assert_eq(run(&txt, "model=qwen2.5-7b task=inference framework=sglang gpu=h100 "
                           "rope_positions=0"),
                 GPUFIT_OK);
    cr_assert_eq(comp(&vl, 0, GPUFIT_MEM_ACTIVATIONS), comp(&txt, 0, GPUFIT_MEM_ACTIVATIONS));
    cr_assert_eq(comp(&vl, 0, GPUFIT_MEM_WEIGHTS),
                 comp(&txt, 0, GPUFIT_MEM_WEIGHTS) + 2 * 675759104ULL);
    done(&vl);
    done(&txt);
}

/* ---------------------------------------------------------------------------------------
 * Hugging Face reader: one small config per family
 * ------------------------------------------------------------------------------------- */
#define TEXT_LLAMA                                                                                 \
    "\"text_config\": {\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": "  \
    "2, \"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100}"
#define TEXT_QWEN2                                                                                 \
    "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "                  \
    "\"num_key_value_heads\": 2, \"intermediate_size\": 128, \"vocab_size\": 100"
/* a vision tower 32 wide, 4 heads, MLP 64, 2 layers, 4 px patches on 16 px images */
#define VIS_DIMS                                                                                   \
    "\"hidden_size\": 32, \"num_attention_heads\": 4, \"intermediate_size\": 64, "                 \
    "\"num_hidden_layers\": 2, \"patch_size\": 4, \"image_size\": 16"

static gpufit_model *from_config(const char *json)
{
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_hf_config(&m, json, strlen(json), &err), GPUFIT_OK, "%s: %s",
                 json, err.message);
    return m;
}

static int64_t get(const gpufit_model *m, int32_t p)
{
    int64_t v = -99;
    cr_assert_eq(gpufit_model_get_int(m, p, &v, NULL), GPUFIT_OK);
    return v;
}

/* hv = 32, f = 64, L = 2, p = 4, 16 px: N = 16 patches; text h = 64. A CLIP layer: 4 (32² + 32)
 * + 2·32·64 + 64 + 32 + 2·64 (two LayerNorms) = 8,544. */
Test(multimodal, reader_families)
{
    static const struct {
        const char *json;
        uint64_t vision;
        int64_t style, proj, merge, tiles, layers;
    } t[] = {
        /* CLIP: conv 32·48 = 1,536 + class 32 + positions 17·32 = 544 + pre/post LN 128 +
         * 2 x 8,544 + LLaVA MLP 64·32 + 64 + 64² + 64 = 6,272 -> 25,600 */
        {"{\"model_type\": \"llava\", " TEXT_LLAMA ", \"vision_config\": {\"model_type\": "
         "\"clip_vision_model\", " VIS_DIMS "}}",
         25600, GPUFIT_VISION_CLIP, GPUFIT_VPROJ_MLP, 1, 1, 2},
        /* LLaVA-NeXT: + image_newline (64), 5 tiles */
        {"{\"model_type\": \"llava_next\", " TEXT_LLAMA ", \"vision_config\": {" VIS_DIMS "}}",
         25664, GPUFIT_VISION_CLIP, GPUFIT_VPROJ_MLP_NEWLINE, 1, 5, 2},
        /* SigLIP under LLaVA: conv 1,536 + bias 32 + positions 16·32 + post LN 64 + layers
         * 17,088 + 6,272 = 25,504 */
        {"{\"model_type\": \"llava\", " TEXT_LLAMA ", \"vision_config\": {\"model_type\": "
         "\"siglip_vision_model\", " VIS_DIMS "}}",
         25504, GPUFIT_VISION_SIGLIP, GPUFIT_VPROJ_MLP, 1, 1, 2},
        /* Pixtral under LLaVA (pixtral-12b): conv 1,536 + ln_pre 32 + 2 x (4·32² + 3·32·64 +
         * 2·32) = 20,608 + 6,272 = 28,448 */
        {"{\"model_type\": \"llava\", " TEXT_LLAMA ", \"vision_config\": {\"model_type\": "
         "\"pixtral\", " VIS_DIMS "}}",
         28448, GPUFIT_VISION_PIXTRAL, GPUFIT_VPROJ_MLP, 1, 1, 2},
        /* Gemma 3: SigLIP tower 19,232 + RMS 32 + 32·64 = 21,312; mm_tokens_per_image 4 on a
         * 4 x 4 grid: pooled 2 x 2 */
        {"{\"model_type\": \"gemma3\", \"mm_tokens_per_image\": 4, \"text_config\": "
         "{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"intermediate_size\": 128, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
         "\"head_dim\": 16, \"vocab_size\": 100}, \"vision_config\": {\"model_type\": "
         "\"siglip_vision_model\", \"vision_use_head\": false, " VIS_DIMS "}}",
         21312, GPUFIT_VISION_SIGLIP, GPUFIT_VPROJ_GEMMA3, 2, 1, 2},
        /* Mistral 3: Pixtral tower 22,176 + RMS 32 + merger 4·32² + 32·64 + 64² = 32,448 */
        {"{\"model_type\": \"mistral3\", \"spatial_merge_size\": 2, \"text_config\": "
         "{\"model_type\": \"mistral\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100}, "
         "\"vision_config\": {\"model_type\": \"pixtral\", " VIS_DIMS "}}",
         32448, GPUFIT_VISION_PIXTRAL, GPUFIT_VPROJ_MISTRAL3, 2, 1, 2},
        /* Qwen2-VL: Conv3d 32·3·2·16 = 3,072 + 2 x 8,544 + merger LN 64 + 128² + 128 + 64·128
         * + 64 = 24,832 -> 44,992 */
        {"{\"model_type\": \"qwen2_vl\", " TEXT_QWEN2 ", \"vision_config\": {\"depth\": 2, "
         "\"embed_dim\": 32, \"mlp_ratio\": 2, \"num_heads\": 4, \"hidden_size\": 64, "
         "\"patch_size\": 4, \"spatial_merge_size\": 2, \"temporal_patch_size\": 2}}",
         44992, GPUFIT_VISION_QWEN2_VL, GPUFIT_VPROJ_MERGER, 2, 1, 2},
        /* Qwen2.5-VL: 3,072 + 2 x (2·32 + 4·32² + 4·32 + 3·32·48 + 2·48 + 32 = 9,024) + merger
         * RMS 32 + 16,384 + 128 + 8,192 + 64 = 24,800 -> 45,920 */
        {"{\"model_type\": \"qwen2_5_vl\", " TEXT_QWEN2 ", \"vision_config\": {\"depth\": 2, "
         "\"hidden_size\": 32, \"intermediate_size\": 48, \"num_heads\": 4, "
         "\"out_hidden_size\": 64, \"patch_size\": 4, \"spatial_merge_size\": 2, "
         "\"temporal_patch_size\": 2}}",
         45920, GPUFIT_VISION_QWEN2_5_VL, GPUFIT_VPROJ_MERGER, 2, 1, 2},
        /* Mllama, 4 tiles (9 aspect-ratio rows), 17 positions: conv 1,536 + class 32 +
         * positions 544 + gate + tile_embedding 9·4·17·32 = 19,584 + pre/post tile 2 (9·4·32 +
         * 1) = 2,306 + LN 128 + 16 gates + 10 x (4·32² + 2·32·64 + 64 + 32 + 2·64 = 8,416) +
         * projector 64·192 + 64 = 12,352 -> 120,659 */
        {"{\"model_type\": \"mllama\", " TEXT_LLAMA ", \"vision_config\": {\"model_type\": "
         "\"mllama_vision_model\", \"num_global_layers\": 8, \"max_num_tiles\": 4, "
         "\"intermediate_layers_indices\": [3, 7, 15, 23, 30], " VIS_DIMS "}}",
         120659, GPUFIT_VISION_MLLAMA, GPUFIT_VPROJ_MLLAMA, 1, 4, 10},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gpufit_model *m = from_config(t[i].json);
        cr_assert_eq(vision_of(m), t[i].vision, "%zu: %llu", i, (unsigned long long)vision_of(m));
        cr_assert_eq(get(m, GPUFIT_MODEL_VISION_STYLE), t[i].style, "%zu", i);
        cr_assert_eq(get(m, GPUFIT_MODEL_VISION_PROJECTOR), t[i].proj, "%zu", i);
        cr_assert_eq(get(m, GPUFIT_MODEL_VISION_MERGE), t[i].merge, "%zu", i);
        cr_assert_eq(get(m, GPUFIT_MODEL_VISION_TILES), t[i].tiles, "%zu", i);
        cr_assert_eq(get(m, GPUFIT_MODEL_VISION_LAYERS), t[i].layers, "%zu", i);
        gpufit_model_free(m);
    }
    /* the class defaults transformers fills: a LLaVA vision_config without keys is
     * CLIPVisionConfig() (768 wide, 12 layers, 32 px patches on 224 px) */
    gpufit_model *m = from_config("{\"model_type\": \"llava\", " TEXT_LLAMA
                                  ", \"vision_config\": {}}");
    cr_assert_eq(get(m, GPUFIT_MODEL_VISION_HIDDEN_SIZE), 768);
    cr_assert_eq(get(m, GPUFIT_MODEL_VISION_LAYERS), 12);
    cr_assert_eq(get(m, GPUFIT_MODEL_VISION_PATCH_SIZE), 32);
    cr_assert_eq(get(m, GPUFIT_MODEL_VISION_IMAGE_SIZE), 224);
    gpufit_model_free(m);
    /* Qwen2-VL: the image the servers profile, sqrt(12,845,056) = 3584 px */
    m = from_config("{\"model_type\": \"qwen2_vl\", " TEXT_QWEN2
                    ", \"vision_config\": {\"hidden_size\": 64}}");
    cr_assert_eq(get(m, GPUFIT_MODEL_VISION_IMAGE_SIZE), 3584);
    cr_assert_eq(get(m, GPUFIT_MODEL_VISION_HIDDEN_SIZE), 1280);
    gpufit_model_free(m);
}

/* Real config.json files equal their presets (tests/data/hf). */
Test(multimodal, real_configs_equal_presets)
{
    static const char *const names[] = {"llava-1.5-7b-hf", "qwen2-vl-7b-instruct",
                                        "qwen2.5-vl-7b-instruct"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/data/hf/%s.json", names[i]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        static char buf[8192];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        gpufit_model *m = from_config(buf);
        cr_assert_eq(total_of(m), preset_total(names[i]), "%s", names[i]);
        gpufit_model_free(m);
    }
}

static void expect_error(const char *json, int32_t status, int32_t param, const char *needle)
{
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_model_from_hf_config(&m, json, strlen(json), &err);
    cr_assert_eq(st, status, "%s: %d %s", json, st, err.message);
    cr_assert_null(m);
    if (param != 0)
        cr_assert_eq(err.param, param, "%s: param %d", json, err.param);
    cr_assert(strstr(err.message, needle) != NULL, "%s: %s", json, err.message);
}

Test(multimodal, reader_bad_input)
{
    /* a wrapper whose projector is not modelled: refused, not dropped */
    expect_error("{\"model_type\": \"paligemma\", \"text_config\": {\"model_type\": \"gemma\", "
                 "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                 "\"intermediate_size\": 128, \"vocab_size\": 100}, \"vision_config\": {}}",
                 GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS, "paligemma");
    expect_error("{\"model_type\": \"llava\", " TEXT_LLAMA
                 ", \"vision_config\": {\"model_type\": \"intern_vit_6b\"}}",
                 GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS, "intern_vit_6b");
    expect_error("{\"model_type\": \"llava\", \"multimodal_projector_bias\": false, " TEXT_LLAMA
                 ", \"vision_config\": {}}",
                 GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS, "multimodal_projector_bias");
    /* Qwen2-VL's merger must end in the text width */
    expect_error("{\"model_type\": \"qwen2_vl\", " TEXT_QWEN2
                 ", \"vision_config\": {\"hidden_size\": 3584}}",
                 GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_VISION_PROJECTOR, "hidden_size");
    expect_error("{\"model_type\": \"qwen2_vl\", " TEXT_QWEN2
                 ", \"vision_config\": {\"hidden_size\": 64, \"temporal_patch_size\": 3}}",
                 GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS, "temporal_patch_size");
    expect_error("{\"model_type\": \"mllama\", " TEXT_LLAMA
                 ", \"vision_config\": {\"num_global_layers\": 7}}",
                 GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS, "num_global_layers");
    expect_error("{\"model_type\": \"gemma3\", \"mm_tokens_per_image\": 5, \"text_config\": "
                 "{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, \"num_hidden_layers\": "
                 "2, \"intermediate_size\": 128}, \"vision_config\": {\"model_type\": "
                 "\"siglip_vision_model\", " VIS_DIMS "}}",
                 GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS, "mm_tokens_per_image");
    /* wrong types name the key */
    expect_error("{\"model_type\": \"llava\", " TEXT_LLAMA
                 ", \"vision_config\": {\"patch_size\": \"14\"}}",
                 GPUFIT_E_INVALID_ARG, 0, "patch_size");
    expect_error("{\"model_type\": \"llava\", " TEXT_LLAMA
                 ", \"vision_config\": {\"image_size\": 300, \"patch_size\": 14}}",
                 GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_VISION_IMAGE_SIZE, "vision_image_size");
    expect_error("{\"model_type\": \"llava\", " TEXT_LLAMA
                 ", \"vision_config\": {\"num_hidden_layers\": 5000}}",
                 GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_VISION_LAYERS, "vision_layers");
}

/* Bad descriptors and job keys name the parameter. */
Test(multimodal, descriptor_and_job_errors)
{
    static const struct {
        const char *spec;
        int32_t status, param;
    } t[] = {
        {"model=llama-3-8b vision_image_size=336", GPUFIT_E_INCONSISTENT,
         GPUFIT_MODEL_VISION_IMAGE_SIZE},
        {"model=llava-1.5-7b vision_heads=3", GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_VISION_HEADS},
        {"model=qwen2-vl-7b vision_merge=3", GPUFIT_E_INCONSISTENT,
         GPUFIT_MODEL_VISION_IMAGE_SIZE},
        {"model=llama-3-8b framework=vllm mm_items_per_prompt=2", GPUFIT_E_INCONSISTENT,
         GPUFIT_JOB_MM_ITEMS_PER_PROMPT},
        {"model=llava-1.5-7b framework=llamacpp mm_items_per_prompt=1", GPUFIT_E_INCONSISTENT,
         GPUFIT_JOB_MM_ITEMS_PER_PROMPT},
        {"model=t5-base vision_layers=1 vision_hidden_size=32 vision_heads=4 "
         "vision_ffn_hidden_size=64 vision_patch_size=4 vision_image_size=16",
         GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        run_t s;
        int32_t st = run(&s, t[i].spec);
        cr_assert_eq(st, t[i].status, "%s: %d %s", t[i].spec, st, s.err.message);
        cr_assert_eq(s.err.param, t[i].param, "%s: %d", t[i].spec, s.err.param);
        done(&s);
    }
}
