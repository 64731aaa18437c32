/* pipeline.c — the pass list and the driver: parse a comma-separated list,
 * run each pass (the verifier after each in debug builds), iterate the
 * default pipeline to a fixed point, dump IR text after a named pass. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

static const ts_pass pipeline[] = {
    {"simplify", ts_pass_simplify},
    {"fold", ts_pass_fold},
    {"cse", ts_pass_cse},
    {"dce", ts_pass_dce},
};
#define N_PASSES ((int)(sizeof pipeline / sizeof pipeline[0]))

const ts_pass *ts_pass_table(int *count)
{
    *count = N_PASSES;
    return pipeline;
}

static const ts_pass *find(const char *name, size_t len)
{
    for (int i = 0; i < N_PASSES; i++)
        if (strlen(pipeline[i].name) == len && memcmp(pipeline[i].name, name, len) == 0) return &pipeline[i];
    return NULL;
}

static ts_status unknown(const char *what, const char *name, size_t len, ts_err *err)
{
    ts_buf b = {0};
    for (int i = 0; i < N_PASSES; i++) ts_buf_printf(&b, "%s, ", pipeline[i].name);
    ts_status s = ts_err_set(err, TS_ERR_INVALID_ARG, "unknown %s '%.*s' (available: %sdefault)", what,
                             (int)len, name, b.data ? b.data : "");
    ts_buf_free(&b);
    return s;
}

/* ---- one list entry ------------------------------------------------------------- */

typedef struct run_ctx {
    ts_graph *g;
    const char *dump_after;   /* NULL, "all" or a pass name */
    FILE *out;
    ts_err *err;
} run_ctx;

static ts_status dump(run_ctx *c, const ts_pass *p, int round)
{
    if (!c->dump_after || !c->out) return TS_OK;
    if (strcmp(c->dump_after, "all") != 0 && strcmp(c->dump_after, p->name) != 0) return TS_OK;
    char *text = NULL;
    TS_TRY(ts_graph_to_text(c->g, &text, c->err));
    if (round) fprintf(c->out, "# after %s (default round %d)\n%s", p->name, round, text);
    else fprintf(c->out, "# after %s\n%s", p->name, text);
    ts_free_string(text);
    return TS_OK;
}

/* Debug builds check the IR after every pass, so a broken invariant is
 * blamed on the pass that broke it rather than on whatever trips over it. */
static ts_status check(run_ctx *c, const ts_pass *p)
{
#ifndef NDEBUG
    ts_err inner = {0};
    ts_status s = ts_ir_verify(c->g, &inner);
    if (s == TS_ERR_OOM) return ts_err_set(c->err, s, "%s", inner.msg);
    if (s != TS_OK) return ts_err_set(c->err, TS_ERR_INTERNAL, "pass %s broke the IR: %s", p->name, inner.msg);
#else
    (void)c;
    (void)p;
#endif
    return TS_OK;
}

static ts_status run_one(run_ctx *c, const ts_pass *p, int round, bool *changed)
{
    ts_status s = p->run(c->g, changed, c->err);
    if (s != TS_OK) {
        ts_err_prefix(c->err, "pass %s: ", p->name);
        return s;
    }
    TS_TRY(check(c, p));
    return dump(c, p, round);
}

/* simplify, fold, cse, dce, again while anything changes (bounded: every
 * rule shrinks the graph or its constants, but a bound costs nothing). */
static ts_status run_default(run_ctx *c)
{
    for (int round = 1; round <= TS_PASS_MAX_ROUNDS; round++) {
        bool changed = false;
        for (int i = 0; i < N_PASSES; i++) TS_TRY(run_one(c, &pipeline[i], round, &changed));
        if (!changed) break;
    }
    return TS_OK;
}

/* ---- the list ------------------------------------------------------------------ */

/* The next entry of the list at *p (blanks trimmed); false at the end. */
static bool next_entry(const char **p, const char **name, size_t *len)
{
    const char *s = *p;
    if (!*s) return false;
    const char *e = strchr(s, ',');
    if (!e) e = s + strlen(s);
    *p = *e ? e + 1 : e;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
    *name = s;
    *len = (size_t)(e - s);
    return true;
}

static bool is_default(const char *name, size_t len) { return len == 7 && memcmp(name, "default", 7) == 0; }

/* Check every name first, so that a typo runs nothing. */
static ts_status validate(const char *passes, const char *dump_after, ts_err *err)
{
    const char *p = passes, *name;
    size_t len;
    while (next_entry(&p, &name, &len))
        if (!is_default(name, len) && !find(name, len)) return unknown("pass", name, len, err);
    if (dump_after && strcmp(dump_after, "all") != 0 && !find(dump_after, strlen(dump_after)))
        return unknown("pass to dump after", dump_after, strlen(dump_after), err);
    return TS_OK;
}

ts_status ts_pass_run_dump(ts_graph *g, const char *passes, const char *dump_after, FILE *out, ts_err *err)
{
    if (!g || !passes) return ts_err_set(err, TS_ERR_INVALID_ARG, "run passes: NULL argument");
    TS_TRY(validate(passes, dump_after, err));
    run_ctx c = {g, dump_after, out, err};
    const char *p = passes, *name;
    size_t len;
    while (next_entry(&p, &name, &len)) {
        bool changed = false;
        if (is_default(name, len)) TS_TRY(run_default(&c));
        else TS_TRY(run_one(&c, find(name, len), 0, &changed));
    }
    return TS_OK;
}

ts_status ts_graph_run_passes(ts_graph *g, const char *passes, ts_err *err)
{
    return ts_pass_run_dump(g, passes, NULL, NULL, err);
}

/* The dump goes through a memory stream (POSIX 2008): the pipeline writes
 * to a FILE as it runs. */
ts_status ts_graph_run_passes_dump(ts_graph *g, const char *passes, const char *dump_after, char **dump,
                                   ts_err *err)
{
    if (!dump) return ts_err_set(err, TS_ERR_INVALID_ARG, "run passes: NULL dump");
    *dump = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return ts_err_set(err, TS_ERR_OOM, "out of memory for the pass dump");
    ts_status st = ts_pass_run_dump(g, passes, dump_after, out, err);
    bool closed = fclose(out) == 0;
    if (st == TS_OK && !closed) st = ts_err_set(err, TS_ERR_OOM, "out of memory for the pass dump");
    if (st == TS_OK) {
        /* ts_free_string frees through the allocation hook: copy out of libc's buffer */
        *dump = ts_mem_alloc(len + 1);
        if (*dump) memcpy(*dump, text ? text : "", len + 1);
        else st = ts_err_set(err, TS_ERR_OOM, "out of memory for the pass dump");
    }
    free(text);
    return st;
}

const char *ts_pass_name(int i)
{
    int n;
    const ts_pass *p = ts_pass_table(&n);
    return i >= 0 && i < n ? p[i].name : NULL;
}
