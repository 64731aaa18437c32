/* shape.c — the shape rule of every primitive: result dtypes and symbolic
 * dims from operands and attributes, with every check that keeps a later
 * layer from seeing an ill-formed node. Table at the bottom. */
#include "ir/ir.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* A rule fills out[] (at most cap) and *count. */
typedef struct rule_ctx {
    ts_graph *g;
    ts_node *n;
    ts_type *out;
    int cap;
    int *count;
    ts_err *err;
} rule_ctx;

typedef ts_status (*rule_fn)(rule_ctx *c);

#define OPNAME(c) (ts_op_get((c)->n->op)->name)
#define FAIL(c, ...) shape_fail(c, __VA_ARGS__)

static ts_status shape_fail(rule_ctx *c, const char *fmt, ...) TS_PRINTF(2, 3);
static ts_status shape_fail(rule_ctx *c, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ts_err_set(c->err, TS_ERR_SHAPE, "%s: %s", OPNAME(c), msg);
}

static const ts_type *in_type(rule_ctx *c, int i) { return &c->n->in[i]->type; }

/* Start result k with dtype and rank; dims to be filled by the caller. */
static ts_dim *result(rule_ctx *c, int k, ts_dtype dt, int rank)
{
    if (k >= c->cap || rank > TS_MAX_RANK) return NULL;
    ts_dim *d = ts_arena_array(c->g->arena, (size_t)(rank ? rank : 1), sizeof(ts_dim));
    if (!d) return NULL;
    c->out[k].dtype = dt;
    c->out[k].rank = rank;
    c->out[k].dims = d;
    if (*c->count < k + 1) *c->count = k + 1;
    return d;
}

static ts_status oom(rule_ctx *c)
{
    return ts_err_set(c->err, TS_ERR_OOM, "%s: out of memory (or rank over %d)", OPNAME(c), TS_MAX_RANK);
}

static ts_status copy_type(rule_ctx *c, int k, const ts_type *t, ts_dtype dt)
{
    ts_dim *d = result(c, k, dt, t->rank);
    if (!d) return oom(c);
    if (t->rank) memcpy(d, t->dims, sizeof(ts_dim) * (size_t)t->rank);
    return TS_OK;
}

static void dims_text(char *buf, size_t n, const ts_type *t)
{
    ts_buf b = {0};
    ts_type_print(&b, t);
    snprintf(buf, n, "%s", b.data ? b.data : "?");
    ts_buf_free(&b);
}

/* Normalise an axis attribute into [0, rank). */
static ts_status axis_ok(rule_ctx *c, const char *what, int64_t axis, int rank)
{
    if (axis < 0 || axis >= rank)
        return FAIL(c, "%s %lld is out of range for rank %d", what, (long long)axis, rank);
    return TS_OK;
}

/* A list of distinct axes in [0, rank). */
static ts_status axes_ok(rule_ctx *c, const char *what, const int64_t *ax, int n, int rank)
{
    bool seen[TS_MAX_RANK] = {0};
    for (int i = 0; i < n; i++) {
        TS_TRY(axis_ok(c, what, ax[i], rank));
        if (seen[ax[i]]) return FAIL(c, "%s lists axis %lld twice", what, (long long)ax[i]);
        seen[ax[i]] = true;
    }
    return TS_OK;
}

static ts_status list_len(rule_ctx *c, const char *what, int n, int want)
{
    if (n != want) return FAIL(c, "'%s' has %d entries, expected %d", what, n, want);
    return TS_OK;
}

static bool dim_neg(ts_dim d) { return ts_dim_is_const(d) && d.c < 0; }

/* Window, stride, dilation and padding values beyond 2^31 mean nothing
 * for a tensor and would overflow the size arithmetic below; refusing them
 * keeps every product of two such values inside int64. */
#define ATTR_LIMIT (INT64_C(1) << 31)
static ts_status bounded(rule_ctx *c, const char *what, const int64_t *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] > ATTR_LIMIT || v[i] < -ATTR_LIMIT)
            return FAIL(c, "'%s' value %lld is out of range", what, (long long)v[i]);
    return TS_OK;
}

/* ---- leaves ------------------------------------------------------------- */

static ts_status r_const(rule_ctx *c)
{
    ts_tensor *t = ts_node_tensor(c->n, "value");
    ts_dim *d = result(c, 0, t->dtype, t->rank);
    if (!d) return oom(c);
    for (int i = 0; i < t->rank; i++) d[i] = ts_dim_const(t->shape[i]);
    return TS_OK;
}

static ts_status shaped_leaf(rule_ctx *c, ts_dtype dt)
{
    int n;
    const ts_dim *shape = ts_node_dims(c->n, "shape", &n);
    if (!ts_dtype_valid(dt)) return FAIL(c, "invalid dtype");
    ts_dim *d = result(c, 0, dt, n);
    if (!d) return oom(c);
    for (int i = 0; i < n; i++) {
        if (dim_neg(shape[i])) return FAIL(c, "negative dimension %lld", (long long)shape[i].c);
        d[i] = shape[i];
    }
    return TS_OK;
}

static ts_status r_iota(rule_ctx *c)
{
    ts_dtype dt = (ts_dtype)ts_node_int(c->n, "dtype");
    if (dt == TS_DTYPE_BOOL || ts_dtype_is_storage(dt)) return FAIL(c, "dtype %s is not a number type", ts_dtype_name(dt));
    TS_TRY(shaped_leaf(c, dt));
    return axis_ok(c, "axis", ts_node_int(c->n, "axis"), c->out[0].rank);
}

static ts_status r_rng(rule_ctx *c)
{
    ts_dtype dt = (ts_dtype)ts_node_int(c->n, "dtype");
    if (!ts_dtype_is_float(dt)) return FAIL(c, "dtype must be a float type");
    /* the optional operand varies the stream per run (a seed drawn by the
     * caller), so it must be one integer, not a tensor of them */
    if (c->n->n_in == 1 && (in_type(c, 0)->dtype != TS_DTYPE_I64 || in_type(c, 0)->rank != 0))
        return FAIL(c, "the seed operand must be an i64 scalar");
    return shaped_leaf(c, dt);
}

/* ---- elementwise -------------------------------------------------------- */

static ts_status r_unary(rule_ctx *c) { return copy_type(c, 0, in_type(c, 0), in_type(c, 0)->dtype); }

static ts_status same_types(rule_ctx *c, int i, int j)
{
    if (ts_type_eq(in_type(c, i), in_type(c, j))) return TS_OK;
    char a[128], b[128];
    dims_text(a, sizeof a, in_type(c, i));
    dims_text(b, sizeof b, in_type(c, j));
    return FAIL(c, "operands have different types %s and %s (broadcasting is explicit)", a, b);
}

static ts_status r_binary(rule_ctx *c)
{
    TS_TRY(same_types(c, 0, 1));
    bool cmp = ts_op_get(c->n->op)->flags & TS_OPF_CMP;
    return copy_type(c, 0, in_type(c, 0), cmp ? TS_DTYPE_BOOL : in_type(c, 0)->dtype);
}

static ts_status r_select(rule_ctx *c)
{
    const ts_type *p = in_type(c, 0);
    if (p->dtype != TS_DTYPE_BOOL) return FAIL(c, "predicate must be bool, got %s", ts_dtype_name(p->dtype));
    TS_TRY(same_types(c, 1, 2));
    ts_type pa = *in_type(c, 1);
    pa.dtype = TS_DTYPE_BOOL;
    if (!ts_type_eq(p, &pa)) return FAIL(c, "predicate shape differs from the operands'");
    return copy_type(c, 0, in_type(c, 1), in_type(c, 1)->dtype);
}

static ts_status r_cast(rule_ctx *c)
{
    ts_dtype dt = (ts_dtype)ts_node_int(c->n, "dtype");
    return copy_type(c, 0, in_type(c, 0), dt);
}

static ts_status r_bitcast(rule_ctx *c)
{
    ts_dtype dt = (ts_dtype)ts_node_int(c->n, "dtype");
    if (ts_dtype_bits(dt) != ts_dtype_bits(in_type(c, 0)->dtype) || dt == TS_DTYPE_BOOL ||
        in_type(c, 0)->dtype == TS_DTYPE_BOOL)
        return FAIL(c, "cannot reinterpret %s as %s: widths differ or bool", ts_dtype_name(in_type(c, 0)->dtype),
                    ts_dtype_name(dt));
    return copy_type(c, 0, in_type(c, 0), dt);
}

/* ---- reductions --------------------------------------------------------- */

/* Result: the operand without the listed axes. */
static ts_status drop_axes(rule_ctx *c, const int64_t *ax, int n, ts_dtype dt)
{
    const ts_type *x = in_type(c, 0);
    TS_TRY(axes_ok(c, "axes", ax, n, x->rank));
    bool drop[TS_MAX_RANK] = {0};
    for (int i = 0; i < n; i++) drop[ax[i]] = true;
    ts_dim *d = result(c, 0, dt, x->rank - n);
    if (!d) return oom(c);
    for (int i = 0, k = 0; i < x->rank; i++)
        if (!drop[i]) d[k++] = x->dims[i];
    return TS_OK;
}

static ts_status r_reduce(rule_ctx *c)
{
    int n;
    const int64_t *ax = ts_node_ints(c->n, "axes", &n);
    return drop_axes(c, ax, n, in_type(c, 0)->dtype);
}

static ts_status r_arg(rule_ctx *c)
{
    int64_t axis = ts_node_int(c->n, "axis");
    return drop_axes(c, &axis, 1, TS_DTYPE_I64);
}

static ts_status r_cumulative(rule_ctx *c)
{
    TS_TRY(axis_ok(c, "axis", ts_node_int(c->n, "axis"), in_type(c, 0)->rank));
    return r_unary(c);
}

/* floor((span - extent) / stride) + 1, the count of window positions. */
static ts_status window_count(rule_ctx *c, ts_dim span, int64_t extent, int64_t stride, ts_dim *out)
{
    ts_symtab *t = c->g->syms;
    TS_TRY(ts_dim_sub(t, span, ts_dim_const(extent), out, c->err));
    TS_TRY(ts_dim_div(t, *out, ts_dim_const(stride), out, c->err));
    TS_TRY(ts_dim_add(t, *out, ts_dim_const(1), out, c->err));
    if (dim_neg(*out)) return FAIL(c, "the window does not fit: %lld positions", (long long)out->c);
    return TS_OK;
}

static ts_status r_reduce_window(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0);
    int nw, ns, nd, nl, nh;
    const int64_t *w = ts_node_ints(c->n, "window", &nw), *s = ts_node_ints(c->n, "strides", &ns);
    const int64_t *dl = ts_node_ints(c->n, "dilations", &nd);
    const int64_t *lo = ts_node_ints(c->n, "pad_lo", &nl), *hi = ts_node_ints(c->n, "pad_hi", &nh);
    TS_TRY(list_len(c, "window", nw, x->rank));
    TS_TRY(list_len(c, "strides", ns, x->rank));
    TS_TRY(list_len(c, "dilations", nd, x->rank));
    TS_TRY(list_len(c, "pad_lo", nl, x->rank));
    TS_TRY(list_len(c, "pad_hi", nh, x->rank));
    TS_TRY(bounded(c, "window", w, nw));
    TS_TRY(bounded(c, "strides", s, ns));
    TS_TRY(bounded(c, "dilations", dl, nd));
    TS_TRY(bounded(c, "pad_lo", lo, nl));
    TS_TRY(bounded(c, "pad_hi", hi, nh));
    ts_dim *d = result(c, 0, x->dtype, x->rank);
    if (!d) return oom(c);
    for (int i = 0; i < x->rank; i++) {
        if (w[i] < 1 || s[i] < 1 || dl[i] < 1) return FAIL(c, "window, strides and dilations must be >= 1");
        if (lo[i] < 0 || hi[i] < 0) return FAIL(c, "padding must be >= 0");
        ts_dim span;
        TS_TRY(ts_dim_add(c->g->syms, x->dims[i], ts_dim_const(lo[i] + hi[i]), &span, c->err));
        TS_TRY(window_count(c, span, dl[i] * (w[i] - 1) + 1, s[i], &d[i]));
    }
    return TS_OK;
}

/* ---- layout --------------------------------------------------------------- */

static ts_status numel(rule_ctx *c, int rank, const ts_dim *dims, ts_dim *out)
{
    *out = ts_dim_const(1);
    for (int i = 0; i < rank; i++) TS_TRY(ts_dim_mul(c->g->syms, *out, dims[i], out, c->err));
    return TS_OK;
}

static ts_status r_reshape(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0);
    int n;
    const ts_dim *shape = ts_node_dims(c->n, "shape", &n);
    ts_dim a, b;
    for (int i = 0; i < n; i++)
        if (dim_neg(shape[i])) return FAIL(c, "negative dimension %lld", (long long)shape[i].c);
    TS_TRY(numel(c, x->rank, x->dims, &a));
    TS_TRY(numel(c, n, shape, &b));
    if (!ts_dim_eq(a, b)) {
        ts_buf t = {0};
        ts_dim_print(&t, a);
        ts_buf_puts(&t, " vs ");
        ts_dim_print(&t, b);
        ts_status s = FAIL(c, "element counts differ: %s", t.data ? t.data : "?");
        ts_buf_free(&t);
        return s;
    }
    ts_dim *d = result(c, 0, x->dtype, n);
    if (!d) return oom(c);
    if (n) memcpy(d, shape, sizeof(ts_dim) * (size_t)n);
    return TS_OK;
}

static ts_status r_broadcast(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0);
    int n, na;
    const ts_dim *shape = ts_node_dims(c->n, "shape", &n);
    const int64_t *ax = ts_node_ints(c->n, "axes", &na);
    TS_TRY(list_len(c, "axes", na, x->rank));
    for (int i = 0; i < na; i++) {
        TS_TRY(axis_ok(c, "axes entry", ax[i], n));
        if (i && ax[i] <= ax[i - 1]) return FAIL(c, "axes must be strictly increasing");
        ts_dim src = x->dims[i];
        if (!(ts_dim_is_const(src) && src.c == 1) && !ts_dim_eq(src, shape[ax[i]]))
            return FAIL(c, "operand dim %d is neither 1 nor the target size", i);
    }
    ts_dim *d = result(c, 0, x->dtype, n);
    if (!d) return oom(c);
    for (int i = 0; i < n; i++) {
        if (dim_neg(shape[i])) return FAIL(c, "negative dimension %lld", (long long)shape[i].c);
        d[i] = shape[i];
    }
    return TS_OK;
}

static ts_status r_transpose(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0);
    int n;
    const int64_t *perm = ts_node_ints(c->n, "perm", &n);
    TS_TRY(list_len(c, "perm", n, x->rank));
    TS_TRY(axes_ok(c, "perm", perm, n, x->rank));
    ts_dim *d = result(c, 0, x->dtype, n);
    if (!d) return oom(c);
    for (int i = 0; i < n; i++) d[i] = x->dims[perm[i]];
    return TS_OK;
}

/* A constant bound against a constant dim; symbolic ones are checked when
 * the program runs. */
static bool const_gt(ts_dim a, ts_dim b) { return ts_dim_is_const(a) && ts_dim_is_const(b) && a.c > b.c; }

static ts_status r_slice(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0);
    int ns, nl, nt;
    const ts_dim *st = ts_node_dims(c->n, "start", &ns), *li = ts_node_dims(c->n, "limit", &nl);
    const int64_t *sd = ts_node_ints(c->n, "stride", &nt);
    TS_TRY(list_len(c, "start", ns, x->rank));
    TS_TRY(list_len(c, "limit", nl, x->rank));
    TS_TRY(list_len(c, "stride", nt, x->rank));
    ts_dim *d = result(c, 0, x->dtype, x->rank);
    if (!d) return oom(c);
    ts_symtab *t = c->g->syms;
    for (int i = 0; i < x->rank; i++) {
        if (sd[i] < 1) return FAIL(c, "stride must be >= 1 (reverse flips)");
        if (dim_neg(st[i]) || const_gt(st[i], li[i]) || const_gt(li[i], x->dims[i]))
            return FAIL(c, "axis %d: need 0 <= start <= limit <= size", i);
        ts_dim len;
        TS_TRY(ts_dim_sub(t, li[i], st[i], &len, c->err));
        TS_TRY(ts_dim_add(t, len, ts_dim_const(sd[i] - 1), &len, c->err));
        TS_TRY(ts_dim_div(t, len, ts_dim_const(sd[i]), &d[i], c->err));
    }
    return TS_OK;
}

static ts_status r_pad(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0), *v = in_type(c, 1);
    if (v->rank != 0 || v->dtype != x->dtype) return FAIL(c, "the padding value must be a scalar of the operand's dtype");
    int nl, nh, ni;
    const int64_t *lo = ts_node_ints(c->n, "lo", &nl), *hi = ts_node_ints(c->n, "hi", &nh);
    const int64_t *in = ts_node_ints(c->n, "interior", &ni);
    TS_TRY(list_len(c, "lo", nl, x->rank));
    TS_TRY(list_len(c, "hi", nh, x->rank));
    TS_TRY(list_len(c, "interior", ni, x->rank));
    TS_TRY(bounded(c, "lo", lo, nl));
    TS_TRY(bounded(c, "hi", hi, nh));
    TS_TRY(bounded(c, "interior", in, ni));
    ts_dim *d = result(c, 0, x->dtype, x->rank);
    if (!d) return oom(c);
    ts_symtab *t = c->g->syms;
    for (int i = 0; i < x->rank; i++) {
        if (in[i] < 0) return FAIL(c, "interior padding must be >= 0");
        ts_dim s = x->dims[i], gaps;
        if (in[i] > 0) {
            /* (size-1) gaps; a symbolic size is taken to be >= 1 */
            if (ts_dim_is_const(s)) {
                int64_t g = 0;
                if (s.c && !ts_i64_mul(s.c - 1, in[i], &g)) return FAIL(c, "axis %d: padded size overflows", i);
                gaps = ts_dim_const(g);
            } else {
                TS_TRY(ts_dim_sub(t, s, ts_dim_const(1), &gaps, c->err));
                TS_TRY(ts_dim_mul(t, gaps, ts_dim_const(in[i]), &gaps, c->err));
            }
            TS_TRY(ts_dim_add(t, s, gaps, &s, c->err));
        }
        TS_TRY(ts_dim_add(t, s, ts_dim_const(lo[i] + hi[i]), &d[i], c->err));
        if (dim_neg(d[i])) return FAIL(c, "axis %d: padding crops more than the size", i);
    }
    return TS_OK;
}

static ts_status r_concat(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0);
    int64_t axis = ts_node_int(c->n, "axis");
    TS_TRY(axis_ok(c, "axis", axis, x->rank));
    ts_dim *d = result(c, 0, x->dtype, x->rank);
    if (!d) return oom(c);
    memcpy(d, x->dims, sizeof(ts_dim) * (size_t)x->rank);
    for (int k = 1; k < c->n->n_in; k++) {
        const ts_type *y = in_type(c, k);
        if (y->dtype != x->dtype || y->rank != x->rank) return FAIL(c, "operand %d differs in dtype or rank", k);
        for (int i = 0; i < x->rank; i++)
            if (i != axis && !ts_dim_eq(x->dims[i], y->dims[i]))
                return FAIL(c, "operand %d differs in dim %d", k, i);
        TS_TRY(ts_dim_add(c->g->syms, d[axis], y->dims[axis], &d[axis], c->err));
    }
    return TS_OK;
}

static ts_status r_reverse(rule_ctx *c)
{
    int n;
    const int64_t *ax = ts_node_ints(c->n, "axes", &n);
    TS_TRY(axes_ok(c, "axes", ax, n, in_type(c, 0)->rank));
    return r_unary(c);
}

/* ---- indexing ------------------------------------------------------------ */

static ts_status int_operand(rule_ctx *c, int i, const char *what)
{
    if (!ts_dtype_is_int(in_type(c, i)->dtype)) return FAIL(c, "%s must be integers", what);
    return TS_OK;
}

static ts_status r_gather(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0), *idx = in_type(c, 1);
    int64_t axis = ts_node_int(c->n, "axis");
    TS_TRY(int_operand(c, 1, "indices"));
    TS_TRY(axis_ok(c, "axis", axis, x->rank));
    ts_dim *d = result(c, 0, x->dtype, x->rank - 1 + idx->rank);
    if (!d) return oom(c);
    int k = 0;
    for (int i = 0; i < axis; i++) d[k++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) d[k++] = idx->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++) d[k++] = x->dims[i];
    return TS_OK;
}

static ts_status r_scatter(rule_ctx *c)
{
    TS_TRY(int_operand(c, 1, "indices"));
    const ts_type *idx = in_type(c, 1), *upd = in_type(c, 2);
    ts_type want = *idx;
    want.dtype = in_type(c, 0)->dtype;
    if (!ts_type_eq(&want, upd)) return FAIL(c, "updates must have the indices' shape and the operand's dtype");
    if (in_type(c, 0)->dtype == TS_DTYPE_BOOL && ts_node_int(c->n, "combine") != 0)
        return FAIL(c, "only combine=set is defined for bool");
    return r_unary(c);
}

static ts_status start_vector(rule_ctx *c, int i, int rank)
{
    const ts_type *s = in_type(c, i);
    TS_TRY(int_operand(c, i, "start indices"));
    if (s->rank != 1 || !ts_dim_is_const(s->dims[0]) || s->dims[0].c != rank)
        return FAIL(c, "start indices must be a vector of %d", rank);
    return TS_OK;
}

static ts_status r_dynamic_slice(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0);
    int n;
    const ts_dim *sz = ts_node_dims(c->n, "sizes", &n);
    TS_TRY(start_vector(c, 1, x->rank));
    TS_TRY(list_len(c, "sizes", n, x->rank));
    ts_dim *d = result(c, 0, x->dtype, n);
    if (!d) return oom(c);
    for (int i = 0; i < n; i++) {
        if (dim_neg(sz[i]) || const_gt(sz[i], x->dims[i])) return FAIL(c, "size %d does not fit the operand", i);
        d[i] = sz[i];
    }
    return TS_OK;
}

static ts_status r_dynamic_update_slice(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0), *u = in_type(c, 1);
    if (u->dtype != x->dtype || u->rank != x->rank) return FAIL(c, "update differs in dtype or rank");
    for (int i = 0; i < x->rank; i++)
        if (const_gt(u->dims[i], x->dims[i])) return FAIL(c, "update is larger than the operand in dim %d", i);
    TS_TRY(start_vector(c, 2, x->rank));
    return r_unary(c);
}

/* ---- contraction ----------------------------------------------------------- */

static ts_status r_dot(rule_ctx *c)
{
    const ts_type *a = in_type(c, 0), *b = in_type(c, 1);
    if (a->dtype != b->dtype) return FAIL(c, "operand dtypes differ");
    int nlb, nrb, nlc, nrc;
    const int64_t *lb = ts_node_ints(c->n, "lhs_batch", &nlb), *rb = ts_node_ints(c->n, "rhs_batch", &nrb);
    const int64_t *lc = ts_node_ints(c->n, "lhs_contract", &nlc), *rc = ts_node_ints(c->n, "rhs_contract", &nrc);
    if (nlb != nrb || nlc != nrc) return FAIL(c, "batch and contracting lists must pair up");
    int64_t la[2 * TS_MAX_RANK], ra[2 * TS_MAX_RANK];
    if (nlb + nlc > a->rank || nrb + nrc > b->rank) return FAIL(c, "too many batch/contracting dims");
    /* empty lists may be NULL, and memcpy from NULL is undefined even for 0 bytes */
    if (nlb) memcpy(la, lb, sizeof(int64_t) * (size_t)nlb);
    if (nlc) memcpy(la + nlb, lc, sizeof(int64_t) * (size_t)nlc);
    if (nrb) memcpy(ra, rb, sizeof(int64_t) * (size_t)nrb);
    if (nrc) memcpy(ra + nrb, rc, sizeof(int64_t) * (size_t)nrc);
    TS_TRY(axes_ok(c, "lhs dims", la, nlb + nlc, a->rank));
    TS_TRY(axes_ok(c, "rhs dims", ra, nrb + nrc, b->rank));
    for (int i = 0; i < nlb + nlc; i++)
        if (!ts_dim_eq(a->dims[la[i]], b->dims[ra[i]]))
            return FAIL(c, "lhs dim %lld and rhs dim %lld differ", (long long)la[i], (long long)ra[i]);
    int rank = a->rank + b->rank - nlb - 2 * nlc;
    ts_dim *d = result(c, 0, a->dtype, rank);
    if (!d) return oom(c);
    bool lused[TS_MAX_RANK] = {0}, rused[TS_MAX_RANK] = {0};
    for (int i = 0; i < nlb + nlc; i++) lused[la[i]] = rused[ra[i]] = true;
    int k = 0;
    for (int i = 0; i < nlb; i++) d[k++] = a->dims[lb[i]];
    for (int i = 0; i < a->rank; i++)
        if (!lused[i]) d[k++] = a->dims[i];
    for (int i = 0; i < b->rank; i++)
        if (!rused[i]) d[k++] = b->dims[i];
    return TS_OK;
}

static ts_status r_conv(rule_ctx *c)
{
    const ts_type *x = in_type(c, 0), *w = in_type(c, 1);
    if (x->dtype != w->dtype) return FAIL(c, "operand dtypes differ");
    if (x->rank < 3 || w->rank != x->rank) return FAIL(c, "need x[N,C,...] and w[O,C/groups,...] of equal rank >= 3");
    int sp = x->rank - 2, n1, n2, n3, n4, n5;
    const int64_t *st = ts_node_ints(c->n, "strides", &n1), *lo = ts_node_ints(c->n, "pad_lo", &n2);
    const int64_t *hi = ts_node_ints(c->n, "pad_hi", &n3), *ld = ts_node_ints(c->n, "lhs_dilation", &n4);
    const int64_t *rd = ts_node_ints(c->n, "rhs_dilation", &n5);
    int64_t groups = ts_node_int(c->n, "groups");
    TS_TRY(list_len(c, "strides", n1, sp));
    TS_TRY(list_len(c, "pad_lo", n2, sp));
    TS_TRY(list_len(c, "pad_hi", n3, sp));
    TS_TRY(list_len(c, "lhs_dilation", n4, sp));
    TS_TRY(list_len(c, "rhs_dilation", n5, sp));
    TS_TRY(bounded(c, "strides", st, n1));
    TS_TRY(bounded(c, "pad_lo", lo, n2));
    TS_TRY(bounded(c, "pad_hi", hi, n3));
    TS_TRY(bounded(c, "lhs_dilation", ld, n4));
    TS_TRY(bounded(c, "rhs_dilation", rd, n5));
    if (groups < 1) return FAIL(c, "groups must be >= 1");
    ts_symtab *t = c->g->syms;
    ts_dim cin;
    TS_TRY(ts_dim_mul(t, w->dims[1], ts_dim_const(groups), &cin, c->err));
    if (!ts_dim_eq(cin, x->dims[1])) return FAIL(c, "input channels differ from w.shape[1] * groups");
    if (ts_dim_is_const(w->dims[0]) && w->dims[0].c % groups)
        return FAIL(c, "output channels are not divisible by groups");
    ts_dim *d = result(c, 0, x->dtype, x->rank);
    if (!d) return oom(c);
    d[0] = x->dims[0];
    d[1] = w->dims[0];
    for (int i = 0; i < sp; i++) {
        if (st[i] < 1 || ld[i] < 1 || rd[i] < 1) return FAIL(c, "strides and dilations must be >= 1");
        if (!ts_dim_is_const(w->dims[2 + i])) return FAIL(c, "kernel sizes must be constant");
        if (w->dims[2 + i].c > ATTR_LIMIT) return FAIL(c, "kernel size %lld is out of range", (long long)w->dims[2 + i].c);
        /* dilated input extent: ld*(in-1)+1, plus padding */
        ts_dim span;
        TS_TRY(ts_dim_sub(t, x->dims[2 + i], ts_dim_const(1), &span, c->err));
        TS_TRY(ts_dim_mul(t, span, ts_dim_const(ld[i]), &span, c->err));
        TS_TRY(ts_dim_add(t, span, ts_dim_const(1 + lo[i] + hi[i]), &span, c->err));
        TS_TRY(window_count(c, span, rd[i] * (w->dims[2 + i].c - 1) + 1, st[i], &d[2 + i]));
    }
    return TS_OK;
}

/* ---- data-dependent ---------------------------------------------------------- */

static ts_status r_sort(rule_ctx *c)
{
    TS_TRY(axis_ok(c, "axis", ts_node_int(c->n, "axis"), in_type(c, 0)->rank));
    TS_TRY(copy_type(c, 0, in_type(c, 0), in_type(c, 0)->dtype));
    return copy_type(c, 1, in_type(c, 0), TS_DTYPE_I64);
}

static ts_status r_nonzero(rule_ctx *c)
{
    ts_dim *d = result(c, 0, TS_DTYPE_I64, 2);
    if (!d) return oom(c);
    d[0] = ts_dim_const(in_type(c, 0)->rank);
    return ts_dim_fresh(c->g->syms, "nnz", &d[1], c->err);
}

/* ---- control ----------------------------------------------------------------- */

/* Region r's parameters must carry the types of operands [first, n_in). */
static ts_status region_params(rule_ctx *c, int r, int first)
{
    ts_block *b = c->n->regions[r];
    const char *name = ts_op_get(c->n->op)->region_names[r];
    if (b->n_params != c->n->n_in - first)
        return FAIL(c, "region '%s' takes %d parameters for %d operands", name, b->n_params, c->n->n_in - first);
    for (int i = 0; i < b->n_params; i++)
        if (!ts_type_eq(&b->params[i]->type, in_type(c, first + i)))
            return FAIL(c, "region '%s' parameter %d differs in type from its operand", name, i);
    return TS_OK;
}

static ts_status results_match(rule_ctx *c, ts_block *a, ts_block *b, const char *what)
{
    if (a->n_results != b->n_results) return FAIL(c, "%s yield %d and %d values", what, a->n_results, b->n_results);
    for (int i = 0; i < a->n_results; i++)
        if (!ts_type_eq(&a->results[i]->type, &b->results[i]->type))
            return FAIL(c, "%s yield different types at result %d", what, i);
    return TS_OK;
}

static ts_status r_if(rule_ctx *c)
{
    const ts_type *p = in_type(c, 0);
    if (p->dtype != TS_DTYPE_BOOL || p->rank != 0) return FAIL(c, "the condition must be a bool scalar");
    TS_TRY(region_params(c, 0, 1));
    TS_TRY(region_params(c, 1, 1));
    ts_block *th = c->n->regions[0], *el = c->n->regions[1];
    TS_TRY(results_match(c, th, el, "then and else"));
    for (int i = 0; i < th->n_results; i++) TS_TRY(copy_type(c, i, &th->results[i]->type, th->results[i]->type.dtype));
    *c->count = th->n_results;
    return TS_OK;
}

static ts_status r_while(rule_ctx *c)
{
    TS_TRY(region_params(c, 0, 0));
    TS_TRY(region_params(c, 1, 0));
    ts_block *cond = c->n->regions[0], *body = c->n->regions[1];
    if (cond->n_results != 1 || cond->results[0]->type.dtype != TS_DTYPE_BOOL || cond->results[0]->type.rank != 0)
        return FAIL(c, "'cond' must yield one bool scalar");
    if (body->n_results != c->n->n_in) return FAIL(c, "'body' must yield the %d state values", c->n->n_in);
    for (int i = 0; i < c->n->n_in; i++) {
        if (!ts_type_eq(&body->results[i]->type, in_type(c, i)))
            return FAIL(c, "'body' result %d changes the state's type", i);
        TS_TRY(copy_type(c, i, in_type(c, i), in_type(c, i)->dtype));
    }
    *c->count = c->n->n_in;
    return TS_OK;
}

static ts_status r_custom(rule_ctx *c)
{
    const char *name = ts_node_str(c->n, "name");
    const ts_custom_op *op = ts_custom_find(name);
    if (!op) return ts_err_set(c->err, TS_ERR_UNSUPPORTED, "custom: no kernel named '%s' is registered", name);
    return op->shape(c->g, c->n, c->out, c->cap, c->count, c->err);
}

/* ---- collectives -------------------------------------------------------------- */

/* The world size is the symbol `world`, bound when a program runs. */
static ts_status world_scaled(rule_ctx *c, int64_t axis, bool mul)
{
    TS_TRY(axis_ok(c, "axis", axis, in_type(c, 0)->rank));
    TS_TRY(r_unary(c));
    ts_dim world;
    TS_TRY(ts_dim_sym(c->g->syms, "world", &world, c->err));
    ts_dim *d = &c->out[0].dims[axis];
    return mul ? ts_dim_mul(c->g->syms, *d, world, d, c->err) : ts_dim_div(c->g->syms, *d, world, d, c->err);
}

static ts_status r_all_gather(rule_ctx *c) { return world_scaled(c, ts_node_int(c->n, "axis"), true); }
static ts_status r_reduce_scatter(rule_ctx *c) { return world_scaled(c, ts_node_int(c->n, "axis"), false); }

static ts_status r_all_to_all(rule_ctx *c)
{
    int64_t s = ts_node_int(c->n, "split_axis"), k = ts_node_int(c->n, "concat_axis");
    TS_TRY(world_scaled(c, s, false));
    TS_TRY(axis_ok(c, "concat_axis", k, in_type(c, 0)->rank));
    ts_dim world;
    TS_TRY(ts_dim_sym(c->g->syms, "world", &world, c->err));
    return ts_dim_mul(c->g->syms, c->out[0].dims[k], world, &c->out[0].dims[k], c->err);
}

static ts_status r_none(rule_ctx *c) { *c->count = 0; return TS_OK; }
static ts_status r_recv(rule_ctx *c) { return shaped_leaf(c, (ts_dtype)ts_node_int(c->n, "dtype")); }

/* ---- the table ----------------------------------------------------------------- */

static const rule_fn rules[TS_OP_COUNT] = {
    [TS_OP_CONST] = r_const, [TS_OP_IOTA] = r_iota, [TS_OP_RNG_UNIFORM] = r_rng,
    [TS_OP_NEG] = r_unary, [TS_OP_ABS] = r_unary, [TS_OP_SIGN] = r_unary, [TS_OP_NOT] = r_unary,
    [TS_OP_EXP] = r_unary, [TS_OP_LOG] = r_unary, [TS_OP_SQRT] = r_unary, [TS_OP_SIN] = r_unary,
    [TS_OP_COS] = r_unary, [TS_OP_TAN] = r_unary, [TS_OP_TANH] = r_unary, [TS_OP_ERF] = r_unary,
    [TS_OP_FLOOR] = r_unary, [TS_OP_CEIL] = r_unary, [TS_OP_ROUND] = r_unary,
    [TS_OP_ADD] = r_binary, [TS_OP_SUB] = r_binary, [TS_OP_MUL] = r_binary, [TS_OP_DIV] = r_binary,
    [TS_OP_REM] = r_binary, [TS_OP_POW] = r_binary, [TS_OP_MAX] = r_binary, [TS_OP_MIN] = r_binary,
    [TS_OP_ATAN2] = r_binary, [TS_OP_AND] = r_binary, [TS_OP_OR] = r_binary, [TS_OP_XOR] = r_binary,
    [TS_OP_SHL] = r_binary, [TS_OP_SHR] = r_binary, [TS_OP_EQ] = r_binary, [TS_OP_NE] = r_binary,
    [TS_OP_LT] = r_binary, [TS_OP_LE] = r_binary,
    [TS_OP_SELECT] = r_select, [TS_OP_CAST] = r_cast, [TS_OP_BITCAST] = r_bitcast,
    [TS_OP_REDUCE_SUM] = r_reduce, [TS_OP_REDUCE_PROD] = r_reduce, [TS_OP_REDUCE_MAX] = r_reduce,
    [TS_OP_REDUCE_MIN] = r_reduce, [TS_OP_ARGMAX] = r_arg, [TS_OP_ARGMIN] = r_arg,
    [TS_OP_CUMULATIVE] = r_cumulative, [TS_OP_REDUCE_WINDOW] = r_reduce_window,
    [TS_OP_RESHAPE] = r_reshape, [TS_OP_BROADCAST] = r_broadcast, [TS_OP_TRANSPOSE] = r_transpose,
    [TS_OP_SLICE] = r_slice, [TS_OP_PAD] = r_pad, [TS_OP_CONCAT] = r_concat, [TS_OP_REVERSE] = r_reverse,
    [TS_OP_GATHER] = r_gather, [TS_OP_SCATTER] = r_scatter, [TS_OP_DYNAMIC_SLICE] = r_dynamic_slice,
    [TS_OP_DYNAMIC_UPDATE_SLICE] = r_dynamic_update_slice,
    [TS_OP_DOT] = r_dot, [TS_OP_CONV] = r_conv,
    [TS_OP_SORT] = r_sort, [TS_OP_NONZERO] = r_nonzero,
    [TS_OP_IF] = r_if, [TS_OP_WHILE] = r_while, [TS_OP_CUSTOM] = r_custom,
    [TS_OP_ALL_REDUCE] = r_unary, [TS_OP_ALL_GATHER] = r_all_gather,
    [TS_OP_REDUCE_SCATTER] = r_reduce_scatter, [TS_OP_ALL_TO_ALL] = r_all_to_all,
    [TS_OP_SEND] = r_none, [TS_OP_RECV] = r_recv,
};

bool ts_ir_has_shape_rule(ts_op op) { return (unsigned)op < TS_OP_COUNT && rules[op] != NULL; }

ts_status ts_ir_infer(ts_graph *g, ts_node *n, ts_type *types, int cap, int *count, ts_err *err)
{
    if (!TS_ALWAYS(rules[n->op])) return ts_err_set(err, TS_ERR_INTERNAL, "no shape rule");
    *count = 0;
    rule_ctx c = {g, n, types, cap, count, err};
    TS_TRY(rules[n->op](&c));
    int want = ts_op_get(n->op)->n_out;
    if (want >= 0 && *count != want) return ts_err_set(err, TS_ERR_INTERNAL, "%s: rule made %d results", OPNAME(&c), *count);
    return TS_OK;
}

/* ---- the custom-op registry ------------------------------------------------------- */

static pthread_mutex_t custom_lock = PTHREAD_MUTEX_INITIALIZER;
static ts_custom_op customs[64];
static int n_customs;

ts_status ts_custom_register(const ts_custom_op *op, ts_err *err)
{
    if (!op || !op->name || !op->shape) return ts_err_set(err, TS_ERR_INVALID_ARG, "custom op needs a name and a shape rule");
    pthread_mutex_lock(&custom_lock);
    ts_status s = TS_OK;
    int i = 0;
    while (i < n_customs && strcmp(customs[i].name, op->name) != 0) i++;
    if (i == (int)(sizeof customs / sizeof customs[0]))
        s = ts_err_set(err, TS_ERR_OOM, "too many custom ops");
    else {
        customs[i] = *op;  /* re-registering a name replaces it */
        if (i == n_customs) n_customs++;
    }
    pthread_mutex_unlock(&custom_lock);
    return s;
}

const ts_custom_op *ts_custom_find(const char *name)
{
    const ts_custom_op *found = NULL;
    pthread_mutex_lock(&custom_lock);
    for (int i = 0; i < n_customs && name; i++)
        if (strcmp(customs[i].name, name) == 0) found = &customs[i];
    pthread_mutex_unlock(&custom_lock);
    return found;
}
