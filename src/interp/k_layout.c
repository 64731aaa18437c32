/* k_layout.c — the leaves (const, iota, rng_uniform) and the kernels that
 * move elements without computing (reshape, broadcast, transpose, slice,
 * pad, concat, reverse). Every mover is one strided box copy: it only
 * decides where the box starts and how far each axis steps. The exact
 * contracts are in docs/primitives.md. */
#include "interp/interp.h"
#include "interp/k_layout.h"

#include <string.h>

/* ---- shared helpers ---------------------------------------------------- */

ts_interp_view ts_interp_view_dense(const ts_tensor *t)
{
    ts_interp_view v = {0};
    ts_shape_strides(t->rank, t->shape, v.st);
    return v;
}

void ts_interp_copy_box(int rank, const int64_t *shape, size_t esz, void *dst,
                        const ts_interp_view *dv, const void *src, const ts_interp_view *sv)
{
    int64_t count = 1;
    for (int a = 0; a < rank; a++) count *= shape[a];
    if (count == 0) return;
    int64_t idx[TS_MAX_RANK] = {0};
    int64_t so = sv->off, d = dv->off;
    for (int64_t k = 0; k < count; k++) {
        memcpy((char *)dst + d * (int64_t)esz, (const char *)src + so * (int64_t)esz, esz);
        /* odometer: bump the last axis, carry into the ones before it */
        for (int a = rank - 1; a >= 0; a--) {
            so += sv->st[a];
            d += dv->st[a];
            if (++idx[a] < shape[a]) break;
            so -= sv->st[a] * shape[a];
            d -= dv->st[a] * shape[a];
            idx[a] = 0;
        }
    }
}

/* The declared dims of result k of n under the run's bindings. */
static ts_status out_dims(ts_interp_run *r, const ts_node *n, int k, int64_t *shape)
{
    const ts_type *t = &n->out[k]->type;
    for (int i = 0; i < t->rank; i++) TS_TRY(ts_interp_dim(r, t->dims[i], &shape[i]));
    return TS_OK;
}

static void copy_whole(ts_tensor *dst, const ts_interp_view *dv, const ts_tensor *src,
                       const ts_interp_view *sv)
{
    ts_interp_copy_box(dst->rank, dst->shape, ts_dtype_size(dst->dtype), dst->data, dv, src->data, sv);
}

/* ---- leaves ---------------------------------------------------------------- */

/* The attribute tensor is immutable, so the result shares it. */
static ts_status k_const(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    ts_tensor *t = ts_node_tensor(n, "value");
    if (!TS_ALWAYS(t)) return ts_err_set(ts_interp_err(r), TS_ERR_INTERNAL, "const without a value");
    ts_tensor_retain(t);
    out[0] = t;
    return TS_OK;
}

static ts_status k_iota(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    TS_TRY(ts_interp_out(r, n, 0, out));
    ts_tensor *y = out[0];
    int axis = (int)ts_node_int(n, "axis");
    int64_t st[TS_MAX_RANK];
    ts_shape_strides(y->rank, y->shape, st);
    for (int64_t i = 0; i < y->numel; i++)
        ts_elem_set_i64(y->dtype, y->data, i, i / st[axis] % y->shape[axis]);
    return TS_OK;
}

/* ---- Philox4x32-10 ------------------------------------------------------------ */

static void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

void ts_interp_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]}, k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round) {
            k0 += 0x9E3779B9u;  /* the Weyl key schedule of Random123 */
            k1 += 0xBB67AE85u;
        }
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo(0xD2511F53u, c[0], &hi0, &lo0);
        mulhilo(0xCD9E8D57u, c[2], &hi1, &lo1);
        uint32_t next[4] = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
        memcpy(c, next, sizeof c);
    }
    memcpy(out, c, sizeof c);
}

/* The largest value below 1 of each small float type: rounding 1-2^-24 to
 * nearest even gives 1.0, which the contract excludes. */
static void set_unit(ts_dtype dt, void *data, int64_t i, double u)
{
    if (dt == TS_DTYPE_F16) {
        uint16_t h = ts_f64_to_f16(u);
        ((uint16_t *)data)[i] = h == 0x3C00 ? 0x3BFF : h;
    } else if (dt == TS_DTYPE_BF16) {
        uint16_t h = ts_f64_to_bf16(u);
        ((uint16_t *)data)[i] = h == 0x3F80 ? 0x3F7F : h;
    } else {
        ts_elem_set_f64(dt, data, i, u);  /* f32 holds 24 bits exactly */
    }
}

/* f16/bf16/f32: block k = Philox(counter {k, k>>32, 0, 0}) serves
 * elements 4k..4k+3, element i taking word i&3 and its top 24 bits. */
static void rng_narrow(ts_tensor *y, const uint32_t key[2])
{
    for (int64_t base = 0; base < y->numel; base += 4) {
        uint64_t k = (uint64_t)base >> 2;
        uint32_t ctr[4] = {(uint32_t)k, (uint32_t)(k >> 32), 0, 0}, w[4];
        ts_interp_philox4x32_10(ctr, key, w);
        for (int64_t j = 0; j < 4 && base + j < y->numel; j++)
            set_unit(y->dtype, y->data, base + j, (double)(w[j] >> 8) * 0x1p-24);
    }
}

/* f64: element i = Philox(counter {i, i>>32, 1, 0}); the top 53 bits of
 * words 0 and 1 (word 0 high). Counter word 2 = 1 keeps this stream apart
 * from the narrow one. */
static void rng_wide(ts_tensor *y, const uint32_t key[2])
{
    for (int64_t i = 0; i < y->numel; i++) {
        uint32_t ctr[4] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32), 1, 0}, w[4];
        ts_interp_philox4x32_10(ctr, key, w);
        uint64_t bits = ((uint64_t)w[0] << 32 | w[1]) >> 11;
        ((double *)y->data)[i] = (double)bits * 0x1p-53;
    }
}

static ts_status k_rng_uniform(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    TS_TRY(ts_interp_out(r, n, 0, out));
    uint64_t seed = (uint64_t)ts_node_int(n, "seed");
    if (n->n_in == 1) seed += (uint64_t)*(const int64_t *)in[0]->data;  /* wraps: the contract */
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    if (out[0]->dtype == TS_DTYPE_F64) rng_wide(out[0], key);
    else rng_narrow(out[0], key);
    return TS_OK;
}

/* ---- movers ------------------------------------------------------------------ */

/* Row-major order is unchanged, so the result is a view of the operand. */
static ts_status k_reshape(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    int64_t shape[TS_MAX_RANK];
    TS_TRY(out_dims(r, n, 0, shape));
    return ts_tensor_reshaped(in[0], n->out[0]->type.rank, shape, out, ts_interp_err(r));
}

/* A size-1 operand axis steps 0, so its one element repeats. */
static ts_status k_broadcast(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0];
    int na;
    const int64_t *axes = ts_node_ints(n, "axes", &na);
    TS_TRY(ts_interp_out(r, n, 0, out));
    ts_tensor *y = out[0];
    ts_interp_view xv = ts_interp_view_dense(x), sv = {0}, yv = ts_interp_view_dense(y);
    for (int i = 0; i < na; i++) {
        int64_t size = x->shape[i], target = y->shape[axes[i]];
        if (size != 1 && size != target)
            return ts_err_set(ts_interp_err(r), TS_ERR_SHAPE, "broadcast: operand dim %d is %lld, target %lld", i,
                              (long long)size, (long long)target);
        sv.st[axes[i]] = size == 1 ? 0 : xv.st[i];
    }
    copy_whole(y, &yv, x, &sv);
    return TS_OK;
}

static ts_status k_transpose(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    int np;
    const int64_t *perm = ts_node_ints(n, "perm", &np);
    TS_TRY(ts_interp_out(r, n, 0, out));
    ts_interp_view xv = ts_interp_view_dense(in[0]), sv = {0}, yv = ts_interp_view_dense(out[0]);
    for (int i = 0; i < np; i++) sv.st[i] = xv.st[perm[i]];
    copy_whole(out[0], &yv, in[0], &sv);
    return TS_OK;
}

/* Symbolic bounds are only known now, so they are checked now. */
static ts_status k_slice(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0];
    int ns, nl, nt;
    const ts_dim *start = ts_node_dims(n, "start", &ns), *limit = ts_node_dims(n, "limit", &nl);
    const int64_t *stride = ts_node_ints(n, "stride", &nt);
    ts_interp_view xv = ts_interp_view_dense(x), sv = {0};
    int64_t shape[TS_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        int64_t s, l;
        TS_TRY(ts_interp_dim(r, start[i], &s));
        TS_TRY(ts_interp_dim(r, limit[i], &l));
        if (s < 0 || s > l || l > x->shape[i])
            return ts_err_set(ts_interp_err(r), TS_ERR_RUNTIME,
                              "slice: axis %d: start %lld, limit %lld, size %lld: need 0 <= start <= limit <= size",
                              i, (long long)s, (long long)l, (long long)x->shape[i]);
        shape[i] = l == s ? 0 : (l - s - 1) / stride[i] + 1;
        sv.off += s * xv.st[i];
        /* a huge stride that takes one element must not overflow the step */
        sv.st[i] = shape[i] > 1 ? stride[i] * xv.st[i] : 0;
    }
    TS_TRY(ts_interp_out_shape(r, n, 0, x->rank, shape, out));
    ts_interp_view yv = ts_interp_view_dense(out[0]);
    copy_whole(out[0], &yv, x, &sv);
    return TS_OK;
}

/* The padded size of one axis: interior gaps first, then lo and hi.
 * False when it overflows (symbolic sizes meet the attributes only now). */
static bool padded(int64_t size, int64_t lo, int64_t hi, int64_t interior, int64_t *out)
{
    int64_t gaps = 0, s;
    if (size > 0 && !ts_i64_mul(size - 1, interior, &gaps)) return false;
    return ts_i64_add(size, gaps, &s) && ts_i64_add(s, lo, &s) && ts_i64_add(s, hi, out);
}

/* Operand element j of an axis lands at lo + j*step; a negative lo or hi
 * crops, so only the j whose landing spot is in [0, out_size) survive:
 * j from ceil(-lo/step) to floor((out_size-1-lo)/step). Written so that
 * no intermediate overflows for any lo. */
static void pad_axis(int64_t size, int64_t out_size, int64_t lo, int64_t step, int64_t *first, int64_t *count)
{
    int64_t f = lo >= 0 ? 0 : -(lo + 1) / step + 1;
    int64_t last;
    if (out_size == 0 || lo > out_size - 1) last = -1;
    else if (lo < 0 && out_size - 1 > INT64_MAX + lo) last = size - 1;  /* room beyond int64 */
    else last = (out_size - 1 - lo) / step;
    if (last > size - 1) last = size - 1;
    *first = f;
    *count = last >= f ? last - f + 1 : 0;
}

static void fill(ts_tensor *y, const void *value)
{
    size_t esz = ts_dtype_size(y->dtype);
    for (int64_t i = 0; i < y->numel; i++) memcpy((char *)y->data + i * (int64_t)esz, value, esz);
}

static ts_status k_pad(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0];
    int k;
    const int64_t *lo = ts_node_ints(n, "lo", &k), *hi = ts_node_ints(n, "hi", &k);
    const int64_t *interior = ts_node_ints(n, "interior", &k);
    int64_t shape[TS_MAX_RANK], box[TS_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (!padded(x->shape[i], lo[i], hi[i], interior[i], &shape[i]))
            return ts_err_set(ts_interp_err(r), TS_ERR_RUNTIME, "pad: axis %d: the padded size overflows", i);
        if (shape[i] < 0)
            return ts_err_set(ts_interp_err(r), TS_ERR_RUNTIME, "pad: axis %d crops more than its size %lld", i,
                              (long long)x->shape[i]);
    }
    TS_TRY(ts_interp_out_shape(r, n, 0, x->rank, shape, out));
    ts_tensor *y = out[0];
    fill(y, in[1]->data);
    ts_interp_view xv = ts_interp_view_dense(x), sv = xv, yv = ts_interp_view_dense(y), dv = {0};
    for (int i = 0; i < x->rank; i++) {
        /* steps only matter between two surviving elements, which bounds
         * them by the result size; keep the one-element case overflow-free */
        int64_t step = interior[i] < INT64_MAX ? interior[i] + 1 : INT64_MAX, first;
        pad_axis(x->shape[i], y->shape[i], lo[i], step, &first, &box[i]);
        if (box[i] == 0) return TS_OK;  /* nothing survives: all padding */
        sv.off += first * xv.st[i];
        dv.off += (lo[i] + first * step) * yv.st[i];
        dv.st[i] = box[i] > 1 ? step * yv.st[i] : 0;
    }
    ts_interp_copy_box(x->rank, box, ts_dtype_size(x->dtype), y->data, &dv, x->data, &sv);
    return TS_OK;
}

static ts_status k_concat(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    int axis = (int)ts_node_int(n, "axis");
    TS_TRY(ts_interp_out(r, n, 0, out));
    ts_tensor *y = out[0];
    ts_interp_view dv = ts_interp_view_dense(y);
    for (int k = 0; k < n->n_in; k++) {
        const ts_tensor *x = in[k];
        ts_interp_view sv = ts_interp_view_dense(x);
        ts_interp_copy_box(x->rank, x->shape, ts_dtype_size(x->dtype), y->data, &dv, x->data, &sv);
        dv.off += x->shape[axis] * dv.st[axis];
    }
    return TS_OK;
}

/* A flipped axis starts at its last element and steps backwards. */
static ts_status k_reverse(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0];
    int na;
    const int64_t *axes = ts_node_ints(n, "axes", &na);
    TS_TRY(ts_interp_out(r, n, 0, out));
    ts_interp_view sv = ts_interp_view_dense(x), yv = ts_interp_view_dense(out[0]);
    for (int i = 0; i < na; i++) {
        int64_t a = axes[i];
        if (x->shape[a] > 0) sv.off += (x->shape[a] - 1) * sv.st[a];
        sv.st[a] = -sv.st[a];
    }
    copy_whole(out[0], &yv, x, &sv);
    return TS_OK;
}

const ts_interp_kernel ts_interp_layout[TS_OP_COUNT] = {
    [TS_OP_CONST] = k_const,
    [TS_OP_IOTA] = k_iota,
    [TS_OP_RNG_UNIFORM] = k_rng_uniform,
    [TS_OP_RESHAPE] = k_reshape,
    [TS_OP_BROADCAST] = k_broadcast,
    [TS_OP_TRANSPOSE] = k_transpose,
    [TS_OP_SLICE] = k_slice,
    [TS_OP_PAD] = k_pad,
    [TS_OP_CONCAT] = k_concat,
    [TS_OP_REVERSE] = k_reverse,
};
