/* conv_check.h — the whole-convolution checker of test_rt_conv.c: a
 * case (ccase) run with one algorithm on nth threads against a naive
 * loop accumulating in double (run_conv), or with every algorithm that
 * applies (check_conv). Static functions: one test file includes it. */
#ifndef TS_TEST_CONV_CHECK_H
#define TS_TEST_CONV_CHECK_H

#include "check.h"
#include "kernels/cpu/tsrt_conv.h"
#include "wino_ref.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frand.h"

/* The epilogue: y = relu(y + bias[o] + residual[same index]), counting. */
typedef struct {
    const float *bias, *res;
    const float *y0;
    int64_t o, plane; /* O and OH*OW */
    ptrdiff_t y_bs;   /* image stride of y and of res */
    int *count;       /* per (image*O + o)*plane + position */
    int bad;
} epi_ctx;

static void epi_conv(void *vctx, float *c, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0, int64_t mb,
                     int64_t nb)
{
    epi_ctx *e = vctx;
    const int64_t img = m0 / e->o, oc = m0 % e->o;
    const ptrdiff_t off = img * e->y_bs + oc * e->plane + n0;
    if (rs != e->plane || cs != 1 || c != e->y0 + off || oc + mb > e->o || n0 + nb > e->plane || mb < 1 || nb < 1) {
        e->bad++;
        return;
    }
    for (int64_t i = 0; i < mb; i++)
        for (int64_t j = 0; j < nb; j++) {
            float *x = c + i * rs + j * cs;
            *x += e->bias[oc + i] + e->res[off + i * rs + j];
            if (*x < 0) *x = 0;
            e->count[m0 * e->plane + i * e->plane + n0 + j]++;
        }
}

typedef struct {
    int64_t n, c, h, w, o, kh, kw, groups;
    int64_t sh, sw, ph, pw, ph_hi, pw_hi, dh, dw, lh, lw;
    int beta, epi, pad_bs; /* pad_bs: image strides wider than dense */
} ccase;

/* Output size of one axis; <= 0 when the kernel does not fit. */
static int64_t out_size(int64_t n, int64_t k, int64_t s, int64_t lo, int64_t hi, int64_t d, int64_t ld)
{
    const int64_t in = n > 0 ? (n - 1) * ld + 1 : 0, span = (k - 1) * d + 1;
    const int64_t t = in + lo + hi - span;
    return t < 0 ? 0 : t / s + 1;
}

/* Runs case t with algorithm `algo` on nth threads; 1 when right.
 * perturb: damage one output before checking (the checker's own test). */
static int run_conv(const ccase *t, int algo, int nth, int perturb)
{
    const int64_t OH = out_size(t->h, t->kh, t->sh, t->ph, t->ph_hi, t->dh, t->lh);
    const int64_t OW = out_size(t->w, t->kw, t->sw, t->pw, t->pw_hi, t->dw, t->lw);
    const int64_t N = t->n, C = t->c, O = t->o, G = t->groups, CG = C / G, K = CG * t->kh * t->kw;
    const ptrdiff_t x_bs = C * t->h * t->w + (t->pad_bs ? 7 : 0), y_bs = O * OH * OW + (t->pad_bs ? 5 : 0);
    const size_t nx = (size_t)(N * x_bs + 1), ny = (size_t)(N * y_bs + 1), nw = (size_t)(O * K + 1);
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float)), *y = malloc(ny * sizeof(float));
    float *y_old = malloc(ny * sizeof(float)), *res = malloc(ny * sizeof(float));
    float *bias = malloc((size_t)(O + 1) * sizeof(float));
    int *count = calloc((size_t)(N * O * OH * OW + 1), sizeof(int));
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) w[i] = frand();
    for (size_t i = 0; i < ny; i++) y[i] = t->beta ? frand() : NAN, res[i] = frand();
    for (int64_t i = 0; i < O; i++) bias[i] = frand();
    memcpy(y_old, y, ny * sizeof(float));

    epi_ctx e = {bias, res, y, O, OH * OW, y_bs, count, 0};
    tsrt_conv_args cv = {.n = N, .c = C, .h = t->h, .w = t->w, .o = O, .kh = t->kh, .kw = t->kw, .oh = OH, .ow = OW,
                         .groups = G, .stride_h = t->sh, .stride_w = t->sw, .pad_h = t->ph, .pad_w = t->pw,
                         .dil_h = t->dh, .dil_w = t->dw, .ldil_h = t->lh, .ldil_w = t->lw, .x = x, .wt = w, .y = y,
                         .x_bs = t->pad_bs ? x_bs : 0, .y_bs = t->pad_bs ? y_bs : 0, .beta = t->beta,
                         .epi = t->epi ? epi_conv : NULL, .epi_ctx = &e};
    const size_t wsz = tsrt_conv_workspace(&cv);
    unsigned char *wbuf = malloc(wsz + 3 + 64);
    memset(wbuf + 3 + wsz, 0x5A, 64);
    int ok = 1;
    for (int ith = 0; ith < nth; ith++) ok &= tsrt_conv(&cv, algo, ith, nth, wbuf + 3) == 0;
    for (int i = 0; i < 64; i++) ok &= wbuf[3 + wsz + i] == 0x5A;
    if (perturb) y[(N - 1) * y_bs + O * OH * OW - 1] += 0.01f;

    int printed = 0;
    for (int64_t img = 0; img < N; img++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t i = 0; i < OH; i++)
                for (int64_t j = 0; j < OW; j++) {
                    const int64_t g = oc / (O / G);
                    double s = 0, abs_s = 0;
                    for (int64_t c = 0; c < CG; c++)
                        for (int64_t u = 0; u < t->kh; u++)
                            for (int64_t v = 0; v < t->kw; v++) {
                                int64_t iy = i * t->sh - t->ph + u * t->dh, ix = j * t->sw - t->pw + v * t->dw;
                                if (iy < 0 || ix < 0 || iy % t->lh || ix % t->lw) continue;
                                iy /= t->lh, ix /= t->lw;
                                if (iy >= t->h || ix >= t->w) continue;
                                const double p = (double)w[(oc * CG + c) * t->kh * t->kw + u * t->kw + v] *
                                                 (double)x[img * x_bs + ((g * CG + c) * t->h + iy) * t->w + ix];
                                s += p, abs_s += fabs(p);
                            }
                    const ptrdiff_t yi = img * y_bs + (oc * OH + i) * OW + j;
                    if (t->beta) s += y_old[yi], abs_s += fabs(y_old[yi]);
                    if (t->epi) {
                        s += bias[oc] + res[yi], abs_s += fabs(bias[oc]) + fabs(res[yi]);
                        if (s < 0) s = 0;
                        if (count[((img * O + oc) * OH + i) * OW + j] != 1) ok = 0;
                    }
                    double tol = (double)(K + 3) * FLT_EPSILON * abs_s;
                    const double err = fabs((double)y[yi] - s);
                    /* Winograd: the transform's own bound, where the direct
                     * one does not already hold (it is costly to compute). */
                    if (!(err <= tol) && (algo == TSRT_CONV_WINOGRAD || algo == TSRT_CONV_WINOGRAD4)) {
                        const int m = algo == TSRT_CONV_WINOGRAD ? 2 : 4;
                        tol += (double)(CG + (m == 2 ? 12 : 24)) * FLT_EPSILON *
                               wino_sum(m, x + img * x_bs + g * CG * t->h * t->w, w + oc * K, t->h, t->w, CG, t->ph,
                                        t->pw, i, j);
                    }
                    if (!(err <= tol)) {
                        ok = 0;
                        if (!perturb && !printed++)
                            fprintf(stderr, "  img %lld oc %lld (%lld,%lld): got %g want %g\n", (long long)img,
                                    (long long)oc, (long long)i, (long long)j, y[yi], s);
                    }
                }
    /* Between images (pad_bs), nothing may be written. */
    for (int64_t img = 0; t->pad_bs && img < N; img++)
        for (ptrdiff_t k = O * OH * OW; k < y_bs; k++) {
            const float a = y[img * y_bs + k], b = y_old[img * y_bs + k];
            if (!(a == b || (isnan(a) && isnan(b)))) ok = 0;
        }
    if (e.bad) ok = 0;
    free(x), free(w), free(y), free(y_old), free(res), free(bias), free(count), free(wbuf);
    return ok;
}

/* The case with every algorithm that applies and nth = 1..3. */
static void check_conv(const ccase *t)
{
    tsrt_conv_args cv = {.n = t->n, .c = t->c, .h = t->h, .w = t->w, .o = t->o, .kh = t->kh, .kw = t->kw,
                         .oh = out_size(t->h, t->kh, t->sh, t->ph, t->ph_hi, t->dh, t->lh),
                         .ow = out_size(t->w, t->kw, t->sw, t->pw, t->pw_hi, t->dw, t->lw), .groups = t->groups,
                         .stride_h = t->sh, .stride_w = t->sw, .pad_h = t->ph, .pad_w = t->pw, .dil_h = t->dh,
                         .dil_w = t->dw, .ldil_h = t->lh, .ldil_w = t->lw};
    const int dw = t->c == t->groups, one = tsrt__conv_is_1x1(&cv), wg = tsrt__conv_wg_applies(&cv);
    static const int algos[] = {TSRT_CONV_IM2COL,   TSRT_CONV_GEMM_1X1, TSRT_CONV_DEPTHWISE, TSRT_CONV_PHASED,
                                TSRT_CONV_WINOGRAD, TSRT_CONV_WINOGRAD4, TSRT_CONV_GROUPED};
    for (size_t ai = 0; ai < sizeof algos / sizeof algos[0]; ai++) {
        const int algo = algos[ai];
        if ((algo == TSRT_CONV_GEMM_1X1 && !one) || (algo == TSRT_CONV_DEPTHWISE && !dw)) continue;
        if ((algo == TSRT_CONV_WINOGRAD || algo == TSRT_CONV_WINOGRAD4) && !wg) continue;
        if (algo == TSRT_CONV_PHASED && (t->lh != 1 || t->lw != 1)) continue;
        if (algo == TSRT_CONV_GROUPED && !tsrt__grp_applies(&cv)) continue;
        for (int nth = 1; nth <= 3; nth++) {
            int ok = run_conv(t, algo, nth, 0);
            CHECK_MSG(ok, "%s nth=%d: n%lld c%lld %lldx%lld o%lld k%lldx%lld g%lld s%lld,%lld p%lld,%lld/%lld,%lld "
                          "d%lld,%lld ld%lld,%lld beta%d epi%d bs%d",
                      tsrt_conv_algo_name(algo), nth, (long long)t->n, (long long)t->c, (long long)t->h,
                      (long long)t->w, (long long)t->o, (long long)t->kh, (long long)t->kw, (long long)t->groups,
                      (long long)t->sh, (long long)t->sw, (long long)t->ph, (long long)t->pw, (long long)t->ph_hi,
                      (long long)t->pw_hi, (long long)t->dh, (long long)t->dw, (long long)t->lh, (long long)t->lw,
                      t->beta, t->epi, t->pad_bs);
        }
    }
}

#endif /* TS_TEST_CONV_CHECK_H */
