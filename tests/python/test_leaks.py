"""10,000 runs leave memory and reference counts where they were."""
import sys

import numpy as np

import tessera


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_runs_do_not_leak(scale_graph, cache_dir):
    s = tessera.Session(scale_graph, cache_dir=cache_dir)
    x = np.ones((64, 4), np.float32)
    refs = sys.getrefcount(x)
    for _ in range(1000):   # warm: allocator pools, the recycled outputs
        y, = s.run(None, {"x": x})
        t, = s.run_tensors([x])
    before = rss_bytes()
    for _ in range(10000):
        y, = s.run(None, {"x": x})
        t, = s.run_tensors([x])
        np.asarray(t)
    grown = rss_bytes() - before
    assert sys.getrefcount(x) == refs
    base = y.base
    assert sys.getrefcount(y) == 2
    del y
    assert sys.getrefcount(base) == 2   # held by nothing but `base`
    assert grown < 1 << 20, f"RSS grew {grown} bytes over 10,000 runs"


def test_dlpack_round_trips_do_not_leak():
    a = np.ones(1000, np.float32)
    t = tessera.Tensor(a)
    before = rss_bytes()
    for _ in range(10000):
        np.from_dlpack(t)
        tessera.from_dlpack(a)
        t.__dlpack__(max_version=(1, 0))
        tessera.from_dlpack(t.__dlpack__())   # a capsule, consumed
    assert rss_bytes() - before < 1 << 20
    assert sys.getrefcount(t) == 2
