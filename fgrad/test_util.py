"""check_grads: compare derivatives of every order against finite differences."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .api import jvp, vjp
from .tree_util import tree_flatten, tree_map

_TOL = {np.dtype(np.float32): 2e-2, np.dtype(np.float64): 2e-5}


def _np(x):
    return np.asarray(getattr(x, "_value", x))


def _random_like(tree, rng):
    return tree_map(lambda x: rng.standard_normal(np.shape(_np(x))).astype(_np(x).dtype)
                    if np.issubdtype(_np(x).dtype, np.floating) else np.zeros_like(_np(x)), tree)


def _add(tree, other, scale):
    # only float leaves are perturbed: integer inputs (indices) must stay integers
    return tree_map(lambda x, v: _np(x) + scale * v if _np(x).dtype.kind in "fc" else _np(x),
                    tree, other)


def _inner(a, b) -> float:
    return float(sum(np.vdot(_np(x).astype(np.float64), _np(y).astype(np.float64))
                     for x, y in zip(tree_flatten(a)[0], tree_flatten(b)[0])))


def _assert_close(name, got, want, tol):
    for g, w in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        g, w = _np(g).astype(np.float64), _np(w).astype(np.float64)
        if not np.allclose(g, w, atol=tol, rtol=tol, equal_nan=True):
            raise AssertionError(f"check_grads {name}: derivative mismatch\n got {g}\nwant {w}")


def numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float):
    fp = f(*_add(tuple(primals), tuple(tangents), eps))
    fm = f(*_add(tuple(primals), tuple(tangents), -eps))
    return tree_map(lambda a, b: (_np(a) - _np(b)) / (2 * eps), fp, fm)


def check_jvp(f, args, eps, tol, rng):
    v = _random_like(tuple(args), rng)
    _, t_out = jvp(f, tuple(args), v)
    _assert_close("fwd", t_out, numerical_jvp(f, args, v, eps), tol)


def check_vjp(f, args, eps, tol, rng):
    v = _random_like(tuple(args), rng)
    out, f_vjp = vjp(f, *args)
    u = _random_like(out, rng)
    ct_in = f_vjp(u)
    lhs = _inner(ct_in, v)
    rhs = _inner(u, numerical_jvp(f, args, v, eps))
    if not np.isclose(lhs, rhs, atol=tol, rtol=tol):
        raise AssertionError(f"check_grads rev: <vjp(u), v> = {lhs} but <u, J v> = {rhs} (finite differences)")


def check_grads(f: Callable, args: Sequence, order: int = 2, modes=("fwd", "rev"),
                eps: float | None = None, atol: float | None = None, seed: int = 0) -> None:
    """Check f's derivatives up to `order` in forward and/or reverse mode against
    central finite differences; raises AssertionError on a mismatch."""
    args = tuple(args)
    dtypes = {_np(x).dtype for x in tree_flatten(args)[0]}
    low = np.dtype(np.float32) in dtypes
    eps = eps if eps is not None else (1e-2 if low else 1e-4)
    tol = atol if atol is not None else (_TOL[np.dtype(np.float32)] if low else _TOL[np.dtype(np.float64)])
    rng = np.random.default_rng(seed)

    def rec(f, order):
        if "fwd" in modes:
            check_jvp(f, args, eps, tol, rng)
        if "rev" in modes:
            check_vjp(f, args, eps, tol, rng)
        if order > 1:
            v = _random_like(args, rng)
            if "fwd" in modes:
                rec(lambda *xs: jvp(f, xs, v)[1], order - 1)
            if "rev" in modes:
                u = _random_like(f(*args), rng)
                rec(lambda *xs: vjp(f, *xs)[1](u), order - 1)

    rec(f, order)
