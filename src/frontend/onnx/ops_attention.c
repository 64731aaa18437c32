/* ops_attention.c — ONNX Attention, RotaryEmbedding, LinearAttention and
 * CausalConvWithState, assembled from dot, reductions, elementwise and
 * layout primitives (and, for LinearAttention's recurrence, while).
 *
 * Heads live on axis 1 ([B, H, L, D]); 3-D inputs ([B, L, H*D]) are split
 * into that layout on the way in and merged on the way out. Grouped-query
 * attention never copies K or V: the query heads are viewed as
 * [B, H_kv, rep, L, D] and both products batch over (B, H_kv), so query
 * head h reads kv head h / rep, as the spec's repeat-interleave does. */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <math.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------- */

static ts_value *scalar(onnx_node *n, ts_dtype dt, double v) { return ts_b_scalar(onnx_b(n), dt, v); }

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

static ts_value *un(onnx_node *n, ts_op op, ts_value *x) { return ts_b_unary(onnx_b(n), op, x); }

static ts_value *sel(onnx_node *n, ts_value *p, ts_value *x, ts_value *y) { return ts_b_select(onnx_b(n), p, x, y); }

static ts_value *cast_to(onnx_node *n, ts_value *v, ts_dtype dt)
{
    return v && v->type.dtype != dt ? ts_b_cast(onnx_b(n), v, dt) : v;
}

/* f16 and bf16 are computed in f32 and rounded once at the end. */
static ts_dtype compute_dtype(ts_dtype dt)
{
    return dt == TS_DTYPE_F16 || dt == TS_DTYPE_BF16 ? TS_DTYPE_F32 : dt;
}

static ts_value *reshape(onnx_node *n, ts_value *x, int rank, const ts_dim *dims)
{
    return ts_b_reshape(onnx_b(n), x, rank, dims);
}

/* x[..., start:limit:stride] on the last axis. */
static ts_value *slice_last(onnx_node *n, ts_value *x, ts_dim start, ts_dim limit, int64_t stride)
{
    ts_dim lo[TS_MAX_RANK], hi[TS_MAX_RANK];
    int64_t st[TS_MAX_RANK];
    if (!x) return NULL;
    int r = x->type.rank;
    for (int i = 0; i < r; i++) {
        lo[i] = i == r - 1 ? start : ts_dim_const(0);
        hi[i] = i == r - 1 ? limit : x->type.dims[i];
        st[i] = i == r - 1 ? stride : 1;
    }
    return ts_b_slice(onnx_b(n), x, lo, hi, st);
}

/* x with `count` copies of v appended to its last axis. */
static ts_value *pad_last(onnx_node *n, ts_value *x, int64_t count, double v)
{
    int64_t lo[TS_MAX_RANK] = {0}, hi[TS_MAX_RANK] = {0}, mid[TS_MAX_RANK] = {0};
    ts_graph *g = onnx_graph(n);
    int r = x->type.rank;
    hi[r - 1] = count;
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_PAD);
    if (!a) return NULL;
    if (ts_attr_set_ints(g, TS_OP_PAD, a, "lo", r, lo) != TS_OK || ts_attr_set_ints(g, TS_OP_PAD, a, "hi", r, hi) != TS_OK ||
        ts_attr_set_ints(g, TS_OP_PAD, a, "interior", r, mid) != TS_OK) {
        onnx_fail(n, TS_ERR_INTERNAL, "cannot set the attributes of pad");
        return NULL;
    }
    ts_value *in[2] = {x, scalar(n, x->type.dtype, v)};
    return ts_b_node(onnx_b(n), TS_OP_PAD, 2, in, a);
}

/* d / k, a failure unless it divides exactly. */
static ts_status dim_split(onnx_node *n, ts_dim d, int64_t k, const char *what, ts_dim *out)
{
    ts_err err = {0};
    if (ts_dim_is_const(d) && d.c % k != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "%s %lld does not split into %lld heads", what, (long long)d.c, (long long)k);
    if (ts_dim_div(onnx_graph(n)->syms, d, ts_dim_const(k), out, &err) != TS_OK) return onnx_fail(n, err.code, "%s", err.msg);
    return TS_OK;
}

/* [B, L, H*D] -> [B, H, L, D]. */
static ts_value *split_heads(onnx_node *n, ts_value *x, int64_t heads, const char *what)
{
    static const int64_t perm[4] = {0, 2, 1, 3};
    ts_dim d[4] = {x->type.dims[0], x->type.dims[1], ts_dim_const(heads), ts_dim_const(0)};
    if (dim_split(n, x->type.dims[2], heads, what, &d[3]) != TS_OK) return NULL;
    return ts_b_transpose(onnx_b(n), reshape(n, x, 4, d), perm);
}

/* [B, H, L, D] -> [B, L, H*D]. */
static ts_value *merge_heads(onnx_node *n, ts_value *y)
{
    static const int64_t perm[4] = {0, 2, 1, 3};
    ts_err err = {0};
    if (!y) return NULL;
    ts_dim d[3] = {y->type.dims[0], y->type.dims[2], ts_dim_const(0)};
    if (ts_dim_mul(onnx_graph(n)->syms, y->type.dims[1], y->type.dims[3], &d[2], &err) != TS_OK) {
        onnx_fail(n, err.code, "%s", err.msg);
        return NULL;
    }
    return reshape(n, ts_b_transpose(onnx_b(n), y, perm), 3, d);
}

/* ---- Attention ---------------------------------------------------------------------- */

typedef struct attn {
    ts_value *q, *k, *v;       /* [B, H, L, D], k and v with the past prepended */
    ts_dim past;               /* past sequence length (0 without a cache) */
    int64_t rep;               /* query heads per kv head */
    bool packed;               /* 3-D inputs and output */
    ts_dtype dt;               /* Q's dtype: the result's */
} attn;

static ts_status attn_read(onnx_node *n, attn *a)
{
    a->q = onnx_float_input(n, 0);
    a->k = onnx_float_input(n, 1);
    a->v = onnx_float_input(n, 2);
    TS_TRY(onnx_status(n));
    int r = a->q->type.rank;
    if ((r != 3 && r != 4) || a->k->type.rank != r || a->v->type.rank != r)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "Q, K and V must all be 3-D or all 4-D (ranks %d, %d, %d)", r,
                         a->k->type.rank, a->v->type.rank);
    a->dt = a->q->type.dtype;
    a->packed = r == 3;
    if (a->packed) {
        int64_t hq = onnx_attr_int(n, "q_num_heads", 0), hkv = onnx_attr_int(n, "kv_num_heads", 0);
        TS_TRY(onnx_status(n));
        if (hq < 1 || hkv < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "3-D inputs need q_num_heads and kv_num_heads >= 1");
        a->q = split_heads(n, a->q, hq, "Q's hidden size");
        a->k = a->q ? split_heads(n, a->k, hkv, "K's hidden size") : NULL;
        a->v = a->k ? split_heads(n, a->v, hkv, "V's hidden size") : NULL;
        TS_TRY(onnx_status(n));
    }
    return onnx_util_heads_ratio(n, a->q->type.dims[1], a->k->type.dims[1], &a->rep);
}

/* The KV cache: past_key/past_value prepended along the sequence axis;
 * present_key/present_value are the results. */
static ts_status attn_cache(onnx_node *n, attn *a)
{
    a->past = ts_dim_const(0);
    if (onnx_has_input(n, 4) != onnx_has_input(n, 5))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "past_key and past_value must be given together");
    if (onnx_has_input(n, 4)) {
        ts_value *pk = onnx_input(n, 4), *pv = onnx_input(n, 5);
        TS_TRY(onnx_status(n));
        if (pk->type.rank != 4) return onnx_fail(n, TS_ERR_INVALID_MODEL, "past_key must be 4-D, got rank %d", pk->type.rank);
        ts_value *k[2] = {pk, a->k}, *v[2] = {pv, a->v};
        a->k = ts_b_concat(onnx_b(n), 2, k, 2);
        a->v = ts_b_concat(onnx_b(n), 2, v, 2);
        a->past = pk->type.dims[2];
    }
    onnx_set_out(n, 1, a->k);
    return onnx_set_out(n, 2, a->v);
}

/* attn_mask as an additive bias of Q's dtype: a bool mask keeps the true
 * entries (0) and drops the rest (-inf); a mask shorter than the total
 * sequence is padded with -inf. NULL without a mask. */
static ts_value *mask_bias(onnx_node *n, const attn *a)
{
    if (!onnx_has_input(n, 3)) return NULL;
    ts_value *m = onnx_input(n, 3);
    if (!m) return NULL;
    if (m->type.rank < 1 || m->type.rank > 4) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "attn_mask of rank %d does not broadcast to [B, H, L, T]", m->type.rank);
        return NULL;
    }
    m = m->type.dtype == TS_DTYPE_BOOL ? sel(n, m, scalar(n, a->dt, 0), scalar(n, a->dt, -INFINITY)) : cast_to(n, m, a->dt);
    if (!m) return NULL; /* the builder's error (a mask of a dtype that does not cast) stands */
    ts_dim have = m->type.dims[m->type.rank - 1], want = a->k->type.dims[2];
    if (ts_dim_eq(have, want)) return m;
    if (!ts_dim_is_const(have) || !ts_dim_is_const(want) || have.c > want.c) {
        onnx_unsupported(n, "attn_mask's last dim does not match the total sequence length and cannot be padded to it");
        return NULL;
    }
    return pad_last(n, m, want.c - have.c, -INFINITY);
}

/* is_causal: query i (at position past + i) sees keys j <= past + i. */
static ts_value *causal_bias(onnx_node *n, const attn *a)
{
    ts_dim dims[2] = {a->q->type.dims[2], a->k->type.dims[2]};
    ts_value *row = ts_b_iota(onnx_b(n), TS_DTYPE_I64, 2, dims, 0), *col = ts_b_iota(onnx_b(n), TS_DTYPE_I64, 2, dims, 1);
    if (!ts_dim_eq(a->past, ts_dim_const(0))) row = bin(n, TS_OP_ADD, row, onnx_dim_scalar(n, a->past));
    return sel(n, bin(n, TS_OP_LT, row, col), scalar(n, a->dt, -INFINITY), scalar(n, a->dt, 0));
}

/* nonpad_kv_seqlen (opset 24): keys at or past each sample's length are
 * dropped; [B, 1, 1, T]. */
static ts_value *nonpad_bias(onnx_node *n, const attn *a)
{
    ts_value *len = onnx_input(n, 6);
    if (!len) return NULL;
    if (len->type.rank != 1) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "nonpad_kv_seqlen must be a vector [B], got rank %d", len->type.rank);
        return NULL;
    }
    ts_dim one = ts_dim_const(1);
    ts_dim bd[4] = {len->type.dims[0], one, one, one}, cd[4] = {one, one, one, a->k->type.dims[2]};
    ts_value *col = ts_b_iota(onnx_b(n), TS_DTYPE_I64, 4, cd, 3);
    ts_value *keep = bin(n, TS_OP_LT, col, reshape(n, cast_to(n, len, TS_DTYPE_I64), 4, bd));
    return sel(n, keep, scalar(n, a->dt, 0), scalar(n, a->dt, -INFINITY));
}

static ts_value *add_opt(onnx_node *n, ts_value *x, ts_value *y) { return !x ? y : !y ? x : bin(n, TS_OP_ADD, x, y); }

/* The sum of every bias that applies, or NULL when none does. */
static ts_value *attn_bias(onnx_node *n, const attn *a)
{
    ts_value *bias = mask_bias(n, a);
    if (onnx_attr_int(n, "is_causal", 0)) bias = add_opt(n, bias, causal_bias(n, a));
    if (n->opset >= 24 && onnx_has_input(n, 6)) bias = add_opt(n, bias, nonpad_bias(n, a));
    return bias;
}

/* sqrt(scale), by which Q and K are both multiplied (the spec's guard
 * against overflow); scale defaults to 1/sqrt(head size). */
static ts_value *half_scale(onnx_node *n, const attn *a)
{
    if (onnx_has_attr(n, "scale")) return scalar(n, a->dt, sqrt(onnx_attr_float(n, "scale", 1.0)));
    ts_dim d = a->q->type.dims[3];
    if (ts_dim_is_const(d)) return scalar(n, a->dt, sqrt(1.0 / sqrt((double)d.c)));
    ts_value *df = cast_to(n, onnx_dim_scalar(n, d), TS_DTYPE_F64);
    return cast_to(n, un(n, TS_OP_SQRT, bin(n, TS_OP_DIV, scalar(n, TS_DTYPE_F64, 1), un(n, TS_OP_SQRT, df))), a->dt);
}

/* softmax_precision, or f32 for f16/bf16 inputs (one rounding at the end). */
static ts_status softmax_dtype(onnx_node *n, ts_dtype dt, ts_dtype *out)
{
    *out = compute_dtype(dt);
    if (!onnx_has_attr(n, "softmax_precision")) return TS_OK;
    ts_err err = {0};
    int64_t t = onnx_attr_int(n, "softmax_precision", 1);
    if (onnx_dtype((int)t, out, &err) != TS_OK || !ts_dtype_is_float(*out))
        return onnx_unsupported(n, "softmax_precision %lld is not a float type tessera has", (long long)t);
    return onnx_status(n);
}

/* scores = softcap(Q K^T * scale) + bias; Y = softmax(scores) V. Output 3
 * is the scores at the stage qk_matmul_output_mode names (0: the product,
 * 1: after softcap, 2: after the bias, 3: after softmax). */
static ts_status onnx_attention(onnx_node *n)
{
    attn a = {0};
    TS_TRY(attn_read(n, &a));
    TS_TRY(attn_cache(n, &a));
    double cap = onnx_attr_float(n, "softcap", 0.0);
    int64_t mode = onnx_attr_int(n, "qk_matmul_output_mode", 0);
    ts_dtype sdt;
    TS_TRY(softmax_dtype(n, a.dt, &sdt));
    if (mode < 0 || mode > 3) return onnx_fail(n, TS_ERR_INVALID_MODEL, "qk_matmul_output_mode %lld is not 0..3", (long long)mode);
    ts_value *s = half_scale(n, &a);
    ts_value *qk = onnx_util_gqa_dot(n, bin(n, TS_OP_MUL, a.q, s), bin(n, TS_OP_MUL, a.k, s), a.rep, 3);
    ts_value *capped = qk;
    if (cap > 0) {
        ts_value *c = scalar(n, a.dt, cap);
        capped = bin(n, TS_OP_MUL, un(n, TS_OP_TANH, bin(n, TS_OP_DIV, qk, c)), c);
    }
    TS_TRY(onnx_status(n)); /* the biases read Q's and K's dims: stop at a failed product first */
    ts_value *biased = add_opt(n, capped, attn_bias(n, &a));
    ts_value *p = onnx_util_softmax_last(n, cast_to(n, biased, sdt));
    ts_value *stage[4] = {qk, capped, biased, p};
    onnx_set_out(n, 3, cast_to(n, stage[mode], a.dt));
    ts_value *y = onnx_util_gqa_dot(n, cast_to(n, p, a.v->type.dtype), a.v, a.rep, 2);
    return onnx_set_out(n, 0, cast_to(n, a.packed ? merge_heads(n, y) : y, a.dt));
}

/* ---- RotaryEmbedding ------------------------------------------------------------------ */

/* A cos/sin cache as [B, S, R/2] (looked up by position_ids when given),
 * then with a 1 inserted at head_axis to broadcast over the heads. */
static ts_value *rope_cache(onnx_node *n, ts_value *c, ts_value *pos, int head_axis)
{
    if (!c) return NULL;
    if (pos) {
        ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_GATHER);
        if (!a || ts_attr_set_int(onnx_graph(n), TS_OP_GATHER, a, "axis", 0) != TS_OK) {
            onnx_fail(n, TS_ERR_INTERNAL, "cannot set the attributes of gather");
            return NULL;
        }
        ts_value *in[2] = {c, pos};
        c = ts_b_node(onnx_b(n), TS_OP_GATHER, 2, in, a);
    }
    if (!c || c->type.rank != 3) {
        if (c) onnx_fail(n, TS_ERR_INVALID_MODEL, "the cos/sin cache must give [batch, seq, dim/2], got rank %d", c->type.rank);
        return NULL;
    }
    ts_dim d[4];
    for (int i = 0, k = 0; i < 4; i++) d[i] = i == head_axis ? ts_dim_const(1) : c->type.dims[k++];
    return reshape(n, c, 4, d);
}

/* x [.., R] from the rotated halves: interleaved puts real/imag pairs
 * side by side, otherwise real then imag. */
static ts_value *rope_join(onnx_node *n, ts_value *re, ts_value *im, bool interleaved)
{
    ts_value *parts[2] = {re, im};
    if (!interleaved || !re) return ts_b_concat(onnx_b(n), 2, parts, 3);
    ts_dim d[5], half = re->type.dims[3], full;
    ts_err err = {0};
    for (int i = 0; i < 4; i++) d[i] = re->type.dims[i];
    d[4] = ts_dim_const(1);
    parts[0] = reshape(n, re, 5, d);
    parts[1] = reshape(n, im, 5, d);
    if (ts_dim_mul(onnx_graph(n)->syms, half, ts_dim_const(2), &full, &err) != TS_OK) {
        onnx_fail(n, err.code, "%s", err.msg);
        return NULL;
    }
    d[3] = full;
    return reshape(n, ts_b_concat(onnx_b(n), 2, parts, 4), 4, d);
}

/* The first rdim entries of each head rotated pairwise by the cached
 * angle: (x1, x2) -> (cos x1 - sin x2, sin x1 + cos x2). */
static ts_value *rope_rotate(onnx_node *n, ts_value *x4, ts_value *cs, ts_value *sn, int64_t rdim, bool interleaved)
{
    ts_dim z = ts_dim_const(0), h = ts_dim_const(rdim / 2), r = ts_dim_const(rdim);
    ts_value *xr = slice_last(n, x4, z, r, 1);
    ts_value *x1 = interleaved ? slice_last(n, xr, z, r, 2) : slice_last(n, xr, z, h, 1);
    ts_value *x2 = interleaved ? slice_last(n, xr, ts_dim_const(1), r, 2) : slice_last(n, xr, h, r, 1);
    ts_value *re = bin(n, TS_OP_SUB, bin(n, TS_OP_MUL, cs, x1), bin(n, TS_OP_MUL, sn, x2));
    ts_value *im = bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, sn, x1), bin(n, TS_OP_MUL, cs, x2));
    ts_value *y = rope_join(n, re, im, interleaved);
    if (!y || ts_dim_eq(x4->type.dims[3], r)) return y;
    ts_value *parts[2] = {y, slice_last(n, x4, r, x4->type.dims[3], 1)};
    return ts_b_concat(onnx_b(n), 2, parts, 3);
}

/* 4-D input [B, H, S, D] is rotated as it is (caches broadcast over axis
 * 1); 3-D [B, S, H*D] is viewed as [B, S, H, D] (caches over axis 2). */
static ts_status onnx_rotary_embedding(onnx_node *n)
{
    ts_value *x = onnx_float_input(n, 0);
    ts_value *pos = onnx_has_input(n, 3) ? onnx_input(n, 3) : NULL;
    int64_t rdim = onnx_attr_int(n, "rotary_embedding_dim", 0), heads = onnx_attr_int(n, "num_heads", 0);
    bool interleaved = onnx_attr_int(n, "interleaved", 0) != 0;
    TS_TRY(onnx_status(n));
    int r = x->type.rank;
    if (r != 3 && r != 4) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the input must be 3-D or 4-D, got rank %d", r);
    ts_value *x4 = x;
    if (r == 3) {
        if (heads < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "a 3-D input needs num_heads >= 1");
        ts_dim d[4] = {x->type.dims[0], x->type.dims[1], ts_dim_const(heads), ts_dim_const(0)};
        TS_TRY(dim_split(n, x->type.dims[2], heads, "the hidden size", &d[3]));
        x4 = reshape(n, x, 4, d);
    }
    ts_dim hd = x4 ? x4->type.dims[3] : ts_dim_const(0);
    if (rdim == 0 && !ts_dim_is_const(hd)) return onnx_unsupported(n, "a symbolic head size without rotary_embedding_dim");
    if (rdim == 0) rdim = hd.c;
    if (rdim < 2 || rdim % 2 || (ts_dim_is_const(hd) && rdim > hd.c))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "rotary dim %lld must be even and within the head size", (long long)rdim);
    int head_axis = r == 4 ? 1 : 2;
    ts_value *cs = rope_cache(n, onnx_input(n, 1), pos, head_axis), *sn = rope_cache(n, onnx_input(n, 2), pos, head_axis);
    TS_TRY(onnx_status(n));
    ts_value *y = rope_rotate(n, x4, cs, sn, rdim, interleaved);
    return onnx_set_out(n, 0, r == 3 ? reshape(n, y, 3, x->type.dims) : y);
}

/* ---- LinearAttention ----------------------------------------------------------------- */

/* The recurrence runs as one while over the time steps, its state
 *     (step i, steps T, state S [B, H_kv, d_k, d_v], outputs [T, B, H_kv, G, d_v],
 *      q [T, B, H_kv, G, d_k], k [T, B, H_kv, d_k], v [T, B, H_kv, d_v],
 *      [exp(decay) [T, B, H_kv, d_k or 1, 1]], [beta [T, B, H_kv or 1, 1]])
 * with every sequence time-major, so step i reads index i of axis 0. The
 * query heads are grouped per kv head (G of them), which is the spec's
 * interleaved repeat of the state. Everything is computed in f32, as the
 * reference does. Regions are isolated, so all inputs travel as state. */
enum { LA_I, LA_T, LA_S, LA_OUT, LA_Q, LA_K, LA_V, LA_DECAY, LA_BETA, LA_N };

typedef struct lin {
    ts_value *init[LA_N];      /* initial state, absent entries skipped */
    int at[LA_N];              /* position of each entry in the state, -1 if absent */
    int n_state;
    double scale;
    bool gated, delta;
    ts_dim b, t, hkv, g, dk, dv;
} lin;

/* x [B, T, ...] viewed as [B, T, inner...], made time-major and f32. */
static ts_value *time_major(onnx_node *n, ts_value *x, int k, const ts_dim *inner)
{
    ts_dim d[TS_MAX_RANK];
    int64_t perm[TS_MAX_RANK];
    if (!x) return NULL;
    d[0] = x->type.dims[0], d[1] = x->type.dims[1];
    for (int i = 0; i < k + 2; i++) {
        if (i >= 2) d[i] = inner[i - 2];
        perm[i] = i == 0 ? 1 : i == 1 ? 0 : i;
    }
    return cast_to(n, ts_b_transpose(onnx_b(n), reshape(n, x, k + 2, d), perm), TS_DTYPE_F32);
}

static ts_status la_rule(onnx_node *n, lin *l)
{
    const char *rule = onnx_attr_string(n, "update_rule", "gated_delta");
    TS_TRY(onnx_status(n));
    if (strcmp(rule, "linear") && strcmp(rule, "gated") && strcmp(rule, "delta") && strcmp(rule, "gated_delta"))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "update_rule '%s' is not linear, gated, delta or gated_delta", rule);
    l->gated = strcmp(rule, "gated") == 0 || strcmp(rule, "gated_delta") == 0;
    l->delta = strcmp(rule, "delta") == 0 || strcmp(rule, "gated_delta") == 0;
    if (l->gated != onnx_has_input(n, 4))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "update_rule '%s' %s the decay input", rule, l->gated ? "needs" : "forbids");
    if (l->delta != onnx_has_input(n, 5))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "update_rule '%s' %s the beta input", rule, l->delta ? "needs" : "forbids");
    return TS_OK;
}

/* Head counts and sizes from the attributes and the packed shapes. */
static ts_status la_sizes(onnx_node *n, lin *l, ts_value *q, ts_value *k, ts_value *v)
{
    int64_t hq = onnx_attr_int(n, "q_num_heads", 0), hkv = onnx_attr_int(n, "kv_num_heads", 0);
    TS_TRY(onnx_status(n));
    if (hq < 1 || hkv < 1 || hq % hkv != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "q_num_heads %lld must be a positive multiple of kv_num_heads %lld",
                         (long long)hq, (long long)hkv);
    if (q->type.rank != 3 || k->type.rank != 3 || v->type.rank != 3)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "query, key and value must be 3-D [B, T, H*D]");
    l->b = q->type.dims[0], l->t = q->type.dims[1];
    l->hkv = ts_dim_const(hkv), l->g = ts_dim_const(hq / hkv);
    TS_TRY(dim_split(n, q->type.dims[2], hq, "query's hidden size", &l->dk));
    TS_TRY(dim_split(n, v->type.dims[2], hkv, "value's hidden size", &l->dv));
    ts_dim kd;
    TS_TRY(dim_split(n, k->type.dims[2], hkv, "key's hidden size", &kd));
    if (!ts_dim_eq(kd, l->dk)) return onnx_fail(n, TS_ERR_INVALID_MODEL, "key's head size differs from query's");
    double sc = onnx_attr_float(n, "scale", 0.0);
    if (sc == 0.0 && !ts_dim_is_const(l->dk)) return onnx_unsupported(n, "a symbolic head size without the scale attribute");
    l->scale = sc != 0.0 ? sc : 1.0 / sqrt((double)l->dk.c);
    return TS_OK;
}

/* exp(decay) as [T, B, H_kv, d_k or 1, 1]: per key dim or per head. */
static ts_value *la_decay(onnx_node *n, const lin *l, ts_value *dec)
{
    ts_dim one = ts_dim_const(1), last = dec->type.rank == 3 ? dec->type.dims[2] : one, per_dim;
    ts_err err = {0};
    if (dec->type.rank != 3 || ts_dim_mul(onnx_graph(n)->syms, l->hkv, l->dk, &per_dim, &err) != TS_OK) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "decay must be 3-D [B, T, H_kv*d_k] or [B, T, H_kv]");
        return NULL;
    }
    if (!ts_dim_eq(last, per_dim) && !ts_dim_eq(last, l->hkv)) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "decay's last dim must be kv_num_heads or kv_num_heads * d_k");
        return NULL;
    }
    ts_dim inner[3] = {l->hkv, ts_dim_eq(last, per_dim) ? l->dk : one, one};
    return un(n, TS_OP_EXP, time_major(n, dec, 3, inner));
}

static ts_value *la_beta(onnx_node *n, const lin *l, ts_value *beta)
{
    ts_dim one = ts_dim_const(1);
    if (beta->type.rank != 3 || (!ts_dim_eq(beta->type.dims[2], l->hkv) && !ts_dim_eq(beta->type.dims[2], one))) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "beta must be 3-D [B, T, H_kv] or [B, T, 1]");
        return NULL;
    }
    ts_dim inner[2] = {beta->type.dims[2], one};
    return time_major(n, beta, 2, inner);
}

static void la_add(lin *l, int which, ts_value *v)
{
    l->at[which] = v ? l->n_state : -1;
    if (v) l->init[l->n_state++] = v;
}

/* The while's initial state. */
static ts_status la_init(onnx_node *n, lin *l)
{
    ts_value *q = onnx_float_input(n, 0), *k = onnx_float_input(n, 1), *v = onnx_float_input(n, 2);
    TS_TRY(onnx_status(n));
    TS_TRY(la_rule(n, l));
    TS_TRY(la_sizes(n, l, q, k, v));
    ts_dim sd[4] = {l->b, l->hkv, l->dk, l->dv}, od[5] = {l->t, l->b, l->hkv, l->g, l->dv};
    ts_dim qi[3] = {l->hkv, l->g, l->dk}, ki[2] = {l->hkv, l->dk}, vi[2] = {l->hkv, l->dv};
    ts_value *s0 = onnx_has_input(n, 3) ? cast_to(n, onnx_input(n, 3), TS_DTYPE_F32)
                                        : ts_b_full(onnx_b(n), TS_DTYPE_F32, 0, 4, sd);
    la_add(l, LA_I, ts_b_scalar(onnx_b(n), TS_DTYPE_I64, 0));
    la_add(l, LA_T, onnx_dim_scalar(n, l->t));
    la_add(l, LA_S, s0 ? reshape(n, s0, 4, sd) : NULL);
    la_add(l, LA_OUT, ts_b_full(onnx_b(n), TS_DTYPE_F32, 0, 5, od));
    la_add(l, LA_Q, time_major(n, q, 3, qi));
    la_add(l, LA_K, time_major(n, k, 2, ki));
    la_add(l, LA_V, time_major(n, v, 2, vi));
    la_add(l, LA_DECAY, l->gated ? la_decay(n, l, onnx_input(n, 4)) : NULL);
    la_add(l, LA_BETA, l->delta ? la_beta(n, l, onnx_input(n, 5)) : NULL);
    TS_TRY(onnx_status(n));
    return l->n_state == 7 + l->gated + l->delta ? TS_OK : onnx_fail(n, TS_ERR_INTERNAL, "incomplete loop state");
}

/* [i, 0, ..., 0] (rank entries): where step i's slice starts. */
static ts_value *la_start(ts_builder *b, ts_value *i, int rank)
{
    ts_dim one = ts_dim_const(1), rest = ts_dim_const(rank - 1);
    ts_value *parts[2] = {ts_b_reshape(b, i, 1, &one), ts_b_full(b, TS_DTYPE_I64, 0, 1, &rest)};
    return ts_b_concat(b, 2, parts, 0);
}

/* x[i], the time axis dropped. */
static ts_value *la_at(ts_builder *b, ts_value *x, ts_value *i)
{
    ts_dim sz[TS_MAX_RANK];
    int r = x->type.rank;
    for (int k = 0; k < r; k++) sz[k] = k == 0 ? ts_dim_const(1) : x->type.dims[k];
    ts_attr *a = ts_b_attrs(b, TS_OP_DYNAMIC_SLICE);
    if (!a) return NULL;
    if (ts_attr_set_dims(ts_builder_graph(b), TS_OP_DYNAMIC_SLICE, a, "sizes", r, sz) != TS_OK) {
        ts_builder_fail(b, TS_ERR_INTERNAL, "cannot set the attributes of dynamic_slice");
        return NULL;
    }
    ts_value *in[2] = {x, la_start(b, i, r)};
    return ts_b_reshape(b, ts_b_node(b, TS_OP_DYNAMIC_SLICE, 2, in, a), r - 1, x->type.dims + 1);
}

/* One step: decay, delta correction, the rank-1 write, the read. */
static void la_step(ts_builder *b, const lin *l, ts_value *const *p, ts_value **next)
{
    static const int64_t batch[2] = {0, 1}, c2 = 2, c3 = 3;
    ts_value *i = p[l->at[LA_I]], *s = p[l->at[LA_S]];
    ts_value *k = la_at(b, p[l->at[LA_K]], i), *v = la_at(b, p[l->at[LA_V]], i), *q = la_at(b, p[l->at[LA_Q]], i);
    if (l->gated) s = ts_b_binary(b, TS_OP_MUL, s, la_at(b, p[l->at[LA_DECAY]], i));
    if (l->delta) {            /* v <- beta * (v - S^T k) */
        ts_value *got = ts_b_dot(b, s, k, 2, batch, batch, 1, &c2, &c2);
        v = ts_b_binary(b, TS_OP_MUL, la_at(b, p[l->at[LA_BETA]], i), ts_b_binary(b, TS_OP_SUB, v, got));
    }
    ts_dim kd[4] = {l->b, l->hkv, l->dk, ts_dim_const(1)}, vd[4] = {l->b, l->hkv, ts_dim_const(1), l->dv};
    s = ts_b_binary(b, TS_OP_ADD, s, ts_b_binary(b, TS_OP_MUL, ts_b_reshape(b, k, 4, kd), ts_b_reshape(b, v, 4, vd)));
    ts_value *o = ts_b_binary(b, TS_OP_MUL, ts_b_dot(b, q, s, 2, batch, batch, 1, &c3, &c2),
                              ts_b_scalar(b, TS_DTYPE_F32, l->scale));
    ts_dim od[5] = {ts_dim_const(1), l->b, l->hkv, l->g, l->dv};
    ts_value *in[3] = {p[l->at[LA_OUT]], ts_b_reshape(b, o, 5, od), la_start(b, i, 5)};
    next[l->at[LA_OUT]] = ts_b_node(b, TS_OP_DYNAMIC_UPDATE_SLICE, 3, in, NULL);
    next[l->at[LA_S]] = s;
    next[l->at[LA_I]] = ts_b_binary(b, TS_OP_ADD, i, ts_b_scalar(b, TS_DTYPE_I64, 1));
}

/* A region taking the loop state as parameters: the body (one step) or,
 * when body is false, the condition i < T. */
static ts_status la_region(onnx_node *n, const lin *l, bool body, ts_block **out)
{
    ts_graph *g = onnx_graph(n);
    ts_err err = {0};
    if (ts_ir_block_new(g, out, &err) != TS_OK) return onnx_fail(n, err.code, "%s", err.msg);
    ts_builder *b = ts_builder_new(g, *out);
    if (!b) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    ts_value *p[LA_N], *next[LA_N];
    for (int k = 0; k < l->n_state; k++) {
        const ts_type *t = &l->init[k]->type;
        p[k] = next[k] = ts_b_input(b, t->dtype, t->rank, t->dims);
    }
    if (body) {
        la_step(b, l, p, next);
        ts_b_return(b, l->n_state, next);
    } else {
        ts_value *go = ts_b_binary(b, TS_OP_LT, p[l->at[LA_I]], p[l->at[LA_T]]);
        ts_b_return(b, 1, &go);
    }
    ts_status s = ts_builder_status(b, &err);
    ts_builder_free(b);
    return s == TS_OK ? TS_OK : onnx_fail(n, s, "%s", err.msg);
}

/* Output [B, T, H_q*d_v] in query's dtype; present_state in past_state's
 * dtype (query's without one). */
static ts_status onnx_linear_attention(onnx_node *n)
{
    lin l;
    memset(&l, 0, sizeof l);
    onnx_attr_ignore(n, "chunk_size");   /* a tuning hint: "does not affect output correctness" */
    TS_TRY(la_init(n, &l));
    ts_block *regions[2];
    TS_TRY(la_region(n, &l, false, &regions[0]));
    TS_TRY(la_region(n, &l, true, &regions[1]));
    ts_value *res[LA_N];
    int n_res;
    TS_TRY(ts_b_op(onnx_b(n), TS_OP_WHILE, l.n_state, l.init, NULL, 2, regions, LA_N, res, &n_res));
    ts_dtype dt = onnx_input(n, 0)->type.dtype;
    ts_dtype st = onnx_has_input(n, 3) ? onnx_input(n, 3)->type.dtype : dt;
    static const int64_t perm[5] = {1, 0, 2, 3, 4};
    ts_value *y = ts_b_transpose(onnx_b(n), res[l.at[LA_OUT]], perm);
    ts_dim yd[3] = {l.b, l.t, ts_dim_const(0)};
    ts_err err = {0};
    if (ts_dim_mul(onnx_graph(n)->syms, ts_dim_const(l.hkv.c * l.g.c), l.dv, &yd[2], &err) != TS_OK)
        return onnx_fail(n, err.code, "%s", err.msg);
    onnx_set_out(n, 1, cast_to(n, res[l.at[LA_S]], st));
    return onnx_set_out(n, 0, cast_to(n, reshape(n, y, 3, yd), dt));
}

/* ---- CausalConvWithState --------------------------------------------------------------- */

/* A depthwise conv (groups = channels) with no padding of the input
 * prefixed with the carried state (zeros without one); the new state is
 * the last k - 1 positions of that prefixed input. */
static ts_value *depthwise_conv(onnx_node *n, ts_value *x, ts_value *w, int64_t groups)
{
    static const int64_t one = 1, zero = 0;
    ts_graph *g = onnx_graph(n);
    ts_op op = TS_OP_CONV;
    ts_attr *a = ts_b_attrs(onnx_b(n), op);
    if (!a) return NULL;
    if (ts_attr_set_ints(g, op, a, "strides", 1, &one) != TS_OK || ts_attr_set_ints(g, op, a, "pad_lo", 1, &zero) != TS_OK ||
        ts_attr_set_ints(g, op, a, "pad_hi", 1, &zero) != TS_OK || ts_attr_set_ints(g, op, a, "lhs_dilation", 1, &one) != TS_OK ||
        ts_attr_set_ints(g, op, a, "rhs_dilation", 1, &one) != TS_OK || ts_attr_set_int(g, op, a, "groups", groups) != TS_OK) {
        onnx_fail(n, TS_ERR_INTERNAL, "cannot set the attributes of conv");
        return NULL;
    }
    ts_value *in[2] = {x, w};
    return ts_b_node(onnx_b(n), op, 2, in, a);
}

/* x * sigmoid(x), in f32 for f16/bf16 as the reference computes it. */
static ts_value *silu(onnx_node *n, ts_value *x)
{
    ts_dtype dt = x ? x->type.dtype : TS_DTYPE_F32, ct = compute_dtype(dt);
    ts_value *xc = cast_to(n, x, ct), *one = scalar(n, ct, 1);
    ts_value *sig = bin(n, TS_OP_DIV, one, bin(n, TS_OP_ADD, one, un(n, TS_OP_EXP, un(n, TS_OP_NEG, xc))));
    return cast_to(n, bin(n, TS_OP_MUL, xc, sig), dt);
}

static ts_status conv_state_check(onnx_node *n, ts_value *x, ts_value *w, const char *act)
{
    if (x->type.rank != 3 || w->type.rank != 3)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "input and weight must be rank 3 (got %d and %d)", x->type.rank, w->type.rank);
    if (strcmp(act, "none") != 0 && strcmp(act, "silu") != 0 && strcmp(act, "swish") != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "activation '%s' is not one of none, silu, swish", act);
    if (!ts_dim_is_const(x->type.dims[1]) || !ts_dim_is_const(w->type.dims[2]))
        return onnx_unsupported(n, "symbolic channels or kernel size: the depthwise conv needs them constant");
    return TS_OK;
}

static ts_status onnx_causal_conv_with_state(onnx_node *n)
{
    ts_value *x = onnx_float_input(n, 0), *w = onnx_float_input(n, 1);
    const char *act = onnx_attr_string(n, "activation", "none");
    TS_TRY(onnx_status(n));
    TS_TRY(conv_state_check(n, x, w, act));
    int64_t k = w->type.dims[2].c, c = x->type.dims[1].c;
    if (k < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the kernel size must be >= 1");
    ts_dim sd[3] = {x->type.dims[0], x->type.dims[1], ts_dim_const(k - 1)};
    ts_value *st = onnx_has_input(n, 3) ? onnx_input(n, 3) : ts_b_full(onnx_b(n), x->type.dtype, 0, 3, sd);
    ts_value *parts[2] = {st, x};
    ts_value *xp = k > 1 ? ts_b_concat(onnx_b(n), 2, parts, 2) : x;
    ts_value *y = depthwise_conv(n, xp, w, c);
    if (onnx_has_input(n, 2)) {
        ts_dim bd[3] = {ts_dim_const(1), ts_dim_const(c), ts_dim_const(1)};
        y = bin(n, TS_OP_ADD, y, reshape(n, onnx_input(n, 2), 3, bd));
    }
    if (strcmp(act, "none") != 0) y = silu(n, y);
    TS_TRY(onnx_status(n));
    onnx_set_out(n, 1, slice_last(n, xp, x->type.dims[2], xp->type.dims[2], 1));
    return onnx_set_out(n, 0, y);
}

const onnx_op_entry onnx_ops_attention[] = {
    {"Attention", 23, INT_MAX, onnx_attention},
    {"CausalConvWithState", 27, INT_MAX, onnx_causal_conv_with_state},
    {"LinearAttention", 27, INT_MAX, onnx_linear_attention},
    {"RotaryEmbedding", 23, INT_MAX, onnx_rotary_embedding},
    {NULL, 0, 0, NULL},
};
