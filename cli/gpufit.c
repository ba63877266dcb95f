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
    "  gpufit estimate [FILE.json] [options]    one job: memory, band, verdict, fixes\n"
    "  gpufit recommend [FILE.json] [options]   which GPUs, and how many, fit the job\n"
    "  gpufit plan [FILE.json] [options]        the cheapest parallel layouts that fit\n"
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

/* gpufit COMMAND --help: a generated usage line and option lines (cli/options.def, shared
 * with python3 -m gpufit) between a description and a tail */
static const struct {
    const char *cmd, *head, *tail;
} command_help[] = {
    {"estimate",
     "Per-device memory of one job by component, its band and the verdict (fits, marginal,\n"
     "does not fit), and ranked fixes when it does not fit (the cheapest combination that\n"
     "keeps the GPU first, with the framework's flags). 'resolved:' says what every auto\n"
     "resolved to, 'flags:' gives the job's own flags (docs/report.md, docs/flags.md).\n",
     "exit codes: 0 fits, 1 does not fit, 2 bad input, 3 unreadable file, 4 internal,\n"
     "            5 marginal\n"},
    {"recommend",
     "Every catalogue GPU (or those of --only) and the smallest count of it on which the job\n"
     "fits, ranked; each with the --spec that reproduces it.\n",
     "Exit 0 when some GPU fits, 1 when none does.\n"},
    {"plan",
     "Training: every valid (tp, pp, vpp, dp, cp, ep, zero, micro-batch, checkpointing) on N\n"
     "nodes of the scenario's GPU, the cheapest --top that fit (docs/planner.md); serving:\n"
     "the replica layouts with their KV room. Each layout prints the --spec that reproduces\n"
     "it; the plan says how many GPUs it used and why.\n",
     "Exit 0 when some layout fits, 1 when none does.\n"},
    {"models", "usage: gpufit models\nThe built-in presets with exact parameter counts.\n", NULL},
    {"gpus", "usage: gpufit gpus\nThe GPU catalogue: names, aliases, usable capacities.\n", NULL},
    {"params",
     "usage: gpufit params\nEvery scenario key with its unit, default and range or values\n"
     "(the same table as docs/params.md).\n",
     NULL},
    {"version", "usage: gpufit version\nThe library's version.\n", NULL},
};

/* The help of a scenario command (tail != NULL): usage, description, FILE.json, options. */
static void command_usage(size_t k)
{
    if (command_help[k].tail == NULL) {
        fputs(command_help[k].head, stdout);
        return;
    }
    printf("usage: gpufit %s [FILE.json] [options]\n", command_help[k].cmd);
    fputs(command_help[k].head, stdout);
    printf("  %-18s a JSON scenario (docs/scenario.md; every key: docs/params.md)\n",
           "FILE.json");
    print_options(stdout, command_help[k].cmd);
    fputs(command_help[k].tail, stdout);
}

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
                    command_usage(k);
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
