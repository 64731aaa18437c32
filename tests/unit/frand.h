/* frand.h — the kernel tests' random operands: a xorshift64 stream of
 * floats in [-1, 1), the same on every machine (test_rt_conv.c,
 * test_rt_conv_wgt.c, test_rt_gemm.c); a file may define TS_FRAND_SEED
 * first. Include after <stdint.h>. */
#ifndef TS_TEST_FRAND_H
#define TS_TEST_FRAND_H

#ifndef TS_FRAND_SEED
#define TS_FRAND_SEED 0x9E3779B97F4A7C15ull
#endif
static uint64_t rng_state = TS_FRAND_SEED;

static float frand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((double)(rng_state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

#endif /* TS_TEST_FRAND_H */
