"""The class test's tool for grad_fn graphs: a torch op's graph, as names, next to PyTorch's.

`graph_of(out)` describes the graph behind a result: the grad_fn's class name and, for each
entry of `next_functions` in order, the parent's class name (None for an input that needs no
gradient) and the output index. `assert_same_graph(fn, make_args)` runs `fn` on the inputs
`make_args(lib)` builds, with lib = fgrad.torch and with torch, and compares the graphs of
every Tensor result down to `depth` levels (1: the op's own node and its parents' names).
"""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def graph_of(out, depth: int = 1):
    g = getattr(out, "grad_fn", None)
    return _node(g, depth)


def _node(g, depth):
    if g is None:
        return None
    name = type(g).__name__
    if depth == 0:
        return name
    return (name, tuple((_node(f, depth - 1) if f is not None else None, k) for f, k in g.next_functions))


def _results(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _results(x)]
    return [out] if hasattr(out, "grad_fn") else []


def assert_same_graph(fn, make_args, depth: int = 1):
    """fgrad.torch and torch build the same grad_fn graph for fn(*make_args(lib))."""
    want = [graph_of(o, depth) for o in _results(fn(torch, *make_args(torch)))]
    got = [graph_of(o, depth) for o in _results(fn(ftorch, *make_args(ftorch)))]
    assert got == want, f"fgrad.torch's graph {got} differs from PyTorch's {want}"


def leaf(lib, shape=(2, 3), seed: int = 0, low: float = 0.5, high: float = 1.5, dtype=np.float32):
    """A leaf Tensor that requires grad, the same values for both libraries."""
    v = np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)
    return lib.tensor(v, requires_grad=True)


def assert_same_gradients(got, want, rtol: float, atol: float) -> None:
    """fgrad.torch's gradients equal PyTorch's; PyTorch's None and fgrad's zeros both mean
    "no gradient"."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if g is None or w is None:
            assert g is None or not g.any(), (g, w)
            assert w is None or not w.any(), (g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
