/* ops_table.c — the operator table: every ONNX operator tessera assembles,
 * with the opset range each function handles. The rows live in one table
 * per family (ops_*.c) so that each family's file stays whole; this file
 * joins them, and test_onnx_table checks that no (op_type, opset) is
 * claimed twice. */
#include "frontend/onnx/onnx.h"

#include <string.h>

static const onnx_op_entry *const families[] = {
    onnx_ops_elementwise, onnx_ops_reduce, onnx_ops_nn, onnx_ops_conv, onnx_ops_einsum, onnx_ops_deform,
    onnx_ops_shape, onnx_ops_pad, onnx_ops_index, onnx_ops_resize,
    onnx_ops_rnn, onnx_ops_control, onnx_ops_quant, onnx_ops_random, onnx_ops_misc, onnx_ops_signal, onnx_ops_loss,
    onnx_ops_attention, onnx_ops_newer, onnx_ops_sequence,
};

onnx_op_fn onnx_find_op(const char *op_type, int opset)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const onnx_op_entry *e = families[f]; e->op_type; e++)
            if (strcmp(e->op_type, op_type) == 0 && opset >= e->since && opset <= e->until) return e->fn;
    return NULL;
}

void onnx_each_op(void (*fn)(const onnx_op_entry *e, void *ud), void *ud)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const onnx_op_entry *e = families[f]; e->op_type; e++) fn(e, ud);
}
