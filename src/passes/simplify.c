/* simplify.c — algebraic identities that hold bit for bit: x+0, x*1,
 * neg(neg(x)), transpose/reshape/broadcast/cast chains, layout ops that do
 * nothing, select with a known predicate. One rule function per op, in a
 * table at the bottom. docs/passes.md lists the rules and what is left out
 * on purpose (x*0 for floats, x+(+0.0) for floats). */
#include "passes/passes.h"

#include <math.h>
#include <string.h>

/* What a rule sees and produces. */
typedef struct simp {
    ts_graph *g;
    ts_node *n;
    ts_value *repl;           /* the replacement, or NULL */
    bool made;                /* repl is the result of a node made here */
    ts_err *err;
} simp;

typedef ts_status (*rule_fn)(simp *s);

static ts_value *in(const simp *s, int i) { return s->n->in[i]; }
static const ts_type *out_type(const simp *s) { return &s->n->out[0]->type; }

/* The node defining v when it is an `op`, else NULL. */
static ts_node *def_of(const ts_value *v, ts_op op)
{
    return v->def && v->def->op == op ? v->def : NULL;
}

/* ---- constant operands -------------------------------------------------------- */

/* Layout ops that keep "every element is the same" true. */
static bool keeps_splat(ts_op op)
{
    return op == TS_OP_BROADCAST || op == TS_OP_RESHAPE || op == TS_OP_TRANSPOSE || op == TS_OP_REVERSE;
}

/* The constant behind v when all its elements are bitwise equal (a splat)
 * and there is at least one; else NULL. Looks through layout ops, since a
 * scalar broadcast to a symbolic shape is how constants meet tensors. */
static const ts_tensor *splat(const ts_value *v)
{
    while (v->def && keeps_splat(v->def->op)) v = v->def->in[0];
    const ts_node *d = def_of(v, TS_OP_CONST);
    if (!d) return NULL;
    const ts_tensor *t = ts_node_tensor(d, "value");
    size_t es = ts_dtype_size(t->dtype);
    if (t->numel < 1) return NULL;
    const unsigned char *p = t->data;
    for (int64_t i = 1; i < t->numel; i++)
        if (memcmp(p, p + (size_t)i * es, es) != 0) return NULL;
    return t;
}

/* v is a splat of exactly `want`; for floats the sign of a zero counts. */
static bool splat_is(const ts_value *v, double want)
{
    const ts_tensor *t = splat(v);
    if (!t) return false;
    if (ts_dtype_is_float(t->dtype)) {
        double x = ts_elem_get_f64(t->dtype, t->data, 0);
        return x == want && (signbit(x) != 0) == (signbit(want) != 0);
    }
    return ts_elem_get_i64(t->dtype, t->data, 0) == (int64_t)want;
}

static bool is_float(const simp *s) { return ts_dtype_is_float(in(s, 0)->type.dtype); }

/* ---- results ------------------------------------------------------------------ */

static ts_status use(simp *s, ts_value *v)
{
    s->repl = v;
    return TS_OK;
}

/* A new one-operand node before n, standing in for it. */
static ts_status emit(simp *s, ts_op op, ts_value *x, ts_attr *a)
{
    ts_node *m;
    if (!a) return ts_err_set(s->err, TS_ERR_OOM, "simplify: out of memory");
    TS_TRY(ts_ir_node_new(s->g, s->n->block, s->n, op, 1, &x, a, 0, NULL, &m, s->err));
    m->origin = s->n->origin;
    s->repl = m->out[0];
    s->made = true;
    return TS_OK;
}

/* ---- arithmetic ------------------------------------------------------------------ */

/* x + 0 for integers; for floats only x + (-0.0), since x + (+0.0) turns
 * -0.0 into +0.0. */
static ts_status r_add(simp *s)
{
    double zero = is_float(s) ? -0.0 : 0.0;
    if (splat_is(in(s, 1), zero)) return use(s, in(s, 0));
    if (splat_is(in(s, 0), zero)) return use(s, in(s, 1));
    return TS_OK;
}

/* x - 0; for floats x - (+0.0) (x - (-0.0) would turn -0.0 into +0.0). */
static ts_status r_sub(simp *s)
{
    if (splat_is(in(s, 1), 0.0)) return use(s, in(s, 0));
    return TS_OK;
}

/* x * 1 always; x * 0 = 0 only for integers (for floats NaN*0 and inf*0
 * are NaN and -x*0 is -0.0). */
static ts_status r_mul(simp *s)
{
    for (int i = 0; i < 2; i++) {
        if (splat_is(in(s, i), 1.0)) return use(s, in(s, 1 - i));
        if (!is_float(s) && splat_is(in(s, i), 0.0)) return use(s, in(s, i));
    }
    return TS_OK;
}

static ts_status r_div(simp *s)
{
    if (splat_is(in(s, 1), 1.0)) return use(s, in(s, 0));
    return TS_OK;
}

/* max(x, x), min(x, x), and(x, x), or(x, x) are x. */
static ts_status r_idempotent(simp *s)
{
    if (in(s, 0) == in(s, 1)) return use(s, in(s, 0));
    return TS_OK;
}

/* neg(neg(x)) and not(not(x)) are x, integer wrap-around included. */
static ts_status r_involution(simp *s)
{
    ts_node *inner = def_of(in(s, 0), s->n->op);
    if (inner) return use(s, inner->in[0]);
    return TS_OK;
}

/* ---- select --------------------------------------------------------------------------- */

static ts_status r_select(simp *s)
{
    if (in(s, 1) == in(s, 2)) return use(s, in(s, 1));
    const ts_tensor *p = splat(in(s, 0));
    if (p) return use(s, in(s, ((const unsigned char *)p->data)[0] ? 1 : 2));
    return TS_OK;
}

/* ---- cast ------------------------------------------------------------------------------ */

/* Significand bits (hidden bit included) of a float type. */
static int mantissa_bits(ts_dtype dt)
{
    switch (dt) {
    case TS_DTYPE_F16: return 11;
    case TS_DTYPE_BF16: return 8;
    case TS_DTYPE_F32: return 24;
    default: return 53;
    }
}

/* Whether every value of `from` converts to `to` exactly, so that a later
 * cast sees the same number either way. */
static bool cast_exact(ts_dtype from, ts_dtype to)
{
    if (from == to || from == TS_DTYPE_BOOL) return true;
    if (to == TS_DTYPE_BOOL || ts_dtype_is_storage(to)) return false;
    if (ts_dtype_is_small_float(from))   /* into compute floats; f8e8m0's 2^-127..2^127 needs 8 exponent bits */
        return ts_dtype_is_float(to) && (from != TS_DTYPE_F8E8M0 || to != TS_DTYPE_F16);
    if (ts_dtype_is_storage(from))       /* i4 u4 i2 u2: into floats, or ints that hold their sign */
        return ts_dtype_is_float(to) || ts_dtype_is_signed(to) || !ts_dtype_is_signed(from);
    bool fi = ts_dtype_is_int(from), ti = ts_dtype_is_int(to);
    int fb = ts_dtype_bits(from), tb = ts_dtype_bits(to);
    if (fi && ti) {
        if (!ts_dtype_is_signed(to)) return !ts_dtype_is_signed(from) && tb >= fb;
        return ts_dtype_is_signed(from) ? tb >= fb : tb > fb;
    }
    if (fi) return (ts_dtype_is_signed(from) ? fb - 1 : fb) <= mantissa_bits(to);
    if (ti) return false;
    return tb > fb;   /* f16/bf16 -> f32 -> f64; f16 and bf16 do not nest */
}

static ts_status r_cast(simp *s)
{
    ts_dtype dt = (ts_dtype)ts_node_int(s->n, "dtype");
    if (in(s, 0)->type.dtype == dt) return use(s, in(s, 0));
    ts_node *inner = def_of(in(s, 0), TS_OP_CAST);
    if (!inner || !cast_exact(inner->in[0]->type.dtype, in(s, 0)->type.dtype)) return TS_OK;
    ts_value *x = inner->in[0];
    if (x->type.dtype == dt) return use(s, x);
    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_CAST);
    if (a) TS_TRY(ts_attr_set_dtype(s->g, TS_OP_CAST, a, "dtype", dt));
    return emit(s, TS_OP_CAST, x, a);
}

/* ---- layout --------------------------------------------------------------------------- */

static bool all_zero(const int64_t *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i]) return false;
    return true;
}

static bool is_identity_perm(const int64_t *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i] != i) return false;
    return true;
}

/* transpose(transpose(x, p1), p2) = transpose(x, q) with q[i] = p1[p2[i]]. */
static ts_status r_transpose(simp *s)
{
    int n, n1;
    const int64_t *p2 = ts_node_ints(s->n, "perm", &n);
    if (is_identity_perm(p2, n)) return use(s, in(s, 0));
    ts_node *inner = def_of(in(s, 0), TS_OP_TRANSPOSE);
    if (!inner) return TS_OK;
    const int64_t *p1 = ts_node_ints(inner, "perm", &n1);
    int64_t q[TS_MAX_RANK];
    for (int i = 0; i < n; i++) q[i] = p1[p2[i]];
    if (is_identity_perm(q, n)) return use(s, inner->in[0]);
    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_TRANSPOSE);
    if (a) TS_TRY(ts_attr_set_ints(s->g, TS_OP_TRANSPOSE, a, "perm", n, q));
    return emit(s, TS_OP_TRANSPOSE, inner->in[0], a);
}

/* A reshape to the operand's own shape is nothing; a reshape of a reshape
 * is one reshape. */
static ts_status r_reshape(simp *s)
{
    if (ts_type_eq(&in(s, 0)->type, out_type(s))) return use(s, in(s, 0));
    ts_node *inner = def_of(in(s, 0), TS_OP_RESHAPE);
    if (!inner) return TS_OK;
    ts_value *x = inner->in[0];
    if (ts_type_eq(&x->type, out_type(s))) return use(s, x);
    int n;
    const ts_dim *shape = ts_node_dims(s->n, "shape", &n);
    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_RESHAPE);
    if (a) TS_TRY(ts_attr_set_dims(s->g, TS_OP_RESHAPE, a, "shape", n, shape));
    return emit(s, TS_OP_RESHAPE, x, a);
}

/* Equal types mean equal ranks, so the axes are the identity. Two
 * broadcasts compose: operand dim i lands on axes2[axes1[i]], and it is 1
 * or equal to the dim it lands on because each step kept it so. */
static ts_status r_broadcast(simp *s)
{
    if (ts_type_eq(&in(s, 0)->type, out_type(s))) return use(s, in(s, 0));
    ts_node *inner = def_of(in(s, 0), TS_OP_BROADCAST);
    if (!inner) return TS_OK;
    ts_value *x = inner->in[0];
    if (ts_type_eq(&x->type, out_type(s))) return use(s, x);
    int n1, n2, ns;
    const int64_t *a1 = ts_node_ints(inner, "axes", &n1), *a2 = ts_node_ints(s->n, "axes", &n2);
    const ts_dim *shape = ts_node_dims(s->n, "shape", &ns);
    int64_t axes[TS_MAX_RANK];
    for (int i = 0; i < n1; i++) axes[i] = a2[a1[i]];
    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_BROADCAST);
    if (a) TS_TRY(ts_attr_set_dims(s->g, TS_OP_BROADCAST, a, "shape", ns, shape));
    if (a) TS_TRY(ts_attr_set_ints(s->g, TS_OP_BROADCAST, a, "axes", n1, axes));
    return emit(s, TS_OP_BROADCAST, x, a);
}

/* x[0:size:1] along every axis. */
static ts_status r_slice(simp *s)
{
    const ts_type *t = &in(s, 0)->type;
    int ns, nl, nt;
    const ts_dim *st = ts_node_dims(s->n, "start", &ns), *li = ts_node_dims(s->n, "limit", &nl);
    const int64_t *sd = ts_node_ints(s->n, "stride", &nt);
    for (int i = 0; i < t->rank; i++)
        if (!ts_dim_eq(st[i], ts_dim_const(0)) || !ts_dim_eq(li[i], t->dims[i]) || sd[i] != 1) return TS_OK;
    return use(s, in(s, 0));
}

/* Flipping no axis, or only axes of size 1, moves nothing. */
static ts_status r_reverse(simp *s)
{
    int n;
    const int64_t *ax = ts_node_ints(s->n, "axes", &n);
    for (int i = 0; i < n; i++)
        if (!ts_dim_eq(in(s, 0)->type.dims[ax[i]], ts_dim_const(1))) return TS_OK;
    return use(s, in(s, 0));
}

/* A reduction over no axes combines each element with the identity only.
 * That is the element itself, except for a float sum: the interpreter
 * starts sums at +0.0, and -0.0 + +0.0 is +0.0. */
static ts_status r_reduce(simp *s)
{
    int n;
    ts_node_ints(s->n, "axes", &n);
    if (n == 0 && !(s->n->op == TS_OP_REDUCE_SUM && is_float(s))) return use(s, in(s, 0));
    return TS_OK;
}

static ts_status r_pad(simp *s)
{
    int nl, nh, ni;
    const int64_t *lo = ts_node_ints(s->n, "lo", &nl), *hi = ts_node_ints(s->n, "hi", &nh);
    const int64_t *it = ts_node_ints(s->n, "interior", &ni);
    if (all_zero(lo, nl) && all_zero(hi, nh) && all_zero(it, ni)) return use(s, in(s, 0));
    return TS_OK;
}

static ts_status r_concat(simp *s)
{
    if (s->n->n_in == 1) return use(s, in(s, 0));
    return TS_OK;
}

/* ---- indexing -------------------------------------------------------------------------- */

static ts_value *reshaped(simp *s, ts_value *x, int rank, const ts_dim *shape);
static ts_value *made(simp *s, ts_op op, int n_in, ts_value *const *in, ts_attr *a);

/* gather(x, c) {axis=a} whose constant indices run k, k+s, k+2s... (s >=
 * 1, row-major; one index will do) inside [0, x.shape[a]) → slice(x)
 * taking those positions along a, reshaped to idx's axes: the same
 * elements without a load of each index, and a view that kernels read in
 * place (torch's export picks a transformer's q, k and v out of one
 * projection by Gather, which kept them as copy kernels, D159). An index
 * out of range stays a gather, which fails at run time as it must. */
static ts_status r_gather(simp *s)
{
    const ts_node *d = def_of(in(s, 1), TS_OP_CONST);
    const ts_type *xt = &in(s, 0)->type, *yt = out_type(s);
    const int a = (int)ts_node_int(s->n, "axis");
    if (!d || a < 0 || a >= xt->rank || !ts_dim_is_const(xt->dims[a])) return TS_OK;
    const ts_tensor *t = ts_node_tensor(d, "value");
    const int64_t n = t->numel, dim = xt->dims[a].c;
    if (n < 1 || n > dim || ts_dtype_is_float(t->dtype)) return TS_OK;
    const int64_t k0 = ts_elem_get_i64(t->dtype, t->data, 0);
    const int64_t st = n > 1 ? ts_elem_get_i64(t->dtype, t->data, 1) - k0 : 1;
    if (k0 < 0 || st < 1 || st > dim || k0 >= dim || (n - 1) * st >= dim - k0) return TS_OK;
    for (int64_t i = 2; i < n; i++)
        if (ts_elem_get_i64(t->dtype, t->data, (size_t)i) != k0 + i * st) return TS_OK;
    ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK];
    int64_t stride[TS_MAX_RANK];
    for (int i = 0; i < xt->rank; i++) start[i] = ts_dim_const(0), limit[i] = xt->dims[i], stride[i] = 1;
    start[a] = ts_dim_const(k0), limit[a] = ts_dim_const(k0 + (n - 1) * st + 1), stride[a] = st;
    ts_attr *at = ts_ir_attrs_new(s->g, TS_OP_SLICE);
    if (at && (ts_attr_set_dims(s->g, TS_OP_SLICE, at, "start", xt->rank, start) != TS_OK ||
               ts_attr_set_dims(s->g, TS_OP_SLICE, at, "limit", xt->rank, limit) != TS_OK ||
               ts_attr_set_ints(s->g, TS_OP_SLICE, at, "stride", xt->rank, stride) != TS_OK))
        return s->err->code ? s->err->code : TS_ERR_INTERNAL;
    ts_value *x = in(s, 0), *sl = made(s, TS_OP_SLICE, 1, &x, at);
    ts_value *y = sl && !ts_type_eq(&sl->type, yt) ? reshaped(s, sl, yt->rank, yt->dims) : sl;
    if (!y) return s->err->code ? s->err->code : TS_ERR_INTERNAL;
    s->repl = y;
    s->made = true;
    return TS_OK;
}

/* ---- contractions ---------------------------------------------------------------------- */

/* A node before n, with n's origin; its result, or NULL after an error. */
static ts_value *made(simp *s, ts_op op, int n_in, ts_value *const *in, ts_attr *a)
{
    ts_node *m;
    if (!a) {
        ts_err_set(s->err, TS_ERR_OOM, "simplify: out of memory");
        return NULL;
    }
    if (ts_ir_node_new(s->g, s->n->block, s->n, op, n_in, in, a, 0, NULL, &m, s->err) != TS_OK) return NULL;
    m->origin = s->n->origin;
    /* over constants (a conv's weights reshaped or sliced): a constant,
     * as the builder folds the nodes it builds, so that a product packs
     * them once per program (D129) */
    ts_value *folded = NULL;
    bool done = false;
    if (ts_pass_fold_node(s->g, m, &folded, &done, s->err) != TS_OK) return NULL;
    if (!done) return m->out[0];
    ts_ir_node_unlink(m);
    return folded;
}

static ts_value *reshaped(simp *s, ts_value *x, int rank, const ts_dim *shape)
{
    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_RESHAPE);
    if (a && ts_attr_set_dims(s->g, TS_OP_RESHAPE, a, "shape", rank, shape) != TS_OK) return NULL;
    return made(s, TS_OP_RESHAPE, 1, &x, a);
}

static bool all_one(const ts_dim *d, int n)
{
    for (int i = 0; i < n; i++)
        if (!ts_dim_is_const(d[i]) || d[i].c != 1) return false;
    return true;
}

/* A convolution over a single position (every spatial dim of x, w and y
 * 1, no padding, no input dilation, one group) is a product,
 * y[n, o] = sum_c x[n, c] w[o, c]: the same terms in the same order. The
 * squeeze-excitation blocks of MobileNetV3 and EfficientNet are such convs
 * on pooled features; as convs they ran one GEMM of a single column per
 * image, as a dot one GEMM over the batch, its bias and activation still
 * in its epilogue across the reshape back (D124). */
static ts_status r_conv(simp *s)
{
    const ts_value *x = in(s, 0), *w = in(s, 1);
    const ts_type *yt = out_type(s);
    const int r = x->type.rank, sp = r - 2;
    int cnt;
    if (r < 3 || ts_node_int(s->n, "groups") != 1) return TS_OK;
    if (!all_one(x->type.dims + 2, sp) || !all_one(w->type.dims + 2, sp) || !all_one(yt->dims + 2, sp)) return TS_OK;
    const int64_t *lo = ts_node_ints(s->n, "pad_lo", &cnt), *hi = ts_node_ints(s->n, "pad_hi", &cnt);
    const int64_t *ld = ts_node_ints(s->n, "lhs_dilation", &cnt);
    for (int i = 0; i < sp; i++)
        if (lo[i] || hi[i] || ld[i] != 1) return TS_OK;
    const ts_dim xs[2] = {x->type.dims[0], x->type.dims[1]}, ws[2] = {w->type.dims[0], w->type.dims[1]};
    ts_value *ops[2] = {reshaped(s, in(s, 0), 2, xs), reshaped(s, in(s, 1), 2, ws)};
    if (!ops[0] || !ops[1]) return s->err->code ? s->err->code : TS_ERR_INTERNAL;
    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_DOT);
    const int64_t one = 1;
    if (a) TS_TRY(ts_attr_set_ints(s->g, TS_OP_DOT, a, "lhs_contract", 1, &one));
    if (a) TS_TRY(ts_attr_set_ints(s->g, TS_OP_DOT, a, "rhs_contract", 1, &one));
    ts_value *d = made(s, TS_OP_DOT, 2, ops, a);
    ts_value *y = d ? reshaped(s, d, yt->rank, yt->dims) : NULL;
    if (!y) return s->err->code ? s->err->code : TS_ERR_INTERNAL;
    s->repl = y;
    s->made = true;
    return TS_OK;
}

/* ---- a transposed conv as one conv per output phase (D127) -------------------------------- */

enum { PHASES_MAX = 16 };

static ts_value *conv_node(simp *s, ts_value *x, ts_value *w, int sp, const int64_t *lo, const int64_t *hi)
{
    int64_t ones[TS_MAX_RANK];
    for (int i = 0; i < sp; i++) ones[i] = 1;
    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_CONV);
    ts_value *ops[2] = {x, w};
    if (a && (ts_attr_set_ints(s->g, TS_OP_CONV, a, "strides", sp, ones) != TS_OK ||
              ts_attr_set_ints(s->g, TS_OP_CONV, a, "pad_lo", sp, lo) != TS_OK ||
              ts_attr_set_ints(s->g, TS_OP_CONV, a, "pad_hi", sp, hi) != TS_OK ||
              ts_attr_set_ints(s->g, TS_OP_CONV, a, "lhs_dilation", sp, ones) != TS_OK ||
              ts_attr_set_ints(s->g, TS_OP_CONV, a, "rhs_dilation", sp, ones) != TS_OK ||
              ts_attr_set_int(s->g, TS_OP_CONV, a, "groups", ts_node_int(s->n, "groups")) != TS_OK))
        return NULL;
    return made(s, TS_OP_CONV, 2, ops, a);
}

static ts_value *concat_node(simp *s, int n, ts_value *const *parts, int axis)
{
    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_CONCAT);
    if (a && ts_attr_set_int(s->g, TS_OP_CONCAT, a, "axis", axis) != TS_OK) return NULL;
    return made(s, TS_OP_CONCAT, n, parts, a);
}

/* The phases of output positions p, p + l, p + 2l, ... along spatial
 * axis i (dilation l of the input) see the taps u = u0, u0 + l, ... of
 * the weights, at input positions q + d + k (k the tap's index among
 * them, q the position's): one conv, stride 1, over the undilated input
 * with the weights sliced by l. */
typedef struct phase_axis {
    int64_t u0, taps, d;
} phase_axis;

static bool phase_geom(int64_t l, int64_t pad, int64_t kw, int64_t p, phase_axis *a)
{
    a->u0 = ((pad - p) % l + l) % l;
    if (a->u0 >= kw) return false;   /* a phase no tap reaches: not rewritten */
    a->taps = (kw - a->u0 + l - 1) / l;
    a->d = (p - pad + a->u0) / l;   /* exact: p - pad + u0 is a multiple of l */
    return true;
}

/* A transposed conv (input dilation l > 1 along some spatial axes, stride
 * 1, no kernel dilation) computes through the zero-stuffed input: of
 * every l^2 multiply-adds of a 2-D one, l^2 - 1 are by a zero, and the
 * im2col packing of the stuffed input is the slowest in the conv template
 * (UNet's 64 -> 32 3x3 transposed conv on 16x16: 613 us). Each output
 * phase (positions congruent mod l) is an ordinary conv of the input with
 * the weights' taps of that phase (a strided slice, folded when the
 * weights are constant); the phases' results interleave through a
 * concat along new unit axes and a reshape: [N, O, Q1, 1, Q2, 1] parts
 * joined into [N, O, Q1, l1, Q2, l2], which is [N, O, Q1*l1, Q2*l2] in
 * memory order. Only where every output extent is a multiple of its l
 * (the usual kernel 2s or 2s - 1 with pad s/2: phases of equal size). */
static ts_status r_conv_transposed(simp *s)
{
    ts_value *x = in(s, 0), *w = in(s, 1);
    const ts_type *yt = out_type(s);
    const int r = x->type.rank, sp = r - 2;
    int cnt;
    const int64_t *st = ts_node_ints(s->n, "strides", &cnt), *lo = ts_node_ints(s->n, "pad_lo", &cnt);
    const int64_t *ld = ts_node_ints(s->n, "lhs_dilation", &cnt), *rd = ts_node_ints(s->n, "rhs_dilation", &cnt);
    int64_t phases = 1, Q[TS_MAX_RANK];
    for (int i = 0; i < sp; i++) {
        const ts_dim X = x->type.dims[2 + i], K = w->type.dims[2 + i], Y = yt->dims[2 + i];
        if (!ts_dim_is_const(X) || !ts_dim_is_const(K) || !ts_dim_is_const(Y) || st[i] != 1 || rd[i] != 1 ||
            ld[i] < 1 || Y.c % ld[i] || Y.c < 1)
            return TS_OK;
        Q[i] = Y.c / ld[i];
        phases *= ld[i];
    }
    if (phases < 2 || phases > PHASES_MAX) return TS_OK;
    /* every phase must have a tap along every axis */
    for (int i = 0; i < sp; i++)
        for (int64_t p = 0; p < ld[i]; p++) {
            phase_axis a;
            if (!phase_geom(ld[i], lo[i], w->type.dims[2 + i].c, p, &a)) return TS_OK;
        }
    /* the phases' results, each [N, O, Q1, 1, Q2, 1, ...] */
    ts_value *part[PHASES_MAX];
    ts_dim pshape[2 * TS_MAX_RANK];
    pshape[0] = yt->dims[0], pshape[1] = yt->dims[1];
    for (int i = 0; i < sp; i++) pshape[2 + 2 * i] = ts_dim_const(Q[i]), pshape[3 + 2 * i] = ts_dim_const(1);
    for (int64_t ph = 0; ph < phases; ph++) {
        ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK];
        int64_t stride[TS_MAX_RANK], plo[TS_MAX_RANK], phi[TS_MAX_RANK];
        start[0] = start[1] = ts_dim_const(0), limit[0] = w->type.dims[0], limit[1] = w->type.dims[1];
        stride[0] = stride[1] = 1;
        for (int64_t rest = ph, i = sp - 1; i >= 0; i--) {   /* the last axis varies fastest */
            const int64_t p = rest % ld[i];
            rest /= ld[i];
            phase_axis a = {0, 0, 0};
            phase_geom(ld[i], lo[i], w->type.dims[2 + i].c, p, &a);
            start[2 + i] = ts_dim_const(a.u0), limit[2 + i] = w->type.dims[2 + i], stride[2 + i] = ld[i];
            plo[i] = -a.d;
            phi[i] = Q[i] - 1 + a.taps - x->type.dims[2 + i].c + a.d;
        }
        ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_SLICE);
        if (a && (ts_attr_set_dims(s->g, TS_OP_SLICE, a, "start", r, start) != TS_OK ||
                  ts_attr_set_dims(s->g, TS_OP_SLICE, a, "limit", r, limit) != TS_OK ||
                  ts_attr_set_ints(s->g, TS_OP_SLICE, a, "stride", r, stride) != TS_OK))
            a = NULL;
        ts_value *ws = made(s, TS_OP_SLICE, 1, &w, a);   /* a constant when w is */
        ts_value *c = ws ? conv_node(s, x, ws, sp, plo, phi) : NULL;
        if (!c || !(part[ph] = reshaped(s, c, 2 + 2 * sp, pshape))) return s->err->code ? s->err->code : TS_ERR_INTERNAL;
    }
    /* joined along the unit axes, the last spatial axis's first */
    int64_t n = phases;
    for (int i = sp - 1; i >= 0; i--) {
        const int64_t groups = n / ld[i];
        for (int64_t gi = 0; gi < groups; gi++) {
            ts_value *j = concat_node(s, (int)ld[i], part + gi * ld[i], 3 + 2 * i);
            if (!j) return s->err->code ? s->err->code : TS_ERR_INTERNAL;
            part[gi] = j;
        }
        n = groups;
    }
    ts_value *y = reshaped(s, part[0], yt->rank, yt->dims);
    if (!y) return s->err->code ? s->err->code : TS_ERR_INTERNAL;
    s->repl = y;
    s->made = true;
    return TS_OK;
}

static ts_status r_conv_any(simp *s)
{
    TS_TRY(r_conv(s));
    return s->repl ? TS_OK : r_conv_transposed(s);
}

/* ---- the table and the pass ------------------------------------------------------------ */

static const rule_fn rules[TS_OP_COUNT] = {
    [TS_OP_ADD] = r_add, [TS_OP_SUB] = r_sub, [TS_OP_MUL] = r_mul, [TS_OP_DIV] = r_div,
    [TS_OP_MAX] = r_idempotent, [TS_OP_MIN] = r_idempotent,
    [TS_OP_AND] = r_idempotent, [TS_OP_OR] = r_idempotent,
    [TS_OP_NEG] = r_involution, [TS_OP_NOT] = r_involution,
    [TS_OP_SELECT] = r_select, [TS_OP_CAST] = r_cast,
    [TS_OP_TRANSPOSE] = r_transpose, [TS_OP_RESHAPE] = r_reshape, [TS_OP_BROADCAST] = r_broadcast,
    [TS_OP_SLICE] = r_slice, [TS_OP_REVERSE] = r_reverse, [TS_OP_PAD] = r_pad, [TS_OP_CONCAT] = r_concat,
    [TS_OP_REDUCE_SUM] = r_reduce, [TS_OP_REDUCE_PROD] = r_reduce,
    [TS_OP_REDUCE_MAX] = r_reduce, [TS_OP_REDUCE_MIN] = r_reduce,
    [TS_OP_CONV] = r_conv_any, [TS_OP_GATHER] = r_gather,
};

ts_status ts_pass_simplify_node(ts_graph *g, ts_node *n, ts_value **repl, ts_err *err)
{
    *repl = NULL;
    if (!rules[n->op] || n->n_out != 1) return TS_OK;
    simp s = {g, n, NULL, false, err};
    TS_TRY(rules[n->op](&s));
    if (!s.repl) return TS_OK;
    if (TS_NEVER(!ts_type_eq(&s.repl->type, out_type(&s)))) {
        if (s.made) ts_ir_node_unlink(s.repl->def);
        return TS_OK;
    }
    if (s.made) ts_pass_take_name(s.repl, n->out[0]);
    *repl = s.repl;
    return TS_OK;
}

static ts_status simplify_block(ts_graph *g, ts_block *b, bool *changed, ts_err *err)
{
    ts_status s = TS_OK;
    for (ts_node *n = b->first, *next; n; n = next) {
        next = n->next;
        ts_pass_resolve_operands(n);
        if (s != TS_OK) continue;   /* still resolve, so nothing dangles */
        for (int r = 0; r < n->n_regions && s == TS_OK; r++) s = simplify_block(g, n->regions[r], changed, err);
        ts_value *repl = NULL;
        if (s == TS_OK) s = ts_pass_simplify_node(g, n, &repl, err);
        if (!repl) continue;
        ts_pass_replace(n, &repl);
        *changed = true;
    }
    ts_pass_resolve_results(b);
    return s;
}

ts_status ts_pass_simplify(ts_graph *g, bool *changed, ts_err *err)
{
    ts_pass_forget(g->body);
    return simplify_block(g, g->body, changed, err);
}
