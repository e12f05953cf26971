"""Cases for the primitives that carry user rules: custom_vjp, custom_jvp, checkpoint
(format: see tests/test_primitives.py)."""
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


def _block(x, y):
    return fnp.tanh(x * y) * y


X = lambda rng, dt: (rng.uniform(-1, 1, (3, 4)).astype(dt),)  # noqa: E731
XY = lambda rng, dt: (rng.uniform(-1, 1, (3, 4)).astype(dt), rng.uniform(-1, 1, (3, 4)).astype(dt))  # noqa: E731

CASES = [
    ("custom_vjp[sin]", _sin, np.sin, X, {"f32": True}),
    ("custom_jvp[softplus]", _softplus, lambda x: np.log1p(np.exp(x)), X),
    ("checkpoint", fgrad.checkpoint(_block), lambda x, y: np.tanh(x * y) * y, XY),
]
