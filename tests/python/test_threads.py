"""One session run from several Python threads at once, with the GIL
released while it runs."""
import threading

import numpy as np

import tessera


def matmul_session(n, target, cache_dir):
    g = tessera.Graph("mm")
    a = g.input("a", f"f32[{n}, {n}]")
    g.output(g.matmul(a, a), names=["c"])
    return tessera.Session(g, target=target, cache_dir=cache_dir)


def test_threads_share_a_session(cache_dir):
    s = matmul_session(32, "cpu", cache_dir)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((32, 32)).astype(np.float32) for _ in range(8)]
    errors = []

    def work(x):
        try:
            for _ in range(40):
                c, = s.run(None, {"a": x})
                np.testing.assert_allclose(c, x @ x, rtol=1e-4, atol=1e-4)
        except Exception as e:  # reported below: an assert in a thread is lost otherwise
            errors.append(e)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_gil_released_while_running(cache_dir):
    # a run long enough to notice (the interpreter's plain triple loop)
    s = matmul_session(256, "interp", cache_dir)
    x = np.ones((256, 256), np.float32)
    started, done = threading.Event(), threading.Event()

    def work():
        started.set()
        for _ in range(3):
            s.run(None, {"a": x})
        done.set()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    spins = 0
    while not done.is_set():
        spins += 1   # only runs while the worker does not hold the GIL
    t.join()
    assert spins > 1000, spins


def test_close_while_another_thread_runs(cache_dir):
    s = matmul_session(128, "interp", cache_dir)
    x = np.ones((128, 128), np.float32)
    results = []
    t = threading.Thread(target=lambda: results.append(s.run(None, {"a": x})[0]))
    t.start()
    s.close()   # the run in flight finishes first
    t.join()
    assert len(results) == 1 and results[0][0, 0] == 128
