/* ops_control.c — ONNX operators of the control family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_control[] = {
    {NULL, 0, 0, NULL},
};
