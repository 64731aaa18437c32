/* emit_cuda.h — loop IR to CUDA C: the shared emitter (codegen/cpu) in
 * its CUDA dialect. A program is kernels/cuda/tsrt_cuda.h and
 * kernels/cpu/tsrt_int.h, then one kernel per loop IR kernel:
 *
 *     extern "C" __global__ void NAME(T *b0_, long long o0, ..., long long D0, ...);
 *
 * b<i>_ + o<i> is the kernel's buffer i (ts_lkernel.bufs): a device
 * pointer and an element offset (a value in the run's arena, a part of a
 * concat written in place); D<k> the value of its run-time dim k. Thread
 * g of G (over the grid) runs iterations g, g + G, ... of the parallel
 * loop (neighbouring threads on neighbouring elements: a warp's accesses
 * coalesce), so any launch shape computes the whole kernel. NVRTC
 * compiles it with -default-device (the preamble's plain functions are
 * device functions). */
#ifndef TS_CODEGEN_CUDA_EMIT_CUDA_H
#define TS_CODEGEN_CUDA_EMIT_CUDA_H

#include "lower/loop.h"

/* Whether the CUDA dialect generates code for node n (the device
 * dialects' answer: ts_em_device_compiles). */
bool ts_emit_cuda_compiles(const ts_node *n);
/* Append the CUDA C program for kernels[0..n) to out: the preamble, then
 * each kernel. */
ts_status ts_emit_cuda(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err);
/* Append kernel k alone (for a program whose preamble is written). */
ts_status ts_emit_cuda_kernel(ts_buf *out, const ts_lkernel *k, ts_err *err);

#endif
