/* tsrt_conv_args.h — what every convolution algorithm shares: the
 * arguments (tsrt_conv_args), the algorithm ids, the normalisation of
 * defaults, and the shape tests that decide which algorithms apply.
 * The API and the algorithms are described in tsrt_conv.h; this part is
 * pasted first so that each algorithm's header needs only it, and alone
 * into a generated unit that only calls the API. */
#ifndef TSRT_CONV_ARGS_H
#define TSRT_CONV_ARGS_H

#ifndef TSRT_COMMON_H
#include "tsrt_common.h"
#endif

typedef struct tsrt_conv_args {
    int64_t n, c, h, w;    /* input x[n][c][h][w] */
    int64_t o, kh, kw;     /* weights w[o][c/groups][kh][kw] */
    int64_t oh, ow;        /* output y[n][o][oh][ow] */
    int64_t groups;        /* 0 means 1 */
    int64_t stride_h, stride_w; /* 0 means 1 */
    int64_t pad_h, pad_w;  /* low (top, left) padding, may be negative */
    int64_t dil_h, dil_w;  /* kernel dilation, 0 means 1 */
    int64_t ldil_h, ldil_w; /* input dilation (transposed conv), 0 means 1 */
    const float *x, *wt;  /* input, weights */
    float *y;
    ptrdiff_t x_bs, y_bs;  /* image strides; 0: dense (c*h*w, o*oh*ow) */
    int beta;              /* 0: y = conv; 1: y += conv */
    tsrt_epilogue_fn epi;  /* NULL: none */
    void *epi_ctx;
    /* The epilogue as data (tsrt_common.h; rows m0 = image * O + channel),
     * used in place of epi by every algorithm, or NULL. */
    const tsrt_tepi *te;
    /* The weights prepared once per program from constant weights
     * (tsrt_conv_pre_pack), or NULL: wu_m = 2 or 4, in Winograd
     * F(wu_m x wu_m) form (D38); wu_m = 1, W^T in panels for GEMM_T
     * (tsrt_conv_pt.h, D41); TSRT_CONV_PRE_WGT4 / WGT2, F(4x4)'s /
     * F(2x2)'s U^T in panels for WINOGRAD4_T / WINOGRAD_T
     * (tsrt_conv_wgt.h, D153). */
    const float *wu;
    int wu_m;
    /* The threads the calls will run on (tsrt_conv's nth; 0 means 1):
     * tsrt_conv_pre times the forms as split over that many (D130). */
    int threads;
} tsrt_conv_args;

enum {
    TSRT_CONV_AUTO = 0, /* tsrt_conv_choose's pick */
    TSRT_CONV_IM2COL = 1,
    TSRT_CONV_GEMM_1X1 = 2,
    TSRT_CONV_DEPTHWISE = 3,
    TSRT_CONV_PHASED = 4,
    TSRT_CONV_WINOGRAD = 5,
    TSRT_CONV_WINOGRAD4 = 6,
    TSRT_CONV_GEMM_T = 7,
    TSRT_CONV_WINOGRAD4_T = 8,
    TSRT_CONV_WINOGRAD_T = 9,
    TSRT_CONV_GROUPED = 10
};

/* The forms of prepared weights (tsrt_conv_pre): 4 and 2, Winograd
 * F(m x m)'s transform; 1, GEMM_T's W^T panels; WGT4 and WGT2, F(4x4)'s
 * and F(2x2)'s transform as panels for WINOGRAD4_T and WINOGRAD_T; 0, none (the algorithm chosen
 * from the shape); PLAIN, none, and the algorithm is the GEMM path
 * without Winograd (GEMM_1X1, PHASED or IM2COL): what tuning picked
 * (D126). */
enum { TSRT_CONV_PRE_PLAIN = -1, TSRT_CONV_PRE_WGT2 = 3, TSRT_CONV_PRE_WGT4 = 5 };

/* The entry points (defined in tsrt_conv.h; declared here so that a unit
 * that only calls them pastes this header, docs/compiler.md). */
TSRT_FN int tsrt_conv_choose(const tsrt_conv_args *args);
TSRT_FN size_t tsrt_conv_workspace(const tsrt_conv_args *args);
TSRT_FN int tsrt_conv(const tsrt_conv_args *args, int algo, int ith, int nth, void *ws);
TSRT_FN int tsrt_conv_pre(const tsrt_conv_args *args);
TSRT_FN size_t tsrt_conv_pre_size(const tsrt_conv_args *args, int m);
TSRT_FN void tsrt_conv_pre_pack(const tsrt_conv_args *args, int m, int64_t o0, int64_t o1, float *dst);
TSRT_FN void tsrt_conv_pre_scale(const tsrt_conv_args *args, int m, int64_t o, float s, float *u);
TSRT_FN int tsrt_conv_wg_pre(const tsrt_conv_args *args);
TSRT_FN size_t tsrt_conv_wg_size(const tsrt_conv_args *args, int m);
TSRT_FN void tsrt_conv_wg_pack(const tsrt_conv_args *args, int m, int64_t o0, int64_t o1, float *dst);
TSRT_FN void tsrt_conv_wg_scale(const tsrt_conv_args *args, int m, int64_t o, float s, float *u);

/* An algorithm id's name (inline: every unit may print one). */
static inline const char *tsrt_conv_algo_name(int algo)
{
    static const char *const names[] = {"auto",     "im2col",    "gemm_1x1", "depthwise",   "phased",
                                        "winograd", "winograd4", "gemm_t",   "winograd4_t", "winograd_t", "grouped"};
    return algo >= 0 && algo <= 10 ? names[algo] : "?";
}

/* The epilogue on the finished block y (mb x nb, row stride rs, unit
 * columns) at epilogue coordinates (m0, n0): te when given (every
 * algorithm honours it), else the callback. */
static inline void tsrt__conv_epi(const tsrt_conv_args *v, float *y, ptrdiff_t rs, int64_t m0, int64_t n0, int64_t mb,
                                  int64_t nb)
{
    if (v->te) {
        const tsrt_tepi t = tsrt__te_at(v->te, m0, n0);
        tsrt__te_tile(&t, y, rs, mb, nb);
    }
    if (v->epi) v->epi(v->epi_ctx, y, rs, 1, m0, n0, mb, nb);
}

/* The arguments with defaults applied (0 -> 1, 0 -> dense strides). */
static inline tsrt_conv_args tsrt__conv_norm(const tsrt_conv_args *a)
{
    tsrt_conv_args v = *a;
#define TSRT__ONE(f) if (v.f < 1) v.f = 1
    TSRT__ONE(groups);
    TSRT__ONE(stride_h);
    TSRT__ONE(stride_w);
    TSRT__ONE(dil_h);
    TSRT__ONE(dil_w);
    TSRT__ONE(ldil_h);
    TSRT__ONE(ldil_w);
#undef TSRT__ONE
    if (!v.x_bs) v.x_bs = v.c * v.h * v.w;
    if (!v.y_bs) v.y_bs = v.o * v.oh * v.ow;
    /* every algorithm honours te: the callback is then what follows it */
    if (v.te) v.epi = v.te->rest, v.epi_ctx = v.te->rest_ctx;
    return v;
}

/* 3x3, stride 1, no dilation of either kind: Winograd F(2x2, 3x3) applies. */
static inline int tsrt__conv_wg_applies(const tsrt_conv_args *v)
{
    return v->kh == 3 && v->kw == 3 && v->stride_h == 1 && v->stride_w == 1 && v->dil_h == 1 && v->dil_w == 1 &&
           v->ldil_h == 1 && v->ldil_w == 1;
}

static inline int tsrt__conv_is_1x1(const tsrt_conv_args *v)
{
    return v->kh == 1 && v->kw == 1 && v->stride_h == 1 && v->stride_w == 1 && v->pad_h == 0 && v->pad_w == 0 &&
           v->ldil_h == 1 && v->ldil_w == 1 && v->oh == v->h && v->ow == v->w;
}
/* The j with 0 <= j*s + off < n, as [lo, hi) within [0, m). */
static inline void tsrt__tap_range(int64_t off, int64_t s, int64_t n, int64_t m, int64_t *lo, int64_t *hi)
{
    *lo = off >= 0 ? 0 : (-off + s - 1) / s;
    *hi = n - 1 - off < 0 ? 0 : tsrt__min(m, (n - 1 - off) / s + 1);
    if (*lo > *hi) *lo = *hi;
}

#endif /* TSRT_CONV_ARGS_H */
