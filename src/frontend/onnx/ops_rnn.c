/* ops_rnn.c — ONNX operators of the rnn family, assembled from primitives. */
#include "frontend/onnx/onnx.h"

const onnx_op_entry onnx_ops_rnn[] = {
    {NULL, 0, 0, NULL},
};
