"""check_grads: compare derivatives of every order against finite differences.

Complex inputs are checked as JAX's check_grads checks them: a complex tangent perturbs the
real and the imaginary parts at once (random directions in both), the forward check compares
the jvp with the central difference along it, and the reverse check compares the vjp with the
numerical jvp under JAX's real pairing <a, b> = Re(sum(a * b)) (no conjugation: a vjp is the
plain transpose of the jvp)."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .api import jvp, vjp
from .core.trace import xp_of
from .tree_util import tree_flatten, tree_map

_TOL = {np.dtype(np.float32): 2e-2, np.dtype(np.float64): 2e-5}
_LOW = (np.dtype(np.float32), np.dtype(np.complex64))  # single precision: larger steps and tolerances


def _value(x):
    """x's array where it lives: a CuPy (GPU) array stays on its device, so that the check
    runs there; anything else becomes a NumPy array."""
    v = getattr(x, "_value", x)
    return v if type(v).__module__.startswith("cupy") else np.asarray(v)


def _host(x) -> np.ndarray:
    """x's values as a NumPy array, copied from the GPU where they live there."""
    v = _value(x)
    return v if isinstance(v, np.ndarray) else v.get()


def _random_like(tree, rng):
    def draw(x):
        v = _value(x)
        if v.dtype.kind not in "fc":
            return xp_of((v,)).zeros_like(v)
        # drawn on the host and moved to x's device: a seed gives the same directions on either
        d = rng.standard_normal(v.shape)
        if v.dtype.kind == "c":  # both parts move: the real and the imaginary direction
            d = d + 1j * rng.standard_normal(v.shape)
        return xp_of((v,)).asarray(d.astype(v.dtype))
    return tree_map(draw, tree)


def _add(tree, other, scale):
    # only float leaves are perturbed: integer inputs (indices) must stay integers
    return tree_map(lambda x, v: _value(x) + scale * v if _value(x).dtype.kind in "fc" else _value(x),
                    tree, other)


def _wide(x) -> np.ndarray:
    """x on the host in double precision, complex128 when complex (the imaginary part kept)."""
    x = _host(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _inner(a, b) -> float:
    """Re(sum(a * b)) over the leaves: the pairing a vjp transposes the jvp under."""
    return float(sum(np.real(np.sum(_wide(x) * _wide(y)))
                     for x, y in zip(tree_flatten(a)[0], tree_flatten(b)[0])))


def _assert_close(name, got, want, tol):
    for g, w in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        g, w = _wide(g), _wide(w)
        if not np.allclose(g, w, atol=tol, rtol=tol, equal_nan=True):
            raise AssertionError(f"check_grads {name}: derivative mismatch\n got {g}\nwant {w}")


def numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float):
    fp = f(*_add(tuple(primals), tuple(tangents), eps))
    fm = f(*_add(tuple(primals), tuple(tangents), -eps))
    return tree_map(lambda a, b: (_value(a) - _value(b)) / (2 * eps), fp, fm)


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
    central finite differences; raises AssertionError on a mismatch. Arguments may be real
    or complex (complex ones are perturbed in both parts; the vjp is checked under JAX's
    pairing Re(sum(a * b))). Arguments on a GPU (CuPy arrays) are checked there:
    perturbations and directions live on their device."""
    args = tuple(args)
    dtypes = {_value(x).dtype for x in tree_flatten(args)[0]}
    low = any(d in dtypes for d in _LOW)
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
