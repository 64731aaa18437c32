/* test_rt_conv_wgt.c — WINOGRAD4_T and WINOGRAD_T
 * (src/kernels/cpu/tsrt_conv_wgt.h): Winograd F(4x4, 3x3) and F(2x2, 3x3)
 * with the tiles as GEMM_T's rows, against a naive loop accumulating in
 * double within Winograd's error bound (wino_ref.h). Their weights are
 * packed once (tsrt_conv_pre_pack, forms TSRT_CONV_PRE_WGT4 and WGT2) in
 * uneven thread shares; it runs on 1-3 threads
 * (row tiles or panels split), with beta, the tile epilogue or a callback
 * that must see every output once, images a gap apart; tile counts that
 * leave short row tiles, several chunks, panels past O. Where AVX-512 is
 * missing (and not emulated) the path must refuse. */
#include "check.h"
#ifdef TSRT_TEST_AVX512_EMU
#include "avx512_emu.h" /* the AVX-512 kernel, emulated */
#endif
#include "kernels/cpu/tsrt_conv.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if TSRT_HAVE_WGT
#include "wino_ref.h"

#include "frand.h"

/* The callback: y += bias[o] then relu, counting each element's calls. */
typedef struct {
    const float *bias, *y0;
    int64_t o, plane;
    ptrdiff_t y_bs;
    int *count;
    int bad;
} epi_ctx;

static void epi_cb(void *vctx, float *c, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0, int64_t mb, int64_t nb)
{
    epi_ctx *e = vctx;
    const int64_t img = m0 / e->o, oc = m0 % e->o;
    if (rs != e->plane || cs != 1 || c != e->y0 + img * e->y_bs + oc * e->plane + n0 || oc + mb > e->o ||
        n0 + nb > e->plane) {
        e->bad++;
        return;
    }
    for (int64_t i = 0; i < mb; i++)
        for (int64_t j = 0; j < nb; j++) {
            float *x = c + i * rs + j;
            *x += e->bias[oc + i];
            if (*x < 0) *x = 0;
            e->count[(img * e->o + oc + i) * e->plane + n0 + j]++;
        }
}

enum { EPI_NONE, EPI_CB, EPI_TE };

/* Case (n, c, h x w, o) in form f on nth threads with beta, an epilogue
 * (EPI_*) and images gap floats apart; 1 when every output is within the
 * bound. */
static int wgt_case(int f, int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int nth, int beta, int epi,
                    int64_t gap)
{
    const int m = f == TSRT_CONV_PRE_WGT2 ? 2 : 4;
    const int algo = m == 2 ? TSRT_CONV_WINOGRAD_T : TSRT_CONV_WINOGRAD4_T;
    const int64_t plane = h * w, K = c * 9;
    const ptrdiff_t x_bs = c * plane + gap, y_bs = o * plane + gap;
    const size_t nx = (size_t)(n * x_bs), ny = (size_t)(n * y_bs), nw = (size_t)(o * K);
    float *x = malloc(nx * sizeof(float)), *wt = malloc(nw * sizeof(float)), *y = malloc(ny * sizeof(float));
    float *y_old = malloc(ny * sizeof(float)), *bias = malloc((size_t)(n * o) * sizeof(float));
    float *res = malloc(ny * sizeof(float));
    int *count = calloc((size_t)(n * o * plane), sizeof(int));
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) wt[i] = frand();
    for (size_t i = 0; i < ny; i++) y[i] = beta ? frand() : NAN, res[i] = frand();
    for (int64_t i = 0; i < n * o; i++) bias[i] = frand();
    memcpy(y_old, y, ny * sizeof(float));
    epi_ctx e = {bias, y, o, plane, y_bs, count, 0};
    /* te: a bias per (image, channel) row, the residual, max(., +0) */
    tsrt_tepi te = {.row = bias, .res = res, .res_rs = plane, .clamp = TSRT_TE_MAX | TSRT_TE_MAX_PZ};
    tsrt_conv_args cv = {.n = n, .c = c, .h = h, .w = w, .o = o, .kh = 3, .kw = 3, .oh = h, .ow = w, .pad_h = 1,
                         .pad_w = 1, .x = x, .wt = wt, .y = y, .x_bs = x_bs, .y_bs = y_bs, .beta = beta,
                         .epi = epi == EPI_CB ? epi_cb : NULL, .epi_ctx = &e, .te = epi == EPI_TE ? &te : NULL};
    const size_t ub = tsrt_conv_pre_size(&cv, f);
    float *u = malloc(ub);
    for (size_t i = 0; i < ub / sizeof(float); i++) u[i] = NAN;
    const int64_t cut[] = {0, o / 3, o / 3 + 1 + o / 4, o};
    for (int q = 0; q < 3; q++) tsrt_conv_pre_pack(&cv, f, cut[q], cut[q + 1], u);
    int ok = 1;
    for (size_t i = 0; i < ub / sizeof(float); i++) ok &= !isnan(u[i]);
    cv.wu = u, cv.wu_m = f;
    ok &= tsrt_conv_choose(&cv) == algo;
    const size_t wsz = tsrt_conv_workspace(&cv);
    unsigned char *ws = malloc(wsz + 3 + 64);
    memset(ws + 3 + wsz, 0x5A, 64);
    /* the shares last to first: one that writes past its tiles into the
     * next share's (as a run ending inside a lane group did) is not then
     * overwritten */
    for (int ith = nth - 1; ith >= 0; ith--) ok &= tsrt_conv(&cv, algo, ith, nth, ws + 3) == 0;
    for (int i = 0; i < 64; i++) ok &= ws[3 + wsz + i] == 0x5A;
    int printed = 0;
    for (int64_t img = 0; img < n; img++)
        for (int64_t oc = 0; oc < o; oc++)
            for (int64_t i = 0; i < h; i++)
                for (int64_t j = 0; j < w; j++) {
                    double s = 0, abs_s = 0;
                    const float *xi = x + img * x_bs;
                    for (int64_t cc = 0; cc < c; cc++)
                        for (int64_t a = 0; a < 3; a++)
                            for (int64_t b = 0; b < 3; b++) {
                                const int64_t iy = i - 1 + a, ix = j - 1 + b;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                const double p = (double)wt[(oc * c + cc) * 9 + a * 3 + b] *
                                                 (double)xi[(cc * h + iy) * w + ix];
                                s += p, abs_s += fabs(p);
                            }
                    const ptrdiff_t yi = img * y_bs + oc * plane + i * w + j;
                    if (beta) s += y_old[yi], abs_s += fabs(y_old[yi]);
                    double tol = (double)(K + 3) * FLT_EPSILON * abs_s;
                    if (epi != EPI_NONE) {
                        const double r = epi == EPI_TE ? res[yi] : 0;
                        s += bias[epi == EPI_TE ? img * o + oc : oc] + r;
                        tol += 4 * FLT_EPSILON * (fabs(s) + fabs(r) + 1);
                        if (s < 0) s = 0;
                        if (epi == EPI_CB && count[(img * o + oc) * plane + i * w + j] != 1) ok = 0;
                    }
                    /* Winograd's own bound where the direct one does not
                     * hold already (it is costly to compute) */
                    if (!(fabs((double)y[yi] - s) <= tol))
                        tol += (double)(c + 24) * FLT_EPSILON * wino_sum(m, xi, wt + oc * K, h, w, c, 1, 1, i, j);
                    if (!(fabs((double)y[yi] - s) <= tol)) {
                        ok = 0;
                        if (!printed++)
                            fprintf(stderr, "  img %lld oc %lld (%lld,%lld): got %g want %g\n", (long long)img,
                                    (long long)oc, (long long)i, (long long)j, y[yi], s);
                    }
                }
    /* nothing written between images */
    for (int64_t img = 0; img < n; img++)
        for (ptrdiff_t k = o * plane; k < y_bs; k++) {
            const float a = y[img * y_bs + k], b = y_old[img * y_bs + k];
            ok &= a == b || (isnan(a) && isnan(b));
        }
    ok &= e.bad == 0;
    free(x), free(wt), free(y), free(y_old), free(bias), free(res), free(count), free(u), free(ws);
    return ok;
}

static void test_cases(void)
{
    static const struct {
        int64_t n, c, h, w, o, gap;
        int beta, epi;
    } cases[] = {
        /* (tile counts for F(4x4); F(2x2) has about 4x as many) */
        {1, 64, 24, 24, 64, 0, 0, EPI_NONE}, /* 36 tiles: 3 row tiles of 12, 2 panels */
        {1, 16, 12, 12, 32, 0, 1, EPI_TE},   /* 9 tiles: one short row tile */
        {1, 24, 13, 13, 40, 3, 0, EPI_CB},   /* partial edge tiles; a panel of 8 past O = 40 */
        {3, 32, 10, 10, 32, 5, 1, EPI_CB},   /* 9 tiles per image: row tiles across images */
        {1, 300, 16, 16, 20, 0, 0, EPI_TE},  /* one row tile per chunk: 2 chunks (F(2x2): 5) */
        {9, 16, 6, 6, 33, 0, 0, EPI_NONE},   /* 4 tiles per image: a chunk spans many images */
        {1, 5, 5, 7, 3, 0, 1, EPI_NONE},     /* fewer channels than anything */
    };
    static const int forms[] = {TSRT_CONV_PRE_WGT4, TSRT_CONV_PRE_WGT2};
    for (int fi = 0; fi < 2; fi++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int nth = 1; nth <= 3; nth++)
                CHECK_MSG(wgt_case(forms[fi], cases[i].n, cases[i].c, cases[i].h, cases[i].w, cases[i].o, nth,
                                   cases[i].beta, cases[i].epi, cases[i].gap),
                          "%s case %zu nth %d", fi ? "winograd_t" : "winograd4_t", i, nth);
}

/* Form f's weights of each output channel scaled after packing
 * (tsrt_conv_pre_scale) against the packing of the scaled weights: equal
 * up to rounding, padding columns untouched. */
static void test_scale(int f)
{
    const int64_t XI = f == TSRT_CONV_PRE_WGT2 ? 16 : 36;
    const int64_t O = 40, C = 12;
    float *w = malloc(sizeof(float) * (size_t)(O * C * 9)), *w2 = malloc(sizeof(float) * (size_t)(O * C * 9));
    float sc[40];
    for (int64_t oc = 0; oc < O; oc++) {
        sc[oc] = 0.5f + 0.1f * (float)(oc % 7);
        for (int64_t q = 0; q < C * 9; q++) w[oc * C * 9 + q] = frand(), w2[oc * C * 9 + q] = w[oc * C * 9 + q] * sc[oc];
    }
    tsrt_conv_args b = {.n = 1, .c = C, .h = 9, .w = 9, .o = O, .kh = 3, .kw = 3, .oh = 9, .ow = 9, .pad_h = 1,
                        .pad_w = 1, .wt = w};
    const size_t n = tsrt_conv_pre_size(&b, f) / sizeof(float);
    CHECK(n == (size_t)(XI * 64 * C));
    float *u1 = malloc(n * sizeof(float)), *u2 = malloc(n * sizeof(float));
    tsrt_conv_pre_pack(&b, f, 0, O, u1);
    for (int64_t oc = 0; oc < O; oc++) tsrt_conv_pre_scale(&b, f, oc, sc[oc], u1);
    b.wt = w2;
    tsrt_conv_pre_pack(&b, f, 0, O, u2);
    int ok = 1, zero = 1;
    for (size_t i = 0; i < n; i++) {
        ok &= fabsf(u1[i] - u2[i]) <= 4e-6f * (1.0f + fabsf(u2[i]));
        if (i % 32 >= 8 && i / 32 % (2 * (size_t)C) >= (size_t)C) zero &= u1[i] == 0.0f; /* panel 1, columns past 40 */
    }
    CHECK_MSG(ok, "form %d: scaling the packed U^T differs from packing the scaled weights", f);
    CHECK_MSG(zero, "form %d: the padding columns of the last panel are not zero", f);
    free(w), free(w2), free(u1), free(u2);
}

#endif /* TSRT_HAVE_WGT */

/* Where the path applies, and its refusals. */
static void test_applies(void)
{
    static float dummy[64];
    tsrt_conv_args a = {.n = 1, .c = 16, .h = 24, .w = 24, .o = 32, .kh = 3, .kw = 3, .oh = 24, .ow = 24,
                        .pad_h = 1, .pad_w = 1, .x = dummy, .wt = dummy, .y = dummy, .wu = dummy,
                        .wu_m = TSRT_CONV_PRE_WGT4};
    CHECK(tsrt_conv_choose(&a) == (TSRT_HAVE_WGT ? TSRT_CONV_WINOGRAD4_T : TSRT_CONV_WINOGRAD4));
    CHECK(!strcmp(tsrt_conv_algo_name(TSRT_CONV_WINOGRAD4_T), "winograd4_t"));
    a.wu = NULL;
    CHECK(tsrt_conv(&a, TSRT_CONV_WINOGRAD4_T, 0, 1, dummy) == -1); /* no packed weights */
    a.wu = dummy, a.wu_m = 4;
    CHECK(tsrt_conv(&a, TSRT_CONV_WINOGRAD4_T, 0, 1, dummy) == -1); /* weights of another form */
    a.wu_m = TSRT_CONV_PRE_WGT4, a.groups = 2;
    CHECK(tsrt_conv(&a, TSRT_CONV_WINOGRAD4_T, 0, 1, dummy) == -1); /* groups */
    a.groups = 1, a.stride_h = 2, a.oh = 12;
    CHECK(tsrt_conv(&a, TSRT_CONV_WINOGRAD4_T, 0, 1, dummy) == -1); /* not Winograd's shape */
    a.stride_h = 1, a.oh = 24, a.wu_m = TSRT_CONV_PRE_WGT2;
    CHECK(tsrt_conv_choose(&a) == (TSRT_HAVE_WGT ? TSRT_CONV_WINOGRAD_T : TSRT_CONV_WINOGRAD4));
    CHECK(tsrt_conv(&a, TSRT_CONV_WINOGRAD4_T, 0, 1, dummy) == -1); /* F(2x2)'s weights */
    CHECK(!strcmp(tsrt_conv_algo_name(TSRT_CONV_WINOGRAD_T), "winograd_t"));
}

int main(void)
{
    printf("tsrt ISA %d (0 generic, 1 AVX2, 2 AVX-512), WINOGRAD4_T %s\n", TSRT_ISA,
           TSRT_HAVE_WGT ? "present" : "absent");
    test_applies();
#if TSRT_HAVE_WGT
    test_cases();
    test_scale(TSRT_CONV_PRE_WGT4);
    test_scale(TSRT_CONV_PRE_WGT2);
#endif
    return check_report();
}
