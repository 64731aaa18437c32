/* ops_ml.c — operators of domain ai.onnx.ml on numeric tensors: Binarizer,
 * ArrayFeatureExtractor and LabelEncoder (numeric keys and values), from
 * comparisons, select and gather. TreeEnsemble is in ops_tree.c. String
 * tensors do not exist in tessera, so LabelEncoder with string keys or
 * values is refused, and LabelEncoder-1 (which always maps strings) has no
 * row. */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include "core/tensor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------- */

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

static ts_value *cast(onnx_node *n, ts_value *x, ts_dtype dt)
{
    return x && x->type.dtype != dt ? ts_b_cast(onnx_b(n), x, dt) : x;
}

/* ---- Binarizer ------------------------------------------------------------------------- */

/* Binarizer (1): 1 where x > threshold, else 0, in x's dtype. Integers are
 * compared in f64, as numpy compares an integer array with a float. */
static ts_status onnx_binarizer(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    double th = onnx_attr_float(n, "threshold", 0);
    TS_TRY(onnx_status(n));
    ts_dtype dt = x->type.dtype;
    if (dt != TS_DTYPE_F32 && dt != TS_DTYPE_F64 && dt != TS_DTYPE_I32 && dt != TS_DTYPE_I64)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "X is %s: Binarizer takes f32, f64, i32 or i64", ts_dtype_name(dt));
    ts_value *xc = ts_dtype_is_float(dt) ? x : cast(n, x, TS_DTYPE_F64);
    ts_value *gt = bin(n, TS_OP_LT, ts_b_scalar(onnx_b(n), xc->type.dtype, th), xc);
    return onnx_set_out(n, 0, cast(n, gt, dt));
}

/* ---- ArrayFeatureExtractor ---------------------------------------------------------------- */

/* ArrayFeatureExtractor (1): x[..., idx] with idx flattened; a 1-D x gives
 * [1, k], as onnxruntime and the reference do. Negative indices count from
 * the end (numpy's indexing); others out of range fail when run. */
static ts_status onnx_array_feature_extractor(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *y = onnx_input(n, 1);
    TS_TRY(onnx_status(n));
    if (y->type.dtype != TS_DTYPE_I64)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "Y is %s: the indices must be i64", ts_dtype_name(y->type.dtype));
    int r = x->type.rank;
    if (r < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "X is a scalar: it needs at least one axis");
    ts_value *idx = onnx_util_flatten(n, y);
    ts_value *size = onnx_util_dim_value(n, x->type.dims[r - 1]);
    ts_value *neg = bin(n, TS_OP_LT, idx, ts_b_scalar(onnx_b(n), TS_DTYPE_I64, 0));
    idx = ts_b_select(onnx_b(n), neg, bin(n, TS_OP_ADD, idx, size), idx);
    ts_value *z = onnx_util_gather(n, x, idx, r - 1);
    if (z && r == 1) {
        ts_dim d[2] = {ts_dim_const(1), z->type.dims[0]};
        z = ts_b_reshape(onnx_b(n), z, 2, d);
    }
    return onnx_set_out(n, 0, z);
}

/* ---- LabelEncoder ----------------------------------------------------------------------------- */

/* The keys or the values of a LabelEncoder: a constant vector. */
typedef struct side {
    ts_value *v;              /* [K] */
    bool nan;                 /* a float key is NaN (it matches NaN inputs) */
} side;

/* The `what` side ("keys" or "values"): exactly one of <what>_int64s,
 * <what>_floats, <what>_tensor (strings are refused). */
static ts_status read_side(onnx_node *n, const char *what, side *s)
{
    char ints[32], floats[32], strings[32], tensor[32];
    snprintf(ints, sizeof ints, "%s_int64s", what);
    snprintf(floats, sizeof floats, "%s_floats", what);
    snprintf(strings, sizeof strings, "%s_strings", what);
    snprintf(tensor, sizeof tensor, "%s_tensor", what);
    int given = onnx_has_attr(n, ints) + onnx_has_attr(n, floats) + onnx_has_attr(n, strings) +
                onnx_has_attr(n, tensor);
    if (given != 1)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "exactly one of the %s_* attributes must be set (%d are)", what,
                         given);
    if (onnx_has_attr(n, strings))
        return onnx_unsupported(n, "string %s: tessera has no string tensors (docs/onnx.md)", what);
    s->nan = false;
    if (onnx_has_attr(n, ints)) {
        const int64_t *v;
        int64_t k = onnx_attr_ints(n, ints, &v);
        TS_TRY(onnx_status(n));
        s->v = onnx_util_const(n, TS_DTYPE_I64, 1, &k, v);
        return onnx_status(n);
    }
    if (onnx_has_attr(n, floats)) {
        const float *v;
        int64_t k = onnx_attr_floats(n, floats, &v);
        TS_TRY(onnx_status(n));
        for (int64_t i = 0; i < k; i++) s->nan = s->nan || isnan(v[i]);
        s->v = onnx_util_const(n, TS_DTYPE_F32, 1, &k, v);
        return onnx_status(n);
    }
    ts_tensor *t = NULL;
    TS_TRY(onnx_attr_tensor(n, tensor, &t));
    int64_t k = t->numel;
    bool ok = t->rank == 1 && t->dtype != TS_DTYPE_BOOL && t->dtype != TS_DTYPE_F16 && t->dtype != TS_DTYPE_BF16;
    for (int64_t i = 0; ok && ts_dtype_is_float(t->dtype) && i < k; i++)
        s->nan = s->nan || isnan(ts_elem_get_f64(t->dtype, t->data, i));
    s->v = ok ? onnx_util_const(n, t->dtype, 1, &k, t->data) : NULL;
    ts_tensor_release(t);
    if (!ok) return onnx_fail(n, TS_ERR_INVALID_MODEL, "%s must be a 1-D tensor of integers, f32 or f64", tensor);
    return onnx_status(n);
}

/* The value for inputs no key matches, as a scalar of dtype dt:
 * default_tensor, or default_int64 / default_float, or the spec's -1 and
 * -0.0. */
static ts_value *default_value(onnx_node *n, ts_dtype dt)
{
    if (onnx_has_attr(n, "default_tensor")) {
        ts_tensor *t = NULL;
        if (onnx_attr_tensor(n, "default_tensor", &t) != TS_OK) return NULL;
        ts_value *v = NULL;
        if (t->numel != 1 || t->dtype != dt)
            onnx_fail(n, TS_ERR_INVALID_MODEL, "default_tensor must hold one %s", ts_dtype_name(dt));
        else v = onnx_util_const(n, dt, 0, NULL, t->data);
        ts_tensor_release(t);
        return v;
    }
    if (ts_dtype_is_float(dt)) return ts_b_scalar(onnx_b(n), dt, onnx_attr_float(n, "default_float", -0.0));
    int64_t d = onnx_attr_int(n, "default_int64", -1);
    return cast(n, onnx_util_const(n, TS_DTYPE_I64, 0, NULL, &d), dt);
}

/* LabelEncoder (2+): y = values[k] for the last key k equal to x (a NaN
 * key matches NaN), else the default: a comparison against every key,
 * argmax (last) over the matches, gather. */
static ts_status onnx_label_encoder(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    side keys, vals;
    TS_TRY(onnx_status(n));
    TS_TRY(read_side(n, "keys", &keys));
    TS_TRY(read_side(n, "values", &vals));
    if (keys.v->type.dims[0].c != vals.v->type.dims[0].c)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "%lld keys but %lld values", (long long)keys.v->type.dims[0].c,
                         (long long)vals.v->type.dims[0].c);
    if (x->type.dtype != keys.v->type.dtype)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "X is %s but the keys are %s", ts_dtype_name(x->type.dtype),
                         ts_dtype_name(keys.v->type.dtype));
    ts_value *dflt = default_value(n, vals.v->type.dtype);
    int r = x->type.rank;
    if (r + 1 > TS_MAX_RANK) return onnx_unsupported(n, "X of rank %d", r);
    TS_TRY(onnx_status(n));
    if (keys.v->type.dims[0].c == 0) return onnx_set_out(n, 0, ts_b_broadcast_to(onnx_b(n), dflt, r, x->type.dims));
    ts_value *xe = onnx_util_unsq_b(onnx_b(n), x, r);
    ts_value *hit = bin(n, TS_OP_EQ, xe, keys.v);   /* [..., K] */
    if (keys.nan)
        hit = bin(n, TS_OP_OR, hit, bin(n, TS_OP_AND, bin(n, TS_OP_NE, xe, xe), bin(n, TS_OP_NE, keys.v, keys.v)));
    ts_value *hit8 = cast(n, hit, TS_DTYPE_I8);
    int64_t last = r;
    ts_value *any = ts_b_reduce(onnx_b(n), TS_OP_REDUCE_MAX, hit8, 1, &last, false);
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_ARGMAX);
    if (!a || !onnx_util_set_ok(n, ts_attr_set_int(onnx_graph(n), TS_OP_ARGMAX, a, "axis", r)) ||
        !onnx_util_set_ok(n, ts_attr_set_int(onnx_graph(n), TS_OP_ARGMAX, a, "select_last", 1)))
        return onnx_status(n);
    ts_value *k = ts_b_node(onnx_b(n), TS_OP_ARGMAX, 1, &hit8, a);
    ts_value *found = bin(n, TS_OP_NE, any, ts_b_scalar(onnx_b(n), TS_DTYPE_I8, 0));
    return onnx_set_out(n, 0, ts_b_select(onnx_b(n), found, onnx_util_gather(n, vals.v, k, 0), dflt));
}

const onnx_op_entry onnx_ops_ml[] = {
    {"ArrayFeatureExtractor", 1, INT_MAX, onnx_array_feature_extractor},
    {"Binarizer", 1, INT_MAX, onnx_binarizer},
    {"LabelEncoder", 2, INT_MAX, onnx_label_encoder},
    {NULL, 0, 0, NULL},
};
