"""Long regions of 0-d values (regions.SCALAR_KERNEL_EQNS equations or more) run as a kernel over
one element instead of Python: the same bits as the Python tier, NaN and inf included."""
from __future__ import annotations

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.interpreters.compile import regions


def _nested(f, k):
    for _ in range(k):
        f = fgrad.grad(f)
    return f


def _both_tiers(monkeypatch, g, *args):
    """g jitted with long scalar regions as kernels, then as Python; and the first's text."""
    monkeypatch.setattr(regions, "SCALAR_KERNEL_EQNS", 256)
    lowered = fgrad.jit(g).lower(*args)
    as_kernel = fgrad.jit(g)(*args)
    monkeypatch.setattr(regions, "SCALAR_KERNEL_EQNS", 10 ** 9)
    as_python = fgrad.jit(g)(*args)
    return onp.asarray(as_kernel), onp.asarray(as_python), lowered.as_text()


@pytest.mark.parametrize("x", [0.7, -1.3, 0.0, 2.5])
def test_high_order_derivative_same_bits_as_the_python_tier(monkeypatch, x):
    g = _nested(lambda v: fnp.sin(v) * fnp.exp(-v * v), 7)
    k, p, text = _both_tiers(monkeypatch, g, onp.float64(x))
    assert "kernel" in text
    assert k.tobytes() == p.tobytes()
    assert k.tobytes() == onp.asarray(g(onp.float64(x))).tobytes()


def test_special_values_as_numpy_gives_them(monkeypatch):
    # log and sqrt of negatives (NaN), division by zero (inf), exp overflow, in one long region
    def f(v):
        out = v
        for i in range(70):
            out = out + fnp.log(v - 3.0) * 0.5 + fnp.sqrt(v - 5.0) + 1.0 / (v - 1.0) + fnp.exp(v * 1000.0)
        return out
    for x in (1.0, 2.0, 7.0):
        k, p, text = _both_tiers(monkeypatch, f, onp.float64(x))
        assert "kernel" in text
        # every bit, but a NaN's sign: which operand's NaN a sum passes on is the CPU's and the
        # code generator's choice (IEEE 754 leaves it open, NumPy does not fix it either)
        assert onp.isnan(k) == onp.isnan(p), (x, k, p)
        assert onp.isnan(k) or k.tobytes() == p.tobytes(), (x, k, p)
