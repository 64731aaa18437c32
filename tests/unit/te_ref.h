/* te_ref.h — the callback form of a tile epilogue (tsrt_tepi), written out
 * element by element as the emitter writes an epilogue: what the runtime
 * templates must reproduce bit for bit when given the descriptor instead
 * (test_rt_gemm.c, test_rt_conv.c). Include after the tsrt headers. */
#ifndef TS_TEST_TE_REF_H
#define TS_TEST_TE_REF_H

typedef struct {
    const tsrt_tepi *te;
    int calls; /* how often the callback ran */
    int rest;  /* te_rest_fn follows the terms: a split epilogue (D138) */
} te_ctx;

/* What follows the terms of a split epilogue: a function of the element
 * alone (a SiLU in a real one; a square keeps the bits exact). */
static inline float te_rest_fn(float v) { return v * v - 0.5f * v; }

/* tsrt_tepi.rest: te_rest_fn on each element of the block. */
static void epi_rest(void *vctx, float *c, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0, int64_t mb, int64_t nb)
{
    te_ctx *e = vctx;
    (void)m0, (void)n0;
    e->calls++;
    for (int64_t i = 0; i < mb; i++)
        for (int64_t j = 0; j < nb; j++) c[i * rs + j * cs] = te_rest_fn(c[i * rs + j * cs]);
}

static void epi_te(void *vctx, float *c, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0, int64_t mb, int64_t nb)
{
    te_ctx *e = vctx;
    const tsrt_tepi *te = e->te;
    e->calls++;
    for (int64_t i = 0; i < mb; i++)
        for (int64_t j = 0; j < nb; j++) {
            float v = c[i * rs + j * cs];
            const int64_t r = m0 + i, q = n0 + j;
            if (te->row) v = v + te->row[r];
            if (te->col) v = v + te->col[q];
            if (te->res) v = v + te->res[r * te->res_rs + q];
            if (te->clamp & TSRT_TE_MAX) v = (v < te->lo ? te->lo : v) + ((te->clamp & TSRT_TE_MAX_PZ) ? 0.0f : -0.0f);
            if (te->clamp & TSRT_TE_MIN) v = v > te->hi ? te->hi : v;
            c[i * rs + j * cs] = e->rest ? te_rest_fn(v) : v;
        }
}

#endif
