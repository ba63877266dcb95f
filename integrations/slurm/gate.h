/* SPDX-License-Identifier: MIT */
/*
 * The decision of the Slurm plugin, without Slurm: plugin arguments, the GPUs a job asks
 * for or holds, and the verdict with its message. gpufit_spank.c feeds it from Slurm;
 * test/test_gate.c feeds it directly. Uses only libc and the public gpufit.h.
 */
#ifndef GPUFIT_SLURM_GATE_H
#define GPUFIT_SLURM_GATE_H

#include <stddef.h>
#include <stdint.h>

/* marginal= policy */
enum { GATE_MARGINAL_ALLOW = 0, GATE_MARGINAL_WARN = 1, GATE_MARGINAL_REFUSE = 2 };
/* enforce= bits */
enum { GATE_ENFORCE_LOCAL = 1, GATE_ENFORCE_REMOTE = 2 };
/* gate_check() outcomes */
enum { GATE_PASS = 0, GATE_WARN = 1, GATE_REFUSE = 2 };

/* The plugin's arguments from plugstack.conf. */
typedef struct gate_conf {
    char gpu[64];  /* gpu=NAME: this node's GPU (catalogue name or Slurm GRES type); "" none */
    double margin; /* margin=F: least share of each GPU kept free, 0 <= F <= 0.5 (job margin) */
    int marginal;  /* marginal=allow|warn|refuse */
    int enforce;   /* enforce=local|remote|both */
} gate_conf;

/* GPUs requested (submit side) or allocated (node side). */
typedef struct gate_gpus {
    char type[64];     /* GRES type ("a100_80gb"); "" when not given */
    uint64_t per_node; /* GPUs per node; 0 unknown */
    uint64_t total;    /* GPUs of the whole job or step; 0 unknown */
    uint64_t nodes;    /* nodes; 0 unknown */
} gate_gpus;

/* a x b, or UINT64_MAX when it would overflow (GPU counts from the environment). */
uint64_t gate_mul(uint64_t a, uint64_t b);

/* Defaults: no GPU, margin 0, marginal=warn, enforce=both. */
void gate_conf_init(gate_conf *c);
/* Parses plugstack.conf arguments (key=value); on error writes why into msg, returns -1. */
int gate_parse_args(gate_conf *c, int ac, char *const *av, char *msg, size_t cap);

/* --gres=LIST (gpu[:TYPE][:N][(...)], comma-separated): fills type and per_node; 0 or -1. */
int gate_parse_gres(gate_gpus *g, const char *list);
/* --gpus / --gpus-per-node VALUE ([TYPE:]N); total: 1 for --gpus, 0 for per node. */
int gate_parse_gpus(gate_gpus *g, const char *value, int total);
/* Entries of a device list ("0,1,3", "0-3,6"): CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS; 0 if
 * empty or malformed. */
uint64_t gate_count_list(const char *list);
/*
 * Scans a command line (srun/sbatch/salloc argv, after the program name) for --gres, --gpus,
 * -G, --gpus-per-node and -N/--nodes, stopping at the program to run (the first word that
 * is no option and no option's value). *script_out receives the index of that word, or -1.
 */
void gate_scan_argv(gate_gpus *g, int argc, char *const *argv, int *script_out);
/* The same for the #SBATCH lines of a batch script held in text (up to its first command). */
void gate_scan_script(gate_gpus *g, const char *text);

/*
 * Evaluates the job given by a JSON scenario (json, len; may be NULL) and a spec string (may
 * be NULL; applied after the JSON) on gpu (catalogue name or GRES type; NULL or "" keeps the
 * scenario's own GPU) with n_gpus GPUs (0 unknown), under conf's margin and marginal policy.
 * Writes a message of one or more lines ("gpufit: ...") into msg and returns GATE_PASS,
 * GATE_WARN or GATE_REFUSE. A malformed spec or scenario is refused with the parser's text.
 */
int gate_check(const gate_conf *conf, const char *json, size_t len, const char *spec,
               const char *gpu, uint64_t n_gpus, char *msg, size_t cap);

#endif
