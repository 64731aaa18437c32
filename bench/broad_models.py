"""The broad benchmark's models (issue 32): PyTorch modules with random,
seeded weights, exported by PyTorch itself (`torch.onnx.export`, the
TorchScript exporter, opset 17, static shapes), nothing downloaded.

    ensure(name, batch) -> (model.onnx path, {input name: .npy path})

Files go to bench/.cache/broad/<name>_b<batch>/ and are reused. The set is
a sample of what users run, for finding what is slow; see bench/README.md.
"""
import math
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache", "broad")
GEN_VERSION = 1   # bump when a model changes: cached exports are rebuilt
sys.path.insert(0, HERE)
import torch_zoo  # noqa: E402

# torchvision classifiers at 96x96 (the size the torch backend's tests use:
# the stems and strides of these networks do not assume 224)
VISION = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x0_5", "squeezenet1_1",
          "efficientnet_b0", "densenet121", "regnet_y_400mf", "convnext_tiny")


class UNet(nn.Module):
    """A small UNet: two downsampling levels, nearest upsampling and a
    transposed convolution, skip concats."""

    def __init__(self, c=16):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                                 nn.Conv2d(o, o, 3, padding=1), nn.ReLU())
        self.d1, self.d2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.u2 = block(4 * c, 2 * c)
        self.u1 = block(3 * c, c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        m = self.mid(F.max_pool2d(b, 2))
        y = self.u2(torch.cat([self.up2(m), b], 1))
        y = self.u1(torch.cat([F.interpolate(y, scale_factor=2, mode="nearest"), a], 1))
        return self.head(y)


class FCNHead(nn.Module):
    """A segmentation head: a strided backbone, a 3x3 conv, bilinear
    upsampling back to the input size (Resize linear)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(),
                                  nn.Conv2d(64, 64, 3, 2, 1), nn.ReLU())
        self.head = nn.Sequential(nn.Conv2d(64, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Conv2d(32, 5, 1))

    def forward(self, x):
        return F.interpolate(self.head(self.body(x)), size=x.shape[-2:], mode="bilinear", align_corners=False)


class SuperRes(nn.Module):
    """ESPCN-style super-resolution: convs, then PixelShuffle x3."""

    def __init__(self):
        super().__init__()
        self.c = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(), nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                               nn.Conv2d(32, 9, 3, padding=1))

    def forward(self, x):
        return torch.sigmoid(F.pixel_shuffle(self.c(x), 3))


class GRULM(nn.Module):
    def __init__(self, vocab=512, dim=128, hidden=256):
        super().__init__()
        self.emb, self.rnn, self.out = nn.Embedding(vocab, dim), nn.GRU(dim, hidden, 2, batch_first=True), \
            nn.Linear(hidden, vocab)

    def forward(self, ids):
        return self.out(self.rnn(self.emb(ids))[0])


class BiLSTMTagger(nn.Module):
    def __init__(self, vocab=512, dim=64, hidden=128, tags=17):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, hidden, 1, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, ids):
        return self.out(self.rnn(self.emb(ids))[0]).log_softmax(-1)


class T5Like(nn.Module):
    """An encoder-decoder transformer (nn.Transformer, 2 + 2 layers, 256
    wide) over embedded source and target tokens, with a causal target
    mask and an output projection."""

    def __init__(self, vocab=512, dim=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.t = nn.Transformer(dim, 4, 2, 2, 512, dropout=0.0, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src, tgt):
        n = tgt.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), 1)
        return self.out(self.t(self.emb(src), self.emb(tgt), tgt_mask=mask))


class MixedA(nn.Module):
    """Many small mixed ops: elementwise, reductions, where, cumsum,
    gather by argmax, a top-k."""

    def __init__(self, d=64):
        super().__init__()
        self.l1, self.l2 = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        h = self.l1(x)
        g = torch.where(h > 0, h, 0.1 * h) * torch.sigmoid(h.mean(-1, keepdim=True))
        c = torch.cumsum(g, dim=1) / (1 + torch.arange(g.shape[1], dtype=g.dtype)).view(1, -1, 1)
        idx = c.argmax(-1, keepdim=True)
        picked = torch.gather(c, -1, idx)
        top, _ = torch.topk(self.l2(c), 8, dim=-1)
        return top.sum(-1, keepdim=True) + picked - c.std(-1, keepdim=True)


class MixedB(nn.Module):
    """An MLP-mixer-style block on a token grid: transposes, layer norms,
    GELU, a residual, an embedding lookup and a masked softmax."""

    def __init__(self, tokens=32, d=64, vocab=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.tok = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Linear(2 * tokens, tokens))
        self.ch = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, ids):
        x = self.emb(ids)
        x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
        x = x + self.ch(self.n2(x))
        s = x @ x.transpose(1, 2) / math.sqrt(x.shape[-1])
        s = s.masked_fill(ids[:, None, :] == 0, float("-inf"))
        return s.softmax(-1) @ x


def _ids(batch, seq, vocab=512):
    return torch.randint(1, vocab, (batch, seq))


def build(name, batch):
    """(module in eval mode, example inputs, input names) for one model."""
    torch.manual_seed(0)
    if name in VISION:
        m, (x,) = torch_zoo.build(name, batch=batch)
        return m, (x,), ("x",)
    if name == "vit_small":
        import torchvision
        m = torchvision.models.VisionTransformer(image_size=96, patch_size=16, num_layers=4, num_heads=4,
                                                 hidden_dim=192, mlp_dim=768, num_classes=1000)
        with torch.no_grad():
            for p in m.parameters():
                if p.dim() > 1 and not p.any():
                    p.normal_(0, 0.02)
        return m, (torch.randn(batch, 3, 96, 96),), ("x",)
    if name == "unet_small":
        return UNet(), (torch.randn(batch, 3, 64, 64),), ("x",)
    if name == "fcn_head":
        return FCNHead(), (torch.randn(batch, 3, 96, 96),), ("x",)
    if name == "superres":
        return SuperRes(), (torch.randn(batch, 1, 64, 64),), ("x",)
    if name == "lstm_lm":
        return torch_zoo.LSTMLM(hidden=256), (_ids(batch, 32),), ("ids",)
    if name == "gru_lm":
        return GRULM(), (_ids(batch, 32),), ("ids",)
    if name == "bilstm_tagger":
        return BiLSTMTagger(), (_ids(batch, 32),), ("ids",)
    for stem, cls in (("gpt2", torch_zoo.GPT), ("bert", torch_zoo.BERT)):
        if name.startswith(stem + "_s"):
            seq = int(name.split("_s")[1])
            m = cls(dim=256, heads=4, layers=4, max_len=128)
            if stem == "gpt2":
                return m, (_ids(batch, seq),), ("ids",)
            mask = torch.ones(batch, seq, dtype=torch.bool)
            mask[:, seq - seq // 4:] = False
            return m, (_ids(batch, seq), torch.zeros(batch, seq, dtype=torch.long), mask), ("ids", "types", "mask")
    if name == "t5_small":
        return T5Like(), (_ids(batch, 32), _ids(batch, 16)), ("src", "tgt")
    if name == "mixed_a":
        return MixedA(), (torch.randn(batch, 48, 64),), ("x",)
    if name == "mixed_b":
        ids = torch.randint(0, 256, (batch, 32))
        ids[:, 0] = 1   # no row fully masked
        return MixedB(), (ids,), ("ids",)
    raise KeyError(name)


NAMES = VISION + ("vit_small", "unet_small", "fcn_head", "superres", "lstm_lm", "gru_lm", "bilstm_tagger",
                  "gpt2_s32", "gpt2_s128", "bert_s32", "bert_s128", "t5_small", "mixed_a", "mixed_b")


def ensure(name, batch):
    """Export the model once (cached), with its inputs: (model path,
    {input name: .npy path})."""
    d = os.path.join(CACHE, "%s_b%d" % (name, batch))
    path = os.path.join(d, "model.onnx")
    stamp = os.path.join(d, "version")
    m, xs, names = build(name, batch)
    inputs = {n: os.path.join(d, n + ".npy") for n in names}
    if os.path.exists(stamp) and open(stamp).read() == str(GEN_VERSION) and os.path.exists(path):
        return path, inputs
    os.makedirs(d, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m.eval(), xs, path, dynamo=False, opset_version=17, input_names=list(names))
    for n, x in zip(names, xs):
        np.save(inputs[n], x.numpy())
    with open(stamp, "w") as f:
        f.write(str(GEN_VERSION))
    return path, inputs


if __name__ == "__main__":
    for n in sys.argv[1:] or NAMES:
        for b in (1, 8):
            print(ensure(n, b)[0])
