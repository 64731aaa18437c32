"""Recurrent layers. With torch._dynamo.config.allow_rnn, PyTorch's core
decomposition turns an inference nn.LSTM on the CPU into one
aten.mkldnn_rnn_layer per layer and direction (the oneDNN kernel eager
calls); tessera assembles that layer from primitives instead.

The input projection of every step is one GEMM over the whole sequence;
the recurrence is unrolled over the (static) sequence length, a GEMM and
the gate arithmetic per step. Unrolling rather than a `while` region
because tessera's loops still run on the interpreter (issue 32); a
sequence longer than MAX_STEPS, or one whose length is symbolic, falls
back to PyTorch."""
import torch

from .table import fake, lowers, ts_dtype

aten = torch.ops.aten
MAX_STEPS = 256
LSTM_MODE = 2   # ideep::rnn_kind::LSTM, the `mode` the decomposition passes


def check_lstm(node):
    inp, mode, batch_first = fake(node.args[0]), node.args[9], node.args[14]
    if mode != LSTM_MODE:
        return "only LSTM layers (mode %d)" % mode
    if batch_first or node.args[8]:
        return "batch-first or packed sequences"
    if not isinstance(inp.shape[0], int) and not inp.shape[0].node.expr.is_Integer:
        return "a sequence length known only at run time"
    if int(inp.shape[0]) > MAX_STEPS:
        return "more than %d steps" % MAX_STEPS
    if inp.dtype != torch.float32:
        return "dtype %s" % inp.dtype
    return None


@lowers(aten.mkldnn_rnn_layer.default, check=check_lstm)
def lstm_layer(L, node):
    """(output [T, B, H], h [1, B, H], c [1, B, H], workspace)."""
    inp, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse = node.args[:8]
    has_biases = node.args[12]
    g = L.g
    steps, batch, features = (int(d) for d in fake(inp).shape)
    hidden = int(node.args[10])
    x = g.op("reshape", L.value(inp), shape=[steps * batch, features])
    pre = g.op("dot", x, L.value(w_ih), lhs_contract=[1], rhs_contract=[1])
    if has_biases:
        pre = pre + (L.value(b_ih) + L.value(b_hh))
    pre = g.op("reshape", pre, shape=[steps, batch, 4 * hidden])
    h = g.op("reshape", L.value(hx), shape=[batch, hidden])
    c = g.op("reshape", L.value(cx), shape=[batch, hidden])
    w = L.value(w_hh)
    outs = [None] * steps
    order = range(steps - 1, -1, -1) if reverse else range(steps)

    def gate(z, k):
        return L.slice(z, [0, k * hidden], [batch, (k + 1) * hidden])

    for t in order:
        z = g.op("reshape", L.slice(pre, [t, 0, 0], [t + 1, batch, 4 * hidden]), shape=[batch, 4 * hidden])
        z = z + g.op("dot", h, w, lhs_contract=[1], rhs_contract=[1])
        i, f, cand, o = (gate(z, k) for k in range(4))
        i, f, o = (1.0 / (1.0 + g.op("exp", -v)) for v in (i, f, o))
        c = f * c + i * g.op("tanh", cand)
        h = o * g.op("tanh", c)
        outs[t] = g.op("reshape", h, shape=[1, batch, hidden])
    out = outs[0] if steps == 1 else g.op("concat", *outs, axis=0)
    # oneDNN's scratch for training: nothing reads it after inference
    ws = fake(node)[3]
    workspace = L.full(0, ts_dtype(ws.dtype), [int(d) for d in ws.shape])
    return out, g.op("reshape", h, shape=[1, batch, hidden]), g.op("reshape", c, shape=[1, batch, hidden]), workspace
