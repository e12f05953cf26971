"""The primitive registry on the GPU: every case of tests/cases/*.py (collected by
tests/ops/test_primitives.py, reused here) run with its arrays on the GPU.

For each case: (1) the forward value on the GPU equals fgrad's on the CPU (float64, and
float32 where the case asks for it) and stays on the GPU; (2) jvp and vjp on the GPU equal
those on the CPU for the same directions, and stay there; (3) check_grads up to the case's
order (1 and 2) against finite differences, computed on the GPU.

A case whose own code combines host constants with its inputs through Python operators
(`fnp.eye(3) * x`) runs traced (fgrad.jit), see _support.gpu_callable: CuPy refuses NumPy
operands, fgrad's primitives move them."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gpu._support import assert_close, assert_on_gpu, case_params, gpu_callable, require_gpu, to_gpu

cp = require_gpu()

import fgrad  # noqa: E402
from fgrad.test_util import check_grads  # noqa: E402
from tests.ops import test_primitives as registry  # noqa: E402

# GPU and CPU differ in summation order and in their libm / cuSOLVER / cuFFT: the tolerance
# separates those roundings from wrong results.
RTOL64 = 1e-7
RTOL32 = 1e-4


def _directions(case, args, seed):
    """Random tangents for the float inputs (zeros for integer ones), made on the host."""
    rng = np.random.default_rng(seed)
    return tuple(registry._random_like(a, rng) for a in args)


@pytest.mark.parametrize("case", case_params(registry.CASES, "forward"))
def test_forward_float64_matches_cpu(case):
    args = case.make_args(np.float64)
    want = case.fn(*args)
    got = gpu_callable(case, cp)(*to_gpu(cp, args))
    assert_on_gpu(got, case.name)
    assert_close(got, want, RTOL64, case.name)


@pytest.mark.parametrize("case", case_params([c for c in registry.CASES if c.opt["f32"]], "forward"))
def test_forward_float32_matches_cpu(case):
    args = case.make_args(np.float32)
    want = case.fn(*args)
    got = gpu_callable(case, cp)(*to_gpu(cp, args))
    assert_on_gpu(got, case.name)
    assert_close(got, want, RTOL32, case.name)


@pytest.mark.parametrize("case", case_params(registry.GRAD_CASES, "jvp_vjp"))
def test_jvp_and_vjp_match_cpu(case):
    args = case.make_args()
    v = _directions(case, args, 1)
    out, t_out = fgrad.jvp(case.fn, args, v)
    u = registry._random_like(out, np.random.default_rng(2))
    cts = fgrad.vjp(case.fn, *args)[1](u)

    gargs, gv, fn = to_gpu(cp, args), to_gpu(cp, v), gpu_callable(case, cp)
    g_out, g_t_out = fgrad.jvp(fn, gargs, gv)
    g_cts = fgrad.vjp(fn, *gargs)[1](cp.asarray(u))
    assert_on_gpu((g_out, g_t_out), f"{case.name} (jvp)")
    floats = [i for i, a in enumerate(args) if registry._is_float(a)]
    assert_on_gpu([g_cts[i] for i in floats], f"{case.name} (vjp)")
    assert_close((g_out, g_t_out), (out, t_out), RTOL64, f"{case.name} (jvp)")
    assert_close([g_cts[i] for i in floats], [cts[i] for i in floats], RTOL64, f"{case.name} (vjp)")


@pytest.mark.parametrize("case", case_params(registry.GRAD_CASES, "check_grads"))
def test_check_grads_on_gpu(case):
    check_grads(gpu_callable(case, cp), to_gpu(cp, case.make_args()), order=case.opt["order"],
                modes=("fwd", "rev"), atol=case.opt["grad_tol"])
