/* emit_cuda.c — the CUDA C dialect of the loop IR emitter: a kernel's
 * opening (signature, buffers, dims, the thread's share, tables) and the
 * program's preamble. Statements and expressions are the C emitter's
 * (codegen/cpu/emit_c.c) with its device switches (emit_int.h), as for
 * OpenCL (codegen/opencl/emit_cl.c). */
#include "codegen/cuda/emit_cuda.h"

#include "codegen/cpu/emit_int.h"

bool ts_emit_cuda_compiles(const ts_node *n)
{
    return ts_em_device_compiles(n);
}

static void cuda_open_fn(em *e, const ts_lkernel *k)
{
    ts_buf *out = e->out;
    for (int i = 0; i < k->n_tabs; i++) {   /* tables in constant memory, named after the kernel */
        ts_buf_printf(out, "__constant__ long long %s_tab%d[%d] = {", k->name, i, k->tabs[i].n);
        ts_em_tab_values(e, i);
        ts_buf_puts(out, "};\n");
    }
    ts_buf_printf(out, "\n/* %s */\nextern \"C\" __global__ void %s(", k->what, k->name);
    for (int i = 0; i < k->n_bufs; i++)
        ts_buf_printf(out, "%s%s%s *b%d_, long long o%d", i ? ", " : "", k->bufs[i].written ? "" : "const ",
                      ts_emit_ctype(k->bufs[i].dt), i, i);
    for (int i = 0; i < k->n_dims; i++) ts_buf_printf(out, "%slong long D%d", i || k->n_bufs ? ", " : "", i);
    ts_buf_puts(out, ")\n{\n");
    ts_buf_puts(out, "    const int ith = (int)(blockIdx.x * blockDim.x + threadIdx.x), nth = (int)(gridDim.x * "
                     "blockDim.x);\n");
    for (int i = 0; i < k->n_bufs; i++)
        ts_buf_printf(out, "    %s%s *__restrict__ b%d = b%d_ + o%d;\n", k->bufs[i].written ? "" : "const ",
                      ts_emit_ctype(k->bufs[i].dt), i, i, i);
    for (int i = 0; i < k->n_tabs; i++) ts_buf_printf(out, "    const long long *tab%d = %s_tab%d;\n", i, k->name, i);
}

static const ts_em_dialect cuda_dialect = {true, true, cuda_open_fn};

ts_status ts_emit_cuda_kernel(ts_buf *out, const ts_lkernel *k, ts_err *err)
{
    return ts_em_kernel(out, k, &cuda_dialect, err);
}

ts_status ts_emit_cuda(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err)
{
    static const char *const preamble[] = {"tsrt_cuda.h", "tsrt_int.h", NULL};
    return ts_em_program(out, preamble, n, kernels, &cuda_dialect, err);
}
