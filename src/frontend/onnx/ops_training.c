/* ops_training.c — domain ai.onnx.preview.training: the optimizers
 * (Adagrad, Adam, Momentum), assembled from elementwise primitives, and
 * Gradient, which reverse-mode autodiff (src/autodiff/) assembles.
 *
 * Each optimizer updates several tensors at once: after the scalars R (the
 * learning rate) and T (the update count) come the tensors to optimize, then
 * their gradients, then one or two state tensors each, grouped by kind
 * (X1, X2, G1, G2, H1, H2); the outputs are grouped the same way (X1_new,
 * X2_new, H1_new, H2_new). The scalar factors that depend on R and T are
 * computed in f64 and rounded once to each tensor's dtype; the tensor
 * arithmetic is in that dtype, as the reference does it. */
#include "autodiff/autodiff.h"
#include "frontend/onnx/onnx.h"

#include <string.h>

/* ---- helpers ------------------------------------------------------------------- */

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

static ts_value *num(onnx_node *n, ts_dtype dt, double v) { return ts_b_scalar(onnx_b(n), dt, v); }

/* c * x with c a constant (of x's dtype). */
static ts_value *scale(onnx_node *n, double c, ts_value *x)
{
    return x ? bin(n, TS_OP_MUL, num(n, x->type.dtype, c), x) : NULL;
}

/* A one-element input as a scalar of dtype `as`; `what` names it. */
static ts_value *scalar_input(onnx_node *n, int i, const char *what, bool is_float, ts_dtype as)
{
    ts_value *v = onnx_input(n, i);
    if (!v) return NULL;
    ts_dtype dt = v->type.dtype;
    if (is_float ? !ts_dtype_is_float(dt) : dt != TS_DTYPE_I64) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d (%s) is %s; it must be %s", i, what, ts_dtype_name(dt),
                  is_float ? "f32 or f64" : "i64");
        return NULL;
    }
    for (int k = 0; k < v->type.rank; k++)
        if (!ts_dim_is_const(v->type.dims[k]) || v->type.dims[k].c != 1) {
            onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d (%s) must be a scalar", i, what);
            return NULL;
        }
    ts_value *s = v->type.rank ? ts_b_reshape(onnx_b(n), v, 0, NULL) : v;
    return dt == as ? s : ts_b_cast(onnx_b(n), s, as);
}

/* What every optimizer reads: R and T as f64 scalars, T > 0, and how many
 * tensors it updates. */
typedef struct optim {
    ts_value *r, *t;
    ts_value *later;          /* T > 0: not the first update */
    int count;                /* tensors optimized */
} optim;

/* Check the arity: 2 + per*count inputs and outs*count outputs. */
static ts_status optim_read(onnx_node *n, int per, int outs, optim *o)
{
    int rest = n->n_in - 2;
    if (rest < per || rest % per != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "%d inputs: expected R, T and %d tensors per optimized tensor",
                         n->n_in, per);
    o->count = rest / per;
    if (n->n_out != outs * o->count)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "%d outputs for %d optimized tensors: expected %d", n->n_out,
                         o->count, outs * o->count);
    o->r = scalar_input(n, 0, "R", true, TS_DTYPE_F64);
    o->t = scalar_input(n, 1, "T", false, TS_DTYPE_F64);
    o->later = bin(n, TS_OP_LT, num(n, TS_DTYPE_F64, 0), o->t);
    return onnx_status(n);
}

/* Input `2 + kind*count + i`: a float tensor, of x's dtype unless it is x
 * itself (kind 0, x NULL). */
static ts_value *tensor(onnx_node *n, const optim *o, int kind, int i, const ts_value *x)
{
    int at = 2 + kind * o->count + i;
    ts_value *v = onnx_float_input(n, at);
    if (v && x && v->type.dtype != x->type.dtype) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d is %s but the tensor it belongs to (input %d) is %s", at,
                  ts_dtype_name(v->type.dtype), 2 + i, ts_dtype_name(x->type.dtype));
        return NULL;
    }
    return v;
}

/* Output `kind*count + i`. */
static void set(onnx_node *n, const optim *o, int kind, int i, ts_value *v) { onnx_set_out(n, kind * o->count + i, v); }

/* The f64 scalar s as x's dtype. */
static ts_value *like(onnx_node *n, ts_value *s, ts_value *x)
{
    return s && x && x->type.dtype != TS_DTYPE_F64 ? ts_b_cast(onnx_b(n), s, x->type.dtype) : s;
}

/* norm * X + G: the gradient of the L2 term 0.5 * norm * ||X||^2 added. */
static ts_value *regularized(onnx_node *n, double norm, ts_value *x, ts_value *g)
{
    return bin(n, TS_OP_ADD, scale(n, norm, x), g);
}

/* ---- Adagrad ----------------------------------------------------------------------------- */

/* Adagrad (1): r = R / (1 + T * decay_factor); G' = norm * X + G;
 * H_new = H + G'^2; X_new = X - r * G' / (sqrt(H_new) + epsilon). */
static ts_status onnx_adagrad(onnx_node *n)
{
    double norm = onnx_attr_float(n, "norm_coefficient", 0), decay = onnx_attr_float(n, "decay_factor", 0);
    double eps = onnx_attr_float(n, "epsilon", 1e-6);
    optim o;
    TS_TRY(onnx_status(n));
    TS_TRY(optim_read(n, 3, 2, &o));
    ts_value *den = bin(n, TS_OP_ADD, num(n, TS_DTYPE_F64, 1), scale(n, decay, o.t));
    ts_value *r = bin(n, TS_OP_DIV, o.r, den);
    for (int i = 0; i < o.count; i++) {
        ts_value *x = tensor(n, &o, 0, i, NULL);
        if (!x) return onnx_status(n);
        ts_value *g = tensor(n, &o, 1, i, x), *h = tensor(n, &o, 2, i, x);
        TS_TRY(onnx_status(n));
        ts_value *gr = regularized(n, norm, x, g);
        ts_value *h_new = bin(n, TS_OP_ADD, h, bin(n, TS_OP_MUL, gr, gr));
        ts_value *adapt = bin(n, TS_OP_ADD, ts_b_unary(onnx_b(n), TS_OP_SQRT, h_new), num(n, x->type.dtype, eps));
        ts_value *step = bin(n, TS_OP_DIV, bin(n, TS_OP_MUL, like(n, r, x), gr), adapt);
        set(n, &o, 0, i, bin(n, TS_OP_SUB, x, step));
        set(n, &o, 1, i, h_new);
    }
    return onnx_status(n);
}

/* ---- Adam ---------------------------------------------------------------------------------- */

/* R * sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R: the bias
 * correction of both moving averages, folded into the learning rate. */
static ts_value *adam_rate(onnx_node *n, const optim *o, double alpha, double beta)
{
    ts_value *one = num(n, TS_DTYPE_F64, 1);
    ts_value *bt = bin(n, TS_OP_POW, num(n, TS_DTYPE_F64, beta), o->t);
    ts_value *at = bin(n, TS_OP_POW, num(n, TS_DTYPE_F64, alpha), o->t);
    ts_value *num_ = bin(n, TS_OP_MUL, o->r, ts_b_unary(onnx_b(n), TS_OP_SQRT, bin(n, TS_OP_SUB, one, bt)));
    ts_value *corrected = bin(n, TS_OP_DIV, num_, bin(n, TS_OP_SUB, one, at));
    return ts_b_select(onnx_b(n), o->later, corrected, o->r);
}

/* Adam (1): G' = norm * X + G; V_new = alpha V + (1 - alpha) G';
 * H_new = beta H + (1 - beta) G'^2; X_new = X - R_adj * V_new /
 * (sqrt(H_new) + epsilon); X_final = (1 - norm_coefficient_post) X_new. */
static ts_status onnx_adam(onnx_node *n)
{
    double alpha = onnx_attr_float(n, "alpha", 0.9), beta = onnx_attr_float(n, "beta", 0.999);
    double eps = onnx_attr_float(n, "epsilon", 1e-6), norm = onnx_attr_float(n, "norm_coefficient", 0);
    double post = onnx_attr_float(n, "norm_coefficient_post", 0);
    optim o;
    TS_TRY(onnx_status(n));
    TS_TRY(optim_read(n, 4, 3, &o));
    ts_value *rate = adam_rate(n, &o, alpha, beta);
    for (int i = 0; i < o.count; i++) {
        ts_value *x = tensor(n, &o, 0, i, NULL);
        if (!x) return onnx_status(n);
        ts_dtype dt = x->type.dtype;
        ts_value *g = tensor(n, &o, 1, i, x), *v = tensor(n, &o, 2, i, x), *h = tensor(n, &o, 3, i, x);
        TS_TRY(onnx_status(n));
        ts_value *gr = regularized(n, norm, x, g);
        ts_value *v_new = bin(n, TS_OP_ADD, scale(n, alpha, v), scale(n, 1 - alpha, gr));
        ts_value *h_new = bin(n, TS_OP_ADD, scale(n, beta, h), scale(n, 1 - beta, bin(n, TS_OP_MUL, gr, gr)));
        ts_value *root = bin(n, TS_OP_ADD, ts_b_unary(onnx_b(n), TS_OP_SQRT, h_new), num(n, dt, eps));
        ts_value *x_new = bin(n, TS_OP_SUB, x, bin(n, TS_OP_MUL, like(n, rate, x), bin(n, TS_OP_DIV, v_new, root)));
        set(n, &o, 0, i, scale(n, 1 - post, x_new));
        set(n, &o, 1, i, v_new);
        set(n, &o, 2, i, h_new);
    }
    return onnx_status(n);
}

/* ---- Momentum ------------------------------------------------------------------------------- */

/* A required float attribute; a failure naming it when absent. */
static double required_float(onnx_node *n, const char *name)
{
    if (!onnx_has_attr(n, name)) onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' is required", name);
    return onnx_attr_float(n, name, 0);
}

/* Momentum (1): G' = norm * X + G; V_new = alpha V + beta' G' with
 * beta' = beta, or 1 on the first update (T = 0); X_new = X - R V_new
 * ("standard") or X - R (G' + alpha V_new) ("nesterov"). */
static ts_status onnx_momentum(onnx_node *n)
{
    double alpha = required_float(n, "alpha"), beta = required_float(n, "beta");
    double norm = required_float(n, "norm_coefficient");
    const char *mode = onnx_has_attr(n, "mode") ? onnx_attr_string(n, "mode", "") : NULL;
    TS_TRY(onnx_status(n));
    if (!mode) return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute 'mode' is required");
    bool nesterov = strcmp(mode, "nesterov") == 0;
    if (!nesterov && strcmp(mode, "standard") != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "mode '%s' (expected \"standard\" or \"nesterov\")", mode);
    optim o;
    TS_TRY(optim_read(n, 3, 2, &o));
    ts_value *b = ts_b_select(onnx_b(n), o.later, num(n, TS_DTYPE_F64, beta), num(n, TS_DTYPE_F64, 1));
    for (int i = 0; i < o.count; i++) {
        ts_value *x = tensor(n, &o, 0, i, NULL);
        if (!x) return onnx_status(n);
        ts_value *g = tensor(n, &o, 1, i, x), *v = tensor(n, &o, 2, i, x);
        TS_TRY(onnx_status(n));
        ts_value *gr = regularized(n, norm, x, g);
        ts_value *v_new = bin(n, TS_OP_ADD, scale(n, alpha, v), bin(n, TS_OP_MUL, like(n, b, x), gr));
        ts_value *dir = nesterov ? bin(n, TS_OP_ADD, gr, scale(n, alpha, v_new)) : v_new;
        set(n, &o, 0, i, bin(n, TS_OP_SUB, x, bin(n, TS_OP_MUL, like(n, o.r, x), dir)));
        set(n, &o, 1, i, v_new);
    }
    return onnx_status(n);
}

/* Gradient (1): the derivatives of the tensor named by y with respect to
 * the tensors named by xs, evaluated where the node's inputs say (values
 * for xs, then for zs, which are held fixed). When the inputs are the named
 * tensors themselves the graph's own values are differentiated, else y is
 * first recomputed on the inputs. A y of several elements is seeded with
 * ones: the gradient of its sum. */
static ts_status onnx_gradient(onnx_node *n)
{
    const char **xs = NULL, **zs = NULL;
    int nx = onnx_attr_strings(n, "xs", &xs), nz = onnx_attr_strings(n, "zs", &zs);
    const char *yname = onnx_attr_string(n, "y", NULL);
    TS_TRY(onnx_status(n));
    if (nx < 1 || !yname) return onnx_fail(n, TS_ERR_INVALID_MODEL, "needs the attributes xs and y");
    if (nz < 0) nz = 0;
    if (n->n_in != nx + nz || n->n_out != nx)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "has %d inputs and %d outputs; xs and zs name %d and %d", n->n_in,
                         n->n_out, nx + nz, nx);
    ts_builder *b = onnx_b(n);
    ts_value **from = ts_arena_alloc(onnx_graph(n)->arena, sizeof *from * (size_t)(2 * (nx + nz) + nx));
    if (!from) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    ts_value **to = from + nx + nz, **grads = to + nx + nz;
    for (int i = 0; i < nx + nz; i++) {
        from[i] = onnx_value_named(n, i < nx ? xs[i] : zs[i - nx]);
        to[i] = onnx_input(n, i);
        TS_TRY(onnx_status(n));
        if (!to[i] || !ts_type_eq(&from[i]->type, &to[i]->type))
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d does not have the type of '%s'", i,
                             i < nx ? xs[i] : zs[i - nx]);
        if (i < nx && !ts_dtype_is_float(to[i]->type.dtype))
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "'%s' is not a floating-point tensor", xs[i]);
    }
    ts_value *y = onnx_value_named(n, yname);
    TS_TRY(onnx_status(n));
    if (!ts_dtype_is_float(y->type.dtype))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "y '%s' is not a floating-point tensor", yname);
    y = ts_ad_substitute(b, y, nx + nz, from, to);
    ts_value *seed = y ? ts_b_full(b, y->type.dtype, 1.0, y->type.rank, y->type.dims) : NULL;
    TS_TRY(onnx_status(n));
    ts_ad_vjp_values(b, 1, &y, &seed, nx, to, grads);
    for (int i = 0; i < nx; i++) onnx_set_out(n, i, grads[i]);
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_training[] = {
    {"Adagrad", 1, INT_MAX, onnx_adagrad},
    {"Adam", 1, INT_MAX, onnx_adam},
    {"Gradient", 1, INT_MAX, onnx_gradient},
    {"Momentum", 1, INT_MAX, onnx_momentum},
    {NULL, 0, 0, NULL},
};
