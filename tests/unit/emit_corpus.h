/* emit_corpus.h — what the device dialects' emitter tests (test_emit_cl,
 * test_emit_cuda) share: every kernel planned for a set of graphs (IR
 * files, ONNX models), with the default passes and fusion asking the
 * dialect's `compiles`, emitted into one program with kernel names made
 * unique per graph (g<i>_k<j>). A graph the dialect cannot write yet is
 * dropped and named (declined); any other error fails the test. */
#ifndef TS_TEST_EMIT_CORPUS_H
#define TS_TEST_EMIT_CORPUS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lower/plan.h"
#include "test_files.h"

typedef struct corpus {
    bool (*compiles)(const ts_node *n);
    ts_status (*emit)(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err);   /* no preamble */
    ts_buf src;      /* the preamble once, then every graph's kernels */
    int graphs, kernels, fallbacks, declined;
    int unplanned;   /* ONNX models that do not assemble even given their first test inputs */
} corpus;

static inline bool has_suffix(const char *s, const char *suffix)
{
    return strlen(s) >= strlen(suffix) && !strcmp(s + strlen(s) - strlen(suffix), suffix);
}

/* ONNX model path assembled with the tensors of its test_data_set_0 as
 * known inputs (a trip count, a shape), as `tessera check` would. */
static inline ts_status load_known(const char *path, ts_graph **g, ts_err *err)
{
    char dir[4096];
    if (strlen(path) + 32 >= sizeof dir) return ts_err_set(err, TS_ERR_IO, "path too long");
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = 0;
    ts_tensor *vals[64];
    char *names[64];
    int n = 0;
    for (; n < 64; n++) {
        char f[4160];
        int w = snprintf(f, sizeof f, "%stest_data_set_0/input_%d.pb", dir, n);
        if (w < 0 || (size_t)w >= sizeof f) break;
        ts_err e = {0};
        if (ts_onnx_read_tensor(f, &vals[n], &names[n], &e) != TS_OK) break;
    }
    ts_status s = ts_onnx_load(path, n, (const char *const *)names, vals, g, err);
    for (int i = 0; i < n; i++) ts_tensor_release(vals[i]), ts_free_string(names[i]);
    return s;
}

/* Plan path's graph and append its kernels. */
static inline void corpus_add(corpus *c, const char *path)
{
    ts_graph *g = NULL;
    ts_plan *p = NULL;
    ts_err err = {0};
    ts_status s = TS_OK;
    if (has_suffix(path, ".onnx")) {
        s = ts_onnx_load(path, 0, NULL, NULL, &g, &err);
        if (s != TS_OK) s = load_known(path, &g, &err);
        if (s != TS_OK) {
            printf("  not planned: %s: %s\n", path, err.msg);
            c->unplanned++;
            return;
        }
    } else {
        size_t len = 0;
        char *text = slurp(path, &len);
        s = text ? ts_graph_parse(text, len, path, &g, &err) : ts_err_set(&err, TS_ERR_IO, "cannot read");
        free(text);
    }
    if (s == TS_OK) s = ts_graph_run_passes(g, "default", &err);
    if (s == TS_OK) s = ts_plan_new_loops(g, c->compiles, &p, &err);
    if (s != TS_OK) {
        CHECK_MSG(0, "%s: %s", path, err.msg);
    } else {
        ts_lkernel **ks = malloc(sizeof *ks * (size_t)(p->n_steps + 1));
        int n = 0;
        for (int i = 0; i < p->n_steps; i++)
            if (p->steps[i].kernel) {
                snprintf(p->steps[i].kernel->name, sizeof p->steps[i].kernel->name, "g%d_k%d", c->graphs, i);
                ks[n++] = p->steps[i].kernel;
            }
        size_t mark = c->src.len;
        s = c->emit(&c->src, n, ks, &err);
        if (s == TS_ERR_UNSUPPORTED) {
            c->src.len = mark;   /* a kernel the dialect cannot write yet: named in the output */
            if (c->src.data) c->src.data[mark] = 0;
            c->declined++;
            printf("  declined: %s: %s\n", path, err.msg);
        } else if (s != TS_OK) {
            CHECK_MSG(0, "%s: %s", path, err.msg);
        } else {
            c->kernels += n;
            c->fallbacks += p->n_fallback;
        }
        free(ks);
        c->graphs++;
    }
    ts_plan_free(p);
    ts_graph_free(g);
}

/* Every graph under dir: files ending in suffix, or (suffix starting with
 * '/') dir/NAME/suffix for each folder NAME; nested: dir's folders each
 * scanned so. Sorted: the same program every run. */
static inline void corpus_add_dir(corpus *c, const char *dir, const char *suffix, bool nested)
{
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d) return;
    char **names = NULL;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j], names[j] = t;
            }
    for (int i = 0; i < n; i++) {
        char path[4096];
        const bool in_folder = !nested && suffix[0] == '/';
        int w = snprintf(path, sizeof path, "%s/%s%s", dir, names[i], in_folder ? suffix : "");
        if (w < 0 || (size_t)w >= sizeof path) {
            CHECK_MSG(0, "path too long: %s/%s", dir, names[i]);
        } else if (nested) {
            DIR *sub = opendir(path);   /* folders only (the suite keeps lists beside them) */
            if (sub) closedir(sub), corpus_add_dir(c, path, suffix, false);
        } else if (in_folder) {
            FILE *f = fopen(path, "rb");
            if (f) fclose(f), corpus_add(c, path);
        } else if (has_suffix(names[i], suffix)) {
            corpus_add(c, path);
        }
        free(names[i]);
    }
    free(names);
}

/* IR text src planned for a device dialect (compiles) and its program
 * (program: preamble and kernels) in *out (ts_buf_free it); the plan's
 * kernel and fallback counts. false (a failed check) on any error. */
static inline bool emit_one(const char *src, bool (*compiles)(const ts_node *),
                            ts_status (*program)(ts_buf *, int, ts_lkernel *const *, ts_err *), ts_buf *out,
                            int *kernels, int *fallbacks)
{
    ts_graph *g = NULL;
    ts_plan *p = NULL;
    ts_err err = {0};
    bool ok = ts_graph_parse(src, strlen(src), "t", &g, &err) == TS_OK &&
              ts_plan_new_loops(g, compiles, &p, &err) == TS_OK;
    CHECK_MSG(ok, "%s", err.msg);
    if (ok) {
        ts_lkernel **ks = malloc(sizeof *ks * (size_t)(p->n_steps + 1));
        int n = 0;
        for (int i = 0; i < p->n_steps; i++)
            if (p->steps[i].kernel) ks[n++] = p->steps[i].kernel;
        ok = program(out, n, ks, &err) == TS_OK;
        CHECK_MSG(ok, "%s", err.msg);
        *kernels = p->n_kernels, *fallbacks = p->n_fallback;
        free(ks);
    }
    ts_plan_free(p);
    ts_graph_free(g);
    return ok;
}

#endif
