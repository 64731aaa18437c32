/* ops_rnn.c — ONNX recurrent operators (RNN, GRU, LSTM), assembled from
 * primitives.
 *
 * The input projection X*W^T (plus the biases that sit outside the
 * recurrence) is one dot over the whole sequence; each step then adds
 * h*R^T and applies the gates. With a constant sequence length the steps
 * are unrolled (one dot per step). With a symbolic one they are a `while`
 * whose state carries t, the length, h (and c), the output buffer Y and,
 * since regions see only their parameters (D6), every weight a step reads.
 *
 * sequence_lens: a batch entry whose sequence is shorter keeps its state
 * once past its end (select) and gets zero Y rows there, as onnxruntime
 * does. A reverse direction thereby starts at the entry's last valid step:
 * the steps past the end leave the initial state alone.
 */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "onnx.pb-c.h"

enum { K_RNN, K_GRU, K_LSTM };

/* Activation functions an ONNX recurrence may name. */
enum { A_RELU, A_TANH, A_SIGMOID, A_AFFINE, A_LEAKY, A_THRESH, A_STANH, A_HSIG, A_ELU, A_SOFTSIGN, A_SOFTPLUS };

typedef struct act {
    int kind;
    double alpha, beta;
} act;

static const struct {
    const char *name;
    int kind;
    bool alpha, beta;          /* takes an alpha / a beta from the lists */
    double def_alpha, def_beta;
} act_names[] = {
    {"Relu", A_RELU, false, false, 0, 0},
    {"Tanh", A_TANH, false, false, 0, 0},
    {"Sigmoid", A_SIGMOID, false, false, 0, 0},
    {"Affine", A_AFFINE, true, true, 1.0, 0.0},
    {"LeakyRelu", A_LEAKY, true, false, 0.01, 0},
    {"ThresholdedRelu", A_THRESH, true, false, 1.0, 0},
    {"ScaledTanh", A_STANH, true, true, 1.0, 1.0},
    {"HardSigmoid", A_HSIG, true, true, 0.2, 0.5},
    {"Elu", A_ELU, true, false, 1.0, 0},
    {"Softsign", A_SOFTSIGN, false, false, 0, 0},
    {"Softplus", A_SOFTPLUS, false, false, 0, 0},
};

/* The node's attributes, checked. Direction d of `dirs` runs backwards
 * when rev[d]. */
typedef struct spec {
    int kind, gates, n_act, dirs, layout;
    bool rev[2];
    int64_t hidden;
    bool has_clip, lbr, couple;
    double clip;
    ts_dtype dt;
    act acts[2][3];
} spec;

/* What a step reads besides the state, as values of the block being built
 * (the graph's, or the loop body's). NULL when absent. */
enum {
    W_R,      /* [G*H, H] recurrence weights (GRU: the z and r rows only) */
    W_RH,     /* GRU: [H, H] recurrence weights of the h gate */
    W_RBH,    /* GRU with linear_before_reset: [H] recurrence bias of h */
    W_P,      /* LSTM: [3H] peepholes i, o, f */
    W_LENS,   /* [B] i64 sequence lengths */
    W_COUNT
};

typedef struct weights {
    ts_value *v[W_COUNT];
} weights;

/* ---- small helpers ------------------------------------------------------------ */

static ts_value *sc(ts_builder *b, ts_dtype dt, double v) { return ts_b_scalar(b, dt, v); }

static ts_value *bin(ts_builder *b, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(b, op, x, y); }

/* x[lo:hi] along axis. */
static ts_value *cut(ts_builder *b, ts_value *x, int axis, int64_t lo, int64_t hi)
{
    if (!x) return NULL;
    ts_dim st[TS_MAX_RANK], li[TS_MAX_RANK];
    for (int i = 0; i < x->type.rank; i++) {
        st[i] = ts_dim_const(0);
        li[i] = x->type.dims[i];
    }
    st[axis] = ts_dim_const(lo);
    li[axis] = ts_dim_const(hi);
    return ts_b_slice(b, x, st, li, NULL);
}

/* x[i], the leading axis dropped. */
static ts_value *row(ts_builder *b, ts_value *x, int64_t i)
{
    ts_value *r = cut(b, x, 0, i, i + 1);
    return r ? ts_b_reshape(b, r, r->type.rank - 1, r->type.dims + 1) : NULL;
}

/* x with a leading axis of size 1. */
static ts_value *lift(ts_builder *b, ts_value *x)
{
    if (!x) return NULL;
    ts_dim d[TS_MAX_RANK];
    d[0] = ts_dim_const(1);
    memcpy(d + 1, x->type.dims, sizeof(ts_dim) * (size_t)x->type.rank);
    return ts_b_reshape(b, x, x->type.rank + 1, d);
}

static ts_value *perm3(ts_builder *b, ts_value *x, int64_t p0, int64_t p1, int64_t p2)
{
    int64_t p[3] = {p0, p1, p2};
    return x ? ts_b_transpose(b, x, p) : NULL;
}

/* x *R^T for x [B, H] and R [G, H]: [B, G]. */
static ts_value *by_rt(ts_builder *b, ts_value *x, ts_value *r)
{
    int64_t lc = 1, rc = 1;
    return ts_b_dot(b, x, r, 0, NULL, NULL, 1, &lc, &rc);
}

/* The strings of a STRINGS attribute (count, or -1 when absent). onnx.h has
 * no getter for string lists; this reads the node proto directly. */
static int attr_strings(onnx_node *n, const char *name, const ProtobufCBinaryData **v)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, name);
    if (!a) return -1;
    *v = a->strings;
    return (int)a->n_strings;
}

/* ---- activations --------------------------------------------------------------- */

static ts_value *sigmoid(ts_builder *b, ts_dtype dt, ts_value *x)
{
    ts_value *e = ts_b_unary(b, TS_OP_EXP, ts_b_unary(b, TS_OP_NEG, x));
    return bin(b, TS_OP_DIV, sc(b, dt, 1), bin(b, TS_OP_ADD, sc(b, dt, 1), e));
}

/* f(x) for activation a, in b's block. */
static ts_value *activate(ts_builder *b, ts_dtype dt, const act *a, ts_value *x)
{
    ts_value *zero = sc(b, dt, 0), *one = sc(b, dt, 1), *al = sc(b, dt, a->alpha), *be = sc(b, dt, a->beta);
    switch (a->kind) {
    case A_RELU: return bin(b, TS_OP_MAX, x, zero);
    case A_TANH: return ts_b_unary(b, TS_OP_TANH, x);
    case A_SIGMOID: return sigmoid(b, dt, x);
    case A_AFFINE: return bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, al, x), be);
    case A_LEAKY: return ts_b_select(b, bin(b, TS_OP_LE, zero, x), x, bin(b, TS_OP_MUL, al, x));
    case A_THRESH: return ts_b_select(b, bin(b, TS_OP_LT, al, x), x, zero);
    case A_STANH: return bin(b, TS_OP_MUL, al, ts_b_unary(b, TS_OP_TANH, bin(b, TS_OP_MUL, be, x)));
    case A_HSIG:
        return bin(b, TS_OP_MIN, bin(b, TS_OP_MAX, bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, al, x), be), zero), one);
    case A_ELU: {
        ts_value *em1 = bin(b, TS_OP_SUB, ts_b_unary(b, TS_OP_EXP, x), one);
        return ts_b_select(b, bin(b, TS_OP_LE, zero, x), x, bin(b, TS_OP_MUL, al, em1));
    }
    case A_SOFTSIGN: return bin(b, TS_OP_DIV, x, bin(b, TS_OP_ADD, one, ts_b_unary(b, TS_OP_ABS, x)));
    default: return ts_b_unary(b, TS_OP_LOG, bin(b, TS_OP_ADD, one, ts_b_unary(b, TS_OP_EXP, x)));
    }
}

/* f(clip(x)): the cell clip bounds every activation's input. */
static ts_value *gate(ts_builder *b, const spec *s, const act *a, ts_value *x)
{
    if (s->has_clip)
        x = bin(b, TS_OP_MIN, bin(b, TS_OP_MAX, x, sc(b, s->dt, -s->clip)), sc(b, s->dt, s->clip));
    return activate(b, s->dt, a, x);
}

/* ---- attributes -------------------------------------------------------------------- */

static const int default_acts[3][3] = {
    [K_RNN] = {A_TANH},
    [K_GRU] = {A_SIGMOID, A_TANH},
    [K_LSTM] = {A_SIGMOID, A_TANH, A_TANH},
};

/* Activation k of the `activations` list, its alpha/beta taken in list
 * order from the activations that use them (onnxruntime's reading). */
static ts_status parse_acts(onnx_node *n, spec *s)
{
    const ProtobufCBinaryData *names = NULL;
    int count = attr_strings(n, "activations", &names);
    const float *al = NULL, *be = NULL;
    int nal = onnx_attr_floats(n, "activation_alpha", &al), nbe = onnx_attr_floats(n, "activation_beta", &be);
    int ia = 0, ib = 0;
    if (count >= 0 && count != s->n_act && count != s->n_act * s->dirs)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "activations lists %d functions; expected %d", count,
                         s->n_act * s->dirs);
    for (int d = 0; d < s->dirs; d++)
        for (int k = 0; k < s->n_act; k++) {
            act *a = &s->acts[d][k];
            *a = (act){default_acts[s->kind][k], 0, 0};
            if (count <= 0) continue;
            const ProtobufCBinaryData *nm = &names[count == s->n_act ? k : d * s->n_act + k];
            size_t i = 0, na = sizeof act_names / sizeof act_names[0];
            while (i < na && !(strlen(act_names[i].name) == nm->len &&
                               strncasecmp(act_names[i].name, (const char *)nm->data, nm->len) == 0))
                i++;
            if (i == na)
                return onnx_unsupported(n, "activation '%.*s' is not one ONNX defines for recurrences", (int)nm->len,
                                        (const char *)nm->data);
            a->kind = act_names[i].kind;
            a->alpha = act_names[i].alpha && ia < nal ? al[ia++] : act_names[i].def_alpha;
            a->beta = act_names[i].beta && ib < nbe ? be[ib++] : act_names[i].def_beta;
        }
    return TS_OK;
}

static ts_status parse_spec(onnx_node *n, int kind, spec *s)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->gates = kind == K_LSTM ? 4 : kind == K_GRU ? 3 : 1;
    s->n_act = kind == K_LSTM ? 3 : kind == K_GRU ? 2 : 1;
    const char *dir = onnx_attr_string(n, "direction", "forward");
    s->dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    s->rev[0] = strcmp(dir, "reverse") == 0;
    s->rev[1] = true;
    if (s->dirs == 1 && !s->rev[0] && strcmp(dir, "forward") != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "direction '%s' is not forward, reverse or bidirectional", dir);
    s->layout = (int)onnx_attr_int(n, "layout", 0);
    if (s->layout != 0 && s->layout != 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "layout must be 0 or 1");
    s->hidden = onnx_attr_int(n, "hidden_size", -1);
    s->has_clip = onnx_has_attr(n, "clip");
    s->clip = onnx_attr_float(n, "clip", 0);
    s->lbr = onnx_attr_int(n, "linear_before_reset", 0) != 0;
    s->couple = onnx_attr_int(n, "input_forget", 0) != 0;
    TS_TRY(onnx_status(n));
    return parse_acts(n, s);
}

/* ---- one step ------------------------------------------------------------------------- */

/* h' = f(xw + h R^T) */
static ts_value *rnn_cell(ts_builder *b, const spec *s, int d, const weights *w, ts_value *xw, ts_value *h)
{
    return gate(b, s, &s->acts[d][0], bin(b, TS_OP_ADD, xw, by_rt(b, h, w->v[W_R])));
}

/* z and r from the first 2H columns; the h gate resets h before (lbr=0) or
 * after (lbr=1) its recurrence dot. */
static ts_value *gru_cell(ts_builder *b, const spec *s, int d, const weights *w, ts_value *xw, ts_value *h)
{
    int64_t H = s->hidden;
    ts_value *zr = bin(b, TS_OP_ADD, cut(b, xw, 1, 0, 2 * H), by_rt(b, h, w->v[W_R]));
    ts_value *z = gate(b, s, &s->acts[d][0], cut(b, zr, 1, 0, H));
    ts_value *r = gate(b, s, &s->acts[d][0], cut(b, zr, 1, H, 2 * H));
    ts_value *rec = s->lbr ? bin(b, TS_OP_MUL, r, bin(b, TS_OP_ADD, by_rt(b, h, w->v[W_RH]), w->v[W_RBH]))
                           : by_rt(b, bin(b, TS_OP_MUL, r, h), w->v[W_RH]);
    ts_value *hh = gate(b, s, &s->acts[d][1], bin(b, TS_OP_ADD, cut(b, xw, 1, 2 * H, 3 * H), rec));
    ts_value *keep = bin(b, TS_OP_MUL, z, h);
    return bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, bin(b, TS_OP_SUB, sc(b, s->dt, 1), z), hh), keep);
}

/* Gates i, o, f, c; peepholes read the old c for i and f, the new c for o. */
static ts_value *lstm_cell(ts_builder *b, const spec *s, int d, const weights *w, ts_value *xw, ts_value *h,
                           ts_value **c)
{
    int64_t H = s->hidden;
    ts_value *g = bin(b, TS_OP_ADD, xw, by_rt(b, h, w->v[W_R])), *p = w->v[W_P];
    ts_value *gi = cut(b, g, 1, 0, H), *go = cut(b, g, 1, H, 2 * H);
    ts_value *gf = cut(b, g, 1, 2 * H, 3 * H), *gc = cut(b, g, 1, 3 * H, 4 * H);
    if (p) {
        gi = bin(b, TS_OP_ADD, gi, bin(b, TS_OP_MUL, cut(b, p, 0, 0, H), *c));
        gf = bin(b, TS_OP_ADD, gf, bin(b, TS_OP_MUL, cut(b, p, 0, 2 * H, 3 * H), *c));
    }
    ts_value *i = gate(b, s, &s->acts[d][0], gi);
    ts_value *f = s->couple ? bin(b, TS_OP_SUB, sc(b, s->dt, 1), i) : gate(b, s, &s->acts[d][0], gf);
    ts_value *cc = gate(b, s, &s->acts[d][1], gc);
    *c = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, f, *c), bin(b, TS_OP_MUL, i, cc));
    if (p) go = bin(b, TS_OP_ADD, go, bin(b, TS_OP_MUL, cut(b, p, 0, H, 2 * H), *c));
    ts_value *o = gate(b, s, &s->acts[d][0], go);
    return bin(b, TS_OP_MUL, o, activate(b, s->dt, &s->acts[d][2], *c));
}

/* One step at time index t (an i64 scalar of b's block) from the step's
 * input projection xw [B, G*H]: updates *h (and *c), and gives the output
 * row *y [B, H]. */
static void step(ts_builder *b, const spec *s, int d, const weights *w, ts_value *t, ts_value *xw, ts_value **h,
                 ts_value **c, ts_value **y)
{
    ts_value *c0 = c ? *c : NULL, *c1 = c0;
    ts_value *h1 = s->kind == K_RNN   ? rnn_cell(b, s, d, w, xw, *h)
                   : s->kind == K_GRU ? gru_cell(b, s, d, w, xw, *h)
                                      : lstm_cell(b, s, d, w, xw, *h, &c1);
    *y = h1;
    if (w->v[W_LENS] && h1) {
        ts_value *live = bin(b, TS_OP_LT, t, w->v[W_LENS]);
        ts_dim bd[2] = {h1->type.dims[0], ts_dim_const(1)};
        live = ts_b_reshape(b, live, 2, bd);
        *y = ts_b_select(b, live, h1, sc(b, s->dt, 0));
        h1 = ts_b_select(b, live, h1, *h);
        if (c) c1 = ts_b_select(b, live, c1, c0);
    }
    *h = h1;
    if (c) *c = c1;
}

/* ---- the recurrence ------------------------------------------------------------------- */

/* Unrolled over the constant length S: *Y is [S, B, H]. */
static ts_status unrolled(onnx_node *n, const spec *s, int d, const weights *w, ts_value *xw, int64_t S,
                          ts_value **h, ts_value **c, ts_value **Y)
{
    ts_builder *b = onnx_b(n);
    ts_value **ys = ts_arena_array(onnx_graph(n)->arena, (size_t)S, sizeof *ys);
    if (!ys) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int64_t k = 0; k < S; k++) {
        int64_t t = s->rev[d] ? S - 1 - k : k;
        ts_value *y = NULL;
        step(b, s, d, w, ts_b_scalar(b, TS_DTYPE_I64, (double)t), row(b, xw, t), h, c, &y);
        ys[t] = lift(b, y);
        TS_TRY(onnx_status(n));
    }
    *Y = ts_b_concat(b, (int)S, ys, 0);
    return onnx_status(n);
}


/* The loop state: t, length, h, [c], Y, xw, then the weights present. */
enum { L_T, L_N, L_H, L_MAX = 6 + W_COUNT };

static ts_status loop_cond(onnx_node *n, int ns, ts_value *const *st, ts_block **cond)
{
    ts_value *p[L_MAX];
    TS_TRY(onnx_util_region(n, ns, st, cond, p));
    ts_builder *cb = ts_builder_new(onnx_graph(n), *cond);
    if (!cb) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    ts_value *go = ts_b_binary(cb, TS_OP_LT, p[L_T], p[L_N]);
    ts_b_return(cb, 1, &go);
    return onnx_util_close_region(n, cb);
}

/* x[start : start + 1] along axis 0, start an i64[rank] vector. */
static ts_value *dyn_row(ts_builder *b, ts_value *x, ts_value *start)
{
    if (!x || !start) return NULL;
    ts_dim sz[TS_MAX_RANK];
    memcpy(sz, x->type.dims, sizeof(ts_dim) * (size_t)x->type.rank);
    sz[0] = ts_dim_const(1);
    ts_attr *a = ts_b_attrs(b, TS_OP_DYNAMIC_SLICE);
    if (!a) return NULL;
    ts_status st = ts_attr_set_dims(ts_builder_graph(b), TS_OP_DYNAMIC_SLICE, a, "sizes", x->type.rank, sz);
    if (st != TS_OK) {
        ts_builder_fail(b, st, "dynamic_slice: could not set sizes");
        return NULL;
    }
    return ts_b_node(b, TS_OP_DYNAMIC_SLICE, 2, (ts_value *[]){x, start}, a);
}

/* The body: the time index t (length-1-t backwards) picks x_t and the Y
 * row to write. */
static ts_status loop_body(onnx_node *n, const spec *s, int d, const weights *w0, int ns, ts_value *const *st,
                           ts_block **body)
{
    ts_value *p[L_MAX], *r[L_MAX];
    TS_TRY(onnx_util_region(n, ns, st, body, p));
    ts_builder *b = ts_builder_new(onnx_graph(n), *body);
    if (!b) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    if (n->name && n->name[0]) ts_builder_set_origin(b, n->name);
    bool lstm = s->kind == K_LSTM;
    int iy = L_H + 1 + lstm, k = iy + 2;
    weights w = {{NULL}};
    for (int i = 0; i < W_COUNT; i++)
        if (w0->v[i]) w.v[i] = p[k++];
    memcpy(r, p, sizeof(ts_value *) * (size_t)ns);
    ts_value *one = ts_b_scalar(b, TS_DTYPE_I64, 1), *t = p[L_T];
    if (s->rev[d]) t = bin(b, TS_OP_SUB, bin(b, TS_OP_SUB, p[L_N], one), t);
    ts_dim d1 = ts_dim_const(1), d2 = ts_dim_const(2);
    ts_value *start = ts_b_concat(b, 2, (ts_value *[]){ts_b_reshape(b, t, 1, &d1), ts_b_full(b, TS_DTYPE_I64, 0, 1, &d2)}, 0);
    ts_value *xt = dyn_row(b, p[iy + 1], start);
    xt = xt ? ts_b_reshape(b, xt, 2, xt->type.dims + 1) : NULL;
    ts_value *h = p[L_H], *c = lstm ? p[L_H + 1] : NULL, *y = NULL;
    if (xt) step(b, s, d, &w, t, xt, &h, lstm ? &c : NULL, &y);
    r[L_T] = bin(b, TS_OP_ADD, p[L_T], one);
    r[L_H] = h;
    if (lstm) r[L_H + 1] = c;
    ts_value *yrow = lift(b, y);
    r[iy] = yrow ? ts_b_node(b, TS_OP_DYNAMIC_UPDATE_SLICE, 3, (ts_value *[]){p[iy], yrow, start}, NULL) : NULL;
    if (ts_builder_status(b, NULL) == TS_OK) ts_b_return(b, ns, r);
    return onnx_util_close_region(n, b);
}

/* The recurrence as a while loop over the symbolic length S: *Y is [S, B, H]. */
static ts_status looped(onnx_node *n, const spec *s, int d, const weights *w, ts_value *xw, ts_dim S,
                        ts_value **h, ts_value **c, ts_value **Y)
{
    ts_builder *b = onnx_b(n);
    ts_value *st[L_MAX], *out[L_MAX];
    int ns = 0, nout = 0;
    st[ns++] = ts_b_scalar(b, TS_DTYPE_I64, 0);
    st[ns++] = onnx_dim_scalar(n, S);
    st[ns++] = *h;
    if (c) st[ns++] = *c;
    ts_dim yd[3] = {S, (*h)->type.dims[0], (*h)->type.dims[1]};
    st[ns++] = ts_b_full(b, s->dt, 0, 3, yd);
    st[ns++] = xw;
    for (int i = 0; i < W_COUNT; i++)
        if (w->v[i]) st[ns++] = w->v[i];
    TS_TRY(onnx_status(n));
    ts_block *rg[2] = {NULL, NULL};
    TS_TRY(loop_cond(n, ns, st, &rg[0]));
    TS_TRY(loop_body(n, s, d, w, ns, st, &rg[1]));
    TS_TRY(ts_b_op(b, TS_OP_WHILE, ns, st, NULL, 2, rg, L_MAX, out, &nout));
    *h = out[L_H];
    if (c) *c = out[L_H + 1];
    *Y = out[L_H + 1 + (c != NULL)];
    return TS_OK;
}

/* Constant lengths up to this are unrolled (each step folds and fuses
 * with its neighbours); longer ones, like symbolic ones, loop. */
#define UNROLL_MAX 128

/* Direction d: the recurrence from *h (and *c) over xw [S, B, G*H]. */
static ts_status recur(onnx_node *n, const spec *s, int d, const weights *w, ts_value *xw, ts_value **h,
                       ts_value **c, ts_value **Y)
{
    ts_dim S = xw->type.dims[0];
    if (!ts_dim_is_const(S) || S.c > UNROLL_MAX) return looped(n, s, d, w, xw, S, h, c, Y);
    if (S.c == 0) return onnx_unsupported(n, "an empty sequence (seq_length 0)");
    return unrolled(n, s, d, w, xw, S.c, h, c, Y);
}

/* ---- the operators ---------------------------------------------------------------------- */

/* The node's inputs, in layout 0 (X [S, B, I], initial states [D, B, H]). */
typedef struct ins {
    ts_value *x, *w, *r, *b, *lens, *h0, *c0, *p;
} ins;

/* sequence_lens as i64, or NULL when it is a constant equal to S everywhere. */
static ts_value *seq_lens(onnx_node *n, ts_value *x)
{
    if (!onnx_has_input(n, 4)) return NULL;
    ts_value *l = onnx_input(n, 4);
    const ts_tensor *t = l ? onnx_const(n, l) : NULL;
    ts_dim S = x->type.dims[0];
    if (t && ts_dim_is_const(S)) {
        int64_t i = 0;
        while (i < t->numel && ts_elem_get_i64(t->dtype, t->data, i) == S.c) i++;
        if (i == t->numel) return NULL;
    }
    return l ? ts_b_cast(onnx_b(n), l, TS_DTYPE_I64) : NULL;
}

static ts_value *opt_input(onnx_node *n, int i) { return onnx_has_input(n, i) ? onnx_input(n, i) : NULL; }

/* W [D, G*H, I] and R [D, G*H, H] fix hidden_size when the attribute is absent. */
static ts_status check_weights(onnx_node *n, spec *s, const ins *in)
{
    const ts_type *w = &in->w->type, *r = &in->r->type;
    if (w->rank != 3 || r->rank != 3)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "W and R must have rank 3 (got %d and %d)", w->rank, r->rank);
    if (s->hidden < 0 && ts_dim_is_const(r->dims[2])) s->hidden = r->dims[2].c;
    ts_dim gh = ts_dim_const(s->gates * s->hidden), dirs = ts_dim_const(s->dirs);
    if (s->hidden <= 0 || !ts_dim_eq(w->dims[1], gh) || !ts_dim_eq(r->dims[1], gh) ||
        !ts_dim_eq(r->dims[2], ts_dim_const(s->hidden)) || !ts_dim_eq(w->dims[0], dirs) || !ts_dim_eq(r->dims[0], dirs))
        return onnx_fail(n, TS_ERR_SHAPE, "W, R do not fit hidden_size %lld, %d gates, %d directions",
                         (long long)s->hidden, s->gates, s->dirs);
    return TS_OK;
}

static ts_status get_inputs(onnx_node *n, spec *s, ins *in)
{
    ts_builder *b = onnx_b(n);
    memset(in, 0, sizeof *in);
    in->x = onnx_input(n, 0);
    in->w = onnx_input(n, 1);
    in->r = onnx_input(n, 2);
    TS_TRY(onnx_status(n));
    s->dt = in->x->type.dtype;
    if (!ts_dtype_is_float(s->dt)) return onnx_unsupported(n, "X of dtype %s (a float type is needed)", ts_dtype_name(s->dt));
    if (in->x->type.rank != 3) return onnx_fail(n, TS_ERR_SHAPE, "X must have rank 3");
    TS_TRY(check_weights(n, s, in));
    in->b = opt_input(n, 3);
    in->h0 = opt_input(n, 5);
    in->c0 = s->kind == K_LSTM ? opt_input(n, 6) : NULL;
    in->p = s->kind == K_LSTM ? opt_input(n, 7) : NULL;
    if (s->layout == 1) {
        in->x = perm3(b, in->x, 1, 0, 2);
        in->h0 = perm3(b, in->h0, 1, 0, 2);
        in->c0 = perm3(b, in->c0, 1, 0, 2);
    }
    TS_TRY(onnx_status(n));
    in->lens = seq_lens(n, in->x);
    return onnx_status(n);
}

/* The biases outside the recurrence go into xw; GRU with
 * linear_before_reset keeps Rb_h for inside it. */
static ts_value *add_bias(ts_builder *b, const spec *s, const ins *in, int d, ts_value *xw, weights *w)
{
    int64_t H = s->hidden, GH = s->gates * H;
    bool keep = s->kind == K_GRU && s->lbr;
    if (!in->b) {
        if (keep) w->v[W_RBH] = ts_b_full(b, s->dt, 0, 1, (ts_dim[]){ts_dim_const(H)});
        return xw;
    }
    ts_value *bd = row(b, in->b, d), *wb = cut(b, bd, 0, 0, GH), *rb = cut(b, bd, 0, GH, 2 * GH);
    if (keep) {
        w->v[W_RBH] = cut(b, rb, 0, 2 * H, 3 * H);
        ts_value *zr[2] = {cut(b, rb, 0, 0, 2 * H), ts_b_full(b, s->dt, 0, 1, (ts_dim[]){ts_dim_const(H)})};
        rb = ts_b_concat(b, 2, zr, 0);
    }
    return bin(b, TS_OP_ADD, xw, bin(b, TS_OP_ADD, wb, rb));
}

/* Direction d from the node's inputs: final h (and c) and Y [S, B, H]. */
static ts_status direction(onnx_node *n, const spec *s, const ins *in, int d, ts_value **h, ts_value **c,
                           ts_value **Y)
{
    ts_builder *b = onnx_b(n);
    int64_t H = s->hidden, lc = 2, rc = 1;
    weights w = {{NULL}};
    ts_value *xw = ts_b_dot(b, in->x, row(b, in->w, d), 0, NULL, NULL, 1, &lc, &rc);
    xw = add_bias(b, s, in, d, xw, &w);
    ts_value *rd = row(b, in->r, d);
    w.v[W_R] = s->kind == K_GRU ? cut(b, rd, 0, 0, 2 * H) : rd;
    w.v[W_RH] = s->kind == K_GRU ? cut(b, rd, 0, 2 * H, 3 * H) : NULL;
    w.v[W_P] = in->p ? row(b, in->p, d) : NULL;
    w.v[W_LENS] = in->lens;
    ts_dim bh[2] = {in->x->type.dims[1], ts_dim_const(H)};
    *h = in->h0 ? row(b, in->h0, d) : ts_b_full(b, s->dt, 0, 2, bh);
    if (c) *c = in->c0 ? row(b, in->c0, d) : ts_b_full(b, s->dt, 0, 2, bh);
    TS_TRY(onnx_status(n));
    return recur(n, s, d, &w, xw, h, c, Y);
}

/* Y [S, D, B, H] (layout 1: [B, S, D, H]), Y_h and Y_c [D, B, H] (layout 1: [B, D, H]). */
static ts_status outputs(onnx_node *n, const spec *s, ts_value **hs, ts_value **cs, ts_value **ys)
{
    ts_builder *b = onnx_b(n);
    ts_value *yd[2], *hd[2], *cd[2] = {NULL, NULL};
    for (int d = 0; d < s->dirs; d++) {
        const ts_dim *t = ys[d]->type.dims;
        ts_dim dims[4] = {t[0], ts_dim_const(1), t[1], t[2]};
        yd[d] = ts_b_reshape(b, ys[d], 4, dims);
        hd[d] = lift(b, hs[d]);
        if (cs[d]) cd[d] = lift(b, cs[d]);
    }
    ts_value *y = ts_b_concat(b, s->dirs, yd, 1), *yh = ts_b_concat(b, s->dirs, hd, 0);
    ts_value *yc = cd[0] ? ts_b_concat(b, s->dirs, cd, 0) : NULL;
    if (s->layout == 1) {
        y = y ? ts_b_transpose(b, y, (int64_t[]){2, 0, 1, 3}) : NULL;
        yh = perm3(b, yh, 1, 0, 2);
        yc = perm3(b, yc, 1, 0, 2);
    }
    ts_value *res[3] = {y, yh, yc};
    for (int k = 0; k < n->n_out && k < 3; k++) n->out[k] = res[k];
    return onnx_status(n);
}

static ts_status recurrence(onnx_node *n, int kind)
{
    spec s;
    ins in;
    TS_TRY(parse_spec(n, kind, &s));
    TS_TRY(get_inputs(n, &s, &in));
    ts_value *hs[2] = {NULL, NULL}, *cs[2] = {NULL, NULL}, *ys[2] = {NULL, NULL};
    for (int d = 0; d < s.dirs; d++)
        TS_TRY(direction(n, &s, &in, d, &hs[d], kind == K_LSTM ? &cs[d] : NULL, &ys[d]));
    return outputs(n, &s, hs, cs, ys);
}

/* RNN-7/14/22: Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb). */
static ts_status onnx_rnn(onnx_node *n) { return recurrence(n, K_RNN); }

/* GRU-7/14/22: gates z, r, h; linear_before_reset 0 or 1. */
static ts_status onnx_gru(onnx_node *n) { return recurrence(n, K_GRU); }

/* LSTM-7/14/22: gates i, o, f, c; peepholes, input_forget. */
static ts_status onnx_lstm(onnx_node *n) { return recurrence(n, K_LSTM); }

const onnx_op_entry onnx_ops_rnn[] = {
    {"GRU", 7, INT_MAX, onnx_gru},
    {"LSTM", 7, INT_MAX, onnx_lstm},
    {"RNN", 7, INT_MAX, onnx_rnn},
    {NULL, 0, 0, NULL},
};
