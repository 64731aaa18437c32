"""CLI tests of the cuda target (run by test_cli.py). `tessera ir --emit
cuda` needs no GPU. `--target cuda` on a machine without an NVIDIA GPU
(CI's) fails with one line naming what is missing; on one with a GPU
(/dev/nvidiactl) the bundled model runs there and matches the
interpreter's expected output (scripts/gpu_check.sh runs this too)."""
import os

import numpy as np

from cli_common import ROOT, check, close, expect_error, tessera, tmp


def test_cuda_target():
    model = os.path.join(ROOT, "models", "attention.ir")
    x = os.path.join(ROOT, "models", "attention_input.npy")
    rc, so, se = tessera("ir", model, "--emit", "cuda")
    check("ir --emit cuda: kernels", rc == 0 and 'extern "C" __global__ void ts_k' in so and "threadIdx.x" in so, se)
    rc, so, se = tessera("ir", model, "--emit", "ptx")
    check("ir --emit ptx: refused", rc == 1 and "--emit takes c" in se and "cuda" in se, se)
    if os.path.exists("/dev/nvidiactl"):
        out = tmp("out_cuda")
        rc, so, se = tessera("run", model, "-i", x, "--target", "cuda", "--repeat", "2", "-o", out)
        if check("cuda: exit 0", rc == 0, se):
            close("cuda vs interpreter's expected output", np.load(os.path.join(out, "output_0.npy")),
                  np.load(os.path.join(ROOT, "models", "attention_expected.npy")))
    else:
        expect_error("cuda without a GPU", ["run", model, "-i", x, "--target", "cuda"],
                     r"^tessera: .*cuda: no usable CUDA device \(.+\); the cuda target needs an NVIDIA GPU and its "
                     r"driver\n$")
