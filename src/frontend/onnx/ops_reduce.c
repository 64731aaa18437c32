/* ops_reduce.c — ONNX operators of the reduce family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_reduce[] = {
    {NULL, 0, 0, NULL},
};
