/* k_contract.c — dot (dot_general) and conv (N-d cross-correlation).
 * Floats accumulate in double and round once into the result; integers
 * accumulate in uint64 and wrap. Contracts in docs/primitives.md. */
#include "interp/interp.h"

#include <string.h>

/* ---- operands and accumulation ------------------------------------------
 * Floats accumulate in double and integers in uint64 (wrapping). Float
 * operands are widened to double once, up front, so the inner loops read
 * plain arrays instead of converting per element: the same arithmetic in
 * the same order, only without a dtype switch per multiply-add. */

typedef struct operand {
    bool fl;
    const double *d;          /* widened values (floats) */
    ts_dtype dt;
    const void *raw;          /* the tensor's own data (integers) */
    double *owned;
} operand;

static ts_status operand_make(ts_interp_run *r, const ts_tensor *t, operand *o)
{
    memset(o, 0, sizeof *o);
    o->fl = ts_dtype_is_float(t->dtype);
    o->dt = t->dtype;
    o->raw = t->data;
    if (!o->fl) return TS_OK;
    if (t->dtype == TS_DTYPE_F64) {
        o->d = t->data;
        return TS_OK;
    }
    o->owned = ts_mem_alloc(sizeof(double) * (size_t)(t->numel ? t->numel : 1));
    if (!o->owned) return ts_err_set(ts_interp_err(r), TS_ERR_OOM, "out of memory widening an operand");
    for (int64_t i = 0; i < t->numel; i++) o->owned[i] = ts_elem_get_f64(t->dtype, t->data, i);
    o->d = o->owned;
    return TS_OK;
}

static void operand_free(operand *o) { ts_mem_free(o->owned); }

typedef struct acc {
    double f;
    uint64_t u;
} acc;

/* s += a[i] * b[j]. Integer products wrap in uint64, which keeps the low
 * bits right for signed and unsigned types alike. */
static inline void acc_madd(acc *s, const operand *a, int64_t i, const operand *b, int64_t j)
{
    if (a->fl) s->f += a->d[i] * b->d[j];
    else s->u += ts_elem_get_u64(a->dt, a->raw, i) * ts_elem_get_u64(b->dt, b->raw, j);
}

static void acc_store(const acc *s, bool fl, ts_dtype dt, void *y, int64_t i)
{
    if (fl) ts_elem_set_f64(dt, y, i, s->f);
    else ts_elem_set_u64(dt, y, i, s->u);
}

static int64_t prod(const int64_t *shape, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= shape[i];
    return p;
}

/* Advance the row-major multi-index idx over shape by one, moving the two
 * offsets *oa and *ob by the per-axis steps sa and sb. */
static void step2(int rank, const int64_t *shape, int64_t *idx, const int64_t *sa, const int64_t *sb,
                  int64_t *oa, int64_t *ob)
{
    for (int i = rank - 1; i >= 0; i--) {
        *oa += sa[i];
        *ob += sb[i];
        if (++idx[i] < shape[i]) return;
        *oa -= sa[i] * shape[i];
        *ob -= sb[i] * shape[i];
        idx[i] = 0;
    }
}

/* ---- dot ------------------------------------------------------------------- */

/* Two nested walks: over the result axes (batch, lhs free, rhs free) and
 * over the contracted axes, each axis with its step in lhs and in rhs (0
 * where the axis does not belong to that operand). */
typedef struct dot_plan {
    int rank, crank;
    int64_t shape[TS_MAX_RANK], sa[TS_MAX_RANK], sb[TS_MAX_RANK];
    int64_t cshape[TS_MAX_RANK], ca[TS_MAX_RANK], cb[TS_MAX_RANK];
} dot_plan;

static void dot_plan_make(const ts_node *n, const ts_tensor *a, const ts_tensor *b, dot_plan *p)
{
    int nb, nc, k;
    const int64_t *lb = ts_node_ints(n, "lhs_batch", &nb), *rb = ts_node_ints(n, "rhs_batch", &k);
    const int64_t *lc = ts_node_ints(n, "lhs_contract", &nc), *rc = ts_node_ints(n, "rhs_contract", &k);
    int64_t as[TS_MAX_RANK], bs[TS_MAX_RANK];
    bool lused[TS_MAX_RANK] = {0}, rused[TS_MAX_RANK] = {0};
    ts_shape_strides(a->rank, a->shape, as);
    ts_shape_strides(b->rank, b->shape, bs);
    memset(p, 0, sizeof *p);
    for (int i = 0; i < nb; i++, p->rank++) {
        lused[lb[i]] = rused[rb[i]] = true;
        p->shape[p->rank] = a->shape[lb[i]];
        p->sa[p->rank] = as[lb[i]];
        p->sb[p->rank] = bs[rb[i]];
    }
    for (int i = 0; i < nc; i++, p->crank++) {
        lused[lc[i]] = rused[rc[i]] = true;
        p->cshape[i] = a->shape[lc[i]];
        p->ca[i] = as[lc[i]];
        p->cb[i] = bs[rc[i]];
    }
    for (int i = 0; i < a->rank; i++)
        if (!lused[i]) {
            p->shape[p->rank] = a->shape[i];
            p->sa[p->rank++] = as[i];
        }
    for (int i = 0; i < b->rank; i++)
        if (!rused[i]) {
            p->shape[p->rank] = b->shape[i];
            p->sb[p->rank++] = bs[i];
        }
}

/* The sum over the contracted axes for one result element, whose first
 * lhs and rhs elements are at oa and ob. */
static acc dot_one(const operand *a, const operand *b, const dot_plan *p, int64_t oa, int64_t ob)
{
    acc s = {0, 0};
    int64_t idx[TS_MAX_RANK] = {0}, count = prod(p->cshape, 0, p->crank);
    for (int64_t k = 0; k < count; k++) {
        acc_madd(&s, a, oa, b, ob);
        step2(p->crank, p->cshape, idx, p->ca, p->cb, &oa, &ob);
    }
    return s;
}

static ts_status k_dot(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    TS_TRY(ts_interp_out(r, n, 0, out));
    ts_tensor *y = out[0];
    dot_plan p;
    dot_plan_make(n, in[0], in[1], &p);
    operand a, b;
    memset(&b, 0, sizeof b);
    ts_status st = operand_make(r, in[0], &a);
    if (st == TS_OK) st = operand_make(r, in[1], &b);
    int64_t idx[TS_MAX_RANK] = {0}, oa = 0, ob = 0;
    for (int64_t i = 0; st == TS_OK && i < y->numel; i++) {
        acc s = dot_one(&a, &b, &p, oa, ob);
        acc_store(&s, a.fl, y->dtype, y->data, i);
        step2(p.rank, p.shape, idx, p.sa, p.sb, &oa, &ob);
    }
    operand_free(&a);
    operand_free(&b);
    return st;
}

/* ---- conv -------------------------------------------------------------------- */

/* For every spatial axis d, src[d][o*k + t] is the input index that kernel
 * tap t of output position o reads, or -1 when it lands on padding or on a
 * hole of the lhs-dilated input. Positions q count along the padded,
 * dilated input: q = o*stride + t*rhs_dilation - pad_lo. */
typedef struct conv_geom {
    int sp;                          /* spatial rank */
    int64_t positions, taps;         /* output positions, kernel taps (per channel) */
    int64_t *src[TS_MAX_RANK];       /* per-axis tables, as above */
    int64_t *pos;                    /* positions x sp: unravelled output positions */
    int64_t *tap;                    /* taps x sp: unravelled kernel taps */
    int64_t *offs;                   /* taps x positions: conv_off, when it fits */
    int64_t xs[TS_MAX_RANK];         /* input strides */
    int64_t k[TS_MAX_RANK];          /* kernel spatial sizes */
} conv_geom;

static void unravel(int64_t flat, int rank, const int64_t *shape, int64_t *idx)
{
    for (int i = rank - 1; i >= 0; i--) {
        idx[i] = flat % shape[i];
        flat /= shape[i];
    }
}

static void conv_geom_free(conv_geom *g)
{
    for (int d = 0; d < g->sp; d++) ts_mem_free(g->src[d]);
    ts_mem_free(g->pos);
    ts_mem_free(g->tap);
    ts_mem_free(g->offs);
}

static ts_status conv_geom_make(ts_interp_run *r, const ts_node *n, const ts_tensor *x, const ts_tensor *w,
                                const ts_tensor *y, conv_geom *g)
{
    int cnt;
    const int64_t *stride = ts_node_ints(n, "strides", &cnt), *lo = ts_node_ints(n, "pad_lo", &cnt);
    const int64_t *ld = ts_node_ints(n, "lhs_dilation", &cnt), *rd = ts_node_ints(n, "rhs_dilation", &cnt);
    memset(g, 0, sizeof *g);
    g->sp = x->rank - 2;
    g->positions = prod(y->shape, 2, y->rank);
    g->taps = prod(w->shape, 2, w->rank);
    ts_shape_strides(x->rank, x->shape, g->xs);
    bool ok = true;
    for (int d = 0; d < g->sp; d++) {
        int64_t out = y->shape[2 + d], k = w->shape[2 + d], in = x->shape[2 + d];
        g->k[d] = k;
        g->src[d] = ts_mem_alloc(sizeof(int64_t) * (size_t)(out * k > 0 ? out * k : 1));
        ok = ok && g->src[d];
        for (int64_t o = 0; ok && o < out; o++)
            for (int64_t t = 0; t < k; t++) {
                int64_t q = o * stride[d] + t * rd[d] - lo[d];
                bool hit = q >= 0 && q <= ld[d] * (in - 1) && q % ld[d] == 0;
                g->src[d][o * k + t] = hit ? q / ld[d] : -1;
            }
    }
    g->pos = ts_mem_alloc(sizeof(int64_t) * (size_t)(g->positions * g->sp + 1));
    g->tap = ts_mem_alloc(sizeof(int64_t) * (size_t)(g->taps * g->sp + 1));
    ok = ok && g->pos && g->tap;
    for (int64_t o = 0; ok && o < g->positions; o++) unravel(o, g->sp, y->shape + 2, g->pos + o * g->sp);
    for (int64_t t = 0; ok && t < g->taps; t++) unravel(t, g->sp, g->k, g->tap + t * g->sp);
    if (ok) return TS_OK;
    conv_geom_free(g);
    return ts_err_set(ts_interp_err(r), TS_ERR_OOM, "out of memory planning a conv");
}

/* Offset (from the channel's origin) of what tap t reads for output
 * position o, or -1 for padding. */
static int64_t conv_off(const conv_geom *g, int64_t o, int64_t t)
{
    int64_t off = 0;
    for (int d = 0; d < g->sp; d++) {
        int64_t s = g->src[d][g->pos[o * g->sp + d] * g->k[d] + g->tap[t * g->sp + d]];
        if (s < 0) return -1;
        off += s * g->xs[2 + d];
    }
    return off;
}

/* The offsets of every (tap, position) pair are the same for every batch
 * entry and channel, so they are computed once when the table is not too
 * big (a cache, not a different meaning). */
static void conv_offsets(conv_geom *g)
{
    if (g->taps * g->positions > ((int64_t)1 << 24)) return;
    g->offs = ts_mem_alloc(sizeof(int64_t) * (size_t)(g->taps * g->positions + 1));
    for (int64_t t = 0; g->offs && t < g->taps; t++)
        for (int64_t o = 0; o < g->positions; o++) g->offs[t * g->positions + o] = conv_off(g, o, t);
}

/* y[nn, oc, :] += sum over the group's input channels (outer) and taps
 * (inner) — per output element the same order as a plain triple loop. */
static void conv_channel(const conv_geom *g, const operand *x, const operand *w, int64_t nn, int64_t oc,
                         int64_t c0, int64_t cg, acc *s)
{
    for (int64_t ci = 0; ci < cg; ci++) {
        int64_t xbase = nn * g->xs[0] + (c0 + ci) * g->xs[1];
        for (int64_t t = 0; t < g->taps; t++) {
            int64_t wi = (oc * cg + ci) * g->taps + t;
            const int64_t *offs = g->offs ? g->offs + t * g->positions : NULL;
            for (int64_t o = 0; o < g->positions; o++) {
                int64_t off = offs ? offs[o] : conv_off(g, o, t);
                if (off >= 0) acc_madd(&s[o], x, xbase + off, w, wi);
            }
        }
    }
}

static ts_status k_conv(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0], *w = in[1];
    int64_t groups = ts_node_int(n, "groups"), oc_n = w->shape[0];
    if (groups < 1 || oc_n % groups)
        return ts_err_set(ts_interp_err(r), TS_ERR_SHAPE, "conv: %lld output channels are not divisible by %lld groups",
                          (long long)oc_n, (long long)groups);
    TS_TRY(ts_interp_out(r, n, 0, out));
    ts_tensor *y = out[0];
    conv_geom g;
    TS_TRY(conv_geom_make(r, n, x, w, y, &g));
    conv_offsets(&g);
    operand xo, wo;
    memset(&xo, 0, sizeof xo);
    memset(&wo, 0, sizeof wo);
    acc *s = ts_mem_alloc(sizeof(acc) * (size_t)(g.positions ? g.positions : 1));
    ts_status st = s ? operand_make(r, x, &xo) : ts_err_set(ts_interp_err(r), TS_ERR_OOM, "out of memory");
    if (st == TS_OK) st = operand_make(r, w, &wo);
    int64_t per_group = oc_n / groups, i = 0;
    for (int64_t nn = 0; st == TS_OK && nn < y->shape[0]; nn++)
        for (int64_t oc = 0; oc < oc_n; oc++) {
            memset(s, 0, sizeof(acc) * (size_t)g.positions);
            conv_channel(&g, &xo, &wo, nn, oc, oc / per_group * w->shape[1], w->shape[1], s);
            for (int64_t o = 0; o < g.positions; o++, i++) acc_store(&s[o], xo.fl, y->dtype, y->data, i);
        }
    operand_free(&xo);
    operand_free(&wo);
    ts_mem_free(s);
    conv_geom_free(&g);
    return st;
}

const ts_interp_kernel ts_interp_contract[TS_OP_COUNT] = {
    [TS_OP_DOT] = k_dot,
    [TS_OP_CONV] = k_conv,
};
