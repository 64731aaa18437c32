/* test_rt_conv_tables.c — the tables the conv kernels precompute
 * (src/kernels/cpu) against their definitions, entry by entry: the
 * AVX-512 depthwise path's per-vector masks and the phase copy's offsets
 * (D83). Split from test_rt_conv.c, whose cases run whole convolutions. */
#include "check.h"
#ifdef TSRT_TEST_AVX512_EMU
#include "avx512_emu.h" /* the AVX-512 kernel, emulated */
#endif
#include "kernels/cpu/tsrt_conv.h"

#include <stddef.h>
#include <stdint.h>

/* The stride-1 AVX-512 depthwise path's per-vector masks (tsrt__dwz_tab,
 * computed per vector from the first lane's column, D83) against their
 * definition lane by lane: in the plane, and of those the lanes whose
 * left, right, upper, lower taps are inside it. Widths below 16 put
 * several row starts in one vector, 1 makes every lane one. */
static void test_dwz_masks(void)
{
#if TSRT_ISA == TSRT_ISA_AVX512
    static tsrt__dwz_m tab[(120 * 120 + 15) / 16];
    int bad = 0;
    for (int64_t H = 1; H <= 120; H += H < 40 ? 1 : 9)
        for (int64_t W = 1; W <= 120; W += W < 40 ? 1 : 9) {
            tsrt__dwz_tab(H, W, tab);
            for (int64_t c = 0; c < (H * W + 15) / 16; c++) {
                tsrt__dwz_m want = {0, 0, 0, 0, 0};
                for (int l = 0; l < 16 && 16 * c + l < H * W; l++) {
                    const int64_t i = (16 * c + l) / W, j = (16 * c + l) % W;
                    const __mmask16 bit = (__mmask16)(1u << l);
                    want.in |= bit;
                    want.l |= j > 0 ? bit : 0;
                    want.r |= j < W - 1 ? bit : 0;
                    want.t |= i > 0 ? bit : 0;
                    want.b |= i < H - 1 ? bit : 0;
                }
                const tsrt__dwz_m got = tab[c];
                if (got.in != want.in || got.l != want.l || got.r != want.r || got.t != want.t || got.b != want.b) {
                    if (!bad++)
                        CHECK_MSG(0, "dwz masks %lldx%lld, vector %lld", (long long)H, (long long)W, (long long)c);
                    break;
                }
            }
        }
    CHECK(bad == 0);
#endif
}

/* The phase copy's offsets (tsrt__phx_offsets, built per tap and then per
 * channel, D83) against their definition per k = (c, u, w): channel c's
 * phase (u dil_h mod stride_h, w dil_w mod stride_w), then the tap's row
 * and column within it. Strides 1-3, dilations 1-2, 1-7 channels per
 * group, windows 1x1 to 5x3. */
static void test_phx_offsets(void)
{
    static ptrdiff_t off[7 * 5 * 3];
    int bad = 0;
    for (int64_t c = 1; c <= 7; c += 2)
        for (int64_t kh = 1; kh <= 5; kh += 2)
            for (int64_t s = 1; s <= 3; s++)
                for (int64_t d = 1; d <= 2; d++) {
                    tsrt_conv_args a = {0};
                    a.n = 1, a.c = 2 * c, a.o = 2, a.groups = 2, a.h = 19, a.w = 11, a.kh = kh, a.kw = 3;
                    a.stride_h = s, a.stride_w = 4 - s, a.dil_h = d, a.dil_w = 3 - d, a.pad_h = 1;
                    const tsrt_conv_args v = tsrt__conv_norm(&a);
                    tsrt__phx g;
                    tsrt__phx_geom(&v, &g);
                    tsrt__phx_offsets(&g, off);
                    for (int64_t k = 0; k < c * kh * 3; k++) {
                        const int64_t ch = k / (kh * 3), u = k / 3 % kh * v.dil_h, w = k % 3 * v.dil_w;
                        const int64_t ph = (ch * g.PH + u % v.stride_h) * g.PW + w % v.stride_w;
                        bad += off[k] != ph * g.plane + u / v.stride_h * g.Wq + w / v.stride_w;
                    }
                }
    CHECK_MSG(bad == 0, "%d phase offsets wrong", bad);
}

int main(void)
{
    test_dwz_masks();
    test_phx_offsets();
    return check_report();
}
