"""Whole-model gradients: PyTorch modules exported to ONNX, their weights
made graph inputs, differentiated by tessera (Graph.grad) and compared with
torch.autograd on the same modules and inputs (docs/autodiff.md). Also
forward mode (Graph.jvp) against torch.func.jvp, and the errors."""
import numpy as np
import onnx
import pytest
import torch

import tessera

torch.manual_seed(0)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(12, 16), torch.nn.Linear(16, 5)

    def forward(self, x):
        return torch.log_softmax(self.fc2(torch.tanh(self.fc1(x))), dim=1)


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        h = torch.nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        h = torch.nn.functional.gelu(self.c2(h))
        return self.fc(h.mean(dim=(2, 3)))


class Encoder(torch.nn.Module):
    """One attention head and an MLP, layer norms around both."""
    def __init__(self, d=8):
        super().__init__()
        self.qkv, self.out = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.n1, self.n2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.ff1, self.ff2 = torch.nn.Linear(d, 2 * d), torch.nn.Linear(2 * d, d)
        with torch.no_grad():   # norms not at 1 and 0 (the exporter also merges equal initializers)
            for n in (self.n1, self.n2):
                n.weight.uniform_(0.5, 1.5)
                n.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        q, k, v = self.qkv(self.n1(x)).chunk(3, dim=-1)
        a = torch.softmax(q @ k.transpose(1, 2) / 8 ** 0.5, dim=-1) @ v
        x = x + self.out(a)
        return x + self.ff2(torch.nn.functional.gelu(self.ff1(self.n2(x))))


MODELS = {"mlp": (Mlp, (4, 12)), "cnn": (Cnn, (2, 3, 10, 10)), "encoder": (Encoder, (2, 5, 8))}


def weights_as_inputs(path, names):
    """Turn the named initializers into graph inputs (so they can be
    differentiated), keeping their order after the model's inputs."""
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    for n in names:
        t = inits[n]
        m.graph.input.append(onnx.helper.make_tensor_value_info(n, t.data_type, list(t.dims)))
        m.graph.initializer.remove(t)
    onnx.save(m, path)


def export(name, tmp_path):
    cls, shape = MODELS[name]
    model = cls().eval()
    x = torch.randn(*shape)
    path = str(tmp_path / (name + ".onnx"))
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17, do_constant_folding=False,
                      input_names=["x"], output_names=["y"])
    params = dict(model.named_parameters())
    exported = {t.name for t in onnx.load(path).graph.initializer}
    names = [n for n in params if n in exported]
    assert len(names) == len(params), "the exporter renamed a parameter: %s" % sorted(set(params) - exported)
    weights_as_inputs(path, names)
    return model, x, params, names, path


@pytest.mark.parametrize("name", sorted(MODELS))
def test_reverse_mode_matches_torch_autograd(name, tmp_path, cache_dir):
    model, x, params, names, path = export(name, tmp_path)
    y = model(x)
    ct = torch.randn_like(y)
    grads = torch.autograd.grad((y * ct).sum(), [params[n] for n in names])
    g = tessera.load_onnx(path)
    g.grad(wrt=names)
    feed = {"x": x.numpy(), "ct_y": ct.detach().numpy()}
    feed.update({n: params[n].detach().numpy() for n in names})
    with tessera.Session(g, cache_dir=cache_dir) as s:
        out = s.run(None, feed)
    np.testing.assert_allclose(out[0], y.detach().numpy(), rtol=1e-4, atol=1e-5)
    for n, want, got in zip(names, grads, out[1:]):
        np.testing.assert_allclose(got, want.numpy(), rtol=2e-4, atol=2e-5, err_msg=n)


def test_input_gradient_and_forward_mode(tmp_path, cache_dir):
    model, x, params, names, path = export("encoder", tmp_path)
    v = torch.randn_like(x)
    y, ty = torch.func.jvp(model, (x,), (v,))
    g = tessera.load_onnx(path)
    g.jvp(wrt=["x"])
    feed = {"x": x.numpy(), "tan_x": v.numpy()}
    feed.update({n: params[n].detach().numpy() for n in names})
    with tessera.Session(g, cache_dir=cache_dir) as s:
        out = s.run(None, feed)
    np.testing.assert_allclose(out[1], ty.detach().numpy(), rtol=2e-4, atol=2e-5)


def test_errors(tmp_path):
    g = tessera.Graph("e")
    x = g.input("x", "f32[3]")
    n = g.input("n", "i64[]")
    g.output(g.op("exp", x), n)
    with pytest.raises(tessera.InvalidArgument, match="floating-point"):
        g.grad(wrt=["n"])
    with pytest.raises(ValueError, match="no input 'nope'"):
        g.grad(wrt=["nope"])
    g.grad()   # the failures above left the graph as it was
    assert [v.type for v in g.inputs] == ["f32[3]", "i64[]", "f32[3]"]
    assert len(g.outputs) == 3
