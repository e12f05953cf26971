"""Region planning (fgrad/interpreters/compile/regions.py): a kernel's region never has more
inputs and outputs than a ctypes call passes, whatever the program's width."""
from __future__ import annotations

import functools

import numpy as onp
import pytest

import fgrad
from fgrad.interpreters.compile import regions

N = regions.MAX_KERNEL_ARGS + 76


def _sum_all(xs):
    return functools.reduce(lambda a, b: a + b, xs)


def _fan_out(x):
    return [x * float(k) + 1.0 for k in range(N)]


@pytest.mark.parametrize("case", ["many inputs", "many outputs", "many 0-d inputs"])
def test_wide_regions_are_split_to_fit_a_call_and_keep_eagers_bits(case):
    rng = onp.random.default_rng(0)
    if case == "many inputs":
        f, args = _sum_all, ([rng.standard_normal(16) for _ in range(N)],)
    elif case == "many outputs":
        f, args = _fan_out, (rng.standard_normal(16),)
    else:
        f, args = _sum_all, ([onp.float64(v) for v in rng.standard_normal(N)],)
    steps = regions.plan(fgrad.make_jaxpr(f)(*args).jaxpr)
    kernels = [s for s in steps if s.kind == "kernel"]
    assert len(kernels) >= 2
    assert all(len(s.inputs) + len(s.outputs) <= regions.MAX_KERNEL_ARGS for s in kernels)
    with fgrad.disable_jit():
        eager = f(*args)
    got = fgrad.jit(f)(*args)
    for g, e in zip(fgrad.tree_util.tree_leaves(got), fgrad.tree_util.tree_leaves(eager)):
        assert onp.asarray(g).tobytes() == onp.asarray(e).tobytes()
