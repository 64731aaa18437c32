"""The broad benchmark's models (issue 32): PyTorch modules with random,
seeded weights (torch.manual_seed(0)), exported by PyTorch itself
(`torch.onnx.export`, the TorchScript exporter, opset 17, static shapes
fixed by the example inputs), nothing downloaded.

    ensure(name, batch) -> (model.onnx path, {input name: .npy path})
    python bench/broad_models.py [NAME...]     # export (batch 1 and 8) without benchmarking

Each (model, batch) is exported once into bench/.cache/broad/<name>_b<batch>/
(gitignored) and reused; GEN_VERSION invalidates old exports. An export
that fails raises ExportError with PyTorch's reason. The set is a sample
of what users run, for finding what is slow (bench/README.md).
"""
import contextlib
import ctypes
import json
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
GEN_VERSION = 3   # bump when a model or its inputs change: cached exports are rebuilt
sys.dont_write_bytecode = True   # keep bench/ free of __pycache__
sys.path.insert(0, HERE)
import torch_zoo  # noqa: E402  (the PyTorch backend's models: GPT, BERT, LSTMLM)

# Agreement with ORT, |tessera - ORT| <= ATOL + RTOL |ORT|: bench/models.py's
# model tolerances (MobileNetV2's 1e-3 / 1e-4). Transformers get
# bench/models.py's BERT/GPT-2 atol (1e-3): their logits come out of long
# dot products after layer norms, where summation order moves the last
# bits of values of magnitude ~1-10.
# Networks with dense 3x3 stride-1 convolutions get the same atol: tessera
# computes those by Winograd F(4x4, 3x3) unless a session asks for
# `exact` (docs/api.md, docs/kernels.md), about a decimal digit less than
# direct summation. ResNet-50 here (outputs up to 2.2) differed from ORT
# by 1.7e-4: 1.65e-4 from a float64 PyTorch reference, where ORT's error
# is 5.7e-5 and PyTorch's f32 one 7.4e-5.
RTOL, ATOL = 1e-3, 1e-4
TRANSFORMER_ATOL = WINOGRAD_ATOL = 1e-3

MODELS = {}   # name -> dict(build, desc, rtol, atol, default)


def model(name, desc, atol=ATOL, default=True):
    """Register build(batch) -> (module, example inputs, input names).
    default=False: run only when named (--models)."""
    def register(build):
        MODELS[name] = dict(build=build, desc=desc, rtol=RTOL, atol=atol, default=default)
        return build
    return register


def _ids(batch, seq, vocab=512):
    """Token ids; 0 is left out (MixedB masks it as padding)."""
    return torch.randint(1, vocab, (batch, seq))


# ---- torchvision classifiers -----------------------------------------------------------

def torchvision_model(name, size, batch):
    """torchvision's network with its own random initialisation (seeded by
    the caller), like torch_zoo.build's (which lacks mobilenet_v2)."""
    import torchvision
    m = getattr(torchvision.models, name)(weights=None)
    # some heads start at zero (ViT's): the output would be constant, and
    # comparing it would check nothing
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() > 1 and not p.any():
                p.normal_(0, 0.02)
    return m, (torch.randn(batch, 3, size, size),), ("x",)


# 96x96, the size the torch backend's tests use (bench/torch_zoo.py):
# these networks' stems and strides do not assume 224, and a small image
# keeps 2-core runs of the deep ones (densenet121, convnext_tiny) short
VISION_SIZE = 96
WINOGRAD = ("resnet18", "resnet50", "squeezenet1_1", "densenet121")   # dense 3x3 stride-1 convs
for _name in ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x0_5", "squeezenet1_1",
              "efficientnet_b0", "densenet121", "regnet_y_400mf", "convnext_tiny"):
    model(_name, "torchvision %s, %dx%d" % (_name, VISION_SIZE, VISION_SIZE),
          atol=WINOGRAD_ATOL if _name in WINOGRAD else ATOL)(
        lambda batch, _n=_name: torchvision_model(_n, VISION_SIZE, batch))


@model("vit_small", "torchvision VisionTransformer 96x96, patch 16 (37 tokens), 4 layers, width 192, 4 heads, "
                    "MLP 768 (a small ViT: vit_b_16 is the opt-in `vit_b_16`)", atol=TRANSFORMER_ATOL)
def vit_small(batch):
    import torchvision
    m = torchvision.models.VisionTransformer(image_size=96, patch_size=16, num_layers=4, num_heads=4,
                                             hidden_dim=192, mlp_dim=768, num_classes=1000)
    with torch.no_grad():   # the head starts at zero (see torchvision_model)
        for p in m.parameters():
            if p.dim() > 1 and not p.any():
                p.normal_(0, 0.02)
    return m, (torch.randn(batch, 3, 96, 96),), ("x",)


@model("vit_b_16", "torchvision vit_b_16 at 224x224 (197 tokens, 12 layers, width 768): not in the default set, "
                   "a batch-8 run takes 1.5 s with ORT on 2 cores", atol=TRANSFORMER_ATOL, default=False)
def vit_b_16(batch):
    return torchvision_model("vit_b_16", 224, batch)


# ---- dense prediction --------------------------------------------------------------------

class UNet(nn.Module):
    """A small UNet: two max-pool levels down, a transposed convolution
    and a nearest upsampling (Resize) up, skip concats."""

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


@model("unet_small", "UNet, 64x64, widths 16-32-64: max pools, ConvTranspose, nearest Resize, skip concats",
       atol=WINOGRAD_ATOL)
def unet_small(batch):
    return UNet(), (torch.randn(batch, 3, 64, 64),), ("x",)


class FCNHead(nn.Module):
    """A segmentation net: a stride-8 conv backbone, an FCN head (3x3 conv,
    batch norm, 1x1 classifier), bilinear upsampling back to the input size
    (Resize linear) and, as FCN's skip branch, a ConvTranspose x2 of the
    stride-4 features added in."""

    def __init__(self, classes=5):
        super().__init__()
        self.s4 = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU())
        self.s8 = nn.Sequential(nn.Conv2d(64, 64, 3, 2, 1), nn.ReLU())
        self.head = nn.Sequential(nn.Conv2d(64, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Conv2d(32, classes, 1))
        self.skip = nn.Conv2d(64, classes, 1)
        self.up = nn.ConvTranspose2d(classes, classes, 4, stride=2, padding=1)

    def forward(self, x):
        f4 = self.s4(x)
        y = self.up(self.head(self.s8(f4))) + self.skip(f4)
        return F.interpolate(y, size=x.shape[-2:], mode="bilinear", align_corners=False)


@model("fcn_head", "FCN-style segmentation, 96x96: strided convs, ConvTranspose x2 + skip, bilinear Resize x4",
       atol=WINOGRAD_ATOL)
def fcn_head(batch):
    return FCNHead(), (torch.randn(batch, 3, 96, 96),), ("x",)


class SuperRes(nn.Module):
    """ESPCN super-resolution: convs with tanh, then PixelShuffle x3
    (DepthToSpace in ONNX)."""

    def __init__(self):
        super().__init__()
        self.c = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(), nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                               nn.Conv2d(32, 9, 3, padding=1))

    def forward(self, x):
        return torch.sigmoid(F.pixel_shuffle(self.c(x), 3))


@model("superres", "ESPCN super-resolution, 1x64x64 -> 192x192: convs, tanh, PixelShuffle x3",
       atol=WINOGRAD_ATOL)
def superres(batch):
    return SuperRes(), (torch.randn(batch, 1, 64, 64),), ("x",)


# ---- recurrent ---------------------------------------------------------------------------

@model("lstm_lm", "LSTM language model, sequence 32: embedding 128, 2-layer LSTM 256, linear to 512 tokens")
def lstm_lm(batch):
    return torch_zoo.LSTMLM(hidden=256), (_ids(batch, 32),), ("ids",)


class GRULM(nn.Module):
    def __init__(self, vocab=512, dim=128, hidden=256):
        super().__init__()
        self.emb, self.rnn, self.out = nn.Embedding(vocab, dim), nn.GRU(dim, hidden, 2, batch_first=True), \
            nn.Linear(hidden, vocab)

    def forward(self, ids):
        return self.out(self.rnn(self.emb(ids))[0])


@model("gru_lm", "GRU language model, sequence 32: embedding 128, 2-layer GRU 256, linear to 512 tokens")
def gru_lm(batch):
    return GRULM(), (_ids(batch, 32),), ("ids",)


class BiLSTMTagger(nn.Module):
    def __init__(self, vocab=512, dim=64, hidden=128, tags=17):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, hidden, 1, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, ids):
        return self.out(self.rnn(self.emb(ids))[0]).log_softmax(-1)


@model("bilstm_tagger", "bidirectional LSTM tagger, sequence 32: embedding 64, BiLSTM 128, 17 tags, log-softmax")
def bilstm_tagger(batch):
    return BiLSTMTagger(), (_ids(batch, 32),), ("ids",)


# ---- transformers ------------------------------------------------------------------------

def gpt2(seq):
    def build(batch):
        return torch_zoo.GPT(dim=256, heads=4, layers=4, max_len=128), (_ids(batch, seq),), ("ids",)
    return build


def bert(seq):
    def build(batch):
        mask = torch.ones(batch, seq, dtype=torch.bool)
        mask[:, seq - seq // 4:] = False   # the last quarter is padding
        return (torch_zoo.BERT(dim=256, heads=4, layers=4, max_len=128),
                (_ids(batch, seq), torch.zeros(batch, seq, dtype=torch.long), mask), ("ids", "types", "mask"))
    return build


for _seq in (32, 128):
    model("gpt2_s%d" % _seq, "GPT-2-style decoder, sequence %d: 4 pre-LN layers, width 256, 4 heads, causal SDPA, "
          "tied LM head (bench/torch_zoo.py)" % _seq, atol=TRANSFORMER_ATOL)(gpt2(_seq))
for _seq in (32, 128):
    model("bert_s%d" % _seq, "BERT-style encoder, sequence %d: 4 post-LN layers, width 256, 4 heads, padding mask, "
          "pooler (bench/torch_zoo.py)" % _seq, atol=TRANSFORMER_ATOL)(bert(_seq))


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


@model("t5_small", "encoder-decoder (nn.Transformer): 2 + 2 layers, width 256, source 32, target 16, causal "
                   "target mask", atol=TRANSFORMER_ATOL)
def t5_small(batch):
    return T5Like(), (_ids(batch, 32), _ids(batch, 16)), ("src", "tgt")


# ---- graphs of many small mixed ops ------------------------------------------------------

class MixedA(nn.Module):
    """Elementwise, reductions, where, cumsum, gather by argmax, top-k."""

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


@model("mixed_a", "mixed ops on [48, 64]: linear, where, sigmoid, mean, cumsum, argmax + gather, top-k, std")
def mixed_a(batch):
    return MixedA(), (torch.randn(batch, 48, 64),), ("x",)


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


@model("mixed_b", "MLP-mixer-style block, 32 tokens x 64: embedding, transposes, layer norms, GELU, masked softmax")
def mixed_b(batch):
    ids = torch.randint(0, 256, (batch, 32))
    ids[:, 0] = 1   # no row fully masked (its softmax would be NaN on both sides)
    return MixedB(), (ids,), ("ids",)


class MixedC(nn.Module):
    """A detection head's post-processing, static shapes: class softmax,
    max score, top-k anchors (then sorted), gather and index_select of
    their boxes, box decoding (exp, clamp), a pairwise IoU matrix by
    broadcasting, a strict upper triangle mask by where, reshapes and a
    concat of the results."""

    def __init__(self, anchors=600, classes=20, d=32, k=64):
        super().__init__()
        self.k = k
        self.cls = nn.Linear(d, classes)
        self.box = nn.Linear(d, 4)
        self.register_buffer("priors", torch.rand(anchors, 4) * 0.5 + torch.tensor([0.0, 0.0, 0.25, 0.25]))

    def forward(self, feats):
        b = feats.shape[0]
        prob = self.cls(feats).softmax(-1)
        score, label = prob[..., 1:].max(-1)   # class 0 is the background
        top, idx = score.topk(self.k, dim=-1)
        # in anchor order: two near-equal scores may come out of top-k in
        # either order on the two runtimes; sorted, only the 64th/65th edge can
        idx, order = idx.sort(-1)
        top = torch.gather(top, 1, order)
        d = torch.gather(self.box(feats), 1, idx.unsqueeze(-1).expand(b, self.k, 4))
        p = self.priors.index_select(0, idx.reshape(-1)).reshape(b, self.k, 4)
        cxcy = p[..., :2] + 0.1 * d[..., :2] * p[..., 2:]
        wh = p[..., 2:] * torch.exp(torch.clamp(0.2 * d[..., 2:], max=4.0))
        boxes = torch.cat([cxcy - wh / 2, cxcy + wh / 2], -1).clamp(0, 1)
        lo = torch.maximum(boxes[:, :, None, :2], boxes[:, None, :, :2])
        hi = torch.minimum(boxes[:, :, None, 2:], boxes[:, None, :, 2:])
        inter = (hi - lo).clamp(min=0).prod(-1)
        area = (boxes[..., 2:] - boxes[..., :2]).prod(-1)
        iou = inter / (area[:, :, None] + area[:, None, :] - inter + 1e-6)
        iou = torch.where(torch.ones_like(iou, dtype=torch.bool).triu(1), iou, torch.zeros_like(iou))
        # an anchor is damped when an earlier one overlaps it: a smooth
        # mask, since a hard IoU > 0.5 flipped at the edge by rounding
        # would make the comparison with ORT flaky
        suppress = torch.sigmoid(20.0 * (iou.amax(1) - 0.5))
        kept = top * (1 - suppress)
        lab = torch.gather(label, 1, idx).to(feats.dtype)
        return torch.cat([boxes, kept.unsqueeze(-1), lab.unsqueeze(-1)], -1).flatten(1)


@model("mixed_c", "detection post-processing, 600 anchors: softmax, max, top-k 64, sort, gather, index_select, exp, "
                  "clamp, pairwise IoU, triu mask, where, concat")
def mixed_c(batch):
    return MixedC(), (torch.randn(batch, 600, 32),), ("feats",)


NAMES = tuple(MODELS)                                        # every model, in table order
DEFAULT = tuple(n for n in NAMES if MODELS[n]["default"])   # what broad.py runs without --models


class ExportError(Exception):
    """torch.onnx.export (or building the module) failed: one line, PyTorch's reason."""


def _manifest(d):
    """The cached export's input names, or None when the folder is
    missing, incomplete or from another GEN_VERSION."""
    try:
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
    except (OSError, ValueError):
        return None
    if m.get("version") != GEN_VERSION or not os.path.exists(os.path.join(d, "model.onnx")):
        return None
    return m["inputs"]


def ensure(name, batch):
    """The model's export at this batch (cached): (model path, {input name:
    .npy path}). The manifest is written last, so an interrupted export is
    redone rather than reused."""
    d = os.path.join(CACHE, "%s_b%d" % (name, batch))
    path = os.path.join(d, "model.onnx")
    names = _manifest(d)
    if names is None:
        names = export(name, batch, d)
    return path, {n: os.path.join(d, n + ".npy") for n in names}


def ensure_case(case):
    """A broad model at a batch, named as the per-kernel tools take it
    ("squeezenet1_1_b8"): ensure()'s (model path, inputs), or None when
    the name is not one."""
    name, _, batch = case.rpartition("_b")
    if name not in MODELS or not batch.isdigit() or int(batch) < 1:
        return None
    return ensure(name, int(batch))


def trained_like(m, xs):
    """Undo two properties of a fresh initialisation that make a network's
    output say little about its inner layers, which is what the check
    against ORT is for:
    - batch norm: with the initial statistics (mean 0, variance 1) each BN
      is close to the identity and activations shrink layer after layer
      (MobileNetV2's logits came out ~1e-9, EfficientNet-B0's ~1e-14: any
      difference passed atol). The statistics are set from one forward pass
      in training mode over a seeded random batch of 8, as a trained
      network's would be: every BN then normalises;
    - ConvNeXt's layer scales start at 1e-6, which mutes every block's
      branch; trained ones are of order 0.1-1: set to 1."""
    with torch.no_grad():
        for n, p in m.named_parameters():
            if n.endswith("layer_scale"):
                p.fill_(1.0)
        bns = [b for b in m.modules() if isinstance(b, nn.modules.batchnorm._BatchNorm)]
        for b in bns:
            b.reset_running_stats()
            b.momentum = None   # a plain average over the calibration pass
        if bns:
            m.train()
            m(torch.randn((8,) + tuple(xs[0].shape[1:]), generator=torch.Generator().manual_seed(1)))
    m.eval()


@contextlib.contextmanager
def quiet_stdout():
    """File descriptor 1 to /dev/null: when an export fails, PyTorch's C++
    side prints the whole partial graph (thousands of lines) to stdout
    before raising; the exception's first line is the reason. C's stdio
    buffer is flushed before fd 1 is restored, so nothing leaks after."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    try:
        yield
    finally:
        libc.fflush(None)
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def export(name, batch, d):
    """Build the module (seeded), export it to d/model.onnx with its
    example inputs beside it; the input names."""
    os.makedirs(d, exist_ok=True)
    try:
        torch.manual_seed(0)
        m, xs, names = MODELS[name]["build"](batch)
        trained_like(m, xs)
        # not under torch.no_grad(): with gradients off, nn.MultiheadAttention
        # and nn.TransformerEncoderLayer take their fused fast paths
        # (aten::_transformer_encoder_layer_fwd), which have no ONNX export
        with warnings.catch_warnings(), quiet_stdout():
            warnings.simplefilter("ignore")   # the exporter's TracerWarnings on constant shapes
            torch.onnx.export(m.eval(), xs, os.path.join(d, "model.onnx"), dynamo=False, opset_version=17,
                              input_names=list(names))
    except Exception as e:   # anything PyTorch raises: the row says why
        lines = str(e).strip().splitlines()
        raise ExportError("export failed: %s: %s" % (type(e).__name__, lines[0] if lines else "")) from e
    for n, x in zip(names, xs):
        np.save(os.path.join(d, n + ".npy"), x.numpy())
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(dict(version=GEN_VERSION, inputs=list(names)), f)
    return list(names)


if __name__ == "__main__":
    failed = 0
    for n in sys.argv[1:] or DEFAULT:
        for b in (1, 8):
            try:
                print(ensure(n, b)[0], flush=True)
            except ExportError as e:
                failed += 1
                print("%s batch %d: %s" % (n, b, e), flush=True)
    sys.exit(1 if failed else 0)
