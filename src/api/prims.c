/* prims.c — the primitive table behind the public header (ir/ops.def
 * through ts_op_get, and whether the interpreter runs each one). */
#include "interp/interp.h"
#include "ir/ir.h"

int ts_prim_count(void) { return TS_OP_COUNT; }

ts_status ts_prim_describe(int i, ts_prim_desc *out, ts_err *err)
{
    if (i < 0 || i >= TS_OP_COUNT || !out)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "primitive %d: there are %d", i, TS_OP_COUNT);
    const ts_op_info *info = ts_op_get((ts_op)i);
    *out = (ts_prim_desc){.name = info->name, .min_in = info->min_in, .max_in = info->max_in, .n_out = info->n_out,
                          .flags = info->flags, .attrs = info->schema_text ? info->schema_text : "",
                          .n_regions = info->n_regions, .region_names = info->region_names};
    out->interp = ts_interp_declared_only((ts_op)i) ? 2 : ts_interp_kernel_of((ts_op)i) ? 1 : 0;
    return TS_OK;
}

const char *ts_prim_flag_name(int bit)
{
    /* in the order of TS_OPF_* (ir/ir.h) */
    _Static_assert(TS_OPF_EW == 1 << 0 && TS_OPF_LAYOUT == 1 << 4 && TS_OPF_FRESH == 1 << 7, "flag bits moved");
    static const char *const names[] = {"ew", "comm", "cmp", "reduce", "layout", "control", "side", "fresh"};
    return bit >= 0 && bit < (int)(sizeof names / sizeof names[0]) ? names[bit] : NULL;
}

int ts_prim_count_tests(const char *dir, int *counts, ts_err *err)
{
    if (!dir || !counts) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_prim_count_tests: NULL argument"), -1;
    return ts_ir_count_op_cases(dir, counts, err);
}
