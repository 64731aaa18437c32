/* lower_window.c — reduce_window (pooling) as loops: an accumulator over
 * the window positions; a small window unrolled into one expression per
 * result with its borders split off (D27); max/min pooling of a plane
 * run as two passes over a row scratch (D121). */
#include "lower/lower_int.h"

/* reduce_window: loops over the result, an accumulator over the window
 * positions; a position in the padding adds the identity (a guard keeps
 * the load from running there). */

/* The guarded element of x at window offset k (k[i]: the offset along
 * dim i, NULL where the window is 1) of result element yc; no guard along
 * the axes i with inside[i] (inside may be NULL). */
static ts_lx *window_term(lctx *c, const ts_node *n, ts_lx **yc, ts_lx **k, const bool *inside_axis, ts_op op,
                          ts_dtype adt)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0];
    int r = x->type.rank, cnt;
    const int64_t *win = ts_node_ints(n, "window", &cnt), *st = ts_node_ints(n, "strides", &cnt);
    const int64_t *dil = ts_node_ints(n, "dilations", &cnt), *lo = ts_node_ints(n, "pad_lo", &cnt);
    ts_lx *xc[TS_MAX_RANK];
    ts_lx *inside = ts_lx_const(p, TS_DTYPE_BOOL, 1);
    for (int i = 0; i < r; i++) {
        ts_lx *ki = win[i] > 1 ? ts_lx_mul(p, k[i], ts_lx_int(p, dil[i])) : ts_lx_int(p, 0);
        xc[i] = ts_lx_sub(p, ts_lx_add(p, ts_lx_mul(p, yc[i], ts_lx_int(p, st[i])), ki), ts_lx_int(p, lo[i]));
        if ((lo[i] || win[i] > 1) && !(inside_axis && inside_axis[i])) {   /* may fall outside x */
            inside = ts_lx_and(p, inside, ts_lx_lt(p, ts_lx_int(p, -1), xc[i]));
            inside = ts_lx_and(p, inside, ts_lx_lt(p, xc[i], ts_lw_dim(c, x->type.dims[i])));
        }
    }
    return ts_lx_guard(p, inside, ts_lx_cast(p, ts_lw_value_at(c, x, xc, false), adt), ts_lw_identity(c, op, adt));
}

/* A small window (pooling's 3x3) is one expression per result element,
 * its positions folded in row-major order as the loop would: the
 * innermost loop is then the result's last axis, where the vectorizer
 * can work, instead of a 3-trip window loop (D27). max and min start from
 * the first position (max(-inf, v) is v, NaN included); sums from 0,
 * which keeps a sum of -0s at +0. */
enum { WINDOW_UNROLL = 16 };

static ts_lx *window_unrolled(lctx *c, const ts_node *n, ts_lx **yc, const bool *inside, ts_op op, ts_dtype adt)
{
    int r = n->in[0]->type.rank, cnt;
    const int64_t *win = ts_node_ints(n, "window", &cnt);
    int64_t kk[TS_MAX_RANK] = {0};
    ts_lx *k[TS_MAX_RANK], *a = op == TS_OP_REDUCE_SUM ? ts_lw_identity(c, op, adt) : NULL;
    for (;;) {
        for (int i = 0; i < r; i++) k[i] = ts_lx_int(c->p, kk[i]);
        ts_lx *t = window_term(c, n, yc, k, inside, op, adt);
        a = a ? ts_lx_op(c->p, ts_lw_combine_op(op), adt, a, t, NULL) : t;
        int i = r - 1;
        while (i >= 0 && ++kk[i] == win[i]) kk[i--] = 0;
        if (i < 0) return a;
    }
}

/* Padded pooling's borders: along an axis of constant sizes with guards
 * (a window or a pad), the results whose whole window lies inside x are
 * one range [*lo, *hi). False when the axis needs no guard or is
 * symbolic. */
static bool window_interior(const ts_node *n, int i, int64_t *lo, int64_t *hi)
{
    int cnt;
    const ts_dim X = n->in[0]->type.dims[i], Y = n->out[0]->type.dims[i];
    const int64_t w = ts_node_ints(n, "window", &cnt)[i], st = ts_node_ints(n, "strides", &cnt)[i];
    const int64_t dil = ts_node_ints(n, "dilations", &cnt)[i], pad = ts_node_ints(n, "pad_lo", &cnt)[i];
    if ((!pad && w == 1) || !ts_dim_is_const(X) || !ts_dim_is_const(Y)) return false;
    /* o*st - pad >= 0 and o*st - pad + (w-1)*dil <= X-1 */
    const int64_t last = X.c - 1 + pad - (w - 1) * dil;
    *lo = pad > 0 ? (pad + st - 1) / st : 0;
    *lo = *lo < Y.c ? *lo : Y.c;
    *hi = last < 0 ? *lo : last / st + 1;
    *hi = *hi < *lo ? *lo : *hi > Y.c ? Y.c : *hi;
    return true;
}

/* The loops of an unrolled window from axis i on: an axis with borders
 * (window_interior) becomes up to three sibling loops, border, interior,
 * border, and the interior's terms carry no guard along it. Pooling's
 * 3x3 over 56x56 is then 9 nests, the middle one (nearly all results)
 * straight-line loads the C compiler vectorises, where one nest with a
 * guard per load stayed scalar (ResNet-50's max pool 2-6 ms against ORT's
 * 0.24). */
static void window_nest(lctx *c, const ts_node *n, nest *ns, ts_lx **yc, bool *inside, int i, ts_op op,
                        ts_dtype adt)
{
    const ts_value *y = n->out[0];
    if (i == y->type.rank) {
        ts_lw_store(c, ns, y, yc, ts_lx_cast(c->p, window_unrolled(c, n, yc, inside, op, adt), y->type.dtype));
        return;
    }
    int64_t lo, hi;
    if (!window_interior(n, i, &lo, &hi)) {
        inside[i] = false;
        yc[i] = ts_lw_open_loop(c, ns, ts_lw_dim(c, y->type.dims[i]));
        window_nest(c, n, ns, yc, inside, i + 1, op, adt);
        return;
    }
    const int64_t cut[4] = {0, lo, hi, y->type.dims[i].c};
    ts_ls **slot = ns->tail;
    const int depth = ns->depth;
    for (int part = 0; part < 3; part++) {
        if (cut[part + 1] == cut[part]) continue;
        ns->tail = slot, ns->depth = depth;   /* the next sibling at this level */
        ts_lx *v = ts_lw_open_loop(c, ns, ts_lx_int(c->p, cut[part + 1] - cut[part]));
        if (!*slot) return;                   /* out of memory: reported by the kernel set */
        yc[i] = cut[part] ? ts_lx_add(c->p, v, ts_lx_int(c->p, cut[part])) : v;
        inside[i] = part == 1;
        window_nest(c, n, ns, yc, inside, i + 1, op, adt);
        slot = &(*slot)->next;
    }
    ns->tail = slot, ns->depth = depth;
}

/* Max or min pooling over the last two axes of f32 data, every earlier
 * axis a window of 1: two passes per result row over a row scratch.
 * Pass 1 folds the window's rows of x, element by element along the
 * row (unit stride: the vectorizer's best case); pass 2 folds each
 * result's columns out of that row, read from L1. 9 loads and 8 folds
 * per result of a 3x3 window became ~2 x (3 loads, 2 folds) per input
 * column and 3 loads, 2 folds per result, and the stride-2 loads are
 * from the scratch (squeezenet's pools, D121).
 *
 * Exact for max and min: a fold over the same elements in another
 * order, repeats allowed. So pass 1 clamps a row outside x to the
 * nearest row of x, which lies in the same window (every window holds
 * a row of x: checked here), instead of a guard per load; the scratch
 * row holds the padding's identity around x's columns, so pass 2 reads
 * no guard either. */
enum { SEP_ROW_MAX = 4096 };

/* A max or min pool of f32 planes (D121's and D179's forms): constant
 * shapes, every axis but the last two (h, w) a window of 1 with stride 1
 * and no padding; its attributes and the planes' sizes. */
typedef struct plane_pool {
    const int64_t *win, *st, *dil, *lo;
    int h, w;
    int64_t Hx, Hy, Wx, Wy, planes;   /* planes: the product of the leading axes */
} plane_pool;

static bool plane_pool_of(const ts_node *n, ts_op op, plane_pool *g)
{
    const ts_value *x = n->in[0], *y = n->out[0];
    const int r = x->type.rank;
    int cnt;
    g->win = ts_node_ints(n, "window", &cnt), g->st = ts_node_ints(n, "strides", &cnt);
    g->dil = ts_node_ints(n, "dilations", &cnt), g->lo = ts_node_ints(n, "pad_lo", &cnt);
    if (op == TS_OP_REDUCE_SUM || r < 2 || x->type.dtype != TS_DTYPE_F32) return false;
    for (int i = 0; i < r; i++)
        if (!ts_dim_is_const(x->type.dims[i]) || !ts_dim_is_const(y->type.dims[i])) return false;
    for (int i = 0; i < r - 2; i++)
        if (g->win[i] != 1 || g->st[i] != 1 || g->lo[i] != 0) return false;
    g->h = r - 2, g->w = r - 1;
    g->Hx = x->type.dims[g->h].c, g->Hy = y->type.dims[g->h].c;
    g->Wx = x->type.dims[g->w].c, g->Wy = y->type.dims[g->w].c;
    g->planes = 1;
    for (int i = 0; i < g->h; i++) g->planes *= x->type.dims[i].c;
    return true;
}

static bool separable(const plane_pool *g, int64_t *row)
{
    const int64_t *win = g->win, *st = g->st, *dil = g->dil, *lo = g->lo;
    const int h = g->h, w = g->w;
    if (win[h] < 2 || win[w] < 2 || win[h] > 16 || win[w] > 16 || dil[h] != 1 || lo[h] < 0 || lo[w] < 0) return false;
    if (g->Hx < 1 || g->Hy < 1 || g->Wx < 1 || g->Wy < 1) return false;
    if (lo[h] > win[h] - 1 || (g->Hy - 1) * st[h] - lo[h] > g->Hx - 1) return false;   /* a window without a row of x */
    const int64_t reach = (g->Wy - 1) * st[w] + (win[w] - 1) * dil[w] + 1;             /* in scratch columns */
    *row = reach > lo[w] + g->Wx ? reach : lo[w] + g->Wx;
    return *row <= SEP_ROW_MAX;
}

static void store_row(lctx *c, nest *ns, ts_lx *index, ts_lx *value)
{
    ts_ls *s = ts_ls_new(c->p, TS_LS_STORE);
    if (!s) return;
    s->buf = TS_LBUF_ROWTMP;
    s->index = index;
    s->value = value;
    ts_lw_append(ns, s);
}

/* The fold of the window's columns right of scratch position t. */
static ts_lx *fold_columns(ts_lprog *p, ts_op fold, ts_lx *t, int64_t win, int64_t dil)
{
    ts_lx *v = NULL;
    for (int64_t k = 0; k < win; k++) {
        ts_lx *e = ts_lx_load(p, TS_DTYPE_F32, TS_LBUF_ROWTMP, ts_lx_add(p, t, ts_lx_int(p, k * dil)));
        v = v ? ts_lx_op(p, fold, TS_DTYPE_F32, v, e, NULL) : e;
    }
    return v;
}

static void window_separable(lctx *c, const ts_node *n, ts_op op, const plane_pool *g, int64_t row)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0], *y = n->out[0];
    const int h = g->h, w = g->w;
    const int64_t *win = g->win, *st = g->st, *dil = g->dil, *lo = g->lo;
    const int64_t Hx = g->Hx, Wx = g->Wx, Wy = g->Wy;
    const ts_op fold = ts_lw_combine_op(op);
    ts_lx *ident = ts_lw_identity(c, op, TS_DTYPE_F32);
    nest ns = {.tail = &c->k->body};
    ts_lx *yc[TS_MAX_RANK], *xc[TS_MAX_RANK];
    for (int i = 0; i < w; i++) yc[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, y->type.dims[i]));
    c->k->rowtmp = row;
    const int depth = ns.depth;
    /* the padding's columns hold the identity */
    const int64_t pads[2][2] = {{0, lo[w]}, {lo[w] + Wx, row}};
    for (int k = 0; k < 2; k++) {
        if (pads[k][1] <= pads[k][0]) continue;
        ts_ls **at = ns.tail;
        ts_lx *q = ts_lw_open_loop(c, &ns, ts_lx_int(p, pads[k][1] - pads[k][0]));
        store_row(c, &ns, ts_lx_add(p, q, ts_lx_int(p, pads[k][0])), ident);
        if (!*at) return;
        ns.tail = &(*at)->next, ns.depth = depth;
    }
    /* pass 1: the window's rows folded into the scratch */
    ts_ls **at = ns.tail;
    ts_lx *j = ts_lw_open_loop(c, &ns, ts_lx_int(p, Wx));
    for (int i = 0; i < h; i++) xc[i] = yc[i];
    xc[w] = j;
    ts_lx *v = NULL;
    for (int64_t k = 0; k < win[h]; k++) {
        ts_lx *ri = ts_lx_add(p, ts_lx_mul(p, yc[h], ts_lx_int(p, st[h])), ts_lx_int(p, k - lo[h]));
        ri = ts_lx_op(p, TS_OP_MAX, TS_DTYPE_I64, ri, ts_lx_int(p, 0), NULL);
        xc[h] = ts_lx_op(p, TS_OP_MIN, TS_DTYPE_I64, ri, ts_lx_int(p, Hx - 1), NULL);
        ts_lx *t = ts_lw_value_at(c, x, xc, false);
        v = v ? ts_lx_op(p, fold, TS_DTYPE_F32, v, t, NULL) : t;
    }
    store_row(c, &ns, ts_lx_add(p, j, ts_lx_int(p, lo[w])), v);
    if (!*at) return;
    ns.tail = &(*at)->next, ns.depth = depth;
    /* pass 2: each result's columns out of the scratch */
    yc[w] = ts_lw_open_loop(c, &ns, ts_lx_int(p, Wy));
    ts_lw_store(c, &ns, y, yc, fold_columns(p, fold, ts_lx_mul(p, yc[w], ts_lx_int(p, st[w])), win[w], dil[w]));
}

/* Max or min pooling without padding over short rows: pass 1 and pass 2
 * of window_separable, each one loop over a chunk of whole planes, then
 * a copy of the results out of pass 2's scratch. Rows under 32 columns
 * left the per-row passes mostly vector tails and loop overhead
 * (SqueezeNet's 23- and 11-column pools ran at a third of ORT's speed,
 * D179); over a chunk the folds run on full vectors. From 32 columns
 * on the per-row passes, which fold only the rows and columns the
 * strides pick, are as fast or faster (a 47-column pool: measured).
 * Pass 1 folds, for every position t of the chunk, the window's rows
 * below it (x[t + k*dh*W]); pass 2
 * folds pass 1's columns right of it (V[t + k*dw]). Positions whose
 * window would cross a plane's last row or column hold a fold of
 * elements of other rows or planes: no result reads them, since every
 * result's window lies inside its plane (no padding, the last window
 * inside x: checked). Pass 1 computes every row, not only those a
 * stride picks (2x work at stride 2, still cheaper than short rows);
 * with a column stride there is no pass 2: the picked positions fold
 * pass 1's columns themselves (D198). Exact: max and min over the same
 * elements in another order (D121). */
enum { FLAT_MAX = 4096, FLAT_ROW_MAX = 32 };

static bool flat(const plane_pool *g, int64_t *planes)
{
    const int64_t *win = g->win, *st = g->st, *dil = g->dil, *lo = g->lo;
    const int h = g->h, w = g->w;
    const int64_t Hx = g->Hx, Hy = g->Hy, Wx = g->Wx, Wy = g->Wy;
    if (lo[h] || lo[w] || win[h] * win[w] < 2 || win[h] > 16 || win[w] > 16 || Hy < 1 || Wy < 1) return false;
    if ((Hy - 1) * st[h] + (win[h] - 1) * dil[h] > Hx - 1 || (Wy - 1) * st[w] + (win[w] - 1) * dil[w] > Wx - 1)
        return false;
    if (Wx >= FLAT_ROW_MAX || Hx * Wx > FLAT_MAX) return false;
    const int64_t P = g->planes;
    int64_t cp = 1;
    for (int64_t d = 1; d <= P && d * Hx * Wx <= FLAT_MAX; d++)   /* the most planes that fit, dividing P */
        if (P % d == 0) cp = d;
    *planes = cp;
    return P > 0;
}

static void window_flat(lctx *c, const ts_node *n, ts_op op, const plane_pool *g, int64_t cp)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0], *y = n->out[0];
    const int r = x->type.rank, h = g->h, w = g->w;
    const int64_t *win = g->win, *st = g->st, *dil = g->dil;
    const int64_t Wx = g->Wx, HW = g->Hx * Wx, Hy = g->Hy, Wy = g->Wy;
    const int64_t L1 = cp * HW - (win[h] - 1) * dil[h] * Wx, L2 = L1 - (win[w] - 1) * dil[w];
    /* with a column stride, the results fold pass 1's columns themselves:
     * a pass 2 over every column would fold st[w] times the columns used */
    const bool pass2 = st[w] == 1;
    const int64_t off = pass2 ? (L1 + 15) / 16 * 16 : 0;   /* pass 2's part of the scratch, 64-byte aligned */
    const ts_op fold = ts_lw_combine_op(op);
    const int64_t P = g->planes;
    nest ns = {.tail = &c->k->body};
    ts_lx *xc[TS_MAX_RANK], *yc[TS_MAX_RANK];
    ts_lx *ch = ts_lw_open_loop(c, &ns, ts_lx_int(p, P / cp));
    ts_lx *base = ts_lx_mul(p, ch, ts_lx_int(p, cp * HW));
    c->k->rowtmp = pass2 ? off + L2 : L1;
    const int depth = ns.depth;
    /* pass 1: each position's window rows */
    ts_ls **at = ns.tail;
    ts_lx *t = ts_lw_open_loop(c, &ns, ts_lx_int(p, L1)), *v = NULL;
    for (int64_t k = 0; k < win[h]; k++) {
        ts_lw_delinear_rec(c, r, x->type.dims, ts_lx_add(p, base, ts_lx_add(p, t, ts_lx_int(p, k * dil[h] * Wx))), xc);
        ts_lx *e = ts_lw_value_at(c, x, xc, false);
        v = v ? ts_lx_op(p, fold, TS_DTYPE_F32, v, e, NULL) : e;
    }
    store_row(c, &ns, t, v);
    if (!*at) return;
    ns.tail = &(*at)->next, ns.depth = depth;
    /* pass 2: each position's window columns, out of pass 1 */
    if (pass2) {
        at = ns.tail;
        t = ts_lw_open_loop(c, &ns, ts_lx_int(p, L2));
        store_row(c, &ns, ts_lx_add(p, t, ts_lx_int(p, off)), fold_columns(p, fold, t, win[w], dil[w]));
        if (!*at) return;
        ns.tail = &(*at)->next, ns.depth = depth;
    }
    /* the results: the positions the strides pick */
    ts_lx *q = ts_lw_open_loop(c, &ns, ts_lx_int(p, cp));
    ts_lw_delinear(c, h, y->type.dims, ts_lx_add(p, ts_lx_mul(p, ch, ts_lx_int(p, cp)), q), yc);
    yc[h] = ts_lw_open_loop(c, &ns, ts_lx_int(p, Hy));
    yc[w] = ts_lw_open_loop(c, &ns, ts_lx_int(p, Wy));
    ts_lx *at_pos = ts_lx_add(p, ts_lx_mul(p, q, ts_lx_int(p, HW)),
                              ts_lx_add(p, ts_lx_mul(p, yc[h], ts_lx_int(p, st[h] * Wx)),
                                        ts_lx_mul(p, yc[w], ts_lx_int(p, st[w]))));
    if (pass2) {
        ts_lx *picked = ts_lx_load(p, TS_DTYPE_F32, TS_LBUF_ROWTMP, ts_lx_add(p, at_pos, ts_lx_int(p, off)));
        ts_lw_store(c, &ns, y, yc, picked);
        return;
    }
    ts_lw_store(c, &ns, y, yc, fold_columns(p, fold, at_pos, win[w], dil[w]));
}

void ts_lw_window(lctx *c, const ts_node *n)
{
    static const ts_op kinds[] = {TS_OP_REDUCE_SUM, TS_OP_REDUCE_MAX, TS_OP_REDUCE_MIN};
    ts_op op = kinds[ts_node_int(n, "kind")];
    const ts_value *x = n->in[0], *y = n->out[0];
    int r = x->type.rank, cnt, acc = 0;
    const int64_t *win = ts_node_ints(n, "window", &cnt);
    ts_lprog *p = c->p;
    nest ns = {.tail = &c->k->body};
    ts_lx *yc[TS_MAX_RANK], *ext[TS_MAX_RANK], *wv[TS_MAX_RANK], *k[TS_MAX_RANK];
    ts_dtype dt = y->type.dtype, adt = ts_lw_acc_dtype(op, dt);
    int64_t npos = 1, row = 0, planes = 0;
    plane_pool g;
    if (plane_pool_of(n, op, &g)) {
        if (flat(&g, &planes)) {
            window_flat(c, n, op, &g, planes);
            return;
        }
        if (separable(&g, &row)) {
            window_separable(c, n, op, &g, row);
            return;
        }
    }
    for (int i = 0; i < r && npos <= WINDOW_UNROLL; i++) npos *= win[i];
    if (npos <= WINDOW_UNROLL) {
        bool inside[TS_MAX_RANK];
        window_nest(c, n, &ns, yc, inside, 0, op, adt);
        return;
    }
    for (int i = 0; i < r; i++) yc[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, y->type.dims[i]));
    int nw = 0;
    for (int i = 0; i < r; i++)
        if (win[i] > 1) ext[nw++] = ts_lx_int(p, win[i]);
    ts_ls **inner = NULL;
    ts_lx *a = ts_lw_open_reduction(c, &ns, op, adt, nw, ext, wv, &inner, &acc);
    if (!a) return;
    for (int i = 0, j = 0; i < r; i++) k[i] = win[i] > 1 ? wv[j++] : NULL;
    ts_lw_update(c, inner, acc, ts_lw_combine_op(op), window_term(c, n, yc, k, NULL, op, adt));
    ts_lw_to_end(&ns);
    ts_lw_store(c, &ns, y, yc, ts_lx_cast(p, a, dt));
}

