/* SPDX-License-Identifier: MIT */
/*
 * gpufit_spank.so: a Slurm SPANK plugin that refuses jobs gpufit predicts to run out of GPU
 * memory (docs/slurm.md). Options --gpufit=SCENARIO.json and --gpufit-spec="k=v ..." for
 * srun, sbatch (also as #SBATCH lines) and salloc.
 *
 * - Submit side (slurm_spank_init_post_opt in srun's local and sbatch/salloc's allocator
 *   context): the GPUs asked for on the command line and in #SBATCH lines (--gres=gpu:TYPE:N,
 *   --gpus, --gpus-per-node, -N); a refusal ends srun/sbatch/salloc before anything is queued.
 *   A convenience a user can bypass (another client, another plugstack.conf).
 * - Node side (remote context, in slurmstepd): slurm_spank_user_init decides, once per step
 *   and node, as the job's user in its working directory (so --gpufit=FILE is read with the
 *   user's rights) from the GPUs the step holds (SLURM_GPUS_ON_NODE, else CUDA_VISIBLE_DEVICES,
 *   else SLURM_JOB_GPUS, times SLURM_NNODES) and the node's GPU type (the plugin's gpu=);
 *   slurm_spank_task_init_privileged then fails every task of a refused step, before exec.
 *   Why not fail in user_init: on Slurm 22.05 a failed user_init ("spank_user failed" in
 *   slurmstepd's mgr.c) ended a batch job COMPLETED and srun exited 0 ("Slurmd could not execve
 *   job"); a failed task_init_privileged ends the task with exit code 1, so srun exits 1 and a
 *   batch job ends FAILED, with the messages in srun's stderr / the job's output file
 *   (observed by integrations/slurm/test/run.sh).
 *
 * plugstack.conf arguments: gpu=NAME margin=F marginal=allow|warn|refuse
 * enforce=local|remote|both (gate.h). The decision itself is in gate.c.
 */
#include <slurm/spank.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"

SPANK_PLUGIN(gpufit, 1)

#define MAX_FILE (4u << 20) /* a scenario larger than 4 MiB is refused */

static gate_conf conf;
static char *opt_spec; /* --gpufit-spec */
static char *opt_file; /* --gpufit */
static int refused;    /* the node side refused this step (user_init -> task_init_privileged) */

static int keep(char **dst, const char *v)
{
    size_t n = v != NULL ? strlen(v) + 1 : 0;
    free(*dst);
    *dst = n > 0 ? malloc(n) : NULL;
    if (*dst == NULL)
        return -1;
    memcpy(*dst, v, n);
    return 0;
}
static int on_spec(int val, const char *optarg, int remote)
{
    (void)val, (void)remote;
    return keep(&opt_spec, optarg);
}
static int on_file(int val, const char *optarg, int remote)
{
    (void)val, (void)remote;
    return keep(&opt_file, optarg);
}

/* spank_option has char * members: writable arrays, not literals (-Wwrite-strings) */
static char name_file[] = "gpufit", arg_file[] = "SCENARIO.json",
            use_file[] = "gpufit: refuse the job if the JSON scenario (docs/scenario.md) does "
                         "not fit the GPUs it gets";
static char name_spec[] = "gpufit-spec", arg_spec[] = "\"k=v ...\"",
            use_spec[] = "gpufit: refuse the job if the spec (e.g. \"model=llama-3-8b "
                         "task=lora\") does not fit the GPUs it gets";
static struct spank_option options[] = {{name_file, arg_file, use_file, 1, 0, on_file},
                                        {name_spec, arg_spec, use_spec, 1, 1, on_spec},
                                        SPANK_OPTIONS_TABLE_END};

/* Prints a multi-line message, one log call per line: errors for a refusal, the message alone
 * for a warning; a pass is shown by srun/sbatch/salloc (info) but only logged on the node. */
static void say(int level, int remote, const char *msg)
{
    char line[512];
    for (const char *p = msg; *p != '\0';) {
        size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        if (level == GATE_REFUSE)
            slurm_error("%s", line);
        else if (level == GATE_WARN)
            slurm_spank_log("%s", line);
        else if (!remote)
            slurm_info("%s", line);
        else
            slurm_verbose("%s", line);
        p += n;
        if (*p == '\n')
            p++;
    }
}

/* Reads a whole file (as the calling user); NULL with a message on failure. */
static char *read_file(const char *path, size_t *len, char *msg, size_t cap)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;
    if (f == NULL) {
        snprintf(msg, cap, "gpufit: job refused: cannot read --gpufit=%s\n", path);
        return NULL;
    }
    buf = malloc(MAX_FILE + 1);
    if (buf != NULL)
        n = fread(buf, 1, MAX_FILE + 1, f);
    fclose(f);
    if (buf == NULL || n > MAX_FILE) {
        snprintf(msg, cap, "gpufit: job refused: --gpufit=%s is larger than 4 MiB\n", path);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Evaluates the job's options on gpu x n_gpus; prints the outcome; -1 refuses. */
static int decide(const char *gpu, uint64_t n_gpus, int remote)
{
    char msg[4096];
    size_t len = 0;
    char *json = NULL;
    msg[0] = '\0';
    if (opt_file != NULL && (json = read_file(opt_file, &len, msg, sizeof msg)) == NULL) {
        say(GATE_REFUSE, remote, msg);
        return -1;
    }
    int out = gate_check(&conf, json, len, opt_spec, gpu, n_gpus, msg, sizeof msg);
    free(json);
    say(out, remote, msg);
    slurm_verbose("gpufit: checked %s on %s x %llu", remote ? "on the node" : "at submission",
                  gpu != NULL && *gpu ? gpu : "-", (unsigned long long)n_gpus);
    return out == GATE_REFUSE ? -1 : 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    char msg[256];
    gate_conf_init(&conf);
    if (gate_parse_args(&conf, ac, av, msg, sizeof msg) != 0) {
        slurm_error("gpufit: plugstack.conf: %s", msg);
        return -1;
    }
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
        return 0; /* slurmd itself, prolog/epilog: no options, nothing to check */
    for (struct spank_option *o = options; o->name != NULL; o++)
        if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
            slurm_error("gpufit: cannot register --%s", o->name);
            return -1;
        }
    return 0;
}

/* The submitting command's own argv (srun, sbatch, salloc), from /proc/self/cmdline. */
static void requested_gpus(gate_gpus *g)
{
    static char buf[65536];
    char *argv[512];
    int argc = 0, script = -1;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (f == NULL)
        return;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (size_t k = 0; k < n && argc < 512; k += strlen(buf + k) + 1)
        argv[argc++] = buf + k;
    if (argc < 2)
        return;
    const char *prog = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 : argv[0];
    gate_gpus cli;
    memset(&cli, 0, sizeof cli);
    gate_scan_argv(&cli, argc - 1, argv + 1, &script);
    if (strcmp(prog, "sbatch") == 0 && script >= 0) { /* #SBATCH lines, then the command line */
        size_t len = 0;
        char msg[16];
        char *text = read_file(argv[script + 1], &len, msg, sizeof msg);
        if (text != NULL) {
            text[len] = '\0';
            gate_scan_script(g, text);
            free(text);
        }
    }
    if (cli.type[0] != '\0')
        memcpy(g->type, cli.type, sizeof g->type);
    if (cli.per_node > 0)
        g->per_node = cli.per_node;
    if (cli.total > 0)
        g->total = cli.total;
    if (cli.nodes > 0)
        g->nodes = cli.nodes;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)sp, (void)ac, (void)av;
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR)
        return 0;
    if ((opt_spec == NULL && opt_file == NULL) || !(conf.enforce & GATE_ENFORCE_LOCAL))
        return 0;
    gate_gpus g;
    memset(&g, 0, sizeof g);
    requested_gpus(&g);
    uint64_t n = g.total > 0 ? g.total : gate_mul(g.per_node, g.nodes > 0 ? g.nodes : 1);
    const char *gpu = g.type[0] != '\0' ? g.type : conf.gpu;
    return decide(gpu, n, 0);
}

static uint64_t env_count(spank_t sp, const char *name, int list)
{
    char v[1024];
    if (spank_getenv(sp, name, v, sizeof v) != ESPANK_SUCCESS || v[0] == '\0')
        return 0;
    if (list)
        return gate_count_list(v);
    return strtoull(v, NULL, 10);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    if (!spank_remote(sp) || (opt_spec == NULL && opt_file == NULL) ||
        !(conf.enforce & GATE_ENFORCE_REMOTE))
        return 0;
    uint64_t per_node = env_count(sp, "SLURM_GPUS_ON_NODE", 0);
    if (per_node == 0)
        per_node = env_count(sp, "CUDA_VISIBLE_DEVICES", 1);
    if (per_node == 0)
        per_node = env_count(sp, "SLURM_JOB_GPUS", 1);
    uint64_t nodes = env_count(sp, "SLURM_NNODES", 0);
    if (nodes == 0) {
        uint32_t nn = 0;
        nodes = spank_get_item(sp, S_JOB_NNODES, &nn) == ESPANK_SUCCESS ? nn : 1;
    }
    refused = decide(conf.gpu, gate_mul(per_node, nodes > 0 ? nodes : 1), 1) != 0;
    return 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
    (void)sp, (void)ac, (void)av;
    return refused ? -1 : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)sp, (void)ac, (void)av;
    free(opt_spec);
    free(opt_file);
    opt_spec = opt_file = NULL;
    return 0;
}
