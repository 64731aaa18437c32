/* ops_index.c — ONNX operators of the index family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_index[] = {
    {NULL, 0, 0, NULL},
};
