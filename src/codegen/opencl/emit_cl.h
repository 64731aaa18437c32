/* emit_cl.h — loop IR to OpenCL C: the shared emitter (codegen/cpu) in
 * its OpenCL dialect. A program is kernels/opencl/tsrt_cl.h, then one
 * kernel per loop IR kernel:
 *
 *     __kernel void NAME(__global T *b0_, long o0, ..., long D0, ...);
 *
 * b<i>_ + o<i> is the kernel's buffer i (ts_lkernel.bufs): a device buffer
 * and an element offset into it (a value in the run's arena, a part of a
 * concat written in place); D<k> the value of its run-time dim k. Work-item g of G runs the share (ith, nth) = (g, G) of
 * the parallel loop, so any global size computes the whole kernel (a
 * kernel without a parallel loop runs on work-item 0). */
#ifndef TS_CODEGEN_OPENCL_EMIT_CL_H
#define TS_CODEGEN_OPENCL_EMIT_CL_H

#include "lower/loop.h"

/* Whether the OpenCL dialect generates code for node n: the C emitter's
 * nodes but the contraction and sort templates (dot, conv, sort), which
 * are CPU C (their OpenCL kernels are a later step). */
bool ts_emit_cl_compiles(const ts_node *n);
/* Append the OpenCL C program for kernels[0..n) to out: the preamble,
 * then each kernel. */
ts_status ts_emit_cl(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err);
/* The same with a GPU's loop shape: work-item g of G runs iterations g,
 * g + G, ... of the parallel loop (neighbouring work-items on
 * neighbouring elements: coalesced), as the CUDA dialect does. */
ts_status ts_emit_cl_strided(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err);
/* Append kernel k alone (for a program whose preamble is written). */
ts_status ts_emit_cl_kernel(ts_buf *out, const ts_lkernel *k, ts_err *err);

#endif
