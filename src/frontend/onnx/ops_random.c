/* ops_random.c — ONNX operators of the random family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_random[] = {
    {NULL, 0, 0, NULL},
};
