/* ops_nn.c — ONNX operators of the nn family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_nn[] = {
    {NULL, 0, 0, NULL},
};
