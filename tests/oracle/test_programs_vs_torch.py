"""The generated programs of programs.py on the Tensor facade against PyTorch:
forward values, leaf gradients through .backward(), and second order through
create_graph=True; float32 and float64, kinks per SPEC 3b."""
import numpy as onp
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fgrad

from .programs import TensorLib, inputs, programs, run

torch = pytest.importorskip("torch")

import fgrad.torch.nn.functional as F  # noqa: E402
import fgrad.scipy.special  # noqa: E402,F401

from .programs import ArrayLib  # noqa: E402

_FGRAD_ARRAYS = ArrayLib(fgrad.numpy, F.relu, lambda v: F.log_softmax(v, dim=-1), fgrad.scipy.special.erf,
                         fgrad.scipy.special.expit)
EXAMPLES = int(__import__("os").environ.get("FGRAD_ORACLE_EXAMPLES", "40"))


class NumpyNames:
    """NumPy's function names over a PyTorch-style module (torch itself, or fgrad)."""

    def __init__(self, lib):
        self.lib = lib

    def __getattr__(self, name):
        L = self.lib
        table = {
            "arctan": L.atan, "arcsinh": L.asinh, "negative": L.neg, "arctan2": L.atan2,
            "arcsin": L.asin, "arccos": L.acos, "arctanh": L.atanh, "arccosh": L.acosh,
            "cbrt": lambda v: v ** (1.0 / 3.0),
            "sum": lambda v: v.sum(), "mean": lambda v: v.mean(),
            "max": lambda v: v.max(), "min": lambda v: v.min(),
        }
        return table[name] if name in table else getattr(L, name)


def _close(a, b, dtype):
    tol = 2e-3 if dtype == onp.float32 else 1e-9
    a = a.detach().numpy(force=True) if hasattr(a, "detach") else onp.asarray(a)
    b = b.detach().numpy(force=True) if hasattr(b, "detach") else onp.asarray(b)
    assert a.shape == b.shape
    onp.testing.assert_allclose(a.astype(onp.float64), b.astype(onp.float64), rtol=tol, atol=tol,
                                equal_nan=True)


def _leaves(lib, x, y):
    return (lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True))


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32])
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_program_matches_torch(dtype, data):
    program = data.draw(programs())
    x, y = data.draw(inputs(dtype))
    assume(x.size > 0 or program[1] not in ("max", "min"))
    assume(y.size > 0 or program[1] not in ("max", "min") or x.size == 0)
    kinks = []
    try:
        run(program, fgrad.numpy, _FGRAD_ARRAYS, x, y, kinks)
    except ValueError:
        return  # max/min of an empty array: both libraries refuse it (see the JAX oracle)
    assume(not kinks)
    results = []
    for lib in (fgrad.torch, torch):
        a, b = _leaves(lib, x, y)
        out = run(program, NumpyNames(lib), TensorLib(lib), a, b)
        ga, gb = lib.autograd.grad(out, (a, b), create_graph=True, allow_unused=True)
        ga = lib.zeros_like(a) if ga is None else ga
        gb = lib.zeros_like(b) if gb is None else gb
        second = (ga.sum() + gb.sum()) if (ga.requires_grad or gb.requires_grad) else None
        h = lib.autograd.grad(second, (a, b), allow_unused=True) if second is not None else (None, None)
        results.append((out, ga, gb, h))
    (o1, ga1, gb1, h1), (o2, ga2, gb2, h2) = results
    _close(o1, o2, dtype)
    _close(ga1, ga2, dtype)
    _close(gb1, gb2, dtype)
    if dtype == onp.float64:
        for u, v, ref in zip(h1, h2, (x, y)):
            u = onp.zeros_like(ref) if u is None else u
            v = onp.zeros_like(ref) if v is None else v
            _close(u, v, dtype)
