"""fgrad.scipy.integrate: odeint, an adaptive Dormand-Prince (RK45) ODE solver with JAX's
signature (jax.experimental.ode.odeint), and trapezoid.

The solver is written with fgrad.lax: a scan over the output times whose body is a
while_loop taking adaptive steps until it passes the next output time, then reading the
solution there off the step's 4th-order interpolating polynomial. So it runs under jit as one
loop, and batches under vmap.

Reverse mode is the adjoint method (a custom_vjp): the backward pass integrates the adjoint
system a'(t) = -a(t)^T df/dy backwards in time from each output time to the previous one,
augmented with the integrals that give the cotangents of the parameters `args` and of the
times, so memory does not grow with the number of steps. Forward mode (which JAX's odeint does
not have) differentiates the solver itself, with its step sizes held fixed: the tangent of
the same Runge-Kutta scheme on the same mesh, an approximation of the exact sensitivity to
the solver's tolerance, as the adjoint is. Values that `func` closes over are lifted into
explicit arguments (JAX's closure_convert), so their derivatives flow too.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import numpy as fnp
from ..api import vjp
from ..core.avals import ShapedArray, float_dtype
from ..core.errors import FgradTypeError, FgradValueError
from ..custom import custom_vjp, forward_through_fun
from ..lax import scan, while_loop
from ..lax._common import call, stage
from ..numpy._util import as_value, dtype_of, is_array, shape_of
from ..ops.elementwise import stop_gradient
from ..tree_util import tree_flatten, tree_unflatten

# --- pytrees as one flat vector --------------------------------------------------------------


def _ravel(leaves: list, dtype: np.dtype) -> Any:
    """The leaves, flattened and joined into one vector of `dtype`."""
    if not leaves:
        return np.zeros((0,), dtype)
    return fnp.concatenate([fnp.reshape(fnp.astype(leaf, dtype), (-1,)) for leaf in leaves])


def _unravel(flat: Any, shapes: list, dtypes: list, lead: tuple = ()) -> list:
    """The leaves of the shapes and dtypes given, read from the last axis of `flat` (whose
    leading axes `lead` are kept)."""
    out, at = [], 0
    for shape, dt in zip(shapes, dtypes):
        n = math.prod(shape)
        part = flat[..., at:at + n]
        out.append(fnp.astype(fnp.reshape(part, lead + tuple(shape)), dt))
        at += n
    return out


# --- the Dormand-Prince method ----------------------------------------------------------------

_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_BETA = ((1 / 5,), (3 / 40, 9 / 40), (44 / 45, -56 / 15, 32 / 9),
         (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
         (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
         (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_C_SOL = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_C_ERROR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
            -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0)
# the solution at the middle of a step, for the interpolating polynomial (Shampine, 1986)
_C_MID = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2, -2691868925 / 45128329728 / 2,
          187940372067 / 1594534317056 / 2, -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def _combine(coefficients: tuple, ks: list) -> Any:
    """sum(c * k) over the stages with a nonzero coefficient."""
    out = None
    for c, k in zip(coefficients, ks):
        if c:
            term = k * c
            out = term if out is None else out + term
    return out


def _runge_kutta_step(f: Callable, y0: Any, f0: Any, t0: Any, dt: Any) -> tuple:
    """One Dormand-Prince step: (y1, f(y1, t1), the error estimate, the 7 stages)."""
    ks = [f0]
    h = fnp.astype(dt, dtype_of(y0))
    for alpha, beta in zip(_ALPHA, _BETA):
        ks.append(f(y0 + h * _combine(beta, ks), t0 + dt * alpha))
    y1 = h * _combine(_C_SOL, ks) + y0
    return y1, ks[-1], h * _combine(_C_ERROR, ks), ks


def _error_ratio(error: Any, rtol: float, atol: float, y0: Any, y1: Any) -> Any:
    tol = atol + rtol * fnp.maximum(fnp.abs(y0), fnp.abs(y1))
    ratio = error / fnp.astype(tol, dtype_of(error))
    return fnp.sqrt(fnp.mean(ratio * ratio))


def _optimal_step_size(last_step: Any, error_ratio: Any, safety: float = 0.9, ifactor: float = 10.0,
                       dfactor: float = 0.2, order: float = 5.0) -> Any:
    """The next step from the last one and its error ratio: at most `ifactor` times larger,
    and after a rejected step at least `dfactor` times the last one."""
    dfactor = fnp.where(error_ratio < 1, 1.0, dfactor)
    factor = fnp.minimum(ifactor, fnp.maximum(error_ratio ** (-1.0 / order) * safety, dfactor))
    return fnp.where(error_ratio == 0, last_step * ifactor, last_step * factor)


def _initial_step_size(f: Callable, t0: Any, y0: Any, order: int, rtol: float, atol: float, f0: Any) -> Any:
    """Hairer, Norsett and Wanner, Solving Ordinary Differential Equations I, Sec. II.4."""
    scale = atol + fnp.abs(y0) * rtol
    d0 = fnp.linalg.norm(y0 / scale)
    d1 = fnp.linalg.norm(f0 / scale)
    h0 = fnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / fnp.where(d1 == 0, 1.0, d1))
    h0 = fnp.astype(h0, dtype_of(t0))
    y1 = y0 + fnp.astype(h0, dtype_of(y0)) * f0
    f1 = f(y1, t0 + h0)
    d2 = fnp.linalg.norm((f1 - f0) / scale) / fnp.astype(h0, dtype_of(y0))
    h1 = fnp.where((d1 <= 1e-15) & (d2 <= 1e-15), fnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / fnp.maximum(fnp.maximum(d1, d2), 1e-300)) ** (1.0 / (order + 1.0)))
    return fnp.astype(fnp.minimum(100.0 * h0, h1), dtype_of(t0))


def _fit_polynomial(y0: Any, y1: Any, ks: list, dt: Any) -> Any:
    """The coefficients (highest power first, as rows) of the 4th-order polynomial in the
    relative time s in [0, 1] through y0, the midpoint and y1 with slopes f0 and f1."""
    h = fnp.astype(dt, dtype_of(y0))
    y_mid = y0 + h * _combine(_C_MID, ks)
    dy0, dy1 = h * ks[0], h * ks[-1]
    a = -2.0 * dy0 + 2.0 * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * dy0 - 3.0 * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * dy0 + dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return fnp.stack([a, b, c, dy0, y0])


def _polyval(coefficients: Any, s: Any) -> Any:
    out = coefficients[0]
    for i in range(1, shape_of(coefficients)[0]):
        out = out * s + coefficients[i]
    return out


def _solve(f: Callable, rtol: float, atol: float, mxstep: float, hmax: float, y0: Any, ts: Any) -> Any:
    """The solution of y' = f(y, t) (y a vector) at the times `ts`, one row per time. The step
    sizes are held constant under differentiation (stop_gradient): forward mode then gives
    the tangent of the scheme on the mesh the solver chose."""
    t_dtype = dtype_of(ts)

    def advance(carry: list, target_t: Any) -> tuple:
        def cond(state: list) -> Any:
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def step(state: list) -> list:
            i, y, fy, t, dt, last_t, coefficients = state
            next_y, next_f, error, ks = _runge_kutta_step(f, y, fy, t, dt)
            next_t = t + dt
            ratio = _error_ratio(error, rtol, atol, y, next_y)
            new_coefficients = _fit_polynomial(y, next_y, ks, dt)
            next_dt = stop_gradient(fnp.astype(fnp.clip(_optimal_step_size(dt, ratio), 0.0, hmax), t_dtype))
            accept = ratio <= 1.0
            new = [next_y, next_f, next_t, next_dt, t, new_coefficients]
            old = [y, fy, t, next_dt, last_t, coefficients]
            return [i + 1] + [fnp.where(accept, a, b) for a, b in zip(new, old)]

        _, *carry = while_loop(cond, step, [np.int64(0)] + carry)
        _, _, t, _, last_t, coefficients = carry
        s = (target_t - last_t) / (t - last_t)
        return carry, _polyval(coefficients, fnp.astype(s, dtype_of(coefficients)))

    f0 = f(y0, ts[0])
    dt = stop_gradient(fnp.astype(fnp.clip(_initial_step_size(f, ts[0], y0, 4, rtol, atol, f0), 0.0, hmax),
                                  t_dtype))
    coefficients = fnp.stack([y0] * 5)
    _, ys = scan(advance, [y0, f0, ts[0], dt, ts[0], coefficients], ts[1:])
    return fnp.concatenate([y0[None], ys])


# --- the adjoint method ---------------------------------------------------------------------

def _odeint_fun(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float, y0: Any, ts: Any,
                *args: Any) -> Any:
    return _solve(lambda y, t: func(y, t, *args), rtol, atol, mxstep, hmax, y0, ts)


# forward mode differentiates the solver (module docstring): the same derivative as the adjoint's
_odeint = forward_through_fun(custom_vjp(_odeint_fun, nondiff_argnums=(0, 1, 2, 3, 4)))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, residuals, g):
    ys, ts, args = residuals
    n = shape_of(ys)[1]
    arg_shapes = [shape_of(a) for a in args]
    arg_dtypes = [dtype_of(a) for a in args]
    y_dtype = dtype_of(ys)

    def aug_dynamics(state, s, *args):
        # s is negated time: the adjoint system runs backwards from ts[i] to ts[i - 1]
        y, y_bar = state[:n], state[n:2 * n]
        y_dot, pullback = vjp(lambda y_, t_, *a: func(y_, t_, *a), y, -s, *args)
        y_cot, t_cot, *args_cot = pullback(y_bar)
        return fnp.concatenate([-y_dot, y_cot, fnp.reshape(fnp.astype(t_cot, y_dtype), (1,)),
                                _ravel(list(args_cot), y_dtype)])

    def back(carry, xs):
        y_bar, t0_bar, args_bar = carry
        y_i, t_i, t_prev, g_i, g_prev = xs
        # moving output time t_i moves the output along f
        t_bar = fnp.astype(fnp.dot(func(y_i, t_i, *args), g_i), dtype_of(ts))
        t0_bar = t0_bar - t_bar
        state = fnp.concatenate([y_i, y_bar, fnp.reshape(fnp.astype(t0_bar, y_dtype), (1,)), args_bar])
        state = _odeint(aug_dynamics, rtol, atol, mxstep, hmax, state, -fnp.stack([t_i, t_prev]), *args)[1]
        y_bar = state[n:2 * n] + g_prev
        return (y_bar, fnp.astype(state[2 * n], dtype_of(ts)), state[2 * n + 1:]), t_bar

    args_bar0 = _ravel([fnp.zeros_like(a) for a in args], y_dtype)
    xs = tuple(fnp.flip(v, 0) for v in (ys[1:], ts[1:], ts[:-1], g[1:], g[:-1]))
    (y_bar, t0_bar, args_bar), rev_ts_bar = scan(back, (g[-1], fnp.zeros((), dtype_of(ts)), args_bar0), xs)
    ts_bar = fnp.concatenate([fnp.reshape(t0_bar, (1,)), fnp.flip(rev_ts_bar, 0)])
    return (y_bar, ts_bar, *_unravel(args_bar, arg_shapes, arg_dtypes))


_odeint.defvjp(_odeint_fwd, _odeint_bwd)


# --- the public function -------------------------------------------------------------------------

def _float_leaf(x: Any, what: str) -> Any:
    """A leaf of y0 as a float (or complex) array."""
    if not (is_array(x) or isinstance(x, (int, float, bool, complex, np.number))):
        raise FgradTypeError(f"odeint: {what} must be arrays or scalars (or pytrees of them), got "
                        f"{type(x).__name__} {x!r:.60}")
    x = as_value(x, f"odeint's {what}")
    return x if dtype_of(x).kind in "fc" else fnp.astype(x, float_dtype(dtype_of(x)))


def _arg_leaf(x: Any) -> Any:
    if not (is_array(x) or isinstance(x, (int, float, bool, complex, np.number))):
        raise FgradTypeError(f"odeint: the contents of *args must be arrays or scalars (or pytrees of them), got "
                        f"{type(x).__name__} {x!r:.60}")
    return as_value(x, "odeint's *args")


def odeint(func: Callable, y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8, atol: float = 1.4e-8,
           mxstep: float = np.inf, hmax: float = np.inf) -> Any:
    """Solve y'(t) = func(y, t, *args) from y(t[0]) = y0, returning y at every time in `t`
    (stacked along a new leading axis, leaf by leaf when `y0` is a pytree). JAX's
    `jax.experimental.ode.odeint`; scipy.integrate.odeint computes the same solution (its
    `args=` tuple is `*args` here).

    func: (y, t, *args) -> dy/dt, with the structure of `y0`; written with fgrad.numpy.
    t: increasing 1-D array of times (t[0] is where y0 holds).
    args: arrays or scalars (or pytrees of them) passed on to `func`: what to differentiate
        with respect to, besides y0 and t (values `func` closes over are differentiated too).
    rtol, atol: the relative and absolute error tolerances of each step.
    mxstep: the most steps taken between two output times (then the solution stops there).
    hmax: the largest step size.

    Adaptive Dormand-Prince (RK45) steps inside fgrad.lax loops, so it runs under jit and vmap.
    Reverse mode (grad, vjp) uses the adjoint method; forward mode (jvp) differentiates the
    scheme with its step sizes held fixed."""
    if not callable(func):
        raise FgradTypeError(f"odeint: func must be a callable func(y, t, *args), got {type(func).__name__}")
    y_leaves, y_tree = tree_flatten(y0)
    if not y_leaves:
        raise FgradValueError("odeint: y0 has no arrays")
    y_leaves = [_float_leaf(v, "y0") for v in y_leaves]
    y_shapes = [shape_of(v) for v in y_leaves]
    y_dtypes = [dtype_of(v) for v in y_leaves]
    y_dtype = np.result_type(*y_dtypes)
    arg_leaves, arg_tree = tree_flatten(args)
    arg_leaves = [_arg_leaf(v) for v in arg_leaves]
    ts = as_value(t, "odeint's t")
    if len(shape_of(ts)) != 1 or shape_of(ts)[0] < 1:
        raise FgradValueError(f"odeint: t must be a 1-D array of times, got shape {shape_of(ts)}")
    if dtype_of(ts).kind not in "f":
        ts = fnp.astype(ts, float_dtype(dtype_of(ts)))
    n_args = len(arg_leaves)

    def flat_func(y_flat, s, *leaves):
        ys = tree_unflatten(y_tree, _unravel(y_flat, y_shapes, y_dtypes))
        out = func(ys, s, *tree_unflatten(arg_tree, list(leaves[:n_args])))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != y_tree or [shape_of(v) for v in out_leaves] != y_shapes:
            raise FgradValueError(f"odeint: func must return dy/dt with the structure and shapes of y0 "
                             f"({y_tree}, shapes {y_shapes}); got {out_tree}, shapes "
                             f"{[shape_of(v) for v in out_leaves]}")
        return _ravel(out_leaves, y_dtype)

    # closure conversion: stage func once; the values it reads from outside (traced values of
    # enclosing transforms among them) become extra arguments of the custom_vjp, whose
    # derivatives the adjoint computes like those of `args`
    in_avals = [ShapedArray((sum(math.prod(s) for s in y_shapes),), y_dtype), ShapedArray((), dtype_of(ts))]
    in_avals += [ShapedArray(shape_of(v), dtype_of(v)) for v in arg_leaves]
    staged = stage(flat_func, in_avals, "odeint")
    consts = list(staged.consts)

    def converted(y_flat, s, *leaves):
        # leaves: the args' leaves, then the lifted constants
        return call(staged.body, list(leaves[n_args:]) + [y_flat, s] + list(leaves[:n_args]))[0]

    y_flat = _ravel(y_leaves, y_dtype)
    ys = _odeint(converted, float(rtol), float(atol), mxstep, hmax, y_flat, ts, *arg_leaves, *consts)
    return tree_unflatten(y_tree, _unravel(ys, y_shapes, y_dtypes, lead=(shape_of(ts)[0],)))


trapezoid = fnp.trapezoid

__all__ = ["odeint", "trapezoid"]
