/* ops_quant.c — ONNX operators of the quant family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_quant[] = {
    {NULL, 0, 0, NULL},
};
