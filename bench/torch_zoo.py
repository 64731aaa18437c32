"""The models of the PyTorch backend's tests and benchmark (issue 31,
item 7), random weights, nothing downloaded: torchvision classifiers,
a GPT-2-style decoder, a BERT-style encoder, an LSTM language model and
a model whose Python control flow depends on data (graph breaks).

    build(name) -> (model in eval mode, example inputs)

tests/python/test_torch_models.py and bench/torch_backends.py import
this file by path."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# torchvision classifiers and the input size each is measured at: the
# small CNNs at 96x96 keep CI's compiles short; the ones whose stem or
# patching assumes 224 get it
TORCHVISION = {
    "resnet18": 96, "resnet50": 96, "mobilenet_v3_small": 96, "efficientnet_b0": 96,
    "shufflenet_v2_x0_5": 96, "squeezenet1_1": 96, "densenet121": 96, "regnet_y_400mf": 96,
    "convnext_tiny": 96, "vit_b_16": 224,
}
WRITTEN = ("gpt2_tiny", "bert_tiny", "lstm_lm", "data_dependent")
NAMES = tuple(TORCHVISION) + WRITTEN


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, causal=True, key_mask=None):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        if key_mask is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            # BERT-style padding: written out, the way many encoders are
            att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
            att = att.masked_fill(~key_mask[:, None, None, :], float("-inf"))
            y = att.softmax(dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    """Pre-norm (GPT-2) or post-norm (BERT) transformer block."""

    def __init__(self, dim, heads, pre_norm):
        super().__init__()
        self.pre_norm = pre_norm
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh" if pre_norm else "none"),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x, key_mask=None):
        if self.pre_norm:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))
        x = self.ln1(x + self.attn(x, causal=False, key_mask=key_mask))
        return self.ln2(x + self.mlp(x))


class GPT(nn.Module):
    """A GPT-2-style decoder: token and position embeddings, pre-norm
    blocks with causal attention, tied language-model head."""

    def __init__(self, vocab=512, dim=128, heads=4, layers=2, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, True) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.tok.weight.t()


class BERT(nn.Module):
    """A BERT-style encoder: embeddings with token types, post-norm blocks
    with a padding mask, a pooled [CLS] output through tanh."""

    def __init__(self, vocab=512, dim=128, heads=4, layers=2, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.typ = nn.Embedding(2, dim)
        self.ln = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(Block(dim, heads, False) for _ in range(layers))
        self.pool = nn.Linear(dim, dim)

    def forward(self, ids, types, mask):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.ln(self.tok(ids) + self.pos(pos) + self.typ(types))
        for blk in self.blocks:
            x = blk(x, key_mask=mask)
        return x, torch.tanh(self.pool(x[:, 0]))


class LSTMLM(nn.Module):
    """An LSTM language model: embedding, two LSTM layers, a decoder."""

    def __init__(self, vocab=512, dim=128, hidden=128, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids):
        h, _ = self.lstm(self.emb(ids))
        return self.out(h)


class DataDependent(nn.Module):
    """Python control flow on tensor values: Dynamo breaks the graph at
    each `if` on a value and at .item(), and compiles the pieces."""

    def __init__(self, dim=64):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, x):
        h = torch.relu(self.a(x))
        if h.mean() > 0.1:
            h = self.b(h)
        else:
            h = -self.b(h)
        for _ in range(int(h.abs().sum().item()) % 3 + 1):
            h = torch.tanh(self.c(h))
        return h


def build(name, batch=1, seq=32):
    """(model in eval mode, example inputs) for one of NAMES, seeded."""
    torch.manual_seed(0)
    if name in TORCHVISION:
        import torchvision
        m = getattr(torchvision.models, name)(weights=None)
        # some heads start at zero (ViT's): the output would be constant,
        # and comparing it would check nothing
        with torch.no_grad():
            for p in m.parameters():
                if p.dim() > 1 and not p.any():
                    p.normal_(0, 0.02)
        size = TORCHVISION[name]
        return m.eval(), (torch.randn(batch, 3, size, size),)
    if name == "gpt2_tiny":
        return GPT().eval(), (torch.randint(0, 512, (batch, seq)),)
    if name == "bert_tiny":
        mask = torch.ones(batch, seq, dtype=torch.bool)
        mask[:, seq - seq // 4:] = False
        return BERT().eval(), (torch.randint(0, 512, (batch, seq)), torch.zeros(batch, seq, dtype=torch.long), mask)
    if name == "lstm_lm":
        return LSTMLM().eval(), (torch.randint(0, 512, (batch, seq)),)
    if name == "data_dependent":
        return DataDependent().eval(), (torch.randn(batch, 64),)
    raise KeyError(name)
