/* k_contract.c — dot (dot_general) and conv (N-d cross-correlation).
 * Floats accumulate in double and round once into the result; integers
 * accumulate in uint64 and wrap. Contracts in docs/primitives.md. */
#include "interp/interp.h"

#include <string.h>

/* ---- accumulation ------------------------------------------------------ */

typedef struct acc {
    bool fl;        /* float dtype: use f, else u */
    double f;
    uint64_t u;
} acc;

static acc acc_new(ts_dtype dt)
{
    acc s = {ts_dtype_is_float(dt), 0.0, 0};
    return s;
}

/* s += a[i] * b[j]. Integer products wrap in uint64, which keeps the low
 * bits right for signed and unsigned types alike. */
static void acc_madd(acc *s, ts_dtype dt, const void *a, int64_t i, const void *b, int64_t j)
{
    if (s->fl) s->f += ts_elem_get_f64(dt, a, i) * ts_elem_get_f64(dt, b, j);
    else s->u += ts_elem_get_u64(dt, a, i) * ts_elem_get_u64(dt, b, j);
}

static void acc_store(const acc *s, ts_dtype dt, void *y, int64_t i)
{
    if (s->fl) ts_elem_set_f64(dt, y, i, s->f);
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
static acc dot_one(const ts_tensor *a, const ts_tensor *b, const dot_plan *p, int64_t oa, int64_t ob)
{
    acc s = acc_new(a->dtype);
    int64_t idx[TS_MAX_RANK] = {0}, count = prod(p->cshape, 0, p->crank);
    for (int64_t k = 0; k < count; k++) {
        acc_madd(&s, a->dtype, a->data, oa, b->data, ob);
        step2(p->crank, p->cshape, idx, p->ca, p->cb, &oa, &ob);
    }
    return s;
}

static ts_status k_dot(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *a = in[0], *b = in[1];
    TS_TRY(ts_interp_out(r, n, 0, out));
    ts_tensor *y = out[0];
    dot_plan p;
    dot_plan_make(n, a, b, &p);
    int64_t idx[TS_MAX_RANK] = {0}, oa = 0, ob = 0;
    for (int64_t i = 0; i < y->numel; i++) {
        acc s = dot_one(a, b, &p, oa, ob);
        acc_store(&s, y->dtype, y->data, i);
        step2(p.rank, p.shape, idx, p.sa, p.sb, &oa, &ob);
    }
    return TS_OK;
}

/* ---- conv -------------------------------------------------------------------- */

typedef struct conv_geom {
    int sp;                          /* spatial rank */
    const int64_t *stride, *lo, *ld, *rd;
    const int64_t *in, *k;           /* input and kernel spatial sizes */
    int64_t xs[TS_MAX_RANK];         /* input strides */
} conv_geom;

static void unravel(int64_t flat, int rank, const int64_t *shape, int64_t *idx)
{
    for (int i = rank - 1; i >= 0; i--) {
        idx[i] = flat % shape[i];
        flat /= shape[i];
    }
}

/* The input index that kernel tap t of output position o reads on axis d,
 * or -1 when it lands on padding or on a hole of the dilated input.
 * Positions q count along the padded, lhs-dilated input. */
static int64_t conv_src(const conv_geom *g, int d, int64_t o, int64_t t)
{
    int64_t q = o * g->stride[d] + t * g->rd[d] - g->lo[d];
    if (q < 0 || q > g->ld[d] * (g->in[d] - 1) || q % g->ld[d]) return -1;
    return q / g->ld[d];
}

/* Offset in x of the element tap `tap` reads for output position opos of
 * (batch nn, input channel c), or -1 if it reads padding. */
static int64_t conv_x_off(const conv_geom *g, int64_t nn, int64_t c, const int64_t *opos, int64_t tap)
{
    int64_t t[TS_MAX_RANK];
    unravel(tap, g->sp, g->k, t);
    int64_t off = nn * g->xs[0] + c * g->xs[1];
    for (int d = 0; d < g->sp; d++) {
        int64_t s = conv_src(g, d, opos[d], t[d]);
        if (s < 0) return -1;
        off += s * g->xs[2 + d];
    }
    return off;
}

/* y[nn, oc, opos] = sum over the group's input channels and every tap. */
static acc conv_one(const conv_geom *g, const ts_tensor *x, const ts_tensor *w, int64_t nn, int64_t oc,
                    int64_t c0, const int64_t *opos)
{
    acc s = acc_new(x->dtype);
    int64_t cg = w->shape[1], taps = prod(w->shape, 2, w->rank);
    for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t tap = 0; tap < taps; tap++) {
            int64_t xo = conv_x_off(g, nn, c0 + ci, opos, tap);
            if (xo >= 0) acc_madd(&s, x->dtype, x->data, xo, w->data, (oc * cg + ci) * taps + tap);
        }
    return s;
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
    int k;
    conv_geom g = {.sp = x->rank - 2, .in = x->shape + 2, .k = w->shape + 2};
    g.stride = ts_node_ints(n, "strides", &k);
    g.lo = ts_node_ints(n, "pad_lo", &k);
    g.ld = ts_node_ints(n, "lhs_dilation", &k);
    g.rd = ts_node_ints(n, "rhs_dilation", &k);
    ts_shape_strides(x->rank, x->shape, g.xs);
    int64_t per_group = oc_n / groups, positions = prod(y->shape, 2, y->rank), opos[TS_MAX_RANK];
    int64_t i = 0;
    for (int64_t nn = 0; nn < y->shape[0]; nn++)
        for (int64_t oc = 0; oc < oc_n; oc++)
            for (int64_t o = 0; o < positions; o++, i++) {
                unravel(o, g.sp, y->shape + 2, opos);
                acc s = conv_one(&g, x, w, nn, oc, oc / per_group * w->shape[1], opos);
                acc_store(&s, y->dtype, y->data, i);
            }
    return TS_OK;
}

const ts_interp_kernel ts_interp_contract[TS_OP_COUNT] = {
    [TS_OP_DOT] = k_dot,
    [TS_OP_CONV] = k_conv,
};
