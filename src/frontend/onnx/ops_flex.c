/* ops_flex.c — operators of domain ai.onnx.preview (FlexAttention). */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_preview[] = {
    {NULL, 0, 0, NULL},
};
