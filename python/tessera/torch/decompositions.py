"""Decompositions tessera's backend uses in place of PyTorch's own.

PyTorch's core decomposition of aten._scaled_dot_product_flash_attention_for_cpu
(what F.scaled_dot_product_attention becomes on the CPU) returns the
attention weights where the operator returns the log-sum-exp of the
scores; its backward, which AOTAutograd keeps as one operator, then reads
the weights as log-sum-exp and returns wrong gradients. Here the forward
returns the real log-sum-exp and the backward is written out too, both in
ATen operators tessera lowers, so attention trains through tessera.
Dropout and grouped-query attention (fewer key heads than query heads)
return NotImplemented: the operator then stays as it is and runs in
PyTorch, forward and backward."""
import math

import torch
import torch._decomp

aten = torch.ops.aten


def _scores(query, key, is_causal, attn_mask, scale):
    """scale * q k^T with the causal and the given mask applied (-inf
    where masked out)."""
    s = scale if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    scores = torch.matmul(query, key.transpose(-2, -1)) * s
    if is_causal:
        keep = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool, device=query.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool \
            else scores + attn_mask
    return scores, s


def _unsupported(query, key, dropout_p):
    return dropout_p != 0.0 or query.dim() != 4 or query.shape[1] != key.shape[1]


def flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    """(output, logsumexp [B, H, L] in f32), as the CPU kernel returns."""
    if _unsupported(query, key, dropout_p):
        return NotImplemented
    scores, _ = _scores(query, key, is_causal, attn_mask, scale)
    lse = torch.logsumexp(scores, dim=-1)
    probs = torch.exp(scores - lse.unsqueeze(-1))
    return torch.matmul(probs, value), lse.to(torch.float32)


def flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, *,
                                     attn_mask=None, scale=None):
    """Flash attention's backward from the saved log-sum-exp: the
    probabilities are recomputed rather than kept, as the kernel does."""
    if _unsupported(query, key, dropout_p):
        return NotImplemented
    scores, s = _scores(query, key, is_causal, attn_mask, scale)
    probs = torch.exp(scores - logsumexp.to(scores.dtype).unsqueeze(-1))
    grad_value = torch.matmul(probs.transpose(-2, -1), grad_out)
    grad_probs = torch.matmul(grad_out, value.transpose(-2, -1))
    row = (grad_out * out).sum(dim=-1, keepdim=True)
    grad_scores = probs * (grad_probs - row) * s
    return (torch.matmul(grad_scores, key), torch.matmul(grad_scores.transpose(-2, -1), query), grad_value)


# core operators that PyTorch's core set keeps whole but that its own
# decompositions spell in operators tessera lowers: the .vec upsamplings
# (output size or scale factors) become their gathers and weighted sums
_FROM_TORCH = [aten.upsample_bilinear2d.vec, aten.upsample_nearest2d.vec]

OVERRIDES = {
    aten._scaled_dot_product_flash_attention_for_cpu.default: flash_attention_for_cpu,
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default: flash_attention_for_cpu_backward,
    **{op: torch._decomp.decomposition_table[op] for op in _FROM_TORCH},
}
