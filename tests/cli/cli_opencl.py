"""CLI tests of the opencl target (run by test_cli.py): the bundled model on
the OpenCL device (PoCL in CI) against the interpreter's expected output,
`tessera ir --emit opencl`, and the one-line error where no OpenCL driver
is installed (an ICD vendors folder with nothing in it). Under ASan the
OpenCL commands run without leak detection (the driver's threads and
memory live to the end of the process: tests/suites.cmake says more)."""
import os

import numpy as np

from cli_common import ROOT, check, close, env, expect_error, tessera, tmp


def test_opencl_target():
    model = os.path.join(ROOT, "models", "attention.ir")
    x = os.path.join(ROOT, "models", "attention_input.npy")
    asan = os.environ.get("ASAN_OPTIONS")
    no_leaks = asan.replace("detect_leaks=1", "detect_leaks=0") if asan else None
    with env(POCL_CACHE_DIR=tmp("pocl_cache"), ASAN_OPTIONS=no_leaks):
        out = tmp("out_opencl")
        rc, so, se = tessera("run", model, "-i", x, "--target", "opencl", "--repeat", "2", "-o", out)
        if check("opencl: exit 0", rc == 0, se):
            close("opencl vs interpreter's expected output", np.load(os.path.join(out, "output_0.npy")),
                  np.load(os.path.join(ROOT, "models", "attention_expected.npy")))
            check("opencl --repeat: compile time, nothing cached by tessera", "compile_ms=" in so and "cache=none" in so, so)
        rc, so, se = tessera("ir", model, "--emit", "opencl")
        check("ir --emit opencl: kernels", rc == 0 and "__kernel void ts_k" in so and "get_global_id(0)" in so, se)
    empty = tmp("no_icd_vendors")
    os.makedirs(empty, exist_ok=True)
    with env(OCL_ICD_VENDORS=empty, ASAN_OPTIONS=no_leaks):
        expect_error("opencl without a driver", ["run", model, "-i", x, "--target", "opencl"],
                     r"^tessera: .*opencl: no usable OpenCL device \(clGetPlatformIDs: error -1001\); install an "
                     r"OpenCL driver, e.g. Debian's pocl-opencl-icd\n$")
