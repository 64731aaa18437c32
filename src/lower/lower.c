/* lower.c — a fusion group becomes a loop IR kernel.
 *
 * The heart is ts_lw_value_at(v, coords): the scalar expression for element
 * `coords` of value v. A stored value is a load at its row-major index;
 * an inlined elementwise op is the op on its operands at the same coords;
 * a layout op maps coords to its operand's coords (broadcast drops or
 * zeroes them, transpose permutes, slice scales and shifts, reverse
 * mirrors, pad and concat select by range with a guard that keeps the
 * untaken branch from reading out of bounds, reshape goes through the
 * linear index). Results are memoized per (value, coords), and the loop
 * IR is hash-consed, so a value used twice in one kernel is computed once.
 */
#include "lower/lower_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


ts_lx *ts_lw_dim(lctx *c, ts_dim d) { return ts_lkernel_dim(c->p, c->k, d); }

/* A recorded delinearization that coords[i-n+1..i] over d[i-n+1..i] is. */
static const delin *delin_at(const lctx *c, int i, const ts_dim *d, ts_lx **coords)
{
    for (int k = 0; k < c->n_delins; k++) {
        const delin *dl = &c->delins[k];
        if (dl->n > i + 1 || dl->n < 2) continue;
        bool same = true;
        for (int j = 0; same && j < dl->n; j++)
            same = coords[i - dl->n + 1 + j] == dl->coords[j] && ts_dim_eq(d[i - dl->n + 1 + j], dl->dims[j]);
        if (same) return dl;
    }
    return NULL;
}

/* Row-major linear index of coords in a value of rank r with dims d. */
ts_lx *ts_lw_linear(lctx *c, int r, const ts_dim *d, ts_lx **coords)
{
    ts_lx *idx = ts_lx_int(c->p, 0), *stride = ts_lx_int(c->p, 1);
    for (int i = r - 1; i >= 0; i--) {
        const delin *dl = delin_at(c, i, d, coords);
        if (dl) {   /* those coords came from a linear index over the same dims: use it */
            idx = ts_lx_add(c->p, idx, ts_lx_mul(c->p, dl->lin, stride));
            for (int j = 0; j < dl->n; j++) stride = ts_lx_mul(c->p, stride, ts_lw_dim(c, d[i - j]));
            i -= dl->n - 1;
            continue;
        }
        idx = ts_lx_add(c->p, idx, ts_lx_mul(c->p, coords[i], stride));
        stride = ts_lx_mul(c->p, stride, ts_lw_dim(c, d[i]));
    }
    return idx;
}

/* coords of a value of rank r with dims d from a linear index. */
void ts_lw_delinear(lctx *c, int r, const ts_dim *d, ts_lx *lin, ts_lx **coords)
{
    for (int i = r - 1; i >= 0; i--) {
        ts_lx *dim = ts_lw_dim(c, d[i]);
        coords[i] = i ? ts_lx_imod(c->p, lin, dim) : lin;
        lin = ts_lx_idiv(c->p, lin, dim);
    }
}

/* coords[0..n) of lin over dims, recorded so that ts_lw_linear() undoes it. */
void ts_lw_delinear_rec(lctx *c, int n, const ts_dim *dims, ts_lx *lin, ts_lx **coords)
{
    ts_lw_delinear(c, n, dims, lin, coords);
    if (c->n_delins < (int)(sizeof c->delins / sizeof c->delins[0]) && n >= 2) {
        delin *d = &c->delins[c->n_delins++];
        d->n = n;
        d->dims = dims;
        memcpy(d->coords, coords, sizeof *coords * (size_t)n);
        d->lin = lin;
    }
}

/* The index of element coords of v in v's buffer: row-major over v's
 * dims, or over the dims of the concat v is written into, whose strides
 * the part keeps (fuse_concat.c, D125; the runtime hands the kernel the
 * part's first element). Only v's own kernel reads or writes a placed v. */
ts_lx *ts_lw_out_linear(lctx *c, const ts_value *v, ts_lx **coords)
{
    const ts_value *to = c->f->into[v->id];
    return ts_lw_linear(c, v->type.rank, to ? to->type.dims : v->type.dims, coords);
}

static ts_lx *load(lctx *c, const ts_value *v, ts_lx **coords)
{
    int b = ts_lkernel_buf(c->p, c->k, v, false);
    return ts_lx_load(c->p, v->type.dtype, b, ts_lw_out_linear(c, v, coords));
}

static ts_lx *const_elem(lctx *c, const ts_tensor *t, int64_t i)
{
    /* an empty constant is a "splat" whose loops run zero times */
    if (i >= t->numel) return ts_dtype_is_fp(t->dtype) ? ts_lx_const(c->p, t->dtype, 0) : ts_lx_iconst(c->p, t->dtype, 0);
    if (ts_dtype_is_fp(t->dtype)) return ts_lx_const(c->p, t->dtype, ts_elem_get_f64(t->dtype, t->data, i));
    return ts_lx_iconst(c->p, t->dtype, ts_elem_get_i64(t->dtype, t->data, i));   /* exact, u64 as bits */
}

static bool unit(ts_dim d) { return ts_dim_is_const(d) && d.c == 1; }

/* x's coords for element `coords` of y = reshape(x), group by group: the
 * axes of both split into the shortest runs of equal size (axes of extent
 * 1 aside: their coordinate is 0), and only within a run of several axes
 * are coordinates linearized and split again. Through one linear index
 * for the whole value, every load carried a div and a mod per axis: a
 * [32, 512] -> [1, 32, 512] reshape turned GPT-2's GELU loop into a gather
 * (10x slower). Symbolic axes must match one to one; false otherwise (the
 * caller then goes through the whole linear index). */
static bool reshape_coords(lctx *c, const ts_value *x, const ts_value *y, ts_lx **coords, ts_lx **xc)
{
    const ts_dim *dx = x->type.dims, *dy = y->type.dims;
    int rx = x->type.rank, ry = y->type.rank, i = 0, j = 0;
    for (;;) {
        for (; i < rx && unit(dx[i]); i++) xc[i] = ts_lx_int(c->p, 0);
        while (j < ry && unit(dy[j])) j++;
        if (i == rx || j == ry) return i == rx && j == ry;
        int i0 = i, j0 = j;
        if (!ts_dim_is_const(dx[i]) || !ts_dim_is_const(dy[j])) {
            if (!ts_dim_eq(dx[i], dy[j])) return false;
            xc[i++] = coords[j++];
            continue;
        }
        int64_t px = dx[i++].c, py = dy[j++].c;
        while (px != py) {   /* extend the smaller side; a unit axis inside a run is part of it */
            if (px < py) {
                if (i == rx || !ts_dim_is_const(dx[i])) return false;
                px *= dx[i++].c;
            } else {
                if (j == ry || !ts_dim_is_const(dy[j])) return false;
                py *= dy[j++].c;
            }
        }
        if (i - i0 == 1 && j - j0 == 1) {
            xc[i0] = coords[j0];
            continue;
        }
        ts_lx *lin = ts_lw_linear(c, j - j0, dy + j0, coords + j0);
        ts_lw_delinear(c, i - i0, dx + i0, lin, xc + i0);
    }
}

/* A dynamic slice's start along axis i, clamped as the primitive says to
 * [0, X_i - size] (X: the node's first operand; a u64 start above
 * INT64_MAX counts as INT64_MAX, so it clamps to the top as well). */
static ts_lx *clamped_start(lctx *c, const ts_node *n, const ts_value *start, int i, ts_dim size)
{
    ts_lprog *p = c->p;
    ts_lx *at = ts_lx_int(p, i);
    ts_lx *v = ts_lw_value_at(c, start, &at, false);
    ts_lx *hi = ts_lx_sub(p, ts_lw_dim(c, n->in[0]->type.dims[i]), ts_lw_dim(c, size));
    if (start->type.dtype == TS_DTYPE_U64)
        return ts_lx_cast(p, ts_lx_op(p, TS_OP_MIN, TS_DTYPE_U64, v, ts_lx_cast(p, hi, TS_DTYPE_U64), NULL),
                          TS_DTYPE_I64);
    v = ts_lx_op(p, TS_OP_MIN, TS_DTYPE_I64, ts_lx_cast(p, v, TS_DTYPE_I64), hi, NULL);
    return ts_lx_op(p, TS_OP_MAX, TS_DTYPE_I64, v, ts_lx_int(p, 0), NULL);
}

/* A concat of at least 4 parts (at most 64) of one constant extent E
 * along its axis (a recurrence's steps stacked) read at coords: part
 * q = coord / E at coord % E, the parts' expressions made one by
 * ts_roll_exprs (their buffers and differing constants in tables indexed
 * by q: a load through bufs[tab[q]]) instead of a chain of m - 1 guards,
 * each tested per element (a bidirectional LSTM's output: 31 per
 * element, D185). NULL where the parts are not alike, or in a
 * template's epilogue (whose C function has no tables). */
static ts_lx *concat_by_table(lctx *c, const ts_node *n, ts_lx **coords, ts_lx **xc)
{
    ts_lprog *p = c->p;
    const int m = n->n_in, axis = (int)ts_node_int(n, "axis"), rank = n->out[0]->type.rank;
    if (m < 4 || m > 64 || c->k->tmpl) return NULL;
    const ts_dim e = n->in[0]->type.dims[axis];
    for (int j = 0; j < m; j++)
        if (!ts_dim_is_const(n->in[j]->type.dims[axis]) || !ts_dim_eq(n->in[j]->type.dims[axis], e)) return NULL;
    if (e.c < 1) return NULL;
    ts_lx *ext = ts_lx_int(p, e.c);
    ts_lx *q = e.c == 1 ? coords[axis] : ts_lx_idiv(p, coords[axis], ext);
    ts_lx *parts[64];
    for (int j = 0; j < m; j++) {
        memcpy(xc, coords, sizeof *xc * (size_t)rank);
        xc[axis] = e.c == 1 ? ts_lx_int(p, 0) : ts_lx_imod(p, coords[axis], ext);
        if (!(parts[j] = ts_lw_value_at(c, n->in[j], xc, false))) return NULL;
    }
    return ts_roll_exprs(p, c->k, parts, m, q);
}

static ts_lx *view_at(lctx *c, const ts_node *n, ts_lx **coords)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0], *y = n->out[0];
    ts_lx *xc[TS_MAX_RANK];
    int xr = x->type.rank;
    switch (n->op) {
    case TS_OP_RESHAPE: {
        ts_lx *lin = ts_lw_linear(c, y->type.rank, y->type.dims, coords);
        bool row_acc = false;
        for (int i = 0; i < c->n_row; i++) row_acc |= c->row_val[i] == x;
        if (c->f->mat[x->id] && !row_acc) {   /* stored row-major: the linear index is the address */
            int b = ts_lkernel_buf(p, c->k, x, false);
            return ts_lx_load(p, x->type.dtype, b, lin);
        }
        if (!reshape_coords(c, x, y, coords, xc)) ts_lw_delinear(c, xr, x->type.dims, lin, xc);
        return ts_lw_value_at(c, x, xc, false);
    }
    case TS_OP_BROADCAST: {
        int cnt = 0;
        const int64_t *axes = ts_node_ints(n, "axes", &cnt);
        for (int i = 0; i < xr; i++) {
            ts_dim xd = x->type.dims[i], yd = y->type.dims[axes[i]];
            xc[i] = ts_dim_eq(xd, ts_dim_const(1)) && !ts_dim_eq(yd, xd) ? ts_lx_int(p, 0) : coords[axes[i]];
        }
        return ts_lw_value_at(c, x, xc, false);
    }
    case TS_OP_TRANSPOSE: {
        int cnt = 0;
        const int64_t *perm = ts_node_ints(n, "perm", &cnt);
        for (int i = 0; i < xr; i++) xc[perm[i]] = coords[i];
        return ts_lw_value_at(c, x, xc, false);
    }
    case TS_OP_SLICE: {
        int cs = 0, cst = 0;
        const ts_dim *start = ts_node_dims(n, "start", &cs);
        const int64_t *stride = ts_node_ints(n, "stride", &cst);
        for (int i = 0; i < xr; i++)
            xc[i] = ts_lx_add(p, ts_lw_dim(c, start[i]), ts_lx_mul(p, coords[i], ts_lx_int(p, stride[i])));
        return ts_lw_value_at(c, x, xc, false);
    }
    case TS_OP_REVERSE: {
        int cnt = 0;
        const int64_t *axes = ts_node_ints(n, "axes", &cnt);
        memcpy(xc, coords, sizeof *xc * (size_t)xr);
        for (int i = 0; i < cnt; i++)
            xc[axes[i]] = ts_lx_sub(p, ts_lx_sub(p, ts_lw_dim(c, x->type.dims[axes[i]]), ts_lx_int(p, 1)), coords[axes[i]]);
        return ts_lw_value_at(c, x, xc, false);
    }
    case TS_OP_PAD: {   /* operand element j sits at lo + j (interior + 1) */
        int cnt = 0;
        const int64_t *lo = ts_node_ints(n, "lo", &cnt), *interior = ts_node_ints(n, "interior", &cnt);
        ts_lx *inside = ts_lx_const(p, TS_DTYPE_BOOL, 1);
        for (int i = 0; i < xr; i++) {
            ts_lx *t = ts_lx_sub(p, coords[i], ts_lx_int(p, lo[i]));
            inside = ts_lx_and(p, inside, ts_lx_lt(p, ts_lx_int(p, -1), t));
            xc[i] = t;
            if (interior[i]) {   /* t >= 0 here, so C's % is the remainder */
                ts_lx *step = ts_lx_int(p, interior[i] + 1);
                inside = ts_lx_and(p, inside, ts_lx_lt(p, ts_lx_imod(p, t, step), ts_lx_int(p, 1)));
                xc[i] = ts_lx_idiv(p, t, step);
            }
            inside = ts_lx_and(p, inside, ts_lx_lt(p, xc[i], ts_lw_dim(c, x->type.dims[i])));
        }
        return ts_lx_guard(p, inside, ts_lw_value_at(c, x, xc, false), ts_lw_value_at(c, n->in[1], NULL, false));
    }
    case TS_OP_CONCAT: {
        int axis = (int)ts_node_int(n, "axis");
        ts_lx *r = concat_by_table(c, n, coords, xc), *off = ts_lx_int(p, 0);
        if (r) return r;
        ts_lx *parts[256], *offs[256];
        int m = n->n_in < 256 ? n->n_in : 256;
        for (int j = 0; j < m; j++) {
            memcpy(xc, coords, sizeof *xc * (size_t)y->type.rank);
            xc[axis] = ts_lx_sub(p, coords[axis], off);
            parts[j] = ts_lw_value_at(c, n->in[j], xc, false);
            off = ts_lx_add(p, off, ts_lw_dim(c, n->in[j]->type.dims[axis]));
            offs[j] = off;
        }
        r = parts[m - 1];
        for (int j = m - 2; j >= 0; j--) r = ts_lx_guard(p, ts_lx_lt(p, coords[axis], offs[j]), parts[j], r);
        return r;
    }
    case TS_OP_GATHER: {
        /* y[p, j, q] = x[p, idx[j], q]: the index is a load. A stored
         * index buffer is checked by the runtime before the kernel starts
         * (a constant one was checked when the backend took the node), so
         * the load of x stays in bounds (D113). */
        const ts_value *idx = n->in[1];
        int axis = (int)ts_node_int(n, "axis"), ir = idx->type.rank;
        ts_lx *iv = ts_lx_cast(p, ts_lw_value_at(c, idx, coords + axis, false), TS_DTYPE_I64);
        if (idx->def && idx->def->op != TS_OP_CONST && !c->f->mat[idx->id])
            ts_lprog_fail(p, TS_ERR_INTERNAL, "lower: a gather's indices are neither stored nor constant");
        else if (!idx->def || idx->def->op != TS_OP_CONST)
            ts_lkernel_check(p, c->k, ts_lkernel_buf(p, c->k, idx, false), ts_lw_dim(c, x->type.dims[axis]), n);
        for (int i = 0; i < xr; i++) xc[i] = i < axis ? coords[i] : i == axis ? iv : coords[i - 1 + ir];
        return ts_lw_value_at(c, x, xc, false);
    }
    case TS_OP_DYNAMIC_SLICE: {   /* y[j] = x[s + j] */
        for (int i = 0; i < xr; i++) xc[i] = ts_lx_add(p, coords[i], clamped_start(c, n, n->in[1], i, y->type.dims[i]));
        return ts_lw_value_at(c, x, xc, false);
    }
    case TS_OP_DYNAMIC_UPDATE_SLICE: {   /* upd[j - s] inside the window at s, else x[j] */
        const ts_value *u = n->in[1];
        ts_lx *inside = ts_lx_const(p, TS_DTYPE_BOOL, 1);
        for (int i = 0; i < xr; i++) {
            ts_lx *si = clamped_start(c, n, n->in[2], i, u->type.dims[i]);
            xc[i] = ts_lx_sub(p, coords[i], si);
            inside = ts_lx_and(p, inside, ts_lx_lt(p, ts_lx_int(p, -1), xc[i]));
            inside = ts_lx_and(p, inside, ts_lx_lt(p, xc[i], ts_lw_dim(c, u->type.dims[i])));
        }
        return ts_lx_guard(p, inside, ts_lw_value_at(c, u, xc, false), ts_lw_value_at(c, x, coords, false));
    }
    default:
        ts_lprog_fail(p, TS_ERR_INTERNAL, "lower: %s is not a view", ts_op_get(n->op)->name);
        return NULL;
    }
}

/* Whether v = x - broadcast(max of x over some axes), element by element:
 * each element minus the maximum of a set that holds it, so v <= 0 or NaN
 * (softmax's and log-softmax's shift; ONNX's keepdims shape arrives as a
 * reshape between the reduction and the broadcast). Anything else,
 * symbolic dims it cannot prove equal included, answers false. */
static bool shifted_by_own_max(const ts_value *v)
{
    const ts_node *s = v->def;
    if (!s || s->op != TS_OP_SUB) return false;
    const ts_value *x = s->in[0], *b = s->in[1];
    if (!b->def || b->def->op != TS_OP_BROADCAST) return false;
    const ts_node *bc = b->def;
    const ts_value *r = bc->in[0], *m = r;
    if (r->def && r->def->op == TS_OP_RESHAPE) m = r->def->in[0];
    if (!m->def || m->def->op != TS_OP_REDUCE_MAX || m->def->in[0] != x) return false;
    const int R = x->type.rank;
    if (b->type.rank != R || R > TS_MAX_RANK) return false;
    for (int i = 0; i < R; i++)
        if (!ts_dim_eq(b->type.dims[i], x->type.dims[i])) return false;
    int na = 0, nb = 0;
    const int64_t *ax = ts_node_ints(m->def, "axes", &na), *bx = ts_node_ints(bc, "axes", &nb);
    bool red[TS_MAX_RANK] = {false};
    for (int i = 0; i < na; i++) {
        if (!ax || ax[i] < 0 || ax[i] >= R) return false;
        red[ax[i]] = true;
    }
    if (nb && !bx) return false;
    if (r == m) {   /* the kept axes broadcast back to where they were */
        int k = 0;
        for (int i = 0; i < R; i++)
            if (!red[i] && (k >= nb || bx[k++] != i)) return false;
        return k == nb;
    }
    /* reshaped to x's shape with 1 at the reduced axes, broadcast in place */
    if (r->type.rank != R || nb != R) return false;
    for (int i = 0; i < R; i++)
        if (bx[i] != i || !ts_dim_eq(r->type.dims[i], red[i] ? ts_dim_const(1) : x->type.dims[i])) return false;
    return true;
}

static ts_lx *compute(lctx *c, const ts_node *n, ts_lx **coords)
{
    ts_lprog *p = c->p;
    const ts_value *y = n->out[0];
    ts_dtype dt = y->type.dtype;
    if (n->op == TS_OP_CONST) return const_elem(c, n->attrs[0].t, 0);   /* a splat */
    if (n->op == TS_OP_IOTA) return ts_lx_cast(p, coords[ts_node_int(n, "axis")], dt);
    if (n->op == TS_OP_CAST) return ts_lx_cast(p, ts_lw_value_at(c, n->in[0], coords, false), dt);
    if (ts_op_get(n->op)->flags & TS_OPF_EW) {
        ts_lx *a[3] = {NULL, NULL, NULL};
        for (int i = 0; i < n->n_in && i < 3; i++) a[i] = ts_lw_value_at(c, n->in[i], coords, false);
        const int hints = n->op == TS_OP_EXP && shifted_by_own_max(n->in[0]) ? TS_LXH_ARG_NONPOS : 0;
        return ts_lx_op_hint(p, n->op, dt, a[0], a[1], a[2], hints);
    }
    return view_at(c, n, coords);
}

static unsigned memo_slot(const ts_value *v, ts_lx **coords)
{
    uint64_t h = v->id * UINT64_C(0x9e3779b97f4a7c15);
    for (int i = 0; i < v->type.rank; i++) h = (h ^ (coords[i] ? coords[i]->id : 0)) * UINT64_C(0x100000001b3);
    return (unsigned)(h % NMEMO);
}

ts_lx *ts_lw_value_at(lctx *c, const ts_value *v, ts_lx **coords, bool compute_root)
{
    if (v == c->block_src) return ts_lx_load(c->p, v->type.dtype, TS_LBUF_BLOCK, c->block_index);
    if (v == c->subst_v) return c->subst_x;
    for (int i = 0; i < c->n_row; i++)
        if (c->row_val[i] == v) return c->row_acc[i];   /* this row's reduction: its accumulator */
    int r = v->type.rank;
    if (c->stage_xc && v == c->stage_v && !memcmp(coords, c->stage_xc, sizeof *coords * (size_t)r)) {
        if (c->stage_buf == c->rowtmp_v) return ts_lx_load(c->p, v->type.dtype, TS_LBUF_ROWTMP, coords[r - 1]);
        return ts_lx_load(c->p, v->type.dtype, ts_lkernel_buf(c->p, c->k, c->stage_buf, true),
                          ts_lw_out_linear(c, c->stage_buf, coords));
    }
    if (!compute_root && (c->f->mat[v->id] || !v->def)) return load(c, v, coords);
    unsigned s = memo_slot(v, coords);
    for (memo *m = c->memos[s]; m; m = m->next)
        if (m->v == v && (!r || !memcmp(m->coords, coords, sizeof *coords * (size_t)r))) return m->x;
    ts_lx *x = compute(c, v->def, coords);
    memo *m = ts_arena_alloc(ts_lprog_arena(c->p), sizeof *m);
    if (m && x) {
        m->v = v;
        if (r) memcpy(m->coords, coords, sizeof *coords * (size_t)r);
        m->x = x;
        m->next = c->memos[s];
        c->memos[s] = m;
    }
    return x;
}

/* ---- loop nests ------------------------------------------------------------------- */


void ts_lw_append(nest *ns, ts_ls *s)
{
    if (!s) return;
    *ns->tail = s;
    ns->tail = &s->next;
}

/* Open a loop over [0, extent) inside the current position; returns its var. */
ts_lx *ts_lw_open_loop(lctx *c, nest *ns, ts_lx *extent)
{
    ts_ls *s = ts_ls_new(c->p, TS_LS_FOR);
    if (!s) return NULL;
    s->var = c->k->n_vars++;
    s->depth = ++ns->depth;
    s->extent = extent;
    ts_lw_append(ns, s);
    ns->tail = &s->body;
    return ts_lx_var(c->p, s->var, s->depth);
}

void ts_lw_store(lctx *c, nest *ns, const ts_value *v, ts_lx **coords, ts_lx *value)
{
    ts_ls *s = ts_ls_new(c->p, TS_LS_STORE);
    if (!s) return;
    if (v == c->rowtmp_v) {   /* built in the row scratch, streamed out after (D50) */
        s->buf = TS_LBUF_ROWTMP;
        s->index = coords[v->type.rank - 1];
    } else {
        s->buf = ts_lkernel_buf(c->p, c->k, v, true);
        s->index = ts_lw_out_linear(c, v, coords);
    }
    s->value = value;
    ts_lw_append(ns, s);
}

/* The identity of a reduction in dtype dt. */
ts_lx *ts_lw_identity(lctx *c, ts_op op, ts_dtype dt)
{
    bool fl = ts_dtype_is_fp(dt), sg = ts_dtype_is_signed(dt);
    int bits = ts_dtype_bits(dt);
    switch (op) {
    case TS_OP_REDUCE_SUM: return ts_lx_const(c->p, dt, 0);
    case TS_OP_REDUCE_PROD: return ts_lx_const(c->p, dt, 1);
    case TS_OP_REDUCE_MAX:
        if (fl) return ts_lx_const(c->p, dt, -INFINITY);
        if (dt == TS_DTYPE_BOOL) return ts_lx_const(c->p, dt, 0);
        return ts_lx_iconst(c->p, dt, sg ? (bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1))) : 0);
    default:
        if (fl) return ts_lx_const(c->p, dt, INFINITY);
        if (dt == TS_DTYPE_BOOL) return ts_lx_const(c->p, dt, 1);
        if (sg) return ts_lx_iconst(c->p, dt, bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1);
        return ts_lx_iconst(c->p, dt, bits == 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1));
    }
}

/* The accumulator of a reduction: f32 sums and products run in f64 and
 * round once, as the reference does (docs/primitives.md): as fast for
 * the memory-bound kernels this serves, and overflow-free. */
ts_dtype ts_lw_acc_dtype(ts_op reduce, ts_dtype dt)
{
    bool sum = reduce == TS_OP_REDUCE_SUM || reduce == TS_OP_REDUCE_PROD;
    return sum && dt == TS_DTYPE_F32 ? TS_DTYPE_F64 : dt;
}

/* The same for a reduction of n terms (n < 0: not known when lowering):
 * the sum or product of at most two f32 terms is exact in f64, so
 * rounding it once gives the f32 operation's bits, and the accumulator
 * stays f32, without the conversions (a linear Resize's two taps per
 * axis, D192). */
ts_dtype ts_lw_acc_dtype_n(ts_op reduce, ts_dtype dt, int64_t n)
{
    return n >= 0 && n <= 2 ? dt : ts_lw_acc_dtype(reduce, dt);
}

ts_op ts_lw_combine_op(ts_op reduce)
{
    switch (reduce) {
    case TS_OP_REDUCE_SUM: return TS_OP_ADD;
    case TS_OP_REDUCE_PROD: return TS_OP_MUL;
    case TS_OP_REDUCE_MAX: return TS_OP_MAX;
    default: return TS_OP_MIN;
    }
}

/* At ns's position: an accumulator holding op's identity, then loops over
 * the nred reduced extents (their vars in rv). *inner receives the place
 * inside the innermost of them; ns goes on after them, at the same depth.
 * Returns the accumulator as an expression (valid after the loops). */
ts_lx *ts_lw_open_reduction(lctx *c, nest *ns, ts_op op, ts_dtype dt, int nred, ts_lx **ext, ts_lx **rv,
                            ts_ls ***inner, int *acc)
{
    ts_ls *a = ts_ls_new(c->p, TS_LS_ACC);
    if (!a) return NULL;
    a->var = *acc = c->k->n_accs++;
    a->dt = dt;
    a->value = ts_lw_identity(c, op, dt);
    ts_lw_append(ns, a);
    int d0 = ns->depth;
    ts_ls **after_acc = ns->tail;
    for (int i = 0; i < nred; i++) rv[i] = ts_lw_open_loop(c, ns, ext[i]);
    *inner = ns->tail;
    ns->depth = d0;
    ns->tail = after_acc;
    return ts_lx_acc(c->p, dt, a->var, d0);
}

void ts_lw_update(lctx *c, ts_ls **inner, int acc, ts_op op, ts_lx *value)
{
    ts_ls *u = ts_ls_new(c->p, TS_LS_UPDATE);
    if (!u) return;
    u->var = acc;
    u->op = op;
    u->value = value;
    *inner = u;
}

/* Move ns to the end of its current statement list. */
void ts_lw_to_end(nest *ns)
{
    while (*ns->tail) ns->tail = &(*ns->tail)->next;
}

/* A reduction over a few positions (constant extents, at most
 * REDUCE_UNROLL in all) is one expression per result element, the
 * positions folded in row-major order as the loop would, in the same
 * accumulator dtype (f32 for two terms, D192): the result's last axis is
 * then the innermost loop, where the vectorizer works, instead of a loop
 * of two trips around an accumulator (a bilinear Resize's two taps per axis: fcn_head's
 * horizontal pass 200 -> ~25 us, D120). Sums start from 0, as the loop
 * does (a sum of -0s is +0); max, min and prod from the first position.
 * NULL: not such a reduction. */
enum { REDUCE_UNROLL = 16, REDUCE_UNROLL_NODES = 512 };

/* Nodes of x walked as a tree (what the C repeats), counted up to cap. */
static int tree_nodes(const ts_lx *x, int cap)
{
    if (!x || cap <= 0) return 0;
    int n = 1;
    for (int i = 0; i < 3 && n < cap; i++) n += tree_nodes(x->a[i], cap - n);
    return n;
}

static ts_lx *reduce_unrolled(lctx *c, const ts_node *n, const bool *red, ts_lx **yc)
{
    const ts_value *x = n->in[0];
    const int xr = x->type.rank;
    int64_t ext[TS_MAX_RANK], npos = 1;
    for (int i = 0; i < xr; i++) {
        ext[i] = 1;
        if (!red[i]) continue;
        if (!ts_dim_is_const(x->type.dims[i])) return NULL;
        ext[i] = x->type.dims[i].c;
        npos *= ext[i];
        if (npos > REDUCE_UNROLL) return NULL;
    }
    if (npos < 1) return NULL;
    const ts_dtype adt = ts_lw_acc_dtype_n(n->op, n->out[0]->type.dtype, npos);
    int64_t kk[TS_MAX_RANK] = {0};
    ts_lx *xc[TS_MAX_RANK], *a = n->op == TS_OP_REDUCE_SUM ? ts_lw_identity(c, n->op, adt) : NULL;
    for (bool first = true;; first = false) {
        for (int i = 0, k = 0; i < xr; i++) xc[i] = red[i] ? ts_lx_int(c->p, kk[i]) : yc[k++];
        ts_lx *t = ts_lx_cast(c->p, ts_lw_value_at(c, x, xc, false), adt);
        /* a costly value at every position (a fused concat of unlike
         * parts is a chain of selects: DenseNet's last BN + ReLU + pool
         * was 9 copies of a 17-part chain, 0.6 s of gcc) stays a loop:
         * the unrolled form pays off for a few cheap taps (D195) */
        if (first && npos * tree_nodes(t, REDUCE_UNROLL_NODES + 1) > REDUCE_UNROLL_NODES) return NULL;
        a = a ? ts_lx_op(c->p, ts_lw_combine_op(n->op), adt, a, t, NULL) : t;
        int i = xr - 1;
        while (i >= 0 && (!red[i] || ++kk[i] == ext[i])) {
            if (red[i]) kk[i] = 0;
            i--;
        }
        if (i < 0) return a;
    }
}

static void lower_reduce(lctx *c, const ts_node *n)
{
    const ts_value *x = n->in[0], *y = n->out[0];
    int cnt = 0, xr = x->type.rank, acc = 0;
    const int64_t *axes = ts_node_ints(n, "axes", &cnt);
    bool red[TS_MAX_RANK] = {false};
    for (int i = 0; i < cnt; i++) red[axes[i]] = true;
    nest ns = {.tail = &c->k->body};
    ts_lx *yc[TS_MAX_RANK], *xc[TS_MAX_RANK], *ext[TS_MAX_RANK], *rv[TS_MAX_RANK];
    for (int i = 0; i < y->type.rank; i++) yc[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, y->type.dims[i]));
    /* Adjacent reduced axes of a stored x are one loop over their product
     * (D131): a global pool over a 24x24 map is one run of 576 floats in
     * 16-float vectors, not 24 rows of 16 lanes and 8 scalars each (the
     * coords are recorded, so x's index is the loop variable itself). */
    const bool merge = c->f->mat[x->id] && !c->f->into[x->id];
    int nr = 0, g0[TS_MAX_RANK], gn[TS_MAX_RANK];
    for (int i = 0; i < xr; i++) {
        if (!red[i]) continue;
        if (merge && nr && g0[nr - 1] + gn[nr - 1] == i) {
            gn[nr - 1]++;
            ext[nr - 1] = ts_lx_mul(c->p, ext[nr - 1], ts_lw_dim(c, x->type.dims[i]));
            continue;
        }
        g0[nr] = i, gn[nr] = 1;
        ext[nr++] = ts_lw_dim(c, x->type.dims[i]);
    }
    ts_ls **inner = NULL;
    ts_dtype dt = y->type.dtype, adt = ts_lw_acc_dtype(n->op, dt);
    ts_lx *a = reduce_unrolled(c, n, red, yc);
    if (a) {
        ts_lw_store(c, &ns, y, yc, ts_lx_cast(c->p, a, dt));
        return;
    }
    a = ts_lw_open_reduction(c, &ns, n->op, adt, nr, ext, rv, &inner, &acc);
    if (!a) return;
    for (int i = 0, k = 0; i < xr; i++)
        if (!red[i]) xc[i] = yc[k++];
    for (int j = 0; j < nr; j++) {
        if (gn[j] == 1) xc[g0[j]] = rv[j];
        else ts_lw_delinear_rec(c, gn[j], x->type.dims + g0[j], rv[j], xc + g0[j]);
    }
    ts_lw_update(c, inner, acc, ts_lw_combine_op(n->op), ts_lx_cast(c->p, ts_lw_value_at(c, x, xc, false), adt));
    ts_lw_to_end(&ns);
    ts_lw_store(c, &ns, y, yc, ts_lx_cast(c->p, a, dt));
}

ts_status ts_lower_group(ts_lprog *p, const ts_fusion *f, const ts_group *g, const char *name, ts_lkernel **out,
                         ts_err *err)
{
    lctx c = {.p = p, .f = f};
    c.k = ts_lkernel_new(p, ts_op_get(g->root->op)->name);
    if (!c.k) return ts_lprog_status(p, err);
    snprintf(c.k->name, sizeof c.k->name, "%s", name);
    switch (g->kind) {
    case TS_G_LOOP:
        if (g->root->op == TS_OP_SCATTER) ts_lw_scatter(&c, g->root);
        else if (g->n_out == 2) ts_lw_loop2(&c, g->out[0], g->out[1]);
        else ts_lw_loop(&c, g->out[0]);
        break;
    case TS_G_REDUCE:
        if (g->root->op == TS_OP_REDUCE_WINDOW) ts_lw_window(&c, g->root);
        else if (g->root->op == TS_OP_ARGMAX || g->root->op == TS_OP_ARGMIN) ts_lw_arg_extreme(&c, g->root);
        else if (g->root->op == TS_OP_CUMULATIVE) ts_lw_cumulative(&c, g->root);
        else lower_reduce(&c, g->root);
        break;
    case TS_G_DOT:   /* the fast template where the axes merge into strides, loops otherwise */
        if (ts_fuse_template(f, g->root)) ts_lw_template(&c, g);
        else ts_lw_dot(&c, g->root);
        break;
    case TS_G_CONV:
        if (ts_fuse_template(f, g->root)) ts_lw_template(&c, g);
        else ts_lw_conv(&c, g->root);
        break;
    case TS_G_ROW: ts_lw_row(&c, g); break;
    case TS_G_CALL: ts_lw_sort(&c, g->root); break;
    default: return ts_err_set(err, TS_ERR_INTERNAL, "lower: group kind %d has no loops", (int)g->kind);
    }
    TS_TRY(ts_lprog_status(p, err));
    if (g->kind == TS_G_LOOP) ts_split_divisors(p, c.k);
    ts_schedule(c.k);
    if (g->kind == TS_G_LOOP) {
        ts_roll_nests(p, c.k);
        TS_TRY(ts_lprog_status(p, err));
    }
    *out = c.k;
    return TS_OK;
}
