/* emit_cl.c — the OpenCL C dialect of the loop IR emitter: a kernel's
 * opening (signature, buffers, dims, work-item share, tables) and the
 * program's preamble. Statements and expressions are the C emitter's
 * (codegen/cpu/emit_c.c) with its dialect switches (emit_int.h). */
#include "codegen/opencl/emit_cl.h"

#include "codegen/cpu/emit_int.h"

bool ts_emit_cl_compiles(const ts_node *n)
{
    return ts_em_device_compiles(n);
}

static void cl_open_fn(em *e, const ts_lkernel *k)
{
    ts_buf *out = e->out;
    /* OpenCL C 1.2 has no static arrays in functions: tables live at
     * program scope, named after the kernel */
    for (int i = 0; i < k->n_tabs; i++) {
        ts_buf_printf(out, "__constant long %s_tab%d[%d] = {", k->name, i, k->tabs[i].n);
        ts_em_tab_values(e, i);
        ts_buf_puts(out, "};\n");
    }
    ts_buf_printf(out, "\n/* %s */\n__kernel void %s(", k->what, k->name);
    for (int i = 0; i < k->n_bufs; i++)
        ts_buf_printf(out, "%s__global %s%s *b%d_, long o%d", i ? ", " : "", k->bufs[i].written ? "" : "const ",
                      ts_emit_ctype(k->bufs[i].dt), i, i);
    for (int i = 0; i < k->n_dims; i++) ts_buf_printf(out, "%slong D%d", i || k->n_bufs ? ", " : "", i);
    ts_buf_puts(out, ")\n{\n");
    ts_buf_puts(out, "    const int ith = (int)get_global_id(0), nth = (int)get_global_size(0);\n");
    for (int i = 0; i < k->n_bufs; i++)
        ts_buf_printf(out, "    __global %s%s *restrict b%d = b%d_ + o%d;\n", k->bufs[i].written ? "" : "const ",
                      ts_emit_ctype(k->bufs[i].dt), i, i, i);
    for (int i = 0; i < k->n_tabs; i++) ts_buf_printf(out, "    __constant long *tab%d = %s_tab%d;\n", i, k->name, i);
}

static const ts_em_dialect cl_dialect = {true, false, cl_open_fn};
static const ts_em_dialect cl_dialect_strided = {true, true, cl_open_fn};

ts_status ts_emit_cl_kernel(ts_buf *out, const ts_lkernel *k, ts_err *err)
{
    return ts_em_kernel(out, k, &cl_dialect, err);
}

ts_status ts_emit_cl(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err)
{
    static const char *const preamble[] = {"tsrt_cl.h", "tsrt_int.h", NULL};
    return ts_em_program(out, preamble, n, kernels, &cl_dialect, err);
}

ts_status ts_emit_cl_strided(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err)
{
    static const char *const preamble[] = {"tsrt_cl.h", "tsrt_int.h", NULL};
    return ts_em_program(out, preamble, n, kernels, &cl_dialect_strided, err);
}
