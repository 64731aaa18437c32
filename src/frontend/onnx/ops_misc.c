/* ops_misc.c — ONNX operators of the misc family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_misc[] = {
    {NULL, 0, 0, NULL},
};
