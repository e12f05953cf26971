"""Primitive's impl declarations (fgrad/core/primitive.py): the eval trace's direct call of
NumPy's function (`Primitive.np_call`) computes what the declared impl computes."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad  # noqa: F401  (defines the primitives)
from fgrad.core.primitive import ALL_PRIMITIVES
from fgrad.core.trace import EVAL_TRACE

DIRECT = [p for p in ALL_PRIMITIVES if p.np_call is not None]


def _operand_sets(prim):
    """Operand tuples the impl accepts: each dtype family, 1-D and 0-d (a 0-d result is a
    NumPy scalar from the function, an array from the impl)."""
    rng = np.random.default_rng(0)
    values = {"f": rng.uniform(-3, 3, 7), "i": rng.integers(-5, 5, 7), "b": rng.integers(0, 2, 7).astype(bool)}
    found = []
    # (a ufunc's operand count: one more positional argument would be its `out`; np.round's
    # second is its number of decimals)
    arity = getattr(prim.np_call, "nin", 1)
    for v in values.values():
        for operand in (v, v[2].copy().reshape(())):
            args = tuple(operand.copy() for _ in range(arity))
            try:
                prim.raw_impl(*args, xp=np)
            except TypeError:
                continue
            found.append(args)
    return found


def test_every_numpy_function_primitive_is_called_directly():
    """The class covers every primitive whose impl is NumPy's function without silenced
    warnings; an impl replaced afterwards (eager_math's kernels) drops the direct call."""
    assert {p.name for p in DIRECT} >= {"add", "mul", "sub", "neg", "exp", "tanh"}
    for p in DIRECT:
        assert p.np_call is getattr(np, p.np_function[0]) and p.np_function[1] is False
    from fgrad.interpreters.compile import eager_math
    assert all(p.np_call is None for p in eager_math.INSTALLED)


@pytest.mark.parametrize("prim", DIRECT, ids=lambda p: p.name)
def test_the_direct_call_gives_the_impls_result(prim):
    cases = _operand_sets(prim)
    assert cases, prim.name
    for args in cases:
        got = EVAL_TRACE.process_primitive(prim, args, {})
        want = np.asarray(prim.raw_impl(*args, xp=np))
        assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), (prim.name, args)
        assert all(got is not a for a in args)
