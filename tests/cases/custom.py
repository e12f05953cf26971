"""Cases for the primitives that carry user rules: custom_vjp, custom_jvp, checkpoint
(format: see tests/ops/test_primitives.py)."""
from functools import partial

import numpy as np

import fgrad
import fgrad.numpy as fnp


@fgrad.custom_vjp
def _sin(x):
    return fnp.sin(x)


_sin.defvjp(lambda x: (fnp.sin(x), x), lambda x, ct: (ct * fnp.cos(x),))


@fgrad.custom_jvp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t / (1.0 + fnp.exp(-x))


def _look(x, n):
    assert np.shape(x) and n == 2  # called with the concrete array, never a tracer
    assert not isinstance(x, fgrad.core.trace.Tracer)


def _block(x, y):
    return fnp.tanh(x * y) * y


X = lambda rng, dt: (rng.uniform(-1, 1, (3, 4)).astype(dt),)  # noqa: E731
XY = lambda rng, dt: (rng.uniform(-1, 1, (3, 4)).astype(dt), rng.uniform(-1, 1, (3, 4)).astype(dt))  # noqa: E731

CASES = [
    ("custom_vjp[sin]", _sin, np.sin, X, {"f32": True, "fwd": False}),
    ("custom_jvp[softplus]", _softplus, lambda x: np.log1p(np.exp(x)), X),
    ("checkpoint", fgrad.checkpoint(_block), lambda x, y: np.tanh(x * y) * y, XY),
    # a host callback (jax.debug.callback) beside the computation: its equation must survive
    # every transform without changing the result
    ("debug_callback", lambda x: fgrad.debug.callback(_look, x, n=2) or fnp.tanh(x), np.tanh, X),
]


# nondiff_argnums, defjvps, keyword arguments and pytree outputs (each rule is the true derivative)

@partial(fgrad.custom_vjp, nondiff_argnums=(0,))
def _power(n, x):
    return x ** n


_power.defvjp(lambda n, x: (_power(n, x), x), lambda n, x, ct: (ct * n * x ** (n - 1),))


@fgrad.custom_vjp
def _sincos(x, y):
    return {"s": fnp.sin(x) * y, "c": (fnp.cos(x), x * y)}


def _sincos_bwd(res, g):
    x, y = res
    return (fnp.cos(x) * y * g["s"] - fnp.sin(x) * g["c"][0] + y * g["c"][1],
            fnp.sin(x) * g["s"] + x * g["c"][1])


_sincos.defvjp(lambda x, y: (_sincos(x, y), (x, y)), _sincos_bwd)


@fgrad.custom_jvp
def _xsiny(x, y):
    return x * fnp.sin(y)


_xsiny.defjvps(lambda g, ans, x, y: g * fnp.sin(y), lambda g, ans, x, y: x * fnp.cos(y) * g)


@fgrad.custom_jvp
def _polar(r, theta):
    return r * fnp.cos(theta), r * fnp.sin(theta)


@_polar.defjvp
def _polar_jvp(primals, tangents):
    (r, th), (dr, dth) = primals, tangents
    return _polar(r, th), (dr * fnp.cos(th) - r * fnp.sin(th) * dth, dr * fnp.sin(th) + r * fnp.cos(th) * dth)


def _block2(x, y, *, scale=1.0):
    return {"t": fnp.tanh(x * y) * scale, "p": (x * x, y)}


def _tree_total(tree):
    leaves = fgrad.tree_util.tree_leaves(tree)
    out = leaves[0]
    for leaf in leaves[1:]:
        out = out + leaf
    return out


CASES += [
    ("custom_vjp[nondiff_argnums]", lambda x: _power(3, x), lambda x: x ** 3, X, {"fwd": False}),
    ("custom_vjp[pytree]", lambda x, y: _tree_total(_sincos(x, y)),
     lambda x, y: np.sin(x) * y + np.cos(x) + x * y, XY, {"fwd": False}),
    ("custom_jvp[defjvps]", _xsiny, lambda x, y: x * np.sin(y), XY),
    ("custom_jvp[pytree]", lambda r, t: _tree_total(_polar(r, t)), lambda r, t: r * np.cos(t) + r * np.sin(t), XY),
    ("checkpoint[pytree,kwargs]", lambda x, y: _tree_total(fgrad.checkpoint(_block2)(x, y, scale=2.0)),
     lambda x, y: np.tanh(x * y) * 2.0 + x * x + y, XY),
]
