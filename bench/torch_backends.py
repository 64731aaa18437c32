#!/usr/bin/env python3
"""torch.compile backends side by side: eager PyTorch, Inductor (the
default backend) and tessera's, on the models of bench/torch_zoo.py, in
one run with the same thread count (issue 31, item 8).

    .venv/bin/python bench/torch_backends.py                       # every model
    .venv/bin/python bench/torch_backends.py --models resnet18,gpt2_tiny --batches 1 --threads 1,2
    .venv/bin/python bench/torch_backends.py --train resnet18,gpt2_tiny,bert_tiny --write-doc

For each model: the compile time of each backend cold (fresh caches:
tessera's cache_dir and Inductor's TORCHINDUCTOR_CACHE_DIR both new and
empty) and warm (torch._dynamo.reset(), then the same caches), both
including Dynamo and AOTAutograd, measured as the first call; then per
batch and thread count, inference latency of the three, interleaved in
--rounds rounds (each round times every backend --runs times, in a
rotated order), the median of the rounds' medians. Every compiled output
is checked against eager's before it is timed. --train times a training
step (forward, cross-entropy, backward; the optimizer is not compiled)
of the models named. --write-doc puts the tables in docs/perf.md's
"PyTorch backends" section, or the one --section names
(bench/doc_sections.py)."""
import argparse
import math
import os
import statistics
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import doc_sections  # noqa: E402
import torch_zoo  # noqa: E402

BACKENDS = ("eager", "inductor", "tessera")


def flat(o):
    import torch
    if isinstance(o, torch.Tensor):
        return [o]
    return [t for x in o for t in flat(x)]


def compiled(model, backend, cache):
    """model under torch.compile with backend, static shapes."""
    import torch
    if backend == "eager":
        return model
    if backend == "inductor":
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        return torch.compile(model, dynamic=False)
    import tessera.torch as tt
    return torch.compile(model, dynamic=False,
                         backend=lambda gm, ex: tt.backend(gm, ex, options={"cache_dir": cache,
                                                                            "threads": torch.get_num_threads()}))


def first_call(fn, xs):
    t0 = time.perf_counter()
    out = fn(*xs)
    return time.perf_counter() - t0, out


def agree(got, want, tol):
    err = 0.0
    for g, w in zip(flat(got), flat(want)):
        scale = max(w.abs().max().item(), 1e-6)
        err = max(err, (g - w).abs().max().item() / scale)
    if err > tol:
        sys.exit("results differ: %.2e relative to eager's largest output (tolerance %.0e)" % (err, tol))
    return err


def timed(fn, xs, runs):
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*xs)
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


def interleaved(fns, xs, runs, rounds):
    """{name: median over rounds of the round's median seconds per run}."""
    names = list(fns)
    med = {k: [] for k in names}
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            fns[k](*xs)
            med[k].append(timed(fns[k], xs, runs))
    return {k: statistics.median(v) for k, v in med.items()}


def compile_times(name, caches):
    """{backend: (cold s, warm s)} at batch 1."""
    import torch
    import torch._dynamo
    model, xs = torch_zoo.build(name, batch=1)
    out = {}
    with torch.no_grad():
        want = model(*xs)
        for b in BACKENDS[1:]:
            torch._dynamo.reset()
            cold, got = first_call(compiled(model, b, caches[b]), xs)
            agree(got, want, 1e-3)
            torch._dynamo.reset()
            warm, _ = first_call(compiled(model, b, caches[b]), xs)
            out[b] = (cold, warm)
    return out


def latencies(name, batch, threads, caches, runs, rounds):
    import torch
    import torch._dynamo
    torch.set_num_threads(threads)
    model, xs = torch_zoo.build(name, batch=batch)
    with torch.no_grad():
        want = model(*xs)
        fns, errs = {}, {}
        for b in BACKENDS:
            torch._dynamo.reset()
            fns[b] = compiled(model, b, caches[b])
            errs[b] = agree(fns[b](*xs), want, 1e-3)
        return interleaved(fns, xs, runs, rounds), errs


def train_step_fn(model, backend, cache):
    import torch
    fwd = compiled(model, backend, cache)

    def step(*xs):
        out = flat(fwd(*xs))[0]
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(),
                                                 torch.zeros(out.numel() // out.shape[-1], dtype=torch.long))
        loss.backward()
        return loss
    return step


def train_times(name, batch, threads, caches, runs, rounds):
    import torch
    import torch._dynamo
    torch.set_num_threads(threads)
    model, xs = torch_zoo.build(name, batch=batch)
    model.train()
    fns = {}
    losses = {}
    for b in BACKENDS:
        torch._dynamo.reset()
        fns[b] = train_step_fn(model, b, caches[b])
        losses[b] = fns[b](*xs).item()
    if any(abs(losses[b] - losses["eager"]) > 1e-3 * max(1.0, abs(losses["eager"])) for b in BACKENDS):
        sys.exit("%s: training losses differ: %s" % (name, losses))
    return interleaved(fns, xs, runs, rounds)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(torch_zoo.NAMES))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--train", default="", help="models whose training step is timed too (batch 8)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--write-doc", action="store_true")
    ap.add_argument("--section", default="PyTorch backends",
                    help="the docs/perf.md section --write-doc replaces (one per batch set, say)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    os.environ.setdefault("TORCH_LOGS", "-dynamo")
    import torch
    import torch._dynamo
    import tessera
    torch._dynamo.config.allow_rnn = True   # else Dynamo leaves nn.LSTM to eager for every backend
    torch._dynamo.config.cache_size_limit = 64
    models = args.models.split(",")
    batches = [int(b) for b in args.batches.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    rows, comp, train = [], {}, []
    with tempfile.TemporaryDirectory() as tmp:
        # imports and first-use costs outside every measurement
        warm_model = torch.nn.Linear(4, 4)
        for b in BACKENDS[1:]:
            torch._dynamo.reset()
            compiled(warm_model, b, os.path.join(tmp, "warmup-" + b))(torch.randn(2, 4))
        for name in models:
            caches = {b: os.path.join(tmp, name, b) for b in BACKENDS}
            torch.set_num_threads(threads[0])
            comp[name] = compile_times(name, caches)
            print("%-20s compile s: inductor %.1f cold %.1f warm, tessera %.1f cold %.1f warm" %
                  (name, *comp[name]["inductor"], *comp[name]["tessera"]), flush=True)
            for bt in batches:
                for th in threads:
                    ms, errs = latencies(name, bt, th, caches, args.runs, args.rounds)
                    rows.append((name, bt, th, ms, errs))
                    print("%-20s batch %d threads %d ms: eager %.3f inductor %.3f tessera %.3f (tessera/inductor %.2f)"
                          % (name, bt, th, 1e3 * ms["eager"], 1e3 * ms["inductor"], 1e3 * ms["tessera"],
                             ms["tessera"] / ms["inductor"]), flush=True)
            if name in args.train.split(","):
                for th in threads:
                    ms = train_times(name, 8, th, caches, max(3, args.runs // 2), args.rounds)
                    train.append((name, th, ms))
                    print("%-20s train step batch 8 threads %d ms: eager %.1f inductor %.1f tessera %.1f" %
                          (name, th, 1e3 * ms["eager"], 1e3 * ms["inductor"], 1e3 * ms["tessera"]), flush=True)
    lines = ["Eager PyTorch, `torch.compile` with Inductor and with tessera's backend, in one process, same "
             "threads (torch %s, tessera %s, %s); random weights, `dynamic=False`; the median of %d rounds' "
             "medians of %d runs, backends interleaved. Reproduce: `.venv/bin/python bench/torch_backends.py "
             "--models %s --batches %s --threads %s --runs %d --rounds %d%s --write-doc%s`." %
             (torch.__version__, tessera.__version__, time.strftime("%Y-%m-%d"), args.rounds, args.runs,
              args.models, args.batches, args.threads, args.runs, args.rounds,
              " --train " + args.train if args.train else "",
              "" if args.section == "PyTorch backends" else ' --section "%s"' % args.section), "",
             "| model | batch | threads | eager ms | Inductor ms | tessera ms | tessera / Inductor |",
             "|---|---|---|---|---|---|---|"]
    for name, bt, th, ms, _ in rows:
        lines.append("| %s | %d | %d | %.3f | %.3f | %.3f | %.2f |" % (name, bt, th, 1e3 * ms["eager"],
                                                                      1e3 * ms["inductor"], 1e3 * ms["tessera"],
                                                                      ms["tessera"] / ms["inductor"]))
    lines.append("")
    for bt in batches:
        for th in threads:
            g = geomean([ms["tessera"] / ms["inductor"] for _, b, t, ms, _ in rows if t == th and b == bt])
            lines.append("Geomean tessera / Inductor, batch %d, %d thread%s: **%.2f**." % (
                bt, th, "" if th == 1 else "s", g))
    lines += ["", "Compile time, batch 1, %d thread%s, Dynamo and AOTAutograd included (first call):" %
              (threads[0], "" if threads[0] == 1 else "s"), "",
              "| model | Inductor cold s | tessera cold s | Inductor warm s | tessera warm s |", "|---|---|---|---|---|"]
    for name, c in comp.items():
        lines.append("| %s | %.1f | %.1f | %.2f | %.2f |" % (name, c["inductor"][0], c["tessera"][0],
                                                            c["inductor"][1], c["tessera"][1]))
    lines.append("")
    lines.append("Geomean cold compile tessera / Inductor: **%.2f**; warm: **%.2f**." % (
        geomean([c["tessera"][0] / c["inductor"][0] for c in comp.values()]),
        geomean([c["tessera"][1] / c["inductor"][1] for c in comp.values()])))
    if train:
        lines += ["", "Training step (forward, cross-entropy, backward), batch 8:", "",
                  "| model | threads | eager ms | Inductor ms | tessera ms | tessera / Inductor |",
                  "|---|---|---|---|---|---|"]
        for name, th, ms in train:
            lines.append("| %s | %d | %.1f | %.1f | %.1f | %.2f |" % (name, th, 1e3 * ms["eager"], 1e3 * ms["inductor"],
                                                                    1e3 * ms["tessera"], ms["tessera"] / ms["inductor"]))
    print("\n".join(lines))
    if args.write_doc:
        path = os.path.join(os.path.dirname(HERE), "docs", "perf.md")
        doc_sections.write_section(path, args.section, "\n".join(lines))
        print("wrote docs/perf.md (%s)" % args.section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
