/* ops_elementwise.c — ONNX operators of the elementwise family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_elementwise[] = {
    {NULL, 0, 0, NULL},
};
