/* cuda.h — what the CUDA target (backend_cuda.c) offers beside its
 * ts_backend: NVRTC on its own, which needs no GPU, so that CI compiles
 * every generated CUDA kernel on machines without one (test_emit_cuda). */
#ifndef TS_BACKEND_CUDA_H
#define TS_BACKEND_CUDA_H

#include "core/core.h"

/* Compile CUDA C src with NVRTC (loaded with dlopen: TS_NVRTC names the
 * library, else libnvrtc.so and its versioned names, then the CUDA
 * toolkit's folders) for virtual architecture arch ("compute_80"); *ptx
 * the PTX (ts_mem_free it). TS_ERR_TOOLCHAIN when there is no NVRTC,
 * TS_ERR_INTERNAL with NVRTC's log when src does not compile. */
ts_status ts_cuda_compile_ptx(const char *src, const char *arch, char **ptx, ts_err *err);
/* The same through NVRTC's front end only (-fdevice-syntax-only): every
 * error of the source, no PTX, ~50x faster. */
ts_status ts_cuda_check_source(const char *src, const char *arch, ts_err *err);

#endif
