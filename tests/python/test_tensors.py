"""Tensors in and out without copies where memory allows, and correct
copies where it does not: numpy in place (identity of buffers), strided,
byte-swapped and misaligned arrays copied, outputs handed out without a
copy, DLPack both ways with torch and numpy, bf16 through DLPack."""
import numpy as np
import pytest

import tessera

import torch  # noqa: E402  (scripts/test.sh installs it: a missing one fails, not skips)


def ident_session(dtype="f32", shape="[n, 3]", target="cpu", cache_dir=None):
    g = tessera.Graph("ident")
    x = g.input("x", dtype + shape)
    g.output(x)
    return tessera.Session(g, target=target, cache_dir=cache_dir)


def test_numpy_in_place():
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    t = tessera.Tensor(a)
    assert t.data_ptr == a.ctypes.data and t.shape == (4, 3) and t.dtype == "f32"
    v = t.numpy()
    assert v.ctypes.data == a.ctypes.data and np.shares_memory(v, a)
    assert np.asarray(t).ctypes.data == a.ctypes.data
    a[0, 0] = 42
    assert t.numpy()[0, 0] == 42   # one buffer
    assert "f32[4, 3]" in repr(t) and t.ndim == 2 and t.size == 12 and t.nbytes == 48


def test_copies_where_memory_cannot_be_read_in_place():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    strided = a[:, ::2]
    t = tessera.Tensor(strided)
    assert t.data_ptr != strided.ctypes.data
    np.testing.assert_array_equal(t.numpy(), strided)
    swapped = np.arange(6, dtype=">f4").reshape(2, 3)
    np.testing.assert_array_equal(tessera.Tensor(swapped).numpy(), swapped.astype(np.float32))
    raw = np.zeros(4 * 6 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(2, 3)
    misaligned[...] = [[1, 2, 3], [4, 5, 6]]
    assert not misaligned.flags.aligned
    np.testing.assert_array_equal(tessera.Tensor(misaligned).numpy(), misaligned)
    # and runs read them right
    s = ident_session()
    for x in (strided[:, :3], swapped, misaligned):
        y, = s.run(None, {"x": x})
        np.testing.assert_array_equal(y, x)


def test_outputs_are_not_copied_and_are_owned(cache_dir):
    g = tessera.Graph("twice")
    x = g.input("x", "f32[n, 3]")
    g.output(x + x, x, names=["y", None])
    s = tessera.Session(g, cache_dir=cache_dir)
    a = np.ones((2, 3), np.float32)
    y, same = s.run(None, {"x": a})
    assert isinstance(y.base, tessera.Tensor) and y.base.data_ptr == y.ctypes.data
    assert y.flags.writeable and y.flags.c_contiguous
    # an output that is an input is the caller's own copy
    assert not np.shares_memory(same, a)
    same[0, 0] = 7
    assert a[0, 0] == 1
    ts = s.run_tensors([a])
    assert torch.from_dlpack(ts[0]).data_ptr() == ts[0].data_ptr
    # the array keeps the tensor alive after everything else is gone
    del ts, s, g
    y += 1
    assert y.sum() == 18


def test_dlpack_in():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    tt = tessera.from_dlpack(t)
    assert tt.data_ptr == t.data_ptr() and tt.shape == (3, 4)
    n = np.arange(5, dtype=np.int64)
    assert tessera.from_dlpack(n).data_ptr == n.ctypes.data
    assert tessera.from_dlpack(tt) is tt
    # not dense: copied, right
    tr = t.t()
    c = tessera.from_dlpack(tr)
    assert c.data_ptr != tr.data_ptr()
    np.testing.assert_array_equal(c.numpy(), tr.numpy())
    # the producer's memory stays alive as long as the tensor
    del t
    assert tt.numpy().sum() == 66
    with pytest.raises(tessera.Unsupported):
        tessera.from_dlpack(torch.zeros(2, dtype=torch.complex64))
    # a capsule itself is consumed once (the torch backend's fast path)
    t = torch.arange(6, dtype=torch.float32)
    cap = torch.utils.dlpack.to_dlpack(t)
    tc = tessera.from_dlpack(cap)
    assert tc.data_ptr == t.data_ptr() and tc.shape == (6,)
    with pytest.raises(tessera.InvalidArgument, match="no unused DLPack capsule"):
        tessera.from_dlpack(cap)
    s = tessera.Session(tessera.Graph.parse("graph @g(%x: f32[6]) {\n  %y: f32[6] = add(%x, %x)\n  return %y\n}"),
                        target="interp")
    y, = s.run_tensors([torch.utils.dlpack.to_dlpack(t)])
    np.testing.assert_array_equal(y.numpy(), 2 * t.numpy())


def test_dlpack_out_numpy_and_torch():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = tessera.Tensor(a.copy())
    assert t.__dlpack_device__() == (1, 0)
    n = np.from_dlpack(t)
    assert n.ctypes.data == t.data_ptr
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == t.data_ptr and tt.dtype == torch.float64
    cap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    assert "dltensor" in repr(t.__dlpack__())
    del cap   # an unconsumed capsule frees itself
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))


def test_bf16_through_dlpack(cache_dir):
    g = tessera.Graph("bf")
    x = g.input("x", "bf16[4]")
    g.output(x * x, names=["y"])
    s = tessera.Session(g, target="interp")
    xt = torch.tensor([1.5, -2.0, 3.0, 0.25], dtype=torch.bfloat16)
    y, = s.run(None, {"x": xt})
    assert isinstance(y, tessera.Tensor) and y.dtype == "bf16"   # numpy has no bf16
    assert torch.equal(torch.from_dlpack(y), xt * xt)
    with pytest.raises(tessera.Unsupported, match="numpy has no bf16"):
        y.numpy()


def test_torch_inputs_in_place(cache_dir):
    s = ident_session(cache_dir=cache_dir)
    t = torch.randn(5, 3)
    y, = s.run(None, {"x": t})
    np.testing.assert_array_equal(y, t.numpy())
    out, = s.run_tensors([t])
    assert torch.equal(torch.from_dlpack(out), t)
