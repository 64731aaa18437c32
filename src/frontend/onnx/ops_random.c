/* ops_random.c — ONNX random operators, assembled from `rng_uniform`.
 *
 * tessera's random operators are deterministic per graph: rng_uniform is a
 * counter-based generator (Philox) keyed by an integer seed, so a graph
 * gives the same numbers on every run and every backend.
 *   - ONNX's `seed` attribute is a float; its key is the float's IEEE-754
 *     binary32 bit pattern (distinct seeds give distinct keys: 0.0 -> 0,
 *     1.0 -> 0x3f800000).
 *   - Without a seed, the key is a 64-bit FNV-1a hash of the node's first
 *     output name, so two unseeded nodes of one graph draw different
 *     streams while each stays fixed.
 * Values therefore never match numpy's generator (which the ONNX node tests
 * for Bernoulli record): same distribution, other numbers.
 *
 * Normal samples are Box-Muller from two uniform draws (one rng_uniform of
 * shape [2, ...]). Narrow floats are drawn and transformed in f32 and
 * rounded once at the end.
 */
#include "frontend/onnx/onnx.h"

#include <math.h>
#include <string.h>

#include "onnx.pb-c.h"

/* ---- seeds and draws --------------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The rng key of node n (see the file comment). */
static int64_t seed_of(onnx_node *n)
{
    if (onnx_has_attr(n, "seed")) {
        float f = (float)onnx_attr_float(n, "seed", 0);
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        return (int64_t)bits;
    }
    const Onnx__NodeProto *p = n->proto;
    const char *name = p && p->n_output > 0 ? p->output[0] : n->name;
    return (int64_t)fnv1a(name);
}

/* The dtype to draw and compute in for a result of dtype dt. */
static ts_dtype work_dtype(ts_dtype dt) { return dt == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32; }

/* rng_uniform of shape dims, [0, 1). */
static ts_value *uniform(onnx_node *n, ts_dtype dt, int rank, const ts_dim *dims, int64_t seed)
{
    ts_builder *b = onnx_b(n);
    ts_graph *g = onnx_graph(n);
    ts_attr *a = ts_b_attrs(b, TS_OP_RNG_UNIFORM);
    if (!a) return NULL;
    ts_status s = ts_attr_set_dtype(g, TS_OP_RNG_UNIFORM, a, "dtype", dt);
    if (s == TS_OK) s = ts_attr_set_dims(g, TS_OP_RNG_UNIFORM, a, "shape", rank, dims);
    if (s == TS_OK) s = ts_attr_set_int(g, TS_OP_RNG_UNIFORM, a, "seed", seed);
    if (s != TS_OK) {
        onnx_fail(n, s, "rng_uniform: could not set its attributes");
        return NULL;
    }
    return ts_b_node(b, TS_OP_RNG_UNIFORM, 0, NULL, a);
}

static ts_value *bin(ts_builder *b, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(b, op, x, y); }

/* low + (high - low) * u, as dtype dt. */
static ts_value *uniform_range(onnx_node *n, ts_dtype dt, int rank, const ts_dim *dims)
{
    ts_builder *b = onnx_b(n);
    ts_dtype w = work_dtype(dt);
    double lo = onnx_attr_float(n, "low", 0), hi = onnx_attr_float(n, "high", 1);
    ts_value *u = uniform(n, w, rank, dims, seed_of(n));
    u = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, u, ts_b_scalar(b, w, hi - lo)), ts_b_scalar(b, w, lo));
    return u && dt != w ? ts_b_cast(b, u, dt) : u;
}

/* mean + scale * sqrt(-2 ln(1 - u1)) * cos(2 pi u2), as dtype dt
 * (1 - u1 is in (0, 1], so the log is finite). */
static ts_value *normal(onnx_node *n, ts_dtype dt, int rank, const ts_dim *dims)
{
    ts_builder *b = onnx_b(n);
    ts_dtype w = work_dtype(dt);
    ts_dim d2[TS_MAX_RANK], st[TS_MAX_RANK], li[TS_MAX_RANK];
    if (rank + 1 > TS_MAX_RANK) {
        onnx_fail(n, TS_ERR_SHAPE, "rank %d is too large", rank);
        return NULL;
    }
    d2[0] = ts_dim_const(2);
    memcpy(d2 + 1, dims, sizeof(ts_dim) * (size_t)rank);
    ts_value *u = uniform(n, w, rank + 1, d2, seed_of(n)), *half[2];
    for (int k = 0; k < 2; k++) {
        memcpy(st, d2, sizeof st[0] * (size_t)(rank + 1));
        memcpy(li, d2, sizeof li[0] * (size_t)(rank + 1));
        for (int i = 1; i <= rank; i++) st[i] = ts_dim_const(0);
        st[0] = ts_dim_const(k);
        li[0] = ts_dim_const(k + 1);
        half[k] = ts_b_reshape(b, ts_b_slice(b, u, st, li, NULL), rank, dims);
    }
    ts_value *one = ts_b_scalar(b, w, 1);
    ts_value *r = ts_b_unary(b, TS_OP_LOG, bin(b, TS_OP_SUB, one, half[0]));
    r = ts_b_unary(b, TS_OP_SQRT, bin(b, TS_OP_MUL, ts_b_scalar(b, w, -2), r));
    ts_value *c = ts_b_unary(b, TS_OP_COS, bin(b, TS_OP_MUL, ts_b_scalar(b, w, 2 * 3.14159265358979323846), half[1]));
    double mean = onnx_attr_float(n, "mean", 0), scale = onnx_attr_float(n, "scale", 1);
    ts_value *z = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, bin(b, TS_OP_MUL, r, c), ts_b_scalar(b, w, scale)),
                      ts_b_scalar(b, w, mean));
    return z && dt != w ? ts_b_cast(b, z, dt) : z;
}

/* ---- attributes ------------------------------------------------------------------ */

/* The `dtype` attribute as a tessera dtype, or def when absent. */
static ts_status dtype_attr(onnx_node *n, ts_dtype def, ts_dtype *out)
{
    *out = def;
    if (!onnx_has_attr(n, "dtype")) return TS_OK;
    ts_err err = {0};
    if (onnx_dtype((int)onnx_attr_int(n, "dtype", 1), out, &err) != TS_OK) return onnx_unsupported(n, "dtype: %s", err.msg);
    return onnx_status(n);
}

static ts_status float_dtype(onnx_node *n, ts_dtype def, ts_dtype *out)
{
    TS_TRY(dtype_attr(n, def, out));
    if (!ts_dtype_is_float(*out)) return onnx_unsupported(n, "random values of dtype %s (floats only)", ts_dtype_name(*out));
    return TS_OK;
}

/* The `shape` attribute as dims. */
static ts_status shape_attr(onnx_node *n, int *rank, ts_dim *dims)
{
    const int64_t *v = NULL;
    int r = onnx_attr_ints(n, "shape", &v);
    if (r < 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute shape is required");
    if (r > TS_MAX_RANK) return onnx_unsupported(n, "rank %d (at most %d)", r, TS_MAX_RANK);
    for (int i = 0; i < r; i++) {
        if (v[i] < 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "shape[%d] is negative", i);
        dims[i] = ts_dim_const(v[i]);
    }
    *rank = r;
    return TS_OK;
}

/* ---- the operators ------------------------------------------------------------------ */

/* RandomUniform-1: shape from the attribute. */
static ts_status onnx_random_uniform(onnx_node *n)
{
    ts_dtype dt;
    ts_dim dims[TS_MAX_RANK];
    int rank;
    TS_TRY(float_dtype(n, TS_DTYPE_F32, &dt));
    TS_TRY(shape_attr(n, &rank, dims));
    n->out[0] = uniform_range(n, dt, rank, dims);
    return onnx_status(n);
}

/* RandomNormal-1. */
static ts_status onnx_random_normal(onnx_node *n)
{
    ts_dtype dt;
    ts_dim dims[TS_MAX_RANK];
    int rank;
    TS_TRY(float_dtype(n, TS_DTYPE_F32, &dt));
    TS_TRY(shape_attr(n, &rank, dims));
    n->out[0] = normal(n, dt, rank, dims);
    return onnx_status(n);
}

/* RandomUniformLike-1: the input's shape (symbolic dims too) and dtype. */
static ts_status onnx_random_uniform_like(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    ts_dtype dt;
    TS_TRY(float_dtype(n, x->type.dtype, &dt));
    n->out[0] = uniform_range(n, dt, x->type.rank, x->type.dims);
    return onnx_status(n);
}

/* RandomNormalLike-1. */
static ts_status onnx_random_normal_like(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    ts_dtype dt;
    TS_TRY(float_dtype(n, x->type.dtype, &dt));
    n->out[0] = normal(n, dt, x->type.rank, x->type.dims);
    return onnx_status(n);
}

/* Bernoulli-15: 1 where a uniform draw is below the probability. */
static ts_status onnx_bernoulli(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *p = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    if (!ts_dtype_is_float(p->type.dtype))
        return onnx_unsupported(n, "probabilities of dtype %s (floats only)", ts_dtype_name(p->type.dtype));
    ts_dtype dt, w = work_dtype(p->type.dtype);
    TS_TRY(dtype_attr(n, p->type.dtype, &dt));
    ts_value *u = uniform(n, w, p->type.rank, p->type.dims, seed_of(n));
    ts_value *pw = p->type.dtype == w ? p : ts_b_cast(b, p, w);
    n->out[0] = ts_b_cast(b, bin(b, TS_OP_LT, u, pw), dt);
    return onnx_status(n);
}

/* Multinomial-7: inverse-CDF sampling. With cdf the running sum of
 * exp(x - max) over the classes, sample s of row r is the number of classes
 * whose cdf is <= u * total (at most C - 1). */
static ts_status onnx_multinomial(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    ts_dtype dt, w = work_dtype(x->type.dtype);
    TS_TRY(dtype_attr(n, TS_DTYPE_I32, &dt));
    int64_t ns = onnx_attr_int(n, "sample_size", 1), one = 1, two = 2;
    if (x->type.rank != 2 || !ts_dtype_is_float(x->type.dtype))
        return onnx_unsupported(n, "input must be a float tensor [batch, classes]");
    if (dt != TS_DTYPE_I32 && dt != TS_DTYPE_I64) return onnx_unsupported(n, "dtype %s (i32 or i64)", ts_dtype_name(dt));
    ts_dim B = x->type.dims[0], C = x->type.dims[1];
    ts_value *xw = x->type.dtype == w ? x : ts_b_cast(b, x, w);
    ts_value *e = ts_b_unary(b, TS_OP_EXP, bin(b, TS_OP_SUB, xw, ts_b_reduce(b, TS_OP_REDUCE_MAX, xw, 1, &one, true)));
    ts_attr *a = ts_b_attrs(b, TS_OP_CUMULATIVE);
    if (a && (ts_attr_set_int(onnx_graph(n), TS_OP_CUMULATIVE, a, "axis", 1) != TS_OK ||
              ts_attr_set_enum(onnx_graph(n), TS_OP_CUMULATIVE, a, "kind", "sum") != TS_OK))
        return onnx_fail(n, TS_ERR_INTERNAL, "cumulative: could not set its attributes");
    ts_value *cdf = e ? ts_b_node(b, TS_OP_CUMULATIVE, 1, &e, a) : NULL;
    ts_value *total = ts_b_reduce(b, TS_OP_REDUCE_SUM, e, 1, &one, true);
    ts_dim ud[2] = {B, ts_dim_const(ns)}, cd[3] = {B, ts_dim_const(1), C}, td[3] = {B, ts_dim_const(ns), ts_dim_const(1)};
    ts_value *target = bin(b, TS_OP_MUL, uniform(n, w, 2, ud, seed_of(n)), total);
    ts_value *le = bin(b, TS_OP_LE, ts_b_reshape(b, cdf, 3, cd), ts_b_reshape(b, target, 3, td));
    ts_value *idx = ts_b_reduce(b, TS_OP_REDUCE_SUM, ts_b_cast(b, le, TS_DTYPE_I64), 1, &two, false);
    ts_value *last = bin(b, TS_OP_SUB, onnx_dim_scalar(n, C), ts_b_scalar(b, TS_DTYPE_I64, 1));
    n->out[0] = ts_b_cast(b, bin(b, TS_OP_MIN, idx, last), dt);
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_random[] = {
    {"Bernoulli", 15, INT_MAX, onnx_bernoulli},
    {"Multinomial", 7, INT_MAX, onnx_multinomial},
    {"RandomNormal", 1, INT_MAX, onnx_random_normal},
    {"RandomNormalLike", 1, INT_MAX, onnx_random_normal_like},
    {"RandomUniform", 1, INT_MAX, onnx_random_uniform},
    {"RandomUniformLike", 1, INT_MAX, onnx_random_uniform_like},
    {NULL, 0, 0, NULL},
};
