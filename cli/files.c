/* SPDX-License-Identifier: MIT */
/* The command's file input: regular files only, model directories, headers, scenarios. */
#define _POSIX_C_SOURCE 200809L /* open, fstat, opendir: model directories */

#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Says why path could not be read (errno); returns EXIT_IO. */
static int cannot_read(const char *path)
{
    fprintf(stderr, "gpufit: cannot read '%s': %s\n", path, strerror(errno));
    return EXIT_IO;
}

/* Opens path for reading if it is a regular file: a FIFO, a device or a socket named like a
 * model file would block or never end (O_NONBLOCK: the open itself does not wait). NULL with
 * the error printed otherwise (*code = EXIT_IO). */
static FILE *open_regular(const char *path, int *code)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    *code = EXIT_IO;
    if (fd < 0) {
        cannot_read(path);
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fprintf(stderr, "gpufit: cannot read '%s': %s\n", path,
                S_ISDIR(sb.st_mode) ? strerror(EISDIR) : "not a regular file");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        cannot_read(path);
        close(fd);
    }
    return f;
}

/* Reads a whole file of at most MAX_FILE_BYTES into *out (malloc'd; kind names such files in
 * the message when it is larger). Returns -1 or an exit code, the error printed. */
int read_file(const char *path, const char *kind, char **out, size_t *len)
{
    int open_code;
    FILE *f = open_regular(path, &open_code);
    *out = NULL;
    *len = 0;
    if (f == NULL)
        return open_code;
    size_t cap = 0, n = 0, got = 1;
    char *buf = NULL;
    int code = -1;
    while (code < 0 && got > 0 && n <= MAX_FILE_BYTES) {
        if (n == cap) { /* reading one byte past the limit tells a larger file */
            size_t nc = cap == 0 ? 4096 : cap < MAX_FILE_BYTES / 2 ? cap * 2 : MAX_FILE_BYTES + 1;
            char *nb = realloc(buf, nc);
            if (nb == NULL) {
                fprintf(stderr, "gpufit: out of memory reading '%s'\n", path);
                code = EXIT_INTERNAL;
                break;
            }
            buf = nb;
            cap = nc;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0 && ferror(f))
            code = cannot_read(path);
    }
    if (code < 0 && n > MAX_FILE_BYTES) {
        fprintf(stderr, "gpufit: '%s' is larger than the %u MiB limit for %s\n", path,
                MAX_FILE_BYTES >> 20, kind);
        code = EXIT_IO;
    }
    fclose(f);
    if (code >= 0)
        free(buf);
    *out = code < 0 ? buf : NULL;
    *len = n;
    return code;
}

/* ---- --model PATH: model files, of which only the headers are read --------------------- */
#define HEADER_CHUNK ((size_t)1 << 20)     /* first read of a large file */

#define HEADER_LIMIT ((uint64_t)1 << 30)   /* the readers refuse larger headers */

/* A reader of a file's beginning: GPUFIT_E_BUFFER_TOO_SMALL with *need when len is short. */
typedef int32_t (*header_reader)(void *ctx, const void *buf, size_t len, uint64_t *need,
                                 gpufit_error *err);

static int32_t gguf_reader(void *ctx, const void *buf, size_t len, uint64_t *need,
                           gpufit_error *err)
{
    return gpufit_model_from_gguf((gpufit_model **)ctx, buf, len, need, err);
}

static int32_t safetensors_reader(void *ctx, const void *buf, size_t len, uint64_t *need,
                                  gpufit_error *err)
{
    gpufit_safetensors_info *info = ctx;
    info->struct_size = sizeof *info;
    return gpufit_safetensors_read(info, buf, len, need, err);
}

/* Runs `fn` on the first HEADER_CHUNK bytes of path and, while it answers
 * GPUFIT_E_BUFFER_TOO_SMALL, on the first `need` bytes (at least half as many again, so that
 * a long tokenizer takes few rounds); never reads past what the header needs by more than
 * that. Returns -1 on success or an exit code (the error printed). */
static int read_header(const char *path, header_reader fn, void *ctx)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    int open_code;
    FILE *f = open_regular(path, &open_code);
    if (f == NULL)
        return open_code;
    unsigned char *buf = NULL;
    size_t have = 0, want = HEADER_CHUNK;
    int code = EXIT_BAD_INPUT;
    for (int round = 0; round < 64; round++) {
        if (want > have) {
            unsigned char *nb = realloc(buf, want);
            if (nb == NULL) {
                code = EXIT_INTERNAL;
                break;
            }
            buf = nb;
            have += fread(buf + have, 1, want - have, f);
            if (ferror(f)) {
                code = cannot_read(path);
                break;
            }
        }
        uint64_t need = 0;
        int32_t st = fn(ctx, buf, have, &need, &err);
        if (st == GPUFIT_OK) {
            code = -1;
            break;
        }
        if (st != GPUFIT_E_BUFFER_TOO_SMALL || have < want || need <= have ||
            need > HEADER_LIMIT) {
            if (st == GPUFIT_E_BUFFER_TOO_SMALL)
                fprintf(stderr, "gpufit: %s: truncated: the header needs %llu bytes, the file "
                                "has %zu\n",
                        path, (unsigned long long)need, have);
            else
                print_file_error(path, &err);
            code = st == GPUFIT_E_INTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
            break;
        }
        want = need > have + have / 2 ? (size_t)need : have + have / 2;
        if (want > HEADER_LIMIT)
            want = (size_t)HEADER_LIMIT;
    }
    free(buf);
    fclose(f);
    return code;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A Hugging Face config.json file. */
static int load_hf_config(const char *path, gpufit_model **out)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    size_t len = 0;
    char *text = NULL;
    int code = read_file(path, "config.json files", &text, &len);
    if (code >= 0)
        return code;
    int32_t st = gpufit_model_from_hf_config(out, text, len, &err);
    free(text);
    if (st != GPUFIT_OK) {
        print_file_error(path, &err);
        return st == GPUFIT_E_INTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
    }
    return -1;
}

/* A model directory: config.json, cross-checked against the headers of its *.safetensors
 * files (a mismatch is a warning: the config defines the model). */
static int load_model_dir(const char *dir, gpufit_model **out)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (stat(path, &sb) != 0 && errno == ENOENT) {
        fprintf(stderr, "gpufit: '%s' has no config.json (--model takes a Hugging Face model "
                        "directory, its config.json or a .gguf file)\n",
                dir);
        return EXIT_IO;
    }
    int code = load_hf_config(path, out);
    if (code >= 0)
        return code;
    gpufit_safetensors_info sum;
    memset(&sum, 0, sizeof sum);
    sum.struct_size = sizeof sum;
    int files = 0, bad = -1; /* bad: the exit code of the first shard that failed */
    DIR *d = opendir(dir);
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        if (!ends_with(e->d_name, ".safetensors"))
            continue;
        gpufit_safetensors_info info;
        memset(&info, 0, sizeof info);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int rc = read_header(path, safetensors_reader, &info);
        if (rc >= 0) { /* the error is printed; a corrupt shard is the model's error */
            bad = bad < 0 ? rc : bad;
            continue;
        }
        files++;
        /* shard totals, each checked: a sum past 2^64 is no checkpoint */
        uint64_t *acc[] = {&sum.n_params,   &sum.total_bytes, &sum.header_bytes, &sum.bytes_fp32,
                           &sum.bytes_16bit, &sum.bytes_8bit,  &sum.bytes_other};
        const uint64_t add[] = {info.n_params,   info.total_bytes, info.header_bytes,
                                info.bytes_fp32, info.bytes_16bit, info.bytes_8bit,
                                info.bytes_other};
        for (size_t k = 0; k < sizeof add / sizeof add[0]; k++) {
            if (*acc[k] > UINT64_MAX - add[k]) {
                fprintf(stderr, "gpufit: %s: the shards' totals exceed 64 bits (%s)\n", dir,
                        e->d_name);
                bad = bad < 0 ? EXIT_BAD_INPUT : bad;
                break;
            }
            *acc[k] += add[k];
        }
        sum.n_tensors = sum.n_tensors > UINT32_MAX - info.n_tensors ? UINT32_MAX
                                                                     : sum.n_tensors + info.n_tensors;
    }
    if (d != NULL)
        closedir(d);
    if (bad >= 0) {
        fprintf(stderr, "gpufit: %s: a safetensors shard could not be read (above): the model "
                        "directory is not used\n",
                dir);
        gpufit_model_free(*out);
        *out = NULL;
        return bad;
    }
    gpufit_error err = GPUFIT_ERROR_INIT;
    if (files > 0 && gpufit_model_check_safetensors(*out, &sum, &err) != GPUFIT_OK)
        fprintf(stderr, "gpufit: warning: %s: %s\n", dir, err.message);
    return -1;
}

/* --model PATH: a directory, a config.json or a .gguf file. *gguf is set for GGUF files. */
static int load_model_path(const char *path, gpufit_model **out, int *gguf)
{
    struct stat sb;
    *out = NULL;
    *gguf = 0;
    if (stat(path, &sb) != 0)
        return cannot_read(path);
    if (S_ISDIR(sb.st_mode))
        return load_model_dir(path, out);
    if (ends_with(path, ".json"))
        return load_hf_config(path, out);
    if (ends_with(path, ".safetensors")) {
        fprintf(stderr, "gpufit: %s: a safetensors file has no architecture; pass its "
                        "directory (with config.json)\n",
                path);
        return EXIT_BAD_INPUT;
    }
    *gguf = 1;
    return read_header(path, gguf_reader, out);
}

/* Builds the model and job of a scenario file and/or spec; returns -1 or an exit code. */
int load_scenario(const cli_opts *o, gpufit_model **m, gpufit_job **j)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    *m = NULL;
    *j = NULL;
    if (gpufit_model_new(m, &err) != GPUFIT_OK || gpufit_job_new(j, &err) != GPUFIT_OK) {
        print_error("setup", &err, NULL);
        return EXIT_INTERNAL;
    }
    if (o->file != NULL) {
        size_t len = 0;
        char *text = NULL;
        int code = read_file(o->file, "scenario files", &text, &len);
        if (code >= 0)
            return code;
        int32_t st = gpufit_apply_json(*m, *j, text, len, &err);
        free(text);
        if (st != GPUFIT_OK) {
            print_file_error(o->file, &err);
            return EXIT_BAD_INPUT;
        }
    }
    if (o->model != NULL) { /* replaces the scenario's model; the spec still overrides */
        gpufit_model *fm = NULL;
        int gguf = 0;
        int code = load_model_path(o->model, &fm, &gguf);
        if (code >= 0)
            return code;
        gpufit_model_free(*m);
        *m = fm;
        int64_t fw = -1;
        if (gguf && gpufit_job_get_int(*j, GPUFIT_JOB_FRAMEWORK, &fw, NULL) == GPUFIT_OK &&
            fw == GPUFIT_FW_PYTORCH) /* the default: a GGUF file runs under llama.cpp */
            gpufit_job_set_int(*j, GPUFIT_JOB_FRAMEWORK, GPUFIT_FW_LLAMACPP, NULL);
    }
    if (o->profile != NULL) { /* a calibration profile (gpufit calibrate, docs/calibration.md) */
        size_t len = 0;
        char *text = NULL;
        int code = read_file(o->profile, "profiles", &text, &len);
        if (code >= 0)
            return code;
        int32_t st = gpufit_job_apply_profile(*j, text, len, &err);
        free(text);
        if (st != GPUFIT_OK) {
            print_file_error(o->profile, &err);
            return EXIT_BAD_INPUT;
        }
    }
    if (o->allow_hardware) /* --allow-hardware: the job key allow_hardware */
        gpufit_job_set_int(*j, GPUFIT_JOB_ALLOW_HARDWARE, 1, NULL);
    for (int i = 0; i < o->n_specs; i++) /* each --spec in order, a later one overriding */
        if (gpufit_apply_spec(*m, *j, o->specs[i], &err) != GPUFIT_OK) {
            print_error("spec", &err, o->specs[i]);
            return EXIT_BAD_INPUT;
        }
    return -1;
}
