/* SPDX-License-Identifier: MIT */
/* The Slurm plugin's decision (integrations/slurm/gate.c) without Slurm: plugin arguments,
 * the GPUs a command line or batch script asks for, device lists, and the verdicts. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"

static int failures, checks;
#define CHECK(cond)                                                                           \
    do {                                                                                      \
        checks++;                                                                             \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond);                  \
            failures++;                                                                       \
        }                                                                                     \
    } while (0)
#define HAS(msg, text) CHECK(strstr((msg), (text)) != NULL)

/* LoRA with an fp32 base under bf16 autocast (precision=amp_bf16, not the bf16 default): its
 * band straddles 47 GiB, the capacity left by the margin tests below */
static const char *FIT = "model=llama-3-8b task=lora precision=amp_bf16";
static const char *DOOMED = "model=llama-3-70b task=finetune";

static void test_args(void)
{
    gate_conf c;
    char msg[256];
    gate_conf_init(&c);
    CHECK(c.gpu[0] == '\0' && c.margin == 0.0 && c.marginal == GATE_MARGINAL_WARN &&
          c.enforce == (GATE_ENFORCE_LOCAL | GATE_ENFORCE_REMOTE));
    char *ok[] = {"gpu=a100_80gb", "margin=0.05", "marginal=refuse", "enforce=remote"};
    CHECK(gate_parse_args(&c, 4, ok, msg, sizeof msg) == 0);
    CHECK(strcmp(c.gpu, "a100_80gb") == 0 && c.margin == 0.05 &&
          c.marginal == GATE_MARGINAL_REFUSE && c.enforce == GATE_ENFORCE_REMOTE);
    char *allow[] = {"marginal=allow", "enforce=local"};
    CHECK(gate_parse_args(&c, 2, allow, msg, sizeof msg) == 0);
    CHECK(c.marginal == GATE_MARGINAL_ALLOW && c.enforce == GATE_ENFORCE_LOCAL);
    char *m1[] = {"margin=1"}, *mx[] = {"margin=5%"}, *pol[] = {"marginal=maybe"},
         *enf[] = {"enforce=all"}, *unk[] = {"gres=a100"}, *empty[] = {"gpu="};
    CHECK(gate_parse_args(&c, 1, m1, msg, sizeof msg) == -1);
    CHECK(strcmp(msg, "argument margin='1': a fraction in [0, 0.5], e.g. 0.05") == 0);
    CHECK(gate_parse_args(&c, 1, mx, msg, sizeof msg) == -1);
    CHECK(gate_parse_args(&c, 1, pol, msg, sizeof msg) == -1);
    CHECK(strcmp(msg, "argument marginal='maybe': one of allow, warn, refuse") == 0);
    CHECK(gate_parse_args(&c, 1, enf, msg, sizeof msg) == -1);
    CHECK(strcmp(msg, "argument enforce='all': one of local, remote, both") == 0);
    CHECK(gate_parse_args(&c, 1, unk, msg, sizeof msg) == -1);
    HAS(msg, "unknown argument 'gres=a100'");
    CHECK(gate_parse_args(&c, 1, empty, msg, sizeof msg) == -1);
}

static void test_gres(void)
{
    gate_gpus g;
    memset(&g, 0, sizeof g);
    CHECK(gate_parse_gres(&g, "gpu:a100_80gb:2") == 0);
    CHECK(strcmp(g.type, "a100_80gb") == 0 && g.per_node == 2 && g.total == 0);
    memset(&g, 0, sizeof g);
    CHECK(gate_parse_gres(&g, "gpu:4") == 0 && g.type[0] == '\0' && g.per_node == 4);
    memset(&g, 0, sizeof g);
    CHECK(gate_parse_gres(&g, "gpu") == 0 && g.per_node == 1);
    memset(&g, 0, sizeof g);
    CHECK(gate_parse_gres(&g, "gpu:h100") == 0 && strcmp(g.type, "h100") == 0 && g.per_node == 1);
    memset(&g, 0, sizeof g);
    CHECK(gate_parse_gres(&g, "mps:100,gres/gpu:h100:8(S:0,1),nic:1") == 0);
    CHECK(strcmp(g.type, "h100") == 0 && g.per_node == 8);
    memset(&g, 0, sizeof g);
    CHECK(gate_parse_gres(&g, "gpumem:10") == 0 && g.per_node == 0); /* not a GPU */
    CHECK(gate_parse_gres(&g, "gpu:a100:x") == -1);
    CHECK(gate_parse_gres(&g, "gpu:a100:0") == -1);

    memset(&g, 0, sizeof g);
    CHECK(gate_parse_gpus(&g, "a100_80gb:8", 1) == 0);
    CHECK(strcmp(g.type, "a100_80gb") == 0 && g.total == 8 && g.per_node == 0);
    CHECK(gate_parse_gpus(&g, "3", 0) == 0 && g.per_node == 3 && g.total == 8);
    CHECK(gate_parse_gpus(&g, "h100:", 1) == -1);

    CHECK(gate_mul(4, 2) == 8);
    CHECK(gate_mul(0, UINT64_MAX) == 0);
    CHECK(gate_mul(UINT64_MAX / 2 + 1, 2) == UINT64_MAX);
    CHECK(gate_count_list("0,1,2") == 3);
    CHECK(gate_count_list("0-3,6") == 5);
    CHECK(gate_count_list("7") == 1);
    CHECK(gate_count_list("GPU-8f3a1c2e-aaaa-bbbb,GPU-11112222-cccc-dddd") == 2);
    CHECK(gate_count_list("") == 0);
    CHECK(gate_count_list(NULL) == 0);
    CHECK(gate_count_list("3-1") == 0);
    CHECK(gate_count_list("0,,1") == 0);
}

static void test_scan(void)
{
    gate_gpus g;
    int script = 0;
    char *a1[] = {"-N", "2", "--gres", "gpu:h100:4", "--gpufit-spec=x", "python", "train.py",
                  "--gpus", "8"};
    memset(&g, 0, sizeof g);
    gate_scan_argv(&g, 9, a1, &script);
    CHECK(g.nodes == 2 && g.per_node == 4 && strcmp(g.type, "h100") == 0 && g.total == 0);
    CHECK(script == 5);
    char *a2[] = {"-n", "2", "-G", "a100_80gb:3", "./job.sh"};
    memset(&g, 0, sizeof g);
    gate_scan_argv(&g, 5, a2, &script);
    CHECK(g.total == 3 && strcmp(g.type, "a100_80gb") == 0 && script == 4);
    char *a3[] = {"--exclusive", "python", "x.py", "--gres=gpu:9"};
    memset(&g, 0, sizeof g); /* a flag's word may be its value: the program is the next one */
    gate_scan_argv(&g, 4, a3, &script);
    CHECK(script == 2 && g.per_node == 0);
    char *a4[] = {"--gpus-per-node=2", "-N3", "--", "--gres=gpu:9"};
    memset(&g, 0, sizeof g);
    gate_scan_argv(&g, 4, a4, &script);
    CHECK(g.per_node == 2 && g.nodes == 3 && script == 3);

    memset(&g, 0, sizeof g);
    gate_scan_script(&g, "#!/bin/sh\n#SBATCH --gres=gpu:a100_80gb:2\n#SBATCH -N 2 # nodes\n"
                         "\n# a comment\n#SBATCH --gpus-per-node h100:1\necho hi\n"
                         "#SBATCH --gpus=9\n");
    CHECK(strcmp(g.type, "h100") == 0 && g.per_node == 1 && g.nodes == 2 && g.total == 0);
}

static void test_check(void)
{
    gate_conf c;
    char msg[4096];
    gate_conf_init(&c);
    CHECK(gate_check(&c, NULL, 0, FIT, "a100_80gb", 1, msg, sizeof msg) == GATE_PASS);
    CHECK(strncmp(msg, "gpufit: FITS: ", 14) == 0);
    HAS(msg, " of 80.00 GiB on A100 80GB SXM4 (role all)\n");

    CHECK(gate_check(&c, NULL, 0, DOOMED, "a100_80gb", 1, msg, sizeof msg) == GATE_REFUSE);
    CHECK(strncmp(msg, "gpufit: job refused: DOES NOT FIT: role all needs ", 50) == 0);
    HAS(msg, " of 80.00 GiB on A100 80GB SXM4\ngpufit: fix (keeps the GPU): ");
    HAS(msg, "QLoRA");
    HAS(msg, "GiB (fits)\ngpufit:   --gpufit-spec: add task=qlora checkpointing=full\n");
    HAS(msg, "gpufit:   flags: BitsAndBytesConfig(");

    /* the allocation's GPU replaces the scenario's */
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora gpu=rtx-4090", "h100", 0, msg,
                     sizeof msg) == GATE_PASS);
    HAS(msg, "on H100 SXM5");
    /* without one, the scenario's GPU is used */
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora gpu=rtx-4090", "", 0, msg,
                     sizeof msg) == GATE_REFUSE);
    HAS(msg, "on GeForce RTX 4090");

    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b tsak=lora", "a100_80gb", 1, msg,
                     sizeof msg) == GATE_REFUSE);
    CHECK(strcmp(msg, "gpufit: job refused: the --gpufit-spec is malformed\n"
                      "gpufit: spec: unknown parameter 'tsak' (see 'gpufit params'); did you "
                      "mean 'task'? (unknown parameter) at byte 17\n"
                      "gpufit:   model=llama-3-8b tsak=lora\n"
                      "gpufit:                    ^\n") == 0);

    const char *json = "{\"model\": \"llama-3-8b\", \"task\": \"lora\"}";
    CHECK(gate_check(&c, json, strlen(json), NULL, "a100_80gb", 1, msg, sizeof msg) ==
          GATE_PASS);
    /* the spec applies after the scenario: full fine-tuning of the 8B model does not fit */
    CHECK(gate_check(&c, json, strlen(json), "task=finetune", "a100_80gb", 1, msg,
                     sizeof msg) == GATE_REFUSE);
    CHECK(gate_check(&c, json, strlen(json), "model=llama-3-70b task=finetune", "a100_80gb", 1,
                     msg, sizeof msg) == GATE_REFUSE);
    const char *bad = "{\"model\": \"llama-3-8b\", \"task\": }";
    CHECK(gate_check(&c, bad, strlen(bad), NULL, "a100_80gb", 1, msg, sizeof msg) ==
          GATE_REFUSE);
    HAS(msg, "gpufit: job refused: the --gpufit scenario is malformed\ngpufit: scenario: ");
    HAS(msg, "at byte 32");

    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora tp=2", "a100_80gb", 1, msg,
                     sizeof msg) == GATE_REFUSE);
    CHECK(strcmp(msg, "gpufit: job refused: the job's layout uses 2 GPUs (dp x tp x pp x cp) "
                      "but it holds 1\n") == 0);
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora tp=2", "a100_80gb", 2, msg,
                     sizeof msg) == GATE_PASS);

    CHECK(gate_check(&c, NULL, 0, FIT, "zz999", 1, msg, sizeof msg) == GATE_PASS);
    HAS(msg, "gpufit: the GPU type 'zz999' is not in gpufit's catalogue");
    CHECK(gate_check(&c, NULL, 0, FIT, "a100", 1, msg, sizeof msg) == GATE_PASS);
    HAS(msg, "a100-80gb-sxm4"); /* the ambiguous name's variants are listed */
    CHECK(gate_check(&c, NULL, 0, FIT, NULL, 0, msg, sizeof msg) == GATE_PASS);
    HAS(msg, "gpufit: no GPU known");

    /* margin: 41.25 % of 80 GiB kept free leaves 47 GiB, inside the LoRA job's band */
    char *m[] = {"margin=0.4125", "marginal=allow"};
    CHECK(gate_parse_args(&c, 2, m, msg, sizeof msg) == 0);
    CHECK(gate_check(&c, NULL, 0, FIT, "a100_80gb", 1, msg, sizeof msg) == GATE_PASS);
    HAS(msg, "gpufit: MARGINAL (the GPU's capacity lies inside the band): role all needs");
    CHECK(strstr(msg, " of 47.00 GiB (80.00 GiB less a 33.00 GiB margin) on A100 80GB "
                      "SXM4\n") != NULL);
    CHECK(strstr(msg, "no change") == NULL); /* no fix ranked: none claimed */
    c.marginal = GATE_MARGINAL_WARN;
    CHECK(gate_check(&c, NULL, 0, FIT, "a100_80gb", 1, msg, sizeof msg) == GATE_WARN);
    c.marginal = GATE_MARGINAL_REFUSE;
    CHECK(gate_check(&c, NULL, 0, FIT, "a100_80gb", 1, msg, sizeof msg) == GATE_REFUSE);
    HAS(msg, "gpufit: job refused: MARGINAL (marginal=refuse): role all needs");
    c.margin = 0.05; /* 76 GiB: fits */
    c.marginal = GATE_MARGINAL_WARN;
    CHECK(gate_check(&c, NULL, 0, FIT, "a100_80gb", 1, msg, sizeof msg) == GATE_PASS);
    HAS(msg, " of 76.00 GiB (80.00 GiB less a 4.00 GiB margin) on ");
    /* the plugin's margin is a floor: a larger one in the job stays, a smaller one is raised */
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora precision=amp_bf16 margin=0.4125", "a100_80gb", 1,
                     msg, sizeof msg) == GATE_WARN);
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora precision=amp_bf16 margin=0.01", "a100_80gb", 1,
                     msg, sizeof msg) == GATE_PASS);
    HAS(msg, " less a 4.00 GiB margin");
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora precision=amp_bf16 margin_bytes=1GiB", "a100_80gb", 1,
                     msg, sizeof msg) == GATE_PASS);
    HAS(msg, " of 76.00 GiB (80.00 GiB less a 4.00 GiB margin) on ");
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora precision=amp_bf16 margin_bytes=33GiB", "a100_80gb",
                     1, msg, sizeof msg) == GATE_WARN);
    /* the margin also applies to the scenario's own GPU, and the allocation's GPU replaces a
     * capacity the scenario gives */
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora gpu=a100-80gb", NULL, 0, msg,
                     sizeof msg) == GATE_PASS);
    HAS(msg, " of 76.00 GiB (80.00 GiB less a 4.00 GiB margin) on ");
    CHECK(gate_check(&c, NULL, 0, "model=llama-3-8b task=lora gpu_memory_gib=500", "h100", 0,
                     msg, sizeof msg) == GATE_PASS);
    HAS(msg, " of 75.67 GiB (79.65 GiB less a 3.98 GiB margin) on H100 SXM5");

    /* a message cut to a small buffer stays terminated */
    char small[24];
    CHECK(gate_check(&c, NULL, 0, DOOMED, "a100_80gb", 1, small, sizeof small) == GATE_REFUSE);
    CHECK(strlen(small) == sizeof small - 1);
}

int main(void)
{
    test_args();
    test_gres();
    test_scan();
    test_check();
    printf("test_gate: %d checks, %d failures\n", checks, failures);
    return failures != 0;
}
