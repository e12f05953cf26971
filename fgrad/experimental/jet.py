r"""Taylor-mode higher-order differentiation: `jet`, as `jax.experimental.jet`.

`jet(fun, primals, series)` pushes a truncated Taylor polynomial through `fun`. With
:math:`x(t) = x_0 + \sum_k h_k t^k / k!` (`primals` :math:`x_0`, `series` :math:`h_1..h_K`), it
returns :math:`f(x_0)` and :math:`f_1..f_K` with :math:`f(x(t)) = f(x_0) + \sum_k f_k t^k / k! +
O(t^{K+1})`: the terms are derivatives (`factorial_scaled=True`, JAX's default), so for
`series = ((v, 0, ..., 0),)` the k-th output term is the k-th directional derivative of f
along v. With `factorial_scaled=False` (`jet2`) both series are plain Taylor coefficients.

How: `fun` is traced to fgrad's IR (`make_jaxpr`) and the IR is interpreted equation by
equation, each value carried as (primal, Taylor coefficients). The common primitives have a
direct propagation rule (`jet_rules`, keyed by the primitive's name): linear primitives map
each coefficient, products are Cauchy products, the elementary functions use the usual
recurrences (:math:`v = e^u \Rightarrow k v_k = \sum_{j=1}^k j u_j v_{k-j}`, ...), and scan
runs the jet of its body in the loop. Every other differentiable primitive gets its series
from its own jvp rule (`_jvp_rule_series`: v' = jvp_f(u; u'), one order lower,
recursively), so jet covers the whole registry; a primitive with a zero derivative
(`nondiff`) gives zero terms. Rules are written with fgrad's primitives and fgrad.numpy, so
jet composes with grad, jit and vmap. A value that does not depend on the inputs carries no
coefficients (JAX's `zero_series`).

`derivatives(f, order=k)(x)` is the scalar case: :math:`[f(x), f'(x), \dots, f^{(k)}(x)]`
from one jet (also `fgrad.jet` and `fgrad.derivatives`).
"""
from __future__ import annotations

import contextvars
import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from .. import numpy as fnp
from ..api import make_jaxpr, stop_gradient
from ..core.avals import ShapedArray
from ..core.errors import FgradNotImplementedError, FgradTypeError, FgradValueError
from ..core.ir import ClosedJaxpr, Literal
from ..custom import _staged_fun
from ..tree_util import tree_flatten, tree_unflatten
from .._packing import pack
from ..lax._common import add_invars, stage
from ..lax._cond import _bind_cond
from ..lax._scan import _pack_tangents, bind_scan, scan_out_avals
from ..lax._while import _body_only, _carry_avals, bind_while

__all__ = ["derivatives", "jet", "jet2", "jet_rules"]

# A series is None (every coefficient zero: JAX's zero_series) or a list of K arrays.


def jet(fun: Callable, primals: Sequence, series: Sequence[Sequence], factorial_scaled: bool = True,
        **_: Any) -> tuple[Any, Any]:
    r"""Taylor-mode higher-order automatic differentiation (JAX's `jax.experimental.jet.jet`).

    Args:
      fun: the function; its positional arguments are arrays (or scalars), its output an
        array or a pytree of arrays.
      primals: a tuple or list with one value per positional argument of `fun`.
      series: a tuple or list with, per argument, a tuple or list of K terms (each of that
        argument's shape); K, the same for every argument, is the degree of the polynomial.
      factorial_scaled: True (the default): the terms are derivatives, the k-th term being
        the k-th derivative of the input path (Taylor coefficient times k!), in and out.
        False: they are the Taylor coefficients themselves.

    Returns:
      `(primal_out, series_out)`: `fun(*primals)`, and the output's K terms, each output leaf
      replaced by the list of its terms.

    Example: with :math:`h(z) = z^3` at 0.5, h's terms are :math:`(3 z^2, 6 z)`, and
    `jet(sin, (h0,), ((h1, h2),))` gives :math:`\sin(h_0)`, :math:`(\cos(h_0) h_1, -\sin(h_0)
    h_1^2 + \cos(h_0) h_2)` (Faà di Bruno).

        >>> import fgrad.numpy as jnp
        >>> from fgrad.experimental.jet import jet
        >>> y, terms = jet(jnp.exp, (0.0,), ((1.0, 0.0),))  # exp along the path x(t) = t
        >>> print(y, [float(t) for t in terms])
        1.0 [1.0, 1.0]
    """
    try:
        order, = set(map(len, series))
    except ValueError:
        raise FgradValueError("jet terms have inconsistent lengths for different arguments") from None
    if len(primals) != len(series):
        raise FgradValueError(f"jet got {len(primals)} primal values and {len(series)} series; give one series "
                         "(a tuple of terms) per primal")
    for i, (x, terms) in enumerate(zip(primals, series)):
        if tree_flatten(x)[1].num_leaves != 1 or isinstance(x, (tuple, list, dict)):
            raise FgradValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if tree_flatten(t)[1].num_leaves != 1 or isinstance(t, (tuple, list, dict)):
                raise FgradValueError(f"term {j} for argument {i} is not an array")
    # Python numbers become arrays (the interpreter binds primitives on the primal values, and
    # an impl takes arrays)
    primals = [np.asarray(x) if isinstance(x, (int, float, complex)) else x for x in primals]
    series = [[np.asarray(t) if isinstance(t, (int, float, complex)) else t for t in terms]
              for terms in series]
    if factorial_scaled:
        series = [[t / math.factorial(k + 1) for k, t in enumerate(terms)] for terms in series]
    else:
        series = [list(terms) for terms in series]
    trees: list = []

    def flat(*args):
        leaves, tree = tree_flatten(fun(*args))
        trees.append(tree)
        return leaves

    closed = make_jaxpr(flat)(*primals)
    out_primals, out_series = _jet_jaxpr(closed, order, list(primals), series)
    out_terms = []
    for p, s in zip(out_primals, out_series):
        if s is None:
            s = [fnp.zeros_like(p) for _ in range(order)]
        if factorial_scaled:
            s = [t * math.factorial(k + 1) for k, t in enumerate(s)]
        out_terms.append([fnp.asarray(t) for t in s])
    tree = trees[-1]
    return tree_unflatten(tree, out_primals), tree_unflatten(tree, out_terms)


jet2 = partial(jet, factorial_scaled=False)
jet2.__doc__ = "`jet` with `factorial_scaled=False`: the series are Taylor coefficients."


def derivatives(fun: Callable, order: int) -> Callable:
    r"""All the derivatives of a scalar function up to `order`, from one `jet`.

    Args:
      fun: a function of a scalar (its first positional argument) returning a scalar; any
        further arguments of the returned function are passed to `fun` unchanged, as
        constants.
      order: the highest derivative wanted, an integer >= 0.

    Returns:
      A function `g(x, *args, **kwargs)` returning the list :math:`[f(x), f'(x), \dots,
      f^{(order)}(x)]` (`order + 1` scalars) with :math:`f = fun(\cdot, *args, **kwargs)`: the
      terms of `jet(f, (x,), ((1, 0, ..., 0),))`, the Taylor polynomial of f at x pushed
      through f once, instead of `order` nested `grad`\ s. It composes with `jit`, `vmap`
      (over a batch of points) and `grad`.

    Raises:
      TypeError: `x` is not a real floating-point scalar (an array of shape (); a Python
        number is taken as float64), or `fun` does not return one array of shape ().
      ValueError: `order` is not an integer >= 0.

    Example:
      >>> import fgrad, fgrad.numpy as fnp
      >>> d = fgrad.derivatives(lambda x: fnp.sin(x) * fnp.exp(-x ** 2), order=4)
      >>> [round(float(v), 6) for v in d(0.5)]
      [0.373377, 0.310085, -2.113678, 0.253168, 19.390104]
    """
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 0:
        raise FgradValueError(f"derivatives: order must be an integer >= 0 (the highest derivative "
                              f"wanted), got {order!r}")
    order = int(order)

    def derivs(x, *args, **kwargs) -> list:
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            x = np.asarray(float(x))
        shape, dtype = fnp.shape(x), _dtype(x)
        if shape != () or not np.issubdtype(np.dtype(dtype), np.floating):
            raise FgradTypeError(
                f"derivatives: x must be a real floating-point scalar, got {np.dtype(dtype)}{list(shape)}. "
                "For a batch of points use fgrad.vmap(fgrad.derivatives(f, order))(xs); for "
                "directional derivatives of a function of an array use fgrad.jet with the series "
                "(v, 0, ..., 0)")

        def f(x):
            out = fun(x, *args, **kwargs)
            leaves, _ = tree_flatten(out)
            if len(leaves) != 1 or isinstance(out, (tuple, list, dict)) or fnp.shape(out) != ():
                shapes = [f"{np.dtype(_dtype(v))}{list(fnp.shape(v))}" for v in leaves]
                raise FgradTypeError(
                    f"derivatives: the function must return one scalar (an array of shape ()), "
                    f"got {shapes[0] if len(shapes) == 1 and not isinstance(out, (tuple, list, dict)) else shapes}. "
                    "Reduce it to a scalar (a sum, one element), or take directional derivatives of "
                    "an array-valued function with fgrad.jet")
            return out

        if order == 0:
            return [f(x)]
        one, zero = np.ones((), dtype), np.zeros((), dtype)
        out, terms = jet(f, (x,), ((one,) + (zero,) * (order - 1),))
        return [out, *terms]

    derivs.__name__ = f"derivatives_{getattr(fun, '__name__', 'fun')}"
    derivs.__doc__ = f"[f(x), f'(x), ..., f^({order})(x)] of {getattr(fun, '__name__', 'a function')}."
    return derivs


# --- the interpreter ----------------------------------------------------------------------

def _dtype(v):
    """The dtype of an array, tracer or Python scalar."""
    d = getattr(v, "dtype", None)
    return np.asarray(v).dtype if d is None else d


def _inexact(dtype) -> bool:
    return np.issubdtype(np.dtype(dtype), np.inexact)


def _jet_jaxpr(closed: ClosedJaxpr, order: int, primals: list, series: list) -> tuple[list, list]:
    """Run `closed` on (primal, Taylor coefficients) pairs; series entries may be None (zero)."""
    jaxpr = closed.jaxpr
    env: dict = {}
    for v, c in zip(jaxpr.constvars, closed.consts):
        env[id(v)] = (c, None)
    for v, x, s in zip(jaxpr.invars, primals, series):
        env[id(v)] = (x, s)

    def read(a):
        return (a.val, None) if isinstance(a, Literal) else env[id(a)]

    for e in jaxpr.eqns:
        ins = [read(a) for a in e.invars]
        xs = [p for p, _ in ins]
        name = e.primitive.name
        out_aval = e.outvars[0].aval
        if all(s is None for _, s in ins) or not _inexact(out_aval.dtype):
            # nothing to propagate (or an integer/boolean result: its coefficients are zero)
            env[id(e.outvars[0])] = (e.primitive.bind(*xs, **e.params), None)
            continue
        if e.primitive.nondiff:
            # a derivative that is zero wherever it exists (sign, gammasgn): zero series
            env[id(e.outvars[0])] = (e.primitive.bind(*xs, **e.params), None)
            continue
        rule = jet_rules.get(name)
        if rule is None:
            if e.primitive.jvp is None:
                raise FgradNotImplementedError(
                    f"jet has no rule for the primitive '{name}', and it has no jvp rule to derive "
                    "one from: fgrad.experimental.jet cannot propagate a Taylor series through it "
                    "(see fgrad.experimental.jet.jet_rules for the direct rules)")
            rule = _jvp_rule_series
        # Zero series of float inputs become zero coefficients; a literal's zeros take the
        # result's dtype, so a weakly typed constant never widens the computation. Inputs that
        # are integers or booleans (indices, predicates) keep None.
        ss = []
        for a, (x, s) in zip(e.invars, ins):
            if s is not None:
                ss.append(s)
            elif isinstance(a, Literal):
                z = np.zeros(np.shape(a.val), out_aval.dtype)
                ss.append([z] * order)
            elif _inexact(a.aval.dtype):
                z = np.zeros(a.aval.shape, a.aval.dtype)
                ss.append([z] * order)
            else:
                ss.append(None)
        out = e.primitive.bind(*xs, **e.params)
        env[id(e.outvars[0])] = (out, rule(xs, ss, out, order=order, prim=e.primitive, **e.params))
    outs = [read(a) for a in jaxpr.outvars]
    return [p for p, _ in outs], [s for _, s in outs]


def _jet_fun(fn: Callable, primals: list, series: list, order: int) -> tuple[Any, list | None]:
    """Taylor coefficients of the single output of `fn` (written with fgrad.numpy)."""
    closed = make_jaxpr(fn)(*primals)
    outs, outs_s = _jet_jaxpr(closed, order, primals, series)
    return outs[0], outs_s[0]


# --- series arithmetic (lists of coefficients 0..K, the primal first) -------------------------

def _cauchy(a: list, b: list, k: int, mul: Callable = fnp.multiply):
    """Coefficient k of the product of two series."""
    out = mul(a[0], b[k])
    for j in range(1, k + 1):
        out = out + mul(a[j], b[k - j])
    return out


def _mul_s(a: list, b: list) -> list:
    return [_cauchy(a, b, k) for k in range(len(a))]


def _div_s(u: list, w: list, v0=None) -> list:
    """u / w: w_0 v_k = u_k - sum_{j<k} v_j w_{k-j}."""
    v = [u[0] / w[0] if v0 is None else v0]
    for k in range(1, len(u)):
        conv = v[0] * w[k]
        for j in range(1, k):
            conv = conv + v[j] * w[k - j]
        v.append((u[k] - conv) / w[0])
    return v


def _exp_s(u: list, v0) -> list:
    """e^u (v0 = e^{u_0}): k v_k = sum_{j=1}^k j u_j v_{k-j}."""
    v = [v0]
    for k in range(1, len(u)):
        v.append(sum(j * u[j] * v[k - j] for j in range(1, k + 1)) / k)
    return v


def _log_s(u: list, v0) -> list:
    """log u (v0 = log u_0): u_0 v_k = u_k - (1/k) sum_{j=1}^{k-1} j v_j u_{k-j}."""
    v = [v0]
    for k in range(1, len(u)):
        conv = sum((j * v[j] * u[k - j] for j in range(1, k)), start=0.0)
        v.append((u[k] - conv / k) / u[0])
    return v


def _sqrt_s(u: list, v0) -> list:
    """sqrt u: 2 v_0 v_k = u_k - sum_{j=1}^{k-1} v_j v_{k-j}."""
    v = [v0]
    for k in range(1, len(u)):
        conv = sum((v[j] * v[k - j] for j in range(1, k)), start=0.0)
        v.append((u[k] - conv) / (2 * v0))
    return v


def _integrate(u: list, c: list, v0) -> list:
    """v with v' = c u' (c the series of f'(u)): k v_k = sum_{j=1}^k j u_j c_{k-j}."""
    v = [v0]
    for k in range(1, len(u)):
        v.append(sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k)
    return v


def _ode_rule(deriv_of_out: Callable) -> Callable:
    """Rule for f with f' = g(f) (tan, tanh, logistic): the derivative's series is built from
    the output's as it grows."""
    def rule(primals, series, out, *, order, **_):
        u = [primals[0], *series[0]]
        v = [out]
        c = [deriv_of_out([out], 0)]
        for k in range(1, order + 1):
            v.append(sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k)
            c.append(deriv_of_out(v, k))
        return v[1:]
    return rule


# --- rules: rule(primals, series, primal_out, *, order, **params) -> series_out ------------

jet_rules: dict[str, Callable] = {}


def _def_linear(name: str, positions: Sequence[int] | None = None) -> None:
    """Each coefficient goes through the primitive itself, the operands outside `positions`
    (indices, a predicate) as they are."""
    def rule(primals, series, out, *, order, prim, **params):
        terms = []
        for k in range(order):
            args = [s[k] if (positions is None or i in positions) else x
                    for i, (x, s) in enumerate(zip(primals, series))]
            terms.append(prim.bind(*args, **params))
        return terms
    jet_rules[name] = rule


for _n in ("neg", "add", "sub", "convert_element_type", "broadcast_in_dim", "reshape", "transpose",
           "slice", "concatenate", "pad", "rev", "reduce_sum", "cumsum", "real", "imag", "conj",
           "complex", "tril", "triu", "fft", "rfft", "irfft", "avg_pool2d", "avg_pool2d_grad", "unfold",
           "fold", "resample", "resample_transpose"):
    _def_linear(_n)
_def_linear("getitem", positions=(0,))      # linear in the array, the index arrays fixed
_def_linear("scatter_add", positions=(0,))  # linear in the updates, the index arrays fixed
_def_linear("select", positions=(1, 2))     # select(pred, on_true, on_false): pred fixed
_def_linear("relu_grad", positions=(0,))    # relu_grad(ct, y) = ct where y > 0: y only selects


def _zero(primals, series, out, *, order, **params):
    return None


# piecewise-constant functions and stop_gradient: zero series (as JAX's defzero)
for _n in ("stop_gradient", "sign", "floor", "ceil", "round"):
    jet_rules[_n] = _zero


def _bilinear(primals, series, out, *, order, prim, **params):
    """A product of two operands (mul, dot_general, the convolutions): Cauchy products. A
    third operand (conv2d's bias) is added in the primitive, so only the j = 0 product of
    coefficient k carries its coefficient k, the others a zero bias."""
    u, w = [primals[0], *series[0]], [primals[1], *series[1]]
    if len(primals) == 2:
        bind = partial(prim.bind, **params)
        return [_cauchy(u, w, k, bind) for k in range(1, order + 1)]
    zero_bias = np.zeros(np.shape(primals[2]), _dtype(out))
    terms = []
    for k in range(1, order + 1):
        t = prim.bind(u[0], w[k], series[2][k - 1], **params)
        for j in range(1, k + 1):
            t = t + prim.bind(u[j], w[k - j], zero_bias, **params)
        terms.append(t)
    return terms


for _n in ("mul", "dot_general", "conv2d", "conv2d_input_grad", "conv2d_weight_grad", "conv_full", "linear"):
    jet_rules[_n] = _bilinear


def _remainder_rule(primals, series, out, *, order, **_):
    # fmod and mod are x - n y with an integer n, constant between the jumps (as their
    # derivative rules in fgrad.ops.elementwise: n recovered exactly from the value returned)
    x, y = primals
    n = fnp.round((x - out) / y)
    return [tx - n * ty for tx, ty in zip(series[0], series[1])]


jet_rules["fmod"] = _remainder_rule
jet_rules["mod"] = _remainder_rule


def _div_rule(primals, series, out, *, order, **_):
    return _div_s([primals[0], *series[0]], [primals[1], *series[1]], out)[1:]


jet_rules["div"] = _div_rule


def _unary(fn: Callable) -> Callable:
    """A rule from a function of (u, primal_out) -> full coefficient list."""
    def rule(primals, series, out, *, order, **_):
        return fn([primals[0], *series[0]], out)[1:]
    return rule


jet_rules["exp"] = _unary(_exp_s)
jet_rules["log"] = _unary(_log_s)
jet_rules["sqrt"] = _unary(_sqrt_s)
# expm1 = e^u - 1 and log1p = log(1 + u): the same recurrences on the shifted series
jet_rules["expm1"] = _unary(lambda u, out: [out, *_exp_s(u, out + 1)[1:]])
jet_rules["log1p"] = _unary(lambda u, out: [out, *_log_s([u[0] + 1, *u[1:]], out)[1:]])


def _sincos(u: list, s0, c0, sign: int) -> tuple[list, list]:
    """sin/cos (sign -1) or sinh/cosh (sign +1): s' = c u', c' = sign s u'."""
    s, c = [s0], [c0]
    for k in range(1, len(u)):
        s.append(sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k)
        c.append(sign * sum(j * u[j] * s[k - j] for j in range(1, k + 1)) / k)
    return s, c


jet_rules["sin"] = _unary(lambda u, out: _sincos(u, out, fnp.cos(u[0]), -1)[0])
jet_rules["cos"] = _unary(lambda u, out: _sincos(u, fnp.sin(u[0]), out, -1)[1])
jet_rules["sinh"] = _unary(lambda u, out: _sincos(u, out, fnp.cosh(u[0]), 1)[0])
jet_rules["cosh"] = _unary(lambda u, out: _sincos(u, fnp.sinh(u[0]), out, 1)[1])


def _square_at(v: list, k: int):
    return _cauchy(v, v, k)


# tan' = 1 + tan^2, tanh' = 1 - tanh^2, logistic' = s - s^2 (series of the output)
jet_rules["tan"] = _ode_rule(lambda v, k: (1 if k == 0 else 0) + _square_at(v, k))
jet_rules["tanh"] = _ode_rule(lambda v, k: (1 if k == 0 else 0) - _square_at(v, k))
jet_rules["logistic"] = _ode_rule(lambda v, k: v[k] - _square_at(v, k))


def _by_derivative(deriv: Callable[[list], list]) -> Callable:
    """Rule for f from the series of f'(u) (`deriv` maps u's series to it)."""
    def rule(primals, series, out, *, order, **_):
        u = [primals[0], *series[0]]
        return _integrate(u, deriv(u), out)[1:]
    return rule


def _one_minus_sq(u: list, sign: int = -1, one: int = 1) -> list:
    """one + sign * u^2 as a series."""
    sq = _mul_s(u, u)
    return [one + sign * sq[0], *[sign * t for t in sq[1:]]]


def _recip(w: list) -> list:
    return _div_s([1.0] + [0.0] * (len(w) - 1), w)


def _rsqrt_s(w: list) -> list:
    return _recip(_sqrt_s(w, fnp.sqrt(w[0])))


def _erf_deriv(u: list) -> list:
    e = _one_minus_sq(u, -1, 0)  # -u^2
    return [2 / math.sqrt(math.pi) * t for t in _exp_s(e, fnp.exp(e[0]))]


jet_rules["erf"] = _by_derivative(_erf_deriv)
jet_rules["erfc"] = _by_derivative(lambda u: [-t for t in _erf_deriv(u)])
jet_rules["atan"] = _by_derivative(lambda u: _recip(_one_minus_sq(u, 1)))          # 1/(1+u^2)
jet_rules["asin"] = _by_derivative(lambda u: _rsqrt_s(_one_minus_sq(u, -1)))       # 1/sqrt(1-u^2)
jet_rules["acos"] = _by_derivative(lambda u: [-t for t in _rsqrt_s(_one_minus_sq(u, -1))])
jet_rules["asinh"] = _by_derivative(lambda u: _rsqrt_s(_one_minus_sq(u, 1)))       # 1/sqrt(1+u^2)
jet_rules["acosh"] = _by_derivative(lambda u: _rsqrt_s(_one_minus_sq(u, 1, -1)))   # 1/sqrt(u^2-1)
jet_rules["atanh"] = _by_derivative(lambda u: _recip(_one_minus_sq(u, -1)))        # 1/(1-u^2)


def _atan2_rule(primals, series, out, *, order, **_):
    # atan2(y, x) moves as atan(y / x) (their derivatives agree wherever x != 0 or y != 0)
    z = _div_s([primals[0], *series[0]], [primals[1], *series[1]])
    return _integrate(z, _recip(_one_minus_sq(z, 1)), out)[1:]


jet_rules["atan2"] = _atan2_rule


def _pow_rule(primals, series, out, *, order, **_):
    x, y = primals
    if not any(_maybe_nonzero(t) for t in series[1]):
        # a constant exponent: the power recurrence, which (unlike e^{y log x}) holds for a
        # negative base too
        return _const_pow([x, *series[0]], y, out)[1:]
    # x^y = e^{y log x}
    w = _mul_s([y, *series[1]], _log_s([x, *series[0]], fnp.log(x)))
    return _exp_s(w, out)[1:]


def _const_pow(u: list, r: float, v0) -> list:
    """u^r for a constant r: u_0 k v_k = sum_{j=1}^k (r j - (k - j)) u_j v_{k-j}."""
    v = [v0]
    for k in range(1, len(u)):
        v.append(sum((r * j - (k - j)) * u[j] * v[k - j] for j in range(1, k + 1)) / (k * u[0]))
    return v


jet_rules["cbrt"] = _unary(lambda u, out: _const_pow(u, 1.0 / 3.0, out))


def _erfinv_rule(primals, series, out, *, order, **_):
    # erfinv' = (sqrt(pi) / 2) e^{v^2} in terms of the output v: its series grows with v's
    u, v = [primals[0], *series[0]], [out]
    sq = [out * out]
    e = [fnp.exp(sq[0])]
    half_sqrt_pi = math.sqrt(math.pi) / 2
    for k in range(1, order + 1):
        v.append(sum(j * u[j] * half_sqrt_pi * e[k - j] for j in range(1, k + 1)) / k)
        sq.append(_cauchy(v, v, k))
        e.append(sum(j * sq[j] * e[k - j] for j in range(1, k + 1)) / k)
    return v[1:]


jet_rules["erfinv"] = _erfinv_rule


def _maybe_nonzero(t) -> bool:
    # a zero instantiated here is a concrete NumPy zero; anything else may be nonzero
    return not (isinstance(t, np.ndarray) and not t.any())


jet_rules["pow"] = _pow_rule


def _integer_pow_rule(primals, series, out, *, order, y, **_):
    if y == 0:
        return None
    u = [primals[0], *series[0]]
    if y < 0:
        u, y = _recip(u), -y
    # by squaring, with Cauchy products: exact at u_0 = 0 too
    result, base = None, u
    while y:
        if y & 1:
            result = base if result is None else _mul_s(result, base)
        y >>= 1
        if y:
            base = _mul_s(base, base)
    return result[1:]


jet_rules["integer_pow"] = _integer_pow_rule


def _abs_rule(primals, series, out, *, order, **_):
    x = primals[0]
    sgn = fnp.where(x < 0, -1.0, 1.0).astype(_dtype(out))
    return [sgn * t for t in series[0]]


jet_rules["abs"] = _abs_rule


def _choose(pick_x):
    """max/min: the chosen operand's terms, and their mean where the operands tie (JAX's rule)."""
    def rule(primals, series, out, *, order, **_):
        x, y = fnp.broadcast_arrays(*primals)
        px = pick_x(x, y)
        eq = x == y
        terms = []
        for tx, ty in zip(series[0], series[1]):
            tx, ty = fnp.broadcast_arrays(tx, ty)
            terms.append(fnp.where(eq, (tx + ty) / 2, fnp.where(px, tx, ty)))
        return terms
    return rule


jet_rules["max"] = _choose(lambda x, y: x > y)
jet_rules["min"] = _choose(lambda x, y: x < y)


def _relu_rule(primals, series, out, *, order, **_):
    # the terms where x > 0, zero elsewhere: at x = 0 that is relu'(0) = 0, fgrad's (and
    # jax.nn.relu's) derivative there, so the first term is jvp's
    x = primals[0]
    return [fnp.where(x > 0, t, fnp.zeros_like(t)) for t in series[0]]


jet_rules["relu"] = _relu_rule


def _reduce_choose(primals, series, out, *, order, axes, **_):
    """reduce_max/min: the mean of the terms at the positions that attain the extremum."""
    x = primals[0]
    shape = tuple(1 if i in axes else d for i, d in enumerate(fnp.shape(x)))
    where = (x == fnp.reshape(out, shape)).astype(_dtype(out))
    counts = fnp.sum(where, axis=tuple(axes))
    return [fnp.sum(t * where, axis=tuple(axes)) / counts for t in series[0]]


jet_rules["reduce_max"] = _reduce_choose
jet_rules["reduce_min"] = _reduce_choose


def _composite(fn: Callable) -> Callable:
    """A rule that pushes the series through `fn`, the primitive written with other ones."""
    def rule(primals, series, out, *, order, prim, **params):
        return _jet_fun(partial(fn, **params), list(primals), list(series), order)[1]
    return rule


def _logaddexp(a, b):
    m = fnp.maximum(a, b)
    m = stop_gradient(fnp.where(fnp.isfinite(m), m, 0.0))  # a constant shift
    return m + fnp.log(fnp.exp(a - m) + fnp.exp(b - m))


def _log_softmax(x, *, axis):
    m = stop_gradient(fnp.max(x, axis=axis, keepdims=True))
    shifted = x - m
    return shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis=axis, keepdims=True))


def _softplus(x, *, beta, threshold):
    z = x * beta
    return fnp.where(z > threshold, x, _logaddexp(z, fnp.zeros_like(z)) / beta)


def _softplus_grad(x, *, beta, threshold):
    z = x * beta
    return fnp.where(z > threshold, fnp.ones_like(z), 1.0 / (1.0 + fnp.exp(-z)))


jet_rules["logaddexp"] = _composite(_logaddexp)
jet_rules["softplus"] = _composite(_softplus)
jet_rules["log_softmax"] = _composite(_log_softmax)
# the derivatives that grad's programs bind (so jet composes over grad): ct * f', in terms
# of the output y for tanh and logistic, of the input x for sin and cos
jet_rules["tanh_grad"] = _composite(lambda ct, y: ct * (1.0 - y * y))
jet_rules["logistic_grad"] = _composite(lambda ct, y: ct * (y * (1.0 - y)))
jet_rules["sin_grad"] = _composite(lambda ct, x: ct * fnp.cos(x))
jet_rules["cos_grad"] = _composite(lambda ct, x: ct * -fnp.sin(x))
jet_rules["softplus_grad"] = _composite(_softplus_grad)


def _custom_call_rule(primals, series, out, *, order, call, **_):
    """custom_jvp/custom_vjp functions and checkpoint: the series goes through the function
    itself (as JAX's jet, which does not use the custom rules: they are first-order)."""
    avals = [ShapedArray(fnp.shape(x), _dtype(x)) for x in primals]
    staged = _staged_fun(call, avals)
    if staged is None:
        raise FgradNotImplementedError(
            f"jet has no rule for the custom function {call!r}: its Python reads input values, so "
            "it cannot be staged for jet")
    outs, outs_s = _jet_jaxpr(staged.closed, order, list(primals), list(series))
    return outs_s[0]


for _n in ("custom_jvp_call", "custom_vjp_call", "checkpoint"):
    jet_rules[_n] = _custom_call_rule



# --- every other primitive: the series from the primitive's own jvp rule ----------------------
#
# For v(t) = f(u(t)), v'(t) = jvp_f(u(t); u'(t)): the jvp rule, applied to u's series and to
# the series of u' (coefficients (j + 1) u_{j+1}), gives v''s series one order lower, and
# k v_k = (v')_{k-1}. The rule is written with fgrad primitives, so its series comes from this
# same interpreter at order K - 1; a rule that binds f itself again (digamma' = polygamma(1, .),
# bessel_j1' binds j0 and j1, the primal a rule recomputes) recurses down to order 0. The
# memo below makes each (primitive, operands, order) one computation for the whole recursion,
# so a family of primitives whose rules bind one another costs a polynomial in K, not 2^K.
# Direct rules above stay for the common primitives: they skip the tracing of a rule per order.

_MEMO: contextvars.ContextVar[dict | None] = contextvars.ContextVar("fgrad_jet_memo", default=None)


def _params_key(params: dict) -> tuple:
    items = []
    for k, v in sorted(params.items()):
        try:
            hash(v)
            items.append((k, v))
        except TypeError:
            items.append((k, id(v)))
    return tuple(items)


def _jvp_rule_series(primals, series, out, *, order, prim, **params):
    """Taylor coefficients 1..order of prim(u(t)) from prim's jvp rule (see above)."""
    # operands whose series the interpreter made of zeros (constants) get no tangent: some
    # rules refuse one where the operand is discrete (polygamma's order n)
    series = [None if s is None or not any(map(_maybe_nonzero, s)) else s for s in series]
    if all(s is None for s in series):
        return None
    token = _MEMO.set({}) if _MEMO.get() is None else None
    memo = _MEMO.get()
    try:
        key = (prim.name, _params_key(params), order, tuple(map(id, primals)),
               tuple(None if s is None else tuple(map(id, s)) for s in series))
        hit = memo.get(key)
        if hit is not None:
            return hit[0]
        result = _series_by_jvp(list(primals), list(series), out, order, prim, params)
        # the keyed operands stay referenced while the memo lives, so their ids stay theirs
        memo[key] = (result, primals, series, params)
        return result
    finally:
        if token is not None:
            _MEMO.reset(token)


def _series_by_jvp(primals: list, series: list, out, order: int, prim, params: dict) -> list:
    n = len(primals)
    live = [i for i, s in enumerate(series) if s is not None]

    def derivative(*args):
        tangents = [None] * n
        for i, t in zip(live, args[n:]):
            tangents[i] = t
        _, t_out = prim.jvp(list(args[:n]), tangents, **params)
        if t_out is None:
            t_out = fnp.zeros_like(out)
        return t_out

    # u' = sum_j (j + 1) u_{j+1} t^j
    d0 = [series[i][0] for i in live]
    if order == 1:
        return [derivative(*primals, *d0)]
    sub_series = [None if s is None else s[:order - 1] for s in series]
    sub_series += [[(j + 1) * series[i][j] for j in range(1, order)] for i in live]
    w0, w = _jet_fun(derivative, [*primals, *d0], sub_series, order - 1)
    if w is None:
        w = [fnp.zeros_like(w0)] * (order - 1)
    w = [w0, *w]
    return [w[k - 1] / k for k in range(1, order + 1)]


# --- scan: the loop over the body's jet -------------------------------------------------------
#
# Derived from scan's jvp rule, each order would nest the jvp of the body once more (a body
# 3^K times the size at order K); instead the loop carries every float carry's K coefficients
# alongside it and runs the jet of the body each step, so the body grows as the rules do.

def _scan_rule(primals, series, out, *, order, prim, jaxpr, num_consts, num_carry, length, reverse,
               unroll):

    nc, K, n = num_consts, num_carry, len(primals)
    ins, outs = jaxpr.in_avals, jaxpr.out_avals
    ny = len(outs) - K
    live_c = [i for i in range(nc) if series[i] is not None]
    carry_f = [i for i in range(K) if _inexact(ins[nc + i].dtype)]
    live_x = [i for i in range(nc + K, n) if series[i] is not None]
    y_f = [j for j in range(ny) if _inexact(outs[K + j].dtype)]
    plain = [ShapedArray(a.shape, a.dtype) for a in ins]

    def take(seq, m):
        return [list(seq[q * order:(q + 1) * order]) for q in range(m)], seq[m * order:]

    def body(*a):
        cv, a = a[:nc], a[nc:]
        cs, a = take(a, len(live_c))
        carv, a = a[:K], a[K:]
        cars, a = take(a, len(carry_f))
        xv, a = a[:n - nc - K], a[n - nc - K:]
        xss, _ = take(a, len(live_x))
        ser: list = [None] * n
        for i, s in zip(live_c, cs):
            ser[i] = s
        for i, s in zip(carry_f, cars):
            ser[nc + i] = s
        for i, s in zip(live_x, xss):
            ser[i] = s
        outs_p, outs_s = _jet_jaxpr(jaxpr, order, [*cv, *carv, *xv], ser)

        def terms(j):
            s = outs_s[j]
            return [fnp.zeros_like(outs_p[j])] * order if s is None else s
        carry_terms = [t for i in carry_f for t in terms(i)]
        y_terms = [t for j in y_f for t in terms(K + j)]
        return [*outs_p[:K], *carry_terms, *outs_p[K:], *y_terms]

    avals = (plain[:nc] + [plain[i] for i in live_c for _ in range(order)] + plain[nc:nc + K]
             + [plain[nc + i] for i in carry_f for _ in range(order)] + plain[nc + K:]
             + [plain[i] for i in live_x for _ in range(order)])
    st = stage(body, avals, "scan jet")
    init_terms = []
    for i in carry_f:
        s = series[nc + i]
        init_terms += [np.zeros(plain[nc + i].shape, plain[nc + i].dtype)] * order if s is None else list(s)
    leaves = bind_scan(st.body,
                       [*st.consts, *primals[:nc], *[t for i in live_c for t in series[i]]],
                       [*primals[nc:nc + K], *init_terms],
                       [*primals[nc + K:], *[t for i in live_x for t in series[i]]],
                       length, reverse, unroll)
    nf = len(carry_f)
    carry_s, ys_s = leaves[K:K + nf * order], leaves[K + nf * order + ny:]
    out_avals = scan_out_avals(jaxpr, K, length)
    result = []
    for k in range(order):
        t_all: list = [None] * (K + ny)
        for q, i in enumerate(carry_f):
            t_all[i] = carry_s[q * order + k]
        for q, j in enumerate(y_f):
            t_all[K + j] = ys_s[q * order + k]
        result.append(_pack_tangents(t_all, out_avals))
    return result


jet_rules["scan"] = _scan_rule


# --- while: the same, with the predicate on the primal carry ------------------------------------

def _while_rule(primals, series, out, *, order, prim, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
                checkpoint):

    ncc, nbc = cond_nconsts, body_nconsts
    cc, bc, init = primals[:ncc], primals[ncc:ncc + nbc], primals[ncc + nbc:]
    bs, init_s = series[ncc:ncc + nbc], series[ncc + nbc:]
    K = len(init)
    avals = _carry_avals(body_jaxpr, nbc)
    ins = body_jaxpr.in_avals
    live_b = [i for i in range(nbc) if bs[i] is not None]
    carry_f = [i for i in range(K) if _inexact(avals[i].dtype)]

    def body(*a):
        bv, a = a[:nbc], a[nbc:]
        bser = [list(a[q * order:(q + 1) * order]) for q in range(len(live_b))]
        a = a[len(live_b) * order:]
        carv, a = a[:K], a[K:]
        cser = [list(a[q * order:(q + 1) * order]) for q in range(len(carry_f))]
        ser: list = [None] * (nbc + K)
        for i, s in zip(live_b, bser):
            ser[i] = s
        for i, s in zip(carry_f, cser):
            ser[nbc + i] = s
        outs_p, outs_s = _jet_jaxpr(body_jaxpr, order, [*bv, *carv], ser)
        terms = [t for i in carry_f
                 for t in ([fnp.zeros_like(outs_p[i])] * order if outs_s[i] is None else outs_s[i])]
        return [*outs_p, *terms]

    b_avals = [ShapedArray(ins[i].shape, ins[i].dtype) for i in live_b for _ in range(order)]
    t_avals = [avals[i] for i in carry_f for _ in range(order)]
    st = stage(body, list(ins[:nbc]) + b_avals + list(ins[nbc:]) + t_avals, "while jet")
    # the predicate reads the primal carry only
    cond = _body_only(add_invars(cond_jaxpr, ncc + K, t_avals))
    init_terms = []
    for i in carry_f:
        s = init_s[i]
        init_terms += [np.zeros(avals[i].shape, avals[i].dtype)] * order if s is None else list(s)
    leaves = bind_while(cond, st, cc, [*bc, *[t for i in live_b for t in bs[i]]], [*init, *init_terms],
                        checkpoint)
    result = []
    for k in range(order):
        t_all: list = [None] * K
        for q, i in enumerate(carry_f):
            t_all[i] = leaves[K + q * order + k]
        result.append(_pack_tangents(t_all, avals))
    return result


jet_rules["while"] = _while_rule


# --- cond: a cond over the branches' jets ---------------------------------------------------

def _cond_rule(primals, series, out, *, order, prim, branches):

    index, args, aser = primals[0], list(primals[1:]), list(series[1:])
    n = len(args)
    outs = [ShapedArray(a.shape, a.dtype) for a in branches[0].out_avals]
    live = [i for i in range(n) if aser[i] is not None]

    def branch_jet(br):
        def fn(*a):
            ser: list = [None] * n
            for q, i in enumerate(live):
                ser[i] = list(a[n + q * order:n + (q + 1) * order])
            outs_p, outs_s = _jet_jaxpr(br, order, list(a[:n]), ser)
            terms = []
            for k in range(order):
                t = [None if s is None or not _inexact(av.dtype) else s[k] for s, av in zip(outs_s, outs)]
                t = [fnp.zeros(av.shape, av.dtype) if x is None and _inexact(av.dtype) else x
                     for x, av in zip(t, outs)]
                terms.append(t[0] if len(outs) == 1 else pack(t, outs, zero_ints=True))
            return terms
        return fn
    ins = branches[0].in_avals
    avals = list(ins) + [ShapedArray(ins[i].shape, ins[i].dtype) for i in live for _ in range(order)]
    staged = [stage(branch_jet(br), avals, "cond jet") for br in branches]
    return _bind_cond(index, staged, args + [t for i in live for t in aser[i]])


jet_rules["cond"] = _cond_rule
