/* SPDX-License-Identifier: MIT */
/* gpufit: the command-line front end. Reads files, calls the library, prints.
 *
 * Exit codes (documented in README.md and `gpufit --help`):
 *   0  the job fits (or no GPU was given, so there is no verdict)
 *   1  the job does not fit
 *   2  bad input: usage, unknown key, bad value, malformed spec or JSON
 *   3  a file could not be read
 *   4  internal error
 *   5  marginal: the capacity lies inside the estimate's band (docs/band.md)
 */
#define _POSIX_C_SOURCE 200809L /* opendir, stat: --model DIR lists its *.safetensors */

#include "gpufit.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *usage_text =
    "usage:\n"
    "  gpufit estimate [FILE.json] [--model PATH] [--spec \"key=value ...\"] [--json]\n"
    "                  [--max PARAM] [--strict] [--profile PROFILE.json] [--allow-hardware]\n"
    "  gpufit recommend [FILE.json] [--spec ...] [--only gpu,gpu] [--max-gpus N] [--json]\n"
    "  gpufit plan [FILE.json] [--spec ...] [--gpus-per-node N] [--nodes N] [--top N] [--json]\n"
    "  gpufit calibrate RUNS.jsonl [-o PROFILE.json]   fit the stack constants to measured\n"
    "                           runs (docs/calibration.md); --profile applies the result\n"
    "  gpufit models            built-in model presets\n"
    "  gpufit gpus              GPU catalogue\n"
    "  gpufit params            every parameter with unit, default and range\n"
    "  gpufit version\n"
    "\n"
    "A scenario comes from a JSON file (docs/scenario.md), spec strings, or both (the specs\n"
    "apply after the file, in order: --spec may be given up to 16 times, and a key in a later\n"
    "--spec overrides the same key in an earlier one, as a spec overrides the file). --model PATH takes the model from a Hugging Face model\n"
    "directory (config.json, checked against its *.safetensors headers) or a .gguf file (exact\n"
    "weight bytes; framework llamacpp unless the scenario names one); it replaces the\n"
    "scenario's model, and spec keys still override its fields. Only file headers are read.\n"
    "Example:\n"
    "  gpufit estimate --spec \"model=llama-3-8b task=inference gpu=rtx-4090 "
    "context_len=8192\"\n"
    "\n"
    "exit codes: 0 fits (or no GPU given), 1 does not fit, 2 bad input, 3 unreadable file,\n"
    "            4 internal error, 5 marginal (the capacity lies inside the estimate's band:\n"
    "            docs/band.md). estimate --strict: marginal exits 1 and a job without a GPU\n"
    "            exits 2 (a gate fails closed).\n"
    "gpufit COMMAND --help explains one command; man gpufit after make install.\n";

/* gpufit COMMAND --help */
static const struct {
    const char *cmd, *help;
} command_help[] = {
    {"estimate",
     "usage: gpufit estimate [FILE.json] [--model PATH] [--spec \"key=value ...\"]... [--json]\n"
     "                       [--max PARAM] [--strict] [--profile PROFILE.json]\n"
     "Per-device memory of one job by component, its band and the verdict (fits, marginal,\n"
     "does not fit), and ranked fixes when it does not fit (the cheapest combination that\n"
     "keeps the GPU first, with the framework's flags). 'resolved:' says what every auto\n"
     "resolved to, 'flags:' gives the job's own flags (docs/report.md, docs/flags.md).\n"
     "  FILE.json        a JSON scenario (docs/scenario.md; every key: docs/params.md)\n"
     "  --model PATH     a Hugging Face model directory, its config.json, or a .gguf file\n"
     "  --spec \"k=v\"     scenario keys; up to 16 --spec apply in order, after the file\n"
     "                   (a later --spec overrides an earlier one's keys)\n"
     "  --json           the JSON report (docs/report.md)\n"
     "  --max PARAM      the largest micro_batch, seq_len, batch, context_len, prompt_len or\n"
     "                   n_gpu_layers that is sure to fit (the band's high end)\n"
     "  --strict         a gate: marginal exits 1, no GPU exits 2\n"
     "  --allow-hardware list another GPU or more GPUs among the fixes even when software\n"
     "                   changes that keep the GPU make it fit (job key allow_hardware)\n"
     "  --profile FILE   a calibration profile (gpufit calibrate; docs/calibration.md)\n"
     "exit codes: 0 fits, 1 does not fit, 2 bad input, 3 unreadable file, 4 internal,\n"
     "            5 marginal\n"},
    {"recommend",
     "usage: gpufit recommend [FILE.json] [--model PATH] [--spec ...]... [--only gpu,gpu]\n"
     "                        [--max-gpus N] [--json] [--profile PROFILE.json]\n"
     "Every catalogue GPU (or those of --only) and the smallest count of it on which the job\n"
     "fits, ranked; each with the --spec that reproduces it. --max-gpus: at most N per job\n"
     "(1 to 4294967295, default 8). Exit 0 when some GPU fits, 1 when none does.\n"},
    {"plan",
     "usage: gpufit plan [FILE.json] [--model PATH] [--spec ...]... [--gpus-per-node N]\n"
     "                   [--nodes N] [--top N] [--json] [--profile PROFILE.json]\n"
     "Training: every valid (tp, pp, vpp, dp, cp, ep, zero, micro-batch, checkpointing) on N\n"
     "nodes of the scenario's GPU, the cheapest --top that fit (docs/planner.md); serving:\n"
     "the replica layouts with their KV room. Each layout prints the --spec that reproduces\n"
     "it. Defaults: --gpus-per-node the job's gpus= (on one node), else 8; --nodes 1;\n"
     "--top 10 (each 1 to 4294967295); the plan says how many GPUs it used and why.\n"},
    {"models", "usage: gpufit models\nThe built-in presets with exact parameter counts.\n"},
    {"gpus", "usage: gpufit gpus\nThe GPU catalogue: names, aliases, usable capacities.\n"},
    {"params",
     "usage: gpufit params\nEvery scenario key with its unit, default and range or values\n"
     "(the same table as docs/params.md).\n"},
    {"version", "usage: gpufit version\nThe library's version.\n"},
};

static const char *const command_names = "estimate, recommend, plan, calibrate, models, gpus, "
                                         "params, version";

int usage(FILE *f, int code)
{
    fputs(usage_text, f);
    return code;
}

int main(int argc, char **argv)
{
    if (gpufit_version_number() != GPUFIT_VERSION_NUMBER) {
        fprintf(stderr, "gpufit: library version %s does not match the header\n",
                gpufit_version_string());
        return EXIT_INTERNAL;
    }
    if (argc < 2)
        return usage(stderr, EXIT_BAD_INPUT);
    const char *cmd = argv[1];
    for (int i = 2; i < argc; i++) /* COMMAND --help / -h, before any other argument */
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            for (size_t k = 0; k < sizeof command_help / sizeof command_help[0]; k++)
                if (strcmp(cmd, command_help[k].cmd) == 0) {
                    fputs(command_help[k].help, stdout);
                    return EXIT_FITS;
                }
    if (strcmp(cmd, "estimate") == 0)
        return cmd_estimate(argc - 2, argv + 2);
    if (strcmp(cmd, "recommend") == 0)
        return cmd_recommend(argc - 2, argv + 2);
    if (strcmp(cmd, "plan") == 0)
        return cmd_plan(argc - 2, argv + 2);
    if (strcmp(cmd, "calibrate") == 0)
        return cmd_calibrate(argc - 2, argv + 2);
    if (strcmp(cmd, "models") == 0)
        return cmd_models();
    if (strcmp(cmd, "gpus") == 0)
        return cmd_gpus();
    if (strcmp(cmd, "params") == 0)
        return cmd_params();
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("gpufit %s\n", gpufit_version_string());
        return EXIT_FITS;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return usage(stdout, EXIT_FITS);
    fprintf(stderr, "gpufit: unknown %s '%s' (commands: %s; see gpufit --help)\n",
            cmd[0] == '-' ? "option" : "command", cmd, command_names);
    return EXIT_BAD_INPUT;
}
