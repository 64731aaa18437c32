/* session.c — the public session and graph-accessor API over the layers
 * below: a session binds a graph to a target (src/backend/backend.h), the
 * registry's default ("cpu") unless named. Nothing here knows one target
 * from another. */
#include "backend/backend.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A byte range [lo, hi) of host memory. */
typedef struct span {
    uintptr_t lo, hi;
} span;

struct ts_session {
    const ts_graph *g;
    const ts_backend *b;
    ts_module *m;
    _Atomic int64_t peak;
    span *consts;             /* the graph's constants' bytes, sorted, disjoint */
    int n_consts;
};

/* ---- outputs the caller owns ----------------------------------------------------
 * A backend may hand out a graph input, a constant, or a view of either as
 * an output (an identity graph, a reshape of an input). The caller of
 * ts_session_run owns what it gets: it may write it and keep it after the
 * inputs are gone (a numpy array in Python does both). So an output that
 * shares bytes with an input, a constant or an earlier output is copied
 * here, for every target alike. */

static span span_of(const ts_tensor *t)
{
    uintptr_t lo = (uintptr_t)ts_tensor_data(t);
    span s = {lo, lo + ts_tensor_nbytes(t)};
    return s;
}

static bool overlap(span a, span b) { return a.lo < b.hi && b.lo < a.hi; }

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static ts_status collect_consts(const ts_block *blk, span **v, int *n, int *cap)
{
    for (const ts_node *nd = blk->first; nd; nd = nd->next) {
        if (nd->op == TS_OP_CONST && nd->attrs[0].t && nd->attrs[0].t->nbytes) {
            if (*n == *cap) {
                int bigger = *cap ? *cap * 2 : 16;
                span *w = ts_mem_realloc(*v, sizeof *w * (size_t)bigger);
                if (!w) return TS_ERR_OOM;
                *v = w;
                *cap = bigger;
            }
            (*v)[(*n)++] = span_of(nd->attrs[0].t);
        }
        for (int r = 0; r < nd->n_regions; r++) TS_TRY(collect_consts(nd->regions[r], v, n, cap));
    }
    return TS_OK;
}

/* The constants' bytes, sorted and merged (views of one mapping overlap). */
static ts_status const_spans(ts_session *s, ts_err *err)
{
    int cap = 0, n = 0;
    span *v = NULL;
    if (collect_consts(s->g->body, &v, &n, &cap) != TS_OK) {
        ts_mem_free(v);
        return ts_err_set(err, TS_ERR_OOM, "out of memory creating a session");
    }
    if (n) qsort(v, (size_t)n, sizeof *v, span_cmp);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m && v[i].lo < v[m - 1].hi) {
            if (v[i].hi > v[m - 1].hi) v[m - 1].hi = v[i].hi;
        } else {
            v[m++] = v[i];
        }
    }
    s->consts = v;
    s->n_consts = m;
    return TS_OK;
}

static bool in_consts(const ts_session *s, span x)
{
    int lo = 0, hi = s->n_consts;   /* the first span starting at or after x.hi */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->consts[mid].lo < x.hi) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && overlap(s->consts[lo - 1], x);
}

static bool shares_bytes(const ts_session *s, int n_in, ts_tensor *const *in, ts_tensor *const *out, int k)
{
    span x = span_of(out[k]);
    if (x.lo == x.hi) return false;
    for (int i = 0; i < n_in; i++)
        if (in[i] && overlap(x, span_of(in[i]))) return true;
    for (int j = 0; j < k; j++)
        if (out[j] && overlap(x, span_of(out[j]))) return true;
    return in_consts(s, x);
}

static ts_status own_outputs(const ts_session *s, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out,
                             ts_err *err)
{
    for (int k = 0; k < n_out; k++) {
        if (!out[k] || !shares_bytes(s, n_in, in, out, k)) continue;
        ts_tensor *copy = NULL;
        TS_TRY(ts_tensor_clone(out[k], &copy, err));
        ts_tensor_release(out[k]);
        out[k] = copy;
    }
    return TS_OK;
}

ts_status ts_session_new(const ts_graph *g, const char *target, ts_session **out, ts_err *err)
{
    return ts_session_new_opts(g, target, NULL, out, err);
}

/* "cpu, interp": the registered targets (those that profile, when
 * profiling), for messages. */
static void target_list(char *buf, size_t cap, bool profiling)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < ts_backend_count() && len + 1 < cap; i++) {
        const ts_backend *b = ts_backend_at(i);
        if (profiling && !b->profile) continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", b->name);
        if (w > 0) len += (size_t)w;
    }
}

/* The default target falls back to the interpreter when its toolchain
 * does not work at all, saying so once per process on stderr (a silent
 * slow path would be worse than the warning). A toolchain that passes
 * its probe but rejects this graph's code is an error, not a fallback:
 * that is a bug to see, not to hide (D88). */
static _Atomic int warned_fallback;

static bool fall_back(const ts_backend *b, const ts_session_opts *o, const ts_err *why)
{
    ts_err probe = {0};
    if (b == ts_backend_fallback() || !b->probe || b->probe(o, &probe) != TS_ERR_TOOLCHAIN) return false;
    if (!atomic_exchange(&warned_fallback, 1))
        fprintf(stderr, "tessera: warning: the %s target cannot compile here (%s); running on the reference "
                "interpreter instead, much slower (target \"%s\" chooses it without this warning)\n",
                b->name, why->msg, ts_backend_fallback()->name);
    return true;
}

ts_status ts_session_new_opts(const ts_graph *g, const char *target, const ts_session_opts *o, ts_session **out,
                              ts_err *err)
{
    if (!g || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_new: NULL argument");
    const ts_backend *b = target ? ts_backend_find(target) : ts_backend_at(0);
    if (!b) {
        char list[256];
        target_list(list, sizeof list, false);
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "unknown target '%s' (available: %s)", target, list);
    }
    if (o && o->threads < 0) return ts_err_set(err, TS_ERR_INVALID_ARG, "threads must be positive, got %d", o->threads);
    ts_session *s = ts_mem_zalloc(sizeof *s);
    if (!s) return ts_err_set(err, TS_ERR_OOM, "out of memory creating a session");
    s->g = g;
    if (const_spans(s, err) != TS_OK) {
        ts_session_free(s);
        return TS_ERR_OOM;
    }
    ts_err why = {0};
    ts_status st = b->compile(g, o, &s->m, &why);
    if (st == TS_ERR_TOOLCHAIN && !target && fall_back(b, o, &why)) {
        b = ts_backend_fallback();
        st = b->compile(g, o, &s->m, err);
    } else if (st != TS_OK && err) {
        *err = why;
    }
    s->b = b;
    if (st != TS_OK) {
        ts_session_free(s);
        return st;
    }
    *out = s;
    return TS_OK;
}

const char *ts_session_target(const ts_session *s) { return s ? s->b->name : NULL; }

ts_status ts_graph_describe(const ts_graph *g, const char *target, const char *what, char **text, ts_err *err)
{
    if (!g || !what || !text) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_graph_describe: NULL argument");
    *text = NULL;
    const ts_backend *b = target ? ts_backend_find(target) : ts_backend_at(0);
    if (!b) return ts_err_set(err, TS_ERR_UNSUPPORTED, "unknown target '%s'", target);
    if (!b->describe) return ts_err_set(err, TS_ERR_UNSUPPORTED, "the %s target generates no code to show", b->name);
    return b->describe(g, what, text, err);
}

const char *ts_target_name(int i)
{
    const ts_backend *b = ts_backend_at(i);
    return b ? b->name : NULL;
}

void ts_session_free(ts_session *s)
{
    if (!s) return;
    if (s->m) s->b->free(s->m);
    ts_mem_free(s->consts);
    ts_mem_free(s);
}

ts_status ts_session_run(ts_session *s, int n_in, ts_tensor *const *inputs, int n_out, ts_tensor **outputs,
                         ts_err *err)
{
    if (!s || (n_in && !inputs) || (n_out && !outputs))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_run: NULL argument");
    int64_t peak = 0;
    ts_status st = s->b->run(s->m, n_in, inputs, n_out, outputs, &peak, err);
    atomic_store(&s->peak, peak);
    if (st == TS_OK && (st = own_outputs(s, n_in, inputs, n_out, outputs, err)) != TS_OK)
        for (int k = 0; k < n_out; k++) {
            ts_tensor_release(outputs[k]);
            outputs[k] = NULL;
        }
    return st;
}

void ts_session_compile_info(const ts_session *s, double *compile_ms, int *cache_hit, int *kernels, int *fallbacks)
{
    ts_module_stats st = {0, -1, 0, 0};
    if (s && s->b->stats) s->b->stats(s->m, &st);
    if (compile_ms) *compile_ms = st.compile_ms;
    if (cache_hit) *cache_hit = st.cache_hit;
    if (kernels) *kernels = st.kernels;
    if (fallbacks) *fallbacks = st.fallbacks;
}

int64_t ts_session_peak_bytes(const ts_session *s) { return s ? atomic_load(&s->peak) : 0; }

ts_status ts_session_profile(ts_session *s, int enable, ts_err *err)
{
    if (!s) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_profile: NULL session");
    if (!s->b->profile) {
        char list[256];
        target_list(list, sizeof list, true);
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "the %s target records no profile (targets that do: %s)",
                          s->b->name, list);
    }
    return s->b->profile(s->m, enable, err);
}

ts_status ts_session_write_profile(ts_session *s, const char *path, ts_err *err)
{
    if (!s || !path) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_write_profile: NULL argument");
    if (!s->b->write_profile)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "profiling is not enabled on this session");
    return s->b->write_profile(s->m, path, err);
}

int ts_graph_num_inputs(const ts_graph *g) { return g->body->n_params; }
int ts_graph_num_outputs(const ts_graph *g) { return g->body->n_results; }

const char *ts_graph_input_name(const ts_graph *g, int i)
{
    if (i < 0 || i >= g->body->n_params) return NULL;
    return g->body->params[i]->name;
}

const char *ts_graph_output_name(const ts_graph *g, int i)
{
    if (i < 0 || i >= g->body->n_results) return NULL;
    return g->body->results[i]->name;
}

ts_value *ts_graph_input(const ts_graph *g, int i)
{
    return g && i >= 0 && i < g->body->n_params ? g->body->params[i] : NULL;
}

ts_value *ts_graph_output(const ts_graph *g, int k)
{
    return g && k >= 0 && k < g->body->n_results ? g->body->results[k] : NULL;
}

/* ---- inputs against the declared types ---------------------------------- */

static ts_status input_mismatch(const ts_value *p, const ts_tensor *t, const char *why, ts_err *err)
{
    ts_buf want = {0}, got = {0};
    ts_type_print(&want, &p->type);
    ts_buf_printf(&got, "%s[", ts_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++) ts_buf_printf(&got, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    ts_buf_puts(&got, "]");
    ts_status st = ts_err_set(err, TS_ERR_SHAPE, "expected %s, got %s%s%s", want.data ? want.data : "?",
                              got.data ? got.data : "?", why ? ": " : "", why ? why : "");
    ts_buf_free(&want);
    ts_buf_free(&got);
    return st;
}

ts_status ts_graph_check_inputs(const ts_graph *g, int n_in, ts_tensor *const *in, int *bad, ts_err *err)
{
    if (!g || (n_in && !in)) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_graph_check_inputs: NULL argument");
    if (n_in != g->body->n_params)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "%d inputs given, the graph takes %d", n_in, g->body->n_params);
    ts_symbind b = {0};
    ts_status st = TS_OK;
    for (int i = 0; i < n_in && st == TS_OK; i++) {
        const ts_value *p = g->body->params[i];
        const ts_tensor *t = in[i];
        if (bad) *bad = i;
        if (!t) st = ts_err_set(err, TS_ERR_INVALID_ARG, "input %d is NULL", i);
        else if (t->dtype != p->type.dtype || t->rank != p->type.rank) st = input_mismatch(p, t, NULL, err);
        for (int d = 0; st == TS_OK && d < p->type.rank; d++) {
            ts_err why = {0};
            if (ts_dim_match(p->type.dims[d], t->shape[d], &b, &why) != TS_OK)
                st = input_mismatch(p, t, ts_dim_is_const(p->type.dims[d]) ? NULL : why.msg, err);
        }
    }
    ts_symbind_free(&b);
    if (st == TS_OK && bad) *bad = -1;
    return st;
}

bool ts_ir_name_valid(const char *s, size_t len) { return ts_ir_name_ok(s, len, true); }
