"""What the special-function primitives (special_*.py) share: evaluation by SciPy's ufuncs
(cupyx.scipy.special on CuPy arrays), the definition of an elementwise special primitive, and
the partial derivative that does not exist in closed form, which raises instead of guessing."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core.avals import float_dtype
from ..core.errors import DifferentiationError
from ..core.primitive import Primitive
from ..core.rules import def_nondiff, float_result
from ..core.trace import aval_of
from .elementwise import def_elementwise, def_elementwise_deriv


def scipy_special(xp):
    """scipy.special, or cupyx.scipy.special for CuPy arrays."""
    if xp is np:
        # SciPy loads slowly (~130 ms): imported on first use, not with fgrad
        import scipy.special as sc
    else:
        # optional dependency (GPU arrays): imported only when a CuPy array is seen
        import cupyx.scipy.special as sc
    return sc


def scipy_impl(scipy_name: str) -> Callable:
    """The impl `(*arrays, xp) -> array` that evaluates scipy.special.<scipy_name>, in the float
    dtype of the first operand (the abstract_eval rule of every special primitive)."""

    def impl(*args, xp):
        f = getattr(scipy_special(xp), scipy_name, None)
        with np.errstate(all="ignore"):  # poles and domain edges give inf/NaN, as in SciPy
            if f is None:  # cupyx.scipy.special lacks a few (ive, stdtr, ...): the host computes them
                host = getattr(scipy_special(np), scipy_name)
                out = xp.asarray(host(*[xp.asnumpy(a) for a in args]))
            else:
                out = f(*args)
        dtype = float_dtype(args[0].dtype)
        # SciPy's loops can widen (yn's int loop, polygamma's formula): keep the operands' dtype
        return out if out.dtype == dtype else out.astype(dtype)

    impl.__name__ = f"{scipy_name}_impl"
    return impl


def define(name: str, scipy_name: str | Callable, *partials: Callable | None) -> Primitive:
    """An elementwise primitive evaluated by scipy.special.<scipy_name> (or by `scipy_name`
    itself when it is an impl `(*arrays, xp) -> array`): operands of one shape, or 0-d beside
    it; a float result. `partials[i](*primals, out)` is d out / d operand i, written with fgrad
    ops; none at all makes the primitive non-differentiable (a zero derivative, for
    piecewise-constant functions such as gammasgn)."""
    p = Primitive(name)
    def_elementwise(p, scipy_name if callable(scipy_name) else scipy_impl(scipy_name), float_result)
    if partials:
        def_elementwise_deriv(p, *partials)
    else:
        def_nondiff(p)
    return p


def no_partial(fn: str, arg: int, arg_name: str, why: str) -> Callable:
    """The partial derivative of `fn` with respect to its operand `arg` (called `arg_name`),
    which has no closed form: asking for it raises DifferentiationError (JAX raises too) rather
    than returning a silently wrong zero."""

    def partial(*primals):
        aval = aval_of(primals[arg])
        raise DifferentiationError(
            f"{fn}: no derivative with respect to {arg_name} (here {aval.dtype}{list(aval.shape)}): "
            f"{why}. Differentiate with respect to the other arguments only: pass {arg_name} as a "
            f"constant, or wrap it in fgrad.stop_gradient to treat it as one.")

    partial.__name__ = f"{fn}_no_partial_{arg_name}"
    return partial
