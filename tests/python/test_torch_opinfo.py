"""A fixed, representative part of PyTorch's OpInfo database through the
tessera backend (scripts/opinfo_sweep.py runs all of it, outside CI):
every entry matches eager PyTorch, compiled or through fallback, except
those tests/torch_opinfo/expected_failures.txt lists with a reason; a
listed entry that starts passing fails too. The entries compiled here must
stay compiled (no fallback), so a lowering that regresses to fallback
shows."""
import importlib.util
import os

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("opinfo_sweep", os.path.join(ROOT, "scripts", "opinfo_sweep.py"))
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)

# compiled end to end today: one or more per lowering family
COMPILED = [
    "abs", "add", "sub", "mul", "div.no_rounding_mode", "div.floor_rounding", "div.trunc_rounding", "remainder",
    "fmod", "pow", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "floor", "round",
    "sign", "nn.functional.relu", "nn.functional.gelu", "nn.functional.leaky_relu", "nn.functional.hardtanh",
    "nn.functional.elu", "clamp", "where", "eq", "lt", "ge", "logical_and", "logical_not",
    "maximum", "atan2", "sum", "mean", "amax", "argmax", "var", "cumsum", "softmax", "log_softmax",
    "nn.functional.layer_norm", "nn.functional.batch_norm", "matmul", "mm", "bmm", "addmm", "nn.functional.conv2d",
    "nn.functional.max_pool2d", "nn.functional.avg_pool2d", "nn.functional.embedding", "cat", "permute",
    "reshape", "expand", "flip", "gather", "index_select", "sort", "topk", "nn.functional.pad.constant",
    # special functions and the rest of elementwise (lower/special.py)
    "acos", "atanh", "copysign", "hypot", "logaddexp", "isclose", "isfinite", "frexp", "nextafter",
    "round.decimals_3", "erfinv", "special.erfcx", "lgamma", "digamma", "polygamma.polygamma_n_1", "special.i0e",
    "special.bessel_j0", "special.ndtri", "special.chebyshev_polynomial_t", "special.hermite_polynomial_h",
    "special.shifted_chebyshev_polynomial_v", "special.legendre_polynomial_p", "igamma", "igammac",
    # scatter, indexed reductions, search (lower/scatter.py)
    "scatter", "scatter_add", "scatter_reduce.mean", "index_reduce.amax", "index_put", "masked_scatter",
    "searchsorted", "histc", "nn.functional.embedding_bag", "_segment_reduce.lengths", "nonzero_static",
    # views, scans, order statistics
    "diagonal", "diagonal_scatter", "slice_scatter", "as_strided", "unfold", "var_mean", "cumprod", "cummax",
    "logcumsumexp", "kthvalue", "median", "nn.functional.pad.circular", "linalg.vander",
    # pooling, normalization, resampling, linear algebra (lower/nn.py, linalg.py, decomp.py)
    "nn.functional.adaptive_avg_pool2d", "nn.functional.adaptive_max_pool2d", "nn.functional.max_pool3d",
    "nn.functional.conv_transpose2d", "nn.functional.group_norm", "nn.functional.instance_norm",
    "nn.functional.grid_sample", "_upsample_bilinear2d_aa", "nn.functional.bilinear", "cdist", "addbmm",
    "linalg.det", "linalg.slogdet", "linalg.solve_ex", "linalg.cholesky_ex", "linalg.lu_factor_ex", "lu_solve",
    "linalg.qr", "linalg.solve_triangular", "linalg.inv", "linalg.cholesky", "geqrf", "ormqr",
    "nn.functional.fractional_max_pool2d",
    # complex values as pairs, Fourier transforms as dense DFTs (lower/complex.py)
    "fft.fft2", "fft.irfft", "fft.hfft", "polar", "complex",
    # Jacobi eigen- and singular values (lower/eigen.py)
    "linalg.eigvalsh", "linalg.svdvals", "linalg.pinv.hermitian", "linalg.polar",
    # random draws, compared with eager as distributions (lower/rng.py)
    "uniform", "normal", "bernoulli", "randint", "exponential", "nn.functional.rrelu", "nn.functional.dropout",
]
# matching eager, some of it through fallback
THROUGH_FALLBACK = ["special.airy_ai", "multinomial", "nonzero"]


def expected_failures():
    out = {}
    with open(os.path.join(ROOT, "tests", "torch_opinfo", "expected_failures.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, why = line.rstrip("\n").split("\t", 1)
                out[name] = why
    return out


def entries(names):
    from torch.testing._internal.common_methods_invocations import op_db
    by = {}
    for op in op_db:
        by.setdefault(sweep.entry_name(op), op)
    missing = [n for n in names if n not in by]
    assert not missing, "not in this torch's op_db: %s" % missing
    return [by[n] for n in names]


@pytest.mark.parametrize("name", COMPILED + THROUGH_FALLBACK + sorted(expected_failures()))
def test_opinfo_entry(name, cache_dir):
    op, = entries([name])
    result, detail = sweep.run_entry(op, 3, cache_dir)
    listed = expected_failures()
    if name in listed:
        assert result == "failed", "listed as failing (%s) but %s: take it off the list" % (listed[name], result)
        return
    assert result != "failed", detail
    if name in COMPILED:
        assert result == "compiled", "fell back: %s" % detail
