/* ops_shape.c — ONNX operators of the shape family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_shape[] = {
    {NULL, 0, 0, NULL},
};
