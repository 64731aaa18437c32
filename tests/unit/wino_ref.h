/* wino_ref.h — Winograd F(m x m, 3x3)'s error bound for one output, the
 * tolerance of the Winograd convolutions' tests (test_rt_conv.c,
 * test_rt_conv_wgt.c). Include after <math.h> and <stdint.h>. */
#ifndef TS_TEST_WINO_REF_H
#define TS_TEST_WINO_REF_H

/* Winograd F(m x m, 3x3)'s error bound for output (i, j) of channel oc:
 * with Y = A^T [sum_c (G g G^T) . (B^T d B)] A, every intermediate is a
 * short sum, so |error| <= (C/G + c_m) eps S, where S is the same
 * expression with every matrix entry and datum replaced by its absolute
 * value: the C/G-term sum of the GEMM plus the roundings of the
 * transforms (m = 2: 2 in B^T d B, 4 in G g G^T, 4 in the output
 * transform, c_2 = 12; m = 4: up to 6, 8 and 8, c_4 = 24). For m = 2, S is
 * at most a few times the direct sum of |terms|; for m = 4 the entries of
 * up to 8 (A) and 5 (B) make it 10-100 times larger. */
static double wino_sum(int m, const float *x, const float *w, int64_t H, int64_t W, int64_t CG, int64_t ph,
                       int64_t pw, int64_t i, int64_t j)
{
    static const double AT2[2][4] = {{1, 1, 1, 0}, {0, 1, 1, 1}};
    static const double G2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, .5, .5}, {0, 0, 1}};
    static const double BT2[4][4] = {{1, 0, 1, 0}, {0, 1, 1, 0}, {0, 1, 1, 0}, {0, 1, 0, 1}};
    static const double AT4[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, 1, 2, 2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, 1, 8, 8, 1}};
    static const double G4[6][3] = {{1. / 4, 0, 0},          {1. / 6, 1. / 6, 1. / 6},  {1. / 6, 1. / 6, 1. / 6},
                                    {1. / 24, 1. / 12, 1. / 6}, {1. / 24, 1. / 12, 1. / 6}, {0, 0, 1}};
    static const double BT4[6][6] = {{4, 0, 5, 0, 1, 0}, {0, 4, 4, 1, 1, 0}, {0, 4, 4, 1, 1, 0},
                                     {0, 2, 1, 2, 1, 0}, {0, 2, 1, 2, 1, 0}, {0, 4, 0, 5, 0, 1}};
    const int a = m + 2;
#define AT_(r, c) (m == 2 ? AT2[r][c] : AT4[r][c])
#define G_(r, c) (m == 2 ? G2[r][c] : G4[r][c])
#define BT_(r, c) (m == 2 ? BT2[r][c] : BT4[r][c])
    const int64_t ti = i % m, tj = j % m, y0 = i - ti - ph, x0 = j - tj - pw;
    double S = 0;
    for (int r = 0; r < a; r++)
        for (int q = 0; q < a; q++) {
            if (!AT_(ti, r) || !AT_(tj, q)) continue;
            double sum = 0;
            for (int64_t c = 0; c < CG; c++) {
                double u = 0, v = 0;
                for (int k = 0; k < 3; k++)
                    for (int l = 0; l < 3; l++) u += G_(r, k) * G_(q, l) * fabs(w[(c * 3 + k) * 3 + l]);
                for (int k = 0; k < a; k++)
                    for (int l = 0; l < a; l++) {
                        const int64_t iy = y0 + k, ix = x0 + l;
                        if (iy >= 0 && iy < H && ix >= 0 && ix < W) v += BT_(r, k) * BT_(q, l) * fabs(x[(c * H + iy) * W + ix]);
                    }
                sum += u * v;
            }
            S += AT_(ti, r) * AT_(tj, q) * sum;
        }
#undef AT_
#undef G_
#undef BT_
    return S;
}

#endif /* TS_TEST_WINO_REF_H */
