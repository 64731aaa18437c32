/* tsrt_gemm_api.h — the interface of tsrt_gemm.h: the arguments of an
 * fp32 GEMM and its four entry points, without their definitions. A
 * generated unit that only calls the GEMM pastes this header; the unit
 * that compiles the kernels (the runtime unit, docs/compiler.md) pastes
 * tsrt_gemm.h, which includes it and defines them. Usage and the loop
 * nest: tsrt_gemm.h. */
#ifndef TSRT_GEMM_API_H
#define TSRT_GEMM_API_H

#ifndef TSRT_COMMON_H
#include "tsrt_common.h"
#endif

/* ---- arguments ----------------------------------------------------------------- */

typedef struct tsrt_sgemm_args {
    int64_t m, n, k;
    const float *a;
    ptrdiff_t a_rs, a_cs; /* A[i][p] = a[i*a_rs + p*a_cs] */
    const float *b;
    ptrdiff_t b_rs, b_cs; /* B[p][j] = b[p*b_rs + j*b_cs] */
    float *c;
    ptrdiff_t c_rs, c_cs; /* C[i][j] = c[i*c_rs + j*c_cs] */
    int beta;             /* 0: C = A·B (C not read); 1: C += A·B */
    tsrt_epilogue_fn epi; /* NULL: none */
    void *epi_ctx;
    /* Batched product: batch > 1 computes C_b = A_b·B_b for b < batch, with
     * X_b = x + b*x_bs. 0 or 1: one product (the strides are ignored). The
     * epilogue sees m0 = b*m + row. */
    int64_t batch;
    ptrdiff_t a_bs, b_bs, c_bs;
    /* B already packed by tsrt_sgemm_pack_b from these same arguments, or
     * NULL (B is packed per call). A constant weight packed once saves
     * every call the packing, ~1/8 of the multiply-adds when M = 128, and
     * the strided reads of the source rows. Ignored for a batch with its
     * own B per product (b_bs != 0) and when the driver transposes the
     * problem (column-major C): B is then packed per call as usual. */
    const float *bp;
    /* The epilogue as data (tsrt_common.h), applied to each tile in
     * registers, or NULL. When set, epi must compute the same: it still
     * runs where te cannot (a column-major C). */
    const tsrt_tepi *te;
} tsrt_sgemm_args;

/* ---- entry points (defined in tsrt_gemm.h) ----------------------------------- */

/* Bytes of workspace each thread needs for an m x n x k product. */
TSRT_FN size_t tsrt_sgemm_workspace(int64_t m, int64_t n, int64_t k);
/* C = A·B (+ C), the part of thread ith of nth. */
TSRT_FN void tsrt_sgemm(const tsrt_sgemm_args *g, int ith, int nth, void *ws);
/* Bytes tsrt_sgemm_pack_b writes for g. */
TSRT_FN size_t tsrt_sgemm_packed_b_size(const tsrt_sgemm_args *g);
/* g's B packed into dst as tsrt_sgemm reads it through g->bp. */
TSRT_FN void tsrt_sgemm_pack_b(const tsrt_sgemm_args *g, float *dst, int ith, int nth);

#endif /* TSRT_GEMM_API_H */
