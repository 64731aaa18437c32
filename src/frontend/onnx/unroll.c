/* unroll.c — a Loop that carries a sequence or an optional, or whose body
 * reads one, is unrolled at build time (D17): the body is built inline once
 * per iteration with the iteration number as a constant, so a sequence may
 * grow (SequenceInsert), and SequenceAt(seq, i) reads a known element. The
 * trip count and every condition must be known when the model is built;
 * scan outputs are stacked with concat. The while primitive cannot carry a
 * list whose length changes, which is why this is not a `while`. */
#include "frontend/onnx/seq.h"

#include <string.h>

typedef struct unroll {
    onnx_node *n;
    const Onnx__GraphProto *body;
    int n_carried, n_scan;
    int64_t trips;            /* INT64_MAX when M is omitted */
    bool go;                  /* the condition before the next iteration */
    ts_value **state;         /* carried values now */
    ts_value ***scans;        /* per scan output, one value per iteration */
    int iters;
} unroll;

/* A bool or integer input known at build time, as an int64; the message
 * says why it must be known. */
static ts_status known_scalar(onnx_node *n, ts_value *v, const char *what, int64_t *out)
{
    const ts_tensor *t = v ? onnx_const(n, v) : NULL;
    if (!t) {
        TS_TRY(onnx_status(n));
        return onnx_unsupported(n, "%s must be known when the model is built: the loop carries a sequence or an "
                                   "optional and is unrolled", what);
    }
    if (t->numel != 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "%s must hold one element", what);
    *out = ts_elem_get_i64(t->dtype, t->data, 0);
    return TS_OK;
}

static ts_status unroll_begin(unroll *u, onnx_node *n)
{
    memset(u, 0, sizeof *u);
    u->n = n;
    u->body = onnx_attr_graph(n, "body");
    if (!u->body) return onnx_status(n);
    u->n_carried = n->n_in - 2;
    u->n_scan = (int)u->body->n_output - 1 - u->n_carried;
    if (u->body->n_output > INT_MAX || u->n_scan < 0 || n->n_out > u->n_carried + u->n_scan)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the body has %zu outputs for %d carried values and %d outputs",
                         u->body->n_output, u->n_carried, n->n_out);
    int64_t v = 1;
    u->trips = INT64_MAX;
    if (onnx_has_input(n, 0)) TS_TRY(known_scalar(n, n->in[0], "the trip count M", &u->trips));
    if (onnx_has_input(n, 1)) TS_TRY(known_scalar(n, n->in[1], "the condition", &v));
    u->go = v != 0;
    ts_arena *a = onnx_graph(n)->arena;
    u->state = ts_arena_array(a, (size_t)u->n_carried + 1, sizeof *u->state);
    u->scans = ts_arena_array(a, (size_t)u->n_scan + 1, sizeof *u->scans);
    for (int k = 0; u->scans && k < u->n_scan; k++)
        u->scans[k] = ts_arena_array(a, ONNX_MAX_SEQ, sizeof **u->scans);
    for (int k = 0; u->scans && k < u->n_scan; k++)
        if (!u->scans[k]) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    if (!u->state || !u->scans) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int k = 0; k < u->n_carried; k++) u->state[k] = n->in[2 + k];
    return TS_OK;
}

/* One iteration: the body inline on (i, true, state...). */
static ts_status unroll_step(unroll *u)
{
    onnx_node *n = u->n;
    ts_builder *b = onnx_b(n);
    ts_value **f = ts_arena_array(onnx_graph(n)->arena, (size_t)u->n_carried + 3, sizeof *f), **res;
    if (!f) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    f[0] = onnx_i64_scalar(b, u->iters);
    f[1] = ts_b_scalar(b, TS_DTYPE_BOOL, 1);
    if (!f[0] || !f[1]) return onnx_status(n);
    memcpy(f + 2, u->state, sizeof *f * (size_t)u->n_carried);
    TS_TRY(onnx_inline_body(n, u->body, u->n_carried + 2, f, &res));
    int64_t go = 0;   /* set by known_scalar; gcc -O3 cannot see it */
    if (onnx_comp_of(res[0])) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the body's condition must be a tensor");
    TS_TRY(known_scalar(n, res[0], "the body's condition", &go));
    for (int k = 0; k < u->n_carried; k++) u->state[k] = res[1 + k];
    for (int k = 0; k < u->n_scan; k++) {
        ts_value *y = res[1 + u->n_carried + k];
        if (onnx_comp_of(y)) return onnx_fail(n, TS_ERR_INVALID_MODEL, "scan output %d must be a tensor", k);
        u->scans[k][u->iters] = y;
    }
    u->iters++;
    u->go = go != 0;
    return TS_OK;
}

/* Scan output k: the per-iteration values stacked on a new axis 0. */
static ts_value *stacked(unroll *u, int k)
{
    onnx_node *n = u->n;
    if (!u->iters) {
        onnx_unsupported(n, "the loop runs no iteration, so scan output %d has no known type", k);
        return NULL;
    }
    ts_value **parts = ts_arena_array(onnx_graph(n)->arena, (size_t)u->iters, sizeof *parts);
    if (!parts) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < u->iters; i++) {
        ts_value *y = u->scans[k][i];
        ts_dim d[TS_MAX_RANK];
        if (y->type.rank + 1 > TS_MAX_RANK) {
            onnx_unsupported(n, "scan output %d is too deep", k);
            return NULL;
        }
        d[0] = ts_dim_const(1);
        if (y->type.rank) memcpy(d + 1, y->type.dims, sizeof *d * (size_t)y->type.rank);
        parts[i] = ts_b_reshape(onnx_b(n), y, y->type.rank + 1, d);
    }
    return u->iters == 1 ? parts[0] : ts_b_concat(onnx_b(n), u->iters, parts, 0);
}

ts_status onnx_loop_unrolled(onnx_node *n)
{
    unroll u;
    TS_TRY(unroll_begin(&u, n));
    while (u.go && u.iters < u.trips) {
        if (u.iters == ONNX_MAX_SEQ)
            return onnx_unsupported(n, "the loop runs more than %d iterations, more than tessera unrolls", ONNX_MAX_SEQ);
        TS_TRY(unroll_step(&u));
    }
    for (int k = 0; k < n->n_out; k++) {
        if (k < u.n_carried) n->out[k] = u.state[k];
        else if (n->out_used[k] && !(n->out[k] = stacked(&u, k - u.n_carried))) return onnx_status(n);
    }
    return onnx_status(n);
}
