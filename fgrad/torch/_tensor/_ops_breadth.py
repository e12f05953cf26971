"""More of torch's top-level functions: elementwise maths, reductions, shape ops, copies of
views, creation helpers and dtype queries, each one torch op through the boundary with
PyTorch's grad_fn name (or PyTorch's composition of ops where PyTorch composes).

Functions that map mechanically onto an fgrad.numpy function are rows of `_TABLE` (see
_adapt.py); the rest are written here because PyTorch's semantics need it (values and
indices results, views of the input, integer-to-float promotion, argument checks).
"""
from __future__ import annotations

import builtins
import math
import warnings
from typing import Any, Sequence

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...core.trace import _state
from ...core.errors import (FgradIndexError, FgradNotImplementedError, FgradRuntimeError, FgradTypeError,
                            FgradValueError)
from ...extend.lax import select as _lax_select
from ...extend.numpy import cast, chain_order, dtype_of
from ...scipy import special as fss
from . import _dtypes as D
from . import _ops as O
from . import creation as C
from ._adapt import _axis, adapt_table
from ._boundary import call, compute_dtype, replayable
from ._out import require_tensor
from ._ops import _constant_pieces, _float, _operand, _own, _tensor, result_type as _result_tuple
from ._ops_index import _REDUCE_UPDATES, _along
from ._ops_math import nan_to_num, on_copy
from ._ops_shape import matmul as _matmul
from ._policy import TORCH as P
from ._scalar_ops import div_scalar, mul_scalar
from .tensor import Tensor, _dim, _writable, check_inplace, commit_inplace

_I64 = np.dtype(np.int64)


def _input(name: str, x: Any) -> Tensor:
    """`x` when it is a Tensor; else PyTorch's TypeError naming the function and the fix (the
    check torch.* functions run at the API boundary, _out.require_tensor)."""
    return require_tensor(name, x)


def _floating(name: str, x: Tensor) -> None:
    if x._value.dtype.kind not in "fc":
        raise FgradRuntimeError(f"torch.{name}(): expected a floating point or complex tensor, got dtype "
                                f"{x.dtype}; convert it first, e.g. x.float()")


# --- elementwise ----------------------------------------------------------------------------------

# torch name | fgrad.numpy function | torch parameters | grad_fn stem (empty: the torch name's)
_TABLE = """
deg2rad | deg2rad | input | Deg2Rad
rad2deg | rad2deg | input | Rad2Deg
fmax | fmax | input, other |
fmin | fmin | input, other |
sinc | sinc | input |
"""


_ROWS = adapt_table(_TABLE)
globals().update(_ROWS)
# the rows, whose `input` is checked at the API boundary (fgrad.torch installs them with
# _out.argument_check; the functions below check their arguments themselves)
TABLE_NAMES = frozenset(_ROWS)


def copysign(input: Tensor, other: Any):
    """|input| with the sign of `other` (integers as float32): CopysignBackward0 for a tensor
    `other`, CopysignBackward1 for a number.

    Args:
        input: a Tensor.
        other: a Tensor or a number, broadcast against `input`.

    Returns:
        A float Tensor.
    """
    a, b = _operand(_input("copysign", input)), _operand(other)
    name = "CopysignBackward0" if isinstance(b, Tensor) else "CopysignBackward1"
    return call(name, lambda x, y: fnp.copysign(x, y, policy=P), (a, b))


def ldexp(input: Tensor, other: Any):
    """input * 2 ** other, in the float dtype of the operands (LdexpBackward0, whose inputs are
    both operands, as PyTorch's: an integer exponent is one without gradient).

    Args:
        input: a Tensor.
        other: a Tensor of exponents (usually integers).

    Returns:
        A float Tensor.
    """
    a, b = _operand(_input("ldexp", input)), _operand(other)
    if isinstance(b, Tensor) and b._value.dtype.kind not in "fc":
        # (as a float operand it is an input of the node with no gradient, PyTorch's (None, 0))
        b = b.to(D.of_np(P.float_dtype(P.result_dtype(a._value, b._value))))

    def values(x, e):
        dt = P.float_dtype(P.result_dtype(x, e))
        return fnp.multiply(cast(x, dt), fnp.power(np.asarray(2.0, dt), cast(e, dt)))
    return call("LdexpBackward0", values, (a, b))


_frexp_t = _result_tuple("frexp", ("mantissa", "exponent"))


def frexp(input: Tensor):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1; the
    exponent is int32 (FrexpBackward0 on the mantissa).

    Args:
        input: a float Tensor.

    Returns:
        torch.return_types.frexp(mantissa, exponent).
    """
    x = _input("frexp", input)
    if x._value.dtype.kind != "f":
        raise FgradRuntimeError(f"torch.frexp() only supports floating-point dtypes, got {x.dtype}")

    def values(v):
        m, e = fnp.frexp(v, policy=P)
        return m, cast(e, np.dtype(np.int32))
    m, e = call("FrexpBackward0", values, (x,))
    return _frexp_t(m, e)


def _slice_dim(v, start: int, stop: int, axis: int):
    """v[..., start:stop, ...] along `axis` (on values)."""
    return fnp.getitem(v, (slice(None),) * (axis % fnp.ndim(v)) + (slice(start, stop),))


def _no_grad_binary(name: str, fn, kinds: str = "biufc"):
    """torch.<name>(input, other) without a derivative (PyTorch records none, or refuses it)."""
    def op(input, other):
        a, b = _operand(_input(name, input)), _operand(other)
        for t in (a, b):
            if isinstance(t, Tensor) and t._value.dtype.kind not in kinds:
                raise FgradNotImplementedError(f"torch.{name}(): not implemented for dtype {t.dtype}")
        return call(None, lambda x, y: fn(lax.stop_gradient(x), lax.stop_gradient(y)), (a, b))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input, other) on the broadcast operands; the result records no gradient "
                  "(PyTorch defines none).\n\nArgs:\n    input: a Tensor.\n    other: a Tensor or a number.\n\n"
                  "Returns:\n    A Tensor.")
    return op


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """input resized in place to the_template's shape (Tensor.resize_as_).

    Args:
        input: a Tensor (not one that requires grad).
        the_template: the Tensor whose shape input takes.
        memory_format: accepted for PyTorch's signature.

    Returns:
        input.
    """
    return _input("resize_as_", input).resize_as_(the_template)


def as_strided_(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """input made in place the as_strided view of its own elements (Tensor.as_strided_).

    Args:
        input: a contiguous Tensor.
        size, stride, storage_offset: as for as_strided.

    Returns:
        input.
    """
    return _input("as_strided_", input).as_strided_(size, stride, storage_offset)


def _shift(left: bool):
    def values(x, y):
        x, y = fnp.broadcast_arrays(x, cast(y, dtype_of(x)) if not isinstance(y, (int, float)) else y)
        dt = dtype_of(x)
        bits = 8 * dt.itemsize
        # (a signed right shift by bits - 1 or more is the sign's fill: 2 ** (bits - 1) wraps negative)
        top = bits - 1 if not left and dt.kind == "i" else bits
        ok = fnp.logical_and(fnp.greater_equal(y, 0), fnp.less(y, top))
        k = fnp.where(ok, y, 0)
        p = _pow2(k, dt)
        if left:
            return fnp.where(ok, fnp.multiply(x, p), fnp.zeros_like(x))
        shifted = fnp.floor_divide(x, p)
        fill = fnp.where(fnp.less(x, 0), -1, 0) if dt.kind == "i" else fnp.zeros_like(x)
        return fnp.where(ok, shifted, cast(fill, dt))
    return values


def _pow2(k, dt):
    """2 ** k in the integer dtype `dt` (wrapping at the sign bit, as a shift does)."""
    table = np.array([np.array(1, np.uint64) << np.uint64(i) for i in builtins.range(8 * dt.itemsize)],
                     np.uint64).astype(dt)
    return fnp.take(table, cast(k, _I64))


gcd = _no_grad_binary("gcd", lambda x, y: fnp.gcd(x, y, policy=P), "iu")
lcm = _no_grad_binary("lcm", lambda x, y: fnp.lcm(x, y, policy=P), "iu")
bitwise_left_shift = _no_grad_binary("bitwise_left_shift", _shift(True), "iu")
bitwise_right_shift = _no_grad_binary("bitwise_right_shift", _shift(False), "iu")


nextafter = _no_grad_binary("nextafter", lambda x, y: fnp.nextafter(x, y, policy=P), "f")


def heaviside(input: Tensor, values: Tensor):
    """0 where input < 0, `values` where input == 0, 1 where input > 0 (no gradient: PyTorch
    defines none). The operands must have one dtype.

    Args:
        input: a Tensor.
        values: a Tensor of the same dtype, broadcast against `input`.

    Returns:
        A Tensor of that dtype.
    """
    x = _input("heaviside", input)
    if not isinstance(values, Tensor):
        raise FgradTypeError(f"torch.heaviside(): argument 'values' (position 2) must be Tensor, not "
                             f"{type(values).__name__}")
    if x._value.dtype != values._value.dtype:
        raise FgradRuntimeError(f"heaviside is not yet implemented for tensors with different dtypes "
                                f"({x.dtype} and {values.dtype})")
    return call(None, lambda a, b: fnp.heaviside(lax.stop_gradient(a), lax.stop_gradient(b), policy=P), (x, values))


def signbit(input: Tensor):
    """Whether the sign bit is set (True for -0.0), as a bool Tensor.

    Args:
        input: a Tensor.

    Returns:
        A bool Tensor of input's shape.
    """
    return call(None, lambda v: fnp.signbit(v) if dtype_of(v).kind == "f" else fnp.less(v, 0),
                (_input("signbit", input),))


def sgn(input: Tensor):
    """sign(input) for real tensors; z / |z| (0 at 0) for complex ones (SgnBackward0).

    Args:
        input: a Tensor.

    Returns:
        A Tensor of input's shape and dtype.
    """
    x = _input("sgn", input)

    def values(v):
        if dtype_of(v).kind != "c":
            return _constant_pieces(fnp.sign(v), v)
        r = fnp.abs(v)
        return fnp.where(fnp.equal(r, 0), fnp.zeros_like(v), fnp.true_divide(v, fnp.where(fnp.equal(r, 0), 1, r)))
    return call("SgnBackward0", values, (x,))


def positive(input: Tensor):
    """`input` itself (PyTorch refuses bool tensors).

    Args:
        input: a Tensor.

    Returns:
        input.
    """
    x = _input("positive", input)
    if x._value.dtype.kind == "b":
        raise FgradTypeError("The `+` operator, on a bool tensor is not supported.")
    return x


def isposinf(input: Tensor):
    """Where input is +inf (a bool Tensor; fgrad.numpy.isposinf).

    Args:
        input: a real Tensor.

    Returns:
        A bool Tensor of input's shape.
    """
    return call(None, fnp.isposinf, (_real("isposinf", _input("isposinf", input)),))


def isneginf(input: Tensor):
    """Where input is -inf (a bool Tensor; fgrad.numpy.isneginf).

    Args:
        input: a real Tensor.

    Returns:
        A bool Tensor of input's shape.
    """
    return call(None, fnp.isneginf, (_real("isneginf", _input("isneginf", input)),))


def _real(name: str, x: Tensor) -> Tensor:
    if x._value.dtype.kind == "c":
        raise FgradRuntimeError(f"{name} does not support complex inputs; test x.real and x.imag instead")
    return x


def isreal(input: Tensor):
    """Where the imaginary part is 0 (everywhere, for real tensors).

    Args:
        input: a Tensor.

    Returns:
        A bool Tensor of input's shape.
    """
    return call(None, fnp.isreal, (_input("isreal", input),))


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False):
    """Whether each of `elements` is among `test_elements` (its negation with `invert`).

    Args:
        elements: a Tensor or a number.
        test_elements: a Tensor or a number.
        assume_unique: accepted for PyTorch's signature (the result does not depend on it).
        invert: return where elements are NOT in test_elements.

    Returns:
        A bool Tensor of `elements`' shape.
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise FgradTypeError("torch.isin(): at least one of 'elements' and 'test_elements' must be a Tensor")
    e, t = _operand(elements), _operand(test_elements)

    def values(a, b):
        b = fnp.ravel(fnp.asarray(b))
        hit = fnp.any(fnp.equal(fnp.expand_dims(a, -1), b), axis=-1) if fnp.size(b) else \
            fnp.zeros(fnp.shape(a), bool)
        return fnp.logical_not(hit) if invert else hit
    if not isinstance(e, Tensor):
        e = C.tensor(e)
    return call(None, values, (e, t))


def _special_unary(name: str, fn, grad_fn: str):
    def op(input):
        return call(grad_fn, lambda v: fn(_float(v)), (_input(name, input),))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}: fgrad.scipy.special.{fn.__name__} of input (integers as float32; "
                  f"grad_fn {grad_fn}).\n\nArgs:\n    input: a Tensor.\n\nReturns:\n    A float Tensor.")
    return op


digamma = _special_unary("digamma", fss.digamma, "DigammaBackward0")
lgamma = _special_unary("lgamma", fss.gammaln, "LgammaBackward0")
erfc = _special_unary("erfc", fss.erfc, "ErfcBackward0")
erfinv = _special_unary("erfinv", fss.erfinv, "ErfinvBackward0")
i0 = _special_unary("i0", fss.i0, "I0Backward0")


def polygamma(n: int, input: Tensor):
    """The n-th derivative of digamma (PolygammaBackward0).

    Args:
        n: the order, a non-negative int.
        input: a Tensor.

    Returns:
        A float Tensor.
    """
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise FgradRuntimeError(f"polygamma(n, x) does not support negative n (got n={n!r}); n must be an int >= 0")
    return call("PolygammaBackward0", lambda v: fss.polygamma(int(n), _float(v)), (_input("polygamma", input),))


def mvlgamma(input: Tensor, p: int):
    """The log of the p-variate gamma function; every element must exceed (p - 1) / 2.

    Args:
        input: a float Tensor.
        p: the dimension, an int >= 1.

    Returns:
        A Tensor of input's dtype (MvlgammaBackward0).
    """
    x = _input("mvlgamma", input)
    if x._value.dtype.kind not in "f":
        raise FgradRuntimeError(f"mvlgamma(): expected a floating point tensor, got {x.dtype}")
    if p < 1:
        raise FgradRuntimeError(f"p has to be greater than or equal to 1 (got p={p})")
    if not np.all(np.asarray(x._value) > (p - 1) / 2) if isinstance(x._value, np.ndarray) else False:
        raise FgradRuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    return call("MvlgammaBackward0", lambda v: fss.multigammaln(v, p), (x,))


def _igamma(name: str, fn, grad_fn: str):
    def op(input, other):
        a, b = _input(name, input), _operand(other)
        dt = P.float_dtype(P.result_dtype(a, b))
        # PyTorch gives no derivative in the shape parameter `input` (only in `other`)
        return call(grad_fn, lambda x, y: fn(lax.stop_gradient(cast(x, dt)), cast(y, dt)), (a, b))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input, other): the regularized {'lower' if name == 'igamma' else 'upper'} "
                  f"incomplete gamma function (fgrad.scipy.special.{fn.__name__}); differentiable in `other`."
                  "\n\nArgs:\n    input: a Tensor (the shape a > 0).\n    other: a Tensor (x >= 0).\n\n"
                  "Returns:\n    A float Tensor.")
    return op


igamma = _igamma("igamma", fss.gammainc, "IgammaBackward0")
igammac = _igamma("igammac", fss.gammaincc, "IgammacBackward0")


# --- reductions --------------------------------------------------------------------------------------

_aminmax_t = _result_tuple("aminmax", ("min", "max"))
_kthvalue_t = _result_tuple("kthvalue")
_mode_t = _result_tuple("mode")
_histogram_t = _result_tuple("histogram", ("hist", "bin_edges"))


def aminmax(input: Tensor, *, dim: int = None, keepdim: bool = False):
    """(min, max) of `input` (over `dim`, or every element), one AminmaxBackward0 node.

    Args:
        input: a Tensor.
        dim: an int, or None for every element.
        keepdim: keep `dim` with size 1.

    Returns:
        torch.return_types.aminmax(min, max).
    """
    x = _input("aminmax", input)
    if x._value.size == 0:
        raise FgradRuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                                "has no identity.")
    axis = None if dim is None else _dim(dim, builtins.max(x._value.ndim, 1))
    if axis is not None and x._value.ndim == 0:
        axis = None

    def values(v):
        return (fnp.amin(v, axis=axis, keepdims=keepdim, policy=P),
                fnp.amax(v, axis=axis, keepdims=keepdim, policy=P))
    lo, hi = call("AminmaxBackward0", values, (x,))
    return _aminmax_t(lo, hi)


def _at_index(name: str, x: Tensor, d: int, keepdim: bool, pick):
    """(values, indices) of `x` along `d` at the index `pick(v, d)` gives (keepdims), the
    values gathered there, so the gradient goes to the index returned (PyTorch's rule)."""
    nd = x._value.ndim

    def values(v):
        if not nd:
            return v, np.zeros((), np.int64)
        idx = pick(v, d)
        vals = fnp.take_along_axis(v, idx, d)
        return (vals, idx) if keepdim else (fnp.squeeze(vals, d), fnp.squeeze(idx, d))
    vals, idx = call(name, values, (x,))
    return _own(vals), idx


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The k-th smallest element along `dim` and its index (KthvalueBackward0; NaN sorts last).

    Args:
        input: a Tensor.
        k: 1-based rank.
        dim: the dimension.
        keepdim: keep `dim` with size 1.

    Returns:
        torch.return_types.kthvalue(values, indices).
    """
    x = _input("kthvalue", input)
    nd = x._value.ndim
    d = _dim(dim, builtins.max(nd, 1)) if nd else 0
    n = x._value.shape[d] if nd else 1
    if not 1 <= k <= n:
        raise FgradRuntimeError(f"kthvalue(): selected number k={k} out of range for dimension {d} of size {n}")

    def pick(v, d):
        order = fnp.argsort(lax.stop_gradient(v), axis=d, stable=True)
        return fnp.take(order, np.array([k - 1]), axis=d)
    return _kthvalue_t(*_at_index("KthvalueBackward0", x, d, keepdim, pick))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    """The most frequent value along `dim` (the smallest among equally frequent ones) and the
    last index where it occurs (ModeBackward0).

    Args:
        input: a Tensor.
        dim: the dimension.
        keepdim: keep `dim` with size 1.

    Returns:
        torch.return_types.mode(values, indices).
    """
    x = _input("mode", input)
    nd = x._value.ndim
    d = _dim(dim, builtins.max(nd, 1)) if nd else 0
    if nd and x._value.shape[d] == 0:
        raise FgradIndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")

    def pick(v, d):
        w = fnp.moveaxis(lax.stop_gradient(v), d, -1)
        n = w.shape[-1]
        same = fnp.equal(fnp.expand_dims(w, -1), fnp.expand_dims(w, -2))
        counts = fnp.sum(same, axis=-1)
        best = fnp.equal(counts, fnp.max(counts, axis=-1, keepdims=True))
        # among the most frequent, the smallest value: rank by (value order) with a big key elsewhere
        order = fnp.argsort(fnp.argsort(w, axis=-1, stable=True), axis=-1)
        rank = fnp.where(best, order, n)
        first = fnp.argmin(rank, axis=-1)
        value = fnp.take_along_axis(w, fnp.expand_dims(first, -1), -1)
        pos = fnp.where(fnp.equal(w, value), fnp.arange(n), -1)
        idx = fnp.max(pos, axis=-1, keepdims=True)
        return fnp.moveaxis(cast(idx, _I64), -1, d)
    return _mode_t(*_at_index("ModeBackward0", x, d, keepdim, pick))


def nanmean(input: Tensor, dim: int = None, keepdim: bool = False, *, dtype: Any = None):
    """The mean of the non-NaN elements: nansum / their count (DivBackward0 over
    NansumBackward0, PyTorch's composition).

    Args:
        input: a float or complex Tensor.
        dim: an int, a tuple of ints, or None for every element.
        keepdim: keep the reduced dims with size 1.
        dtype: the result's dtype.

    Returns:
        A Tensor.
    """
    x = _input("nanmean", input)
    if x._value.dtype.kind not in "fc":
        raise FgradRuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                                f"{x.dtype}")
    # PyTorch's composition: nansum / the count of non-NaN elements (an operand without gradient
    # of the division; as a float one it is the node's (None, 0) input)
    total = O.nansum(x, dim, keepdim, dtype=dtype)
    count = O.logical_not(O.isnan(x)).sum(dim, keepdim)
    real = np.finfo(total._value.dtype).dtype
    return total.div(count.to(D.of_np(real)))


def msort(input: Tensor):
    """`input` sorted along its first dim (SortBackward0).

    Args:
        input: a Tensor.

    Returns:
        A Tensor of input's shape.
    """
    return O.sort(_input("msort", input), dim=0).values


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None, weight: Tensor = None, density: bool = False):
    """The histogram of a float tensor's values: counts (or weights, or a density) in `bins`
    equal bins over `range` (the values' min and max by default), or in the given edges.

    Args:
        input: a float Tensor.
        bins: the number of bins, or a 1-D Tensor of increasing edges.
        range: (min, max) of the bins.
        weight: a Tensor of input's shape, each element's weight.
        density: normalise to a probability density.

    Returns:
        torch.return_types.histogram(hist, bin_edges), both of input's dtype.
    """
    x = _input("histogram", input)
    if x._value.dtype.kind != "f":
        raise FgradRuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype and be "
                                f"floating point, got {x.dtype}")
    v = np.asarray(x.detach().numpy(), np.float64).ravel()
    w = None if weight is None else np.asarray(weight.detach().numpy(), np.float64).ravel()
    b = bins.detach().numpy() if isinstance(bins, Tensor) else int(bins)
    if range is None and not isinstance(b, np.ndarray) and v.size:
        range = (float(v.min()), float(v.max()))
    hist, edges = np.histogram(v, b, range=range, weights=w, density=density)
    dt = x._value.dtype
    return _histogram_t(C.tensor(hist.astype(dt)), C.tensor(edges.astype(dt)))


def _weights_check(kind: str, w: Any, n: int, integral: bool) -> Tensor:
    """cov's fweights/aweights, checked as PyTorch checks them (at most 1-D, one per observation,
    integral or floating, none negative)."""
    if not isinstance(w, Tensor):
        raise FgradTypeError(f"cov(): argument '{kind}' must be Tensor, not {type(w).__name__}")
    v = w._value
    if v.ndim > 1:
        raise FgradRuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with "
                                f"{v.ndim} dimensions")
    if integral and v.dtype.kind not in "iu":
        raise FgradRuntimeError(f"cov(): expected {kind} to have integral dtype but got {kind} with {w.dtype} dtype")
    if not integral and v.dtype.kind != "f":
        raise FgradRuntimeError(f"cov(): expected {kind} to have floating point dtype but got {kind} with "
                                f"{w.dtype} dtype")
    if v.size != n:
        raise FgradRuntimeError(f"cov(): expected {kind} to have the same numel as there are observations in the "
                                f"input but got {v.size} != {n}")
    if n and w.detach().min().item() < 0:
        raise FgradRuntimeError(f"cov(): {kind} cannot be negative")
    return w


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None):
    """The covariance matrix of the variables in `input`'s rows (observations in columns), as
    PyTorch composes it: the (weighted) mean subtracted, a matrix product, a division by the
    degrees of freedom, a squeeze.

    Args:
        input: a 1-D or 2-D Tensor.
        correction: the difference between the number of observations and the divisor.
        fweights: an integer Tensor of observation frequencies.
        aweights: a float Tensor of observation weights.

    Returns:
        A Tensor (0-d for one variable).
    """
    x = _input("cov", input)
    nd = x._value.ndim
    if nd > 2:
        raise FgradRuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                                f"{nd} dimensions")
    kind = x._value.dtype.kind
    if kind == "b":
        raise FgradRuntimeError("cov(): bool dtype is not supported for input")
    if kind in "iu":  # (PyTorch's true division makes the mean, and so everything after it, float)
        x = x.to(D.get_default_dtype())
    obs = x if nd == 2 else x.view(1, -1)
    n = obs._value.shape[1]
    real = D.of_np(np.finfo(obs._value.dtype).dtype)
    w = None
    if fweights is not None:
        w = _weights_check("fweights", fweights, n, True)
    if aweights is not None:
        aw = _weights_check("aweights", aweights, n, False)
        w = aw if w is None else w * aw
    if w is None:
        # (constants of the divisions: float operands without gradient, PyTorch's Long scalars)
        w_sum = C.tensor(float(n), dtype=real, device=x.device)
        avg = obs.sum(1) / w_sum
        norm = C.tensor(float(n - correction), dtype=real, device=x.device)
    else:
        w_sum = w.sum()
        if w_sum.item() == 0:
            raise FgradRuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = (obs * w).sum(1) / w_sum
        if aweights is not None and correction != 0:
            norm = w_sum - mul_scalar((w * aweights).sum(), correction) / w_sum
        else:
            norm = w_sum - correction
        if norm._value.dtype.kind not in "fc":
            norm = norm.to(real)
    if norm.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm = norm.detach().zero_() if norm._node is None else norm.zero_()
    centred = obs - avg.unsqueeze(1)
    right = centred if w is None else centred * w
    right = right.t()
    if right._value.dtype.kind == "c":
        right = right.conj()
    return centred.mm(right).div(norm).squeeze()


def corrcoef(input: Tensor):
    """The Pearson correlation coefficients of `input`'s rows, clipped to [-1, 1], as PyTorch
    composes them from cov (ClampBackward1 last).

    Args:
        input: a 1-D or 2-D Tensor.

    Returns:
        A Tensor.
    """
    x = _input("corrcoef", input)
    if x._value.ndim > 2:
        raise FgradRuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input "
                                f"with {x._value.ndim} dimensions")
    c = cov(x)
    if c._value.ndim == 0:
        return c / c
    d = c.diagonal()
    stddev = (d.real if d._value.dtype.kind == "c" else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c if c._value.dtype.kind == "c" else O.clamp(c, -1, 1)


def _trapezoid_kinds(name: str, x: Any, dx: Any) -> None:
    """PyTorch's two overloads, (y, x: Tensor) and (y, *, dx: Number): a number, list or
    array as x, or x together with dx, matches neither (its TypeError)."""
    if x is not None and not isinstance(x, Tensor):
        raise FgradTypeError(f"{name}() received an invalid combination of arguments - got x of type "
                             f"{type(x).__name__} ({x!r:.40}), but expected (Tensor y, Tensor x, *, int dim) or "
                             f"(Tensor y, *, Number dx, int dim): give sample points as a Tensor, or a constant "
                             f"spacing as the keyword dx={x!r:.40}")
    if x is not None and dx is not None:
        raise FgradTypeError(f"{name}() received an invalid combination of arguments - got both x and dx={dx!r}: "
                             "pass either the sample points x or the spacing dx, not both")


def _trapezoid_args(name, y, x, dx, dim):
    _trapezoid_kinds(name, x, dx)
    yy = _input(name, y)
    nd = yy._value.ndim
    if nd == 0:
        raise FgradIndexError(f"{name}(): cannot integrate a 0-d tensor (it has no dimension {dim})")
    if yy._value.dtype.kind == "b" or (isinstance(x, Tensor) and x._value.dtype.kind == "b"):
        raise FgradRuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    return yy, _dim(dim, nd)


def _sliced(v: Tensor, d: int, start: Any, stop: Any) -> Tensor:
    """v[..., start:stop, ...] with the slice at dim d (SliceBackward0)."""
    return v[(slice(None),) * d + (slice(start, stop),)]


def _spacing(name: str, y: Tensor, x: Tensor, d: int) -> Tensor:
    """The differences of the sample points `x` along `d`, as PyTorch takes them: a 1-D `x`
    viewed along `d`, a lower-dimensional one with leading ones, then right minus left."""
    xv, nd = x._value, y._value.ndim
    if xv.ndim == 1:
        if xv.shape[0] != y._value.shape[d]:
            raise FgradRuntimeError(f"{name}: There must be one `x` value for each sample point (x has "
                                    f"{xv.shape[0]}, y has {y._value.shape[d]} along dim {d})")
        shape = [1] * nd
        shape[d] = xv.shape[0]
        x = x.view(*shape)
    elif xv.ndim < nd:
        x = x.view(*([1] * (nd - xv.ndim) + list(xv.shape)))
    return _sliced(x, d, 1, None) - _sliced(x, d, None, -1)


def trapezoid(y: Tensor, x: Any = None, *, dx: float | None = None, dim: int = -1):
    """The trapezoid rule along `dim`: spacing `dx` (1 by default) or sample points `x`, as
    PyTorch composes it (the sum less half the ends, times dx: MulBackward1; or the sum of
    the pairs' means times the differences of x: DivBackward1).

    Args:
        y: the values, a Tensor.
        x: the sample points, a Tensor (or None).
        dx: the constant spacing when `x` is None.
        dim: the dimension to integrate along.

    Returns:
        A Tensor without `dim`.
    """
    yy, d = _trapezoid_args("trapezoid", y, x, dx, dim)
    if yy._value.shape[d] == 0:  # (no samples: 0, NumPy's answer)
        shape = yy._value.shape[:d] + yy._value.shape[d + 1:]
        return C.zeros(shape, dtype=yy.dtype, device=yy.device)
    if isinstance(x, Tensor):
        pairs = (_sliced(yy, d, 1, None) + _sliced(yy, d, None, -1)) * _spacing("trapezoid", yy, x, d)
        return div_scalar(pairs.sum(d), 2.0)
    step = 1.0 if dx is None else dx
    ends = mul_scalar(yy.select(d, 0) + yy.select(d, -1), 0.5)
    return mul_scalar(yy.sum(d) - ends, step)


def trapz(y: Tensor, x: Any = None, *, dx: float | None = None, dim: int = -1):
    """The older name of `trapezoid` (same arguments).

    Args:
        y: the values, a Tensor.
        x: the sample points, or None.
        dx: the constant spacing when x is None.
        dim: the dimension to integrate along.

    Returns:
        A Tensor without dim.
    """
    _trapezoid_kinds("trapz", x, dx)
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: float | None = None, dim: int = -1):
    """The running trapezoid rule along `dim` (one fewer element there), as PyTorch composes it
    (CumsumBackward0 with a spacing, DivBackward1 with points).

    Args:
        y: the values, a Tensor.
        x: the sample points, a Tensor (or None).
        dx: the constant spacing when `x` is None.
        dim: the dimension to integrate along.

    Returns:
        A Tensor.
    """
    yy, d = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    pairs = _sliced(yy, d, None, -1) + _sliced(yy, d, 1, None)
    if isinstance(x, Tensor):
        return div_scalar((pairs * _spacing("cumulative_trapezoid", yy, x, d)).cumsum(d), 2.0)
    step = 1.0 if dx is None else dx
    return mul_scalar(pairs, step / 2.0).cumsum(d)


def frobenius_norm(input: Tensor, dim: int = (), keepdim: bool = False):
    """sqrt(sum |x|^2) over `dim` (every element by default; NormBackward1, PyTorch's).

    Args:
        input: a Tensor.
        dim: a tuple of up to two dims.
        keepdim: keep the reduced dims with size 1.

    Returns:
        A Tensor.
    """
    x = _input("frobenius_norm", input)
    axis = _axis(dim)
    if isinstance(axis, (tuple, list)) and len(axis) > 2:
        raise FgradRuntimeError(f"frobenius norm expects at most two dims, got {tuple(axis)}")
    axis = tuple(axis) if isinstance(axis, list) else axis
    return call("NormBackward1", lambda v: fnp.sqrt(fnp.sum(fnp.square(fnp.abs(_float(v))), axis=axis,
                                                            keepdims=keepdim)), (x,))


def nuclear_norm(input: Tensor, dim: int = None, keepdim: bool = False):
    """The sum of the singular values (of a 2-D input, or of the matrices in the two `dim`).

    Args:
        input: a Tensor.
        dim: two dims (None: a 2-D input's own), or a bool standing for keepdim
            (PyTorch's `nuclear_norm(input, keepdim)` overload).
        keepdim: keep the reduced dims with size 1.

    Returns:
        A Tensor (SumBackward1).
    """
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    x = _input("nuclear_norm", input)
    nd = x._value.ndim
    if dim is None and nd != 2:
        raise FgradRuntimeError(f"nuclear_norm(): expected a 2D tensor, got {nd}D; pass two dims")
    d0, d1 = (0, 1) if dim is None else (_dim(dim[0], nd), _dim(dim[1], nd))
    if d0 == d1:
        raise FgradRuntimeError(f"nuclear_norm(): dims must be different, got ({d0}, {d1})")
    if x._value.dtype.kind not in "fc":
        raise FgradRuntimeError(f"nuclear_norm(): expected a floating point or complex tensor, got {x.dtype}")
    return O._nuclear(x, d0, d1, keepdim)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float):
    """Each slice along `dim` whose p-norm exceeds `maxnorm` scaled down to norm `maxnorm`
    (by maxnorm / (norm + 1e-7), PyTorch's factor; RenormBackward0).

    Args:
        input: a float Tensor of at least 2 dims... (1-D also accepted).
        p: the norm's order, > 0.
        dim: the dimension whose slices are renormalised.
        maxnorm: the largest norm kept.

    Returns:
        A Tensor of input's shape.
    """
    x = _input("renorm", input)
    if p <= 0:
        raise FgradRuntimeError(f"renorm: non-positive-norm not supported (got p={p})")
    if maxnorm < 0:
        raise FgradRuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    nd = x._value.ndim
    d = _dim(dim, builtins.max(nd, 1))
    axes = tuple(i for i in builtins.range(nd) if i != d)

    def values(v):
        a = fnp.abs(v)
        if p == math.inf:
            norm = fnp.max(a, axis=axes, keepdims=True)
        else:
            norm = fnp.power(fnp.sum(fnp.power(a, p), axis=axes, keepdims=True), 1.0 / p)
        factor = fnp.where(fnp.greater(norm, maxnorm), fnp.true_divide(maxnorm, fnp.add(norm, 1e-7)), 1.0)
        return fnp.multiply(v, cast(factor, dtype_of(v)))
    return call("RenormBackward0", values, (x,))


# --- shape ops -------------------------------------------------------------------------------------

def _tensors(name: str, tensors) -> tuple:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise FgradTypeError(f"torch.{name}(): expected Tensors, got {type(t).__name__} at position {i}")
    return tuple(tensors)


def _at_least(name: str, tensors, nd: int):
    ts = _tensors(name, tensors)
    out = []
    for t in ts:
        k = t._value.ndim
        if k >= nd:
            out.append(t)
        elif k == 0:
            out.append(O.reshape(t, (1,) * nd))
        elif nd == 2 or (nd == 3 and k == 2):
            out.append(O.unsqueeze(t, 0 if nd == 2 else -1))
        else:  # a 1-D tensor made 3-D: (1, n, 1)
            out.append(O.unsqueeze(O.unsqueeze(t, 0), -1))
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(out)


def atleast_1d(*tensors):
    """Each tensor with at least one dim (a 0-d one viewed as (1,)): one Tensor for one
    Tensor argument, else a tuple.

    Args:
        *tensors: Tensors, or one list/tuple of them.

    Returns:
        A Tensor or a tuple of Tensors.
    """
    return _at_least("atleast_1d", tensors, 1)


def atleast_2d(*tensors):
    """Each tensor with at least two dims ((n,) viewed as (1, n)); see atleast_1d.

    Args:
        *tensors: Tensors, or one list/tuple of them.

    Returns:
        A Tensor or a tuple of Tensors.
    """
    return _at_least("atleast_2d", tensors, 2)


def atleast_3d(*tensors):
    """Each tensor with at least three dims ((n,) as (1, n, 1), (m, n) as (m, n, 1)); see atleast_1d.

    Args:
        *tensors: Tensors, or one list/tuple of them.

    Returns:
        A Tensor or a tuple of Tensors.
    """
    return _at_least("atleast_3d", tensors, 3)


def column_stack(tensors: Any):
    """The tensors side by side as columns: 0-d and 1-D ones as (n, 1) columns, then
    concatenated along dim 1 (CatBackward0).

    Args:
        tensors: a sequence of Tensors.

    Returns:
        A Tensor.
    """
    ts = _tensors("column_stack", (tensors,))
    if not ts:
        raise FgradValueError("column_stack expects a non-empty TensorList")
    cols = [O.reshape(t, (t._value.size, 1)) if t._value.ndim <= 1 else t for t in ts]
    return O.cat(cols, 1)


def row_stack(tensors: Any):
    """vstack's older name: the tensors stacked as rows.

    Args:
        tensors: a non-empty sequence of Tensors.

    Returns:
        A Tensor.
    """
    return O.vstack(tensors)


def dstack(tensors: Any):
    """The tensors concatenated along their third dim, each made at least 3-D first.

    Args:
        tensors: a non-empty sequence of Tensors.

    Returns:
        A Tensor.
    """
    ts = _tensors("dstack", (tensors,))
    if not ts:
        raise FgradValueError("dstack expects a non-empty TensorList")
    return O.cat(list(_at_least("dstack", (list(ts),), 3)), 2)


def _split_dim(name: str, input, ios, d: int, need: int):
    x = _input(name, input)
    nd = x._value.ndim
    if nd < need:
        raise FgradRuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor "
                                f"with {nd} dimensions!")
    if isinstance(ios, (int, np.integer)):
        n = x._value.shape[d]
        if ios == 0 or n % int(ios):
            raise FgradRuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                    f"dimension {n} is not divisible by the split_size {ios}!")
    return O.tensor_split(x, ios, d)


def hsplit(input: Tensor, indices_or_sections: Any):
    """tensor_split along dim 1 (dim 0 for a 1-D input); an int must divide that dim.

    Args:
        input: a Tensor with at least 1 dim.
        indices_or_sections: a number of equal pieces, or a list of cut indices.

    Returns:
        A tuple of views.
    """
    nd = _input("hsplit", input)._value.ndim
    return _split_dim("hsplit", input, indices_or_sections, 0 if nd == 1 else 1, 1)


def vsplit(input: Tensor, indices_or_sections: Any):
    """tensor_split along dim 0 of a tensor with at least 2 dims; see hsplit.

    Args:
        input: a Tensor with at least 2 dims.
        indices_or_sections: a number of equal pieces, or a list of cut indices.

    Returns:
        A tuple of views.
    """
    return _split_dim("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any):
    """tensor_split along dim 2 of a tensor with at least 3 dims; see hsplit.

    Args:
        input: a Tensor with at least 3 dims.
        indices_or_sections: a number of equal pieces, or a list of cut indices.

    Returns:
        A tuple of views.
    """
    return _split_dim("dsplit", input, indices_or_sections, 2, 3)


def tile(input: Tensor, dims: Sequence[int]):
    """`input` repeated `dims` times along each dim (dims padded with leading 1s to input's
    dims; RepeatBackward0).

    Args:
        input: a Tensor.
        dims: a sequence of repetition counts.

    Returns:
        A Tensor.
    """
    x = _input("tile", input)
    dims = tuple(int(r) for r in (dims if isinstance(dims, (tuple, list)) else (dims,)))
    dims = (1,) * (x._value.ndim - len(dims)) + dims
    return O.repeat(x, *dims)


def ravel(input: Tensor):
    """`input` flattened to 1-D (a view when it can be one).

    Args:
        input: a Tensor.

    Returns:
        A 1-D Tensor (a view when input is contiguous).
    """
    return O.view(O.contiguous(_input("ravel", input)), -1)


def take_along_dim(input: Tensor, indices: Tensor, dim: int = None):
    """The elements of `input` at `indices` along `dim` (indices broadcast against input
    except at dim), or at flat `indices` of the flattened input when dim is None
    (GatherBackward0).

    Args:
        input: a Tensor.
        indices: an int64 Tensor.
        dim: the dimension, or None.

    Returns:
        A Tensor.
    """
    x = _input("take_along_dim", input)
    if not isinstance(indices, Tensor) or indices._value.dtype.kind not in "iu":
        raise FgradRuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                                f"{getattr(indices, 'dtype', type(indices).__name__)}")
    if dim is None:
        return O.gather(O.reshape(x, (-1,)), 0, O.reshape(indices, (-1,)))
    nd = x._value.ndim
    d = _dim(dim, builtins.max(nd, 1))
    if indices._value.ndim != nd:
        raise FgradRuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                                f"dimensions, but got {nd} dimensions for input, and {indices._value.ndim} "
                                "dimensions for indices")
    xs, ids = list(x._value.shape), list(indices._value.shape)
    bx, bi = list(xs), list(ids)
    for i in builtins.range(nd):
        if i != d:
            bx[i] = bi[i] = np.broadcast_shapes((xs[i],), (ids[i],))[0]
    # (PyTorch's broadcast_to: an ExpandBackward0 node even where the shape stays)
    return O.gather(O.expand(x, *bx), d, O.expand(indices, *bi))


def select(input: Tensor, dim: int, index: int):
    """The slice at `index` along `dim`, without that dim (a view, SelectBackward0).

    Args:
        input: a Tensor.
        dim: the dimension.
        index: the position along dim (negative counts from the end).

    Returns:
        A view with one dim fewer.
    """
    return O.select(_input("select", input), dim, index)


def _scatter_mask(name, input, src, positions, want):
    """`input` with `src` (of shape `want`) written at `positions` (an index tuple)."""
    x = _input(name, input)
    if not isinstance(src, Tensor):
        raise FgradTypeError(f"torch.{name}(): argument 'src' (position 2) must be Tensor, not {type(src).__name__}")
    if tuple(src._value.shape) != tuple(want):
        raise FgradRuntimeError(f"{name}(): expected src to have a size equal to the slice of self. src size = "
                                f"{list(src._value.shape)}, slice size = {list(want)}")
    if src._value.dtype != x._value.dtype:
        raise FgradRuntimeError(f"{name}(): expected src ({src.dtype}) to have the dtype of self ({x.dtype})")
    return call(f"{''.join(w.capitalize() for w in name.split('_'))}Backward0",
                lambda v, s: fnp.at_set(v, positions, s), (x, src))


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int):
    """`input` with its slice at `index` along `dim` replaced by `src` (a new tensor).

    Args:
        input: a Tensor.
        src: a Tensor of the slice's shape (input's shape without `dim`).
        dim: the dimension.
        index: the position along `dim`.

    Returns:
        A Tensor (SelectScatterBackward0).
    """
    x = _input("select_scatter", input)
    shape = tuple(x._value.shape)
    d = _dim(dim, builtins.max(len(shape), 1))
    n = shape[d]
    if not -n <= index < n:
        raise FgradIndexError(f"select_scatter(): index {index} out of range for tensor of size {list(shape)} "
                              f"at dimension {d}")
    return _scatter_mask("select_scatter", x, src, (slice(None),) * d + (index % n,), shape[:d] + shape[d + 1:])


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None, step: int = 1):
    """`input` with input[start:end:step] along `dim` replaced by `src` (SliceScatterBackward0).

    Args:
        input: a Tensor.
        src: a Tensor of the slice's shape.
        dim: the dimension.
        start, end, step: the slice (step > 0).

    Returns:
        A Tensor.
    """
    x = _input("slice_scatter", input)
    if step <= 0:
        raise FgradRuntimeError(f"slice_scatter(): slice step must be positive, got {step}")
    shape = tuple(x._value.shape)
    d = _dim(dim, builtins.max(len(shape), 1))
    sl = slice(start, end, step)
    want = shape[:d] + (len(builtins.range(*sl.indices(shape[d]))),) + shape[d + 1:]
    return _scatter_mask("slice_scatter", x, src, (slice(None),) * d + (sl,), want)


def _diag_positions(shape, offset, d1, d2):
    n1, n2 = shape[d1], shape[d2]
    r0, c0 = builtins.max(0, -offset), builtins.max(0, offset)
    m = builtins.max(0, builtins.min(n1 - r0, n2 - c0))
    return np.arange(r0, r0 + m), np.arange(c0, c0 + m), m


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """`input` with its `offset` diagonal over (dim1, dim2) replaced by `src`, whose shape is
    that of input.diagonal(offset, dim1, dim2) (DiagonalScatterBackward0).

    Args:
        input: a Tensor of at least 2 dims.
        src: a Tensor.
        offset: the diagonal (0 main, > 0 above, < 0 below).
        dim1, dim2: the two dims of the matrices.

    Returns:
        A Tensor.
    """
    x = _input("diagonal_scatter", input)
    shape = tuple(x._value.shape)
    nd = len(shape)
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise FgradRuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rows, cols, m = _diag_positions(shape, offset, d1, d2)
    rest = [i for i in builtins.range(nd) if i not in (d1, d2)]
    want = tuple(shape[i] for i in rest) + (m,)

    def values(v, s):
        # the diagonal's positions, with src's last dim (the diagonal) spread over (d1, d2)
        w = fnp.moveaxis(v, (d1, d2), (-2, -1))
        w = fnp.at_set(w, (Ellipsis, rows, cols), s)
        return fnp.moveaxis(w, (-2, -1), (d1, d2))
    if tuple(src._value.shape) != want if isinstance(src, Tensor) else True:
        raise FgradRuntimeError(f"diagonal_scatter(): expected src to have a size equal to the diagonal of self. "
                                f"src size = {list(getattr(src, 'shape', ()))}, diagonal size = {list(want)}")
    return call("DiagonalScatterBackward0", values, (x, src))


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """Matrices whose `offset` diagonal (over the new dims dim1, dim2) holds input's last dim
    (DiagEmbedBackward0).

    Args:
        input: a Tensor (its last dim becomes the diagonals).
        offset: the diagonal.
        dim1, dim2: where the matrices' two dims go in the result.

    Returns:
        A Tensor with one more dim than input.
    """
    x = _input("diag_embed", input)
    nd = x._value.ndim + 1
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise FgradRuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (x._value.shape[-1] if x._value.ndim else 1) + builtins.abs(offset)

    def values(v):
        if fnp.ndim(v) == 0:
            v = fnp.reshape(v, (1,))
        k = fnp.shape(v)[-1]
        r0, c0 = builtins.max(0, -offset), builtins.max(0, offset)
        out = fnp.zeros(fnp.shape(v)[:-1] + (n, n), dtype_of(v))
        out = fnp.at_set(out, (Ellipsis, np.arange(r0, r0 + k), np.arange(c0, c0 + k)), v)
        return fnp.moveaxis(out, (-2, -1), (d1, d2))
    return call("DiagEmbedBackward0", values, (x,))


def diagflat(input: Tensor, offset: int = 0):
    """A 2-D tensor with input's elements (flattened) on its `offset` diagonal (PyTorch's
    composition: a view of the elements, then diag_embed).

    Args:
        input: a Tensor (flattened).
        offset: the diagonal (0 main, > 0 above, < 0 below).

    Returns:
        A 2-D Tensor.
    """
    return diag_embed(_input("diagflat", input).contiguous().view(-1), offset)


def fliplr(input: Tensor):
    """`input` reversed along dim 1 (at least 2-D).

    Args:
        input: a Tensor.

    Returns:
        A new Tensor.
    """
    x = _input("fliplr", input)
    if x._value.ndim < 2:
        raise FgradRuntimeError("Input must be >= 2-d.")
    return O.flip(x, [1])


def flipud(input: Tensor):
    """`input` reversed along dim 0 (at least 1-D).

    Args:
        input: a Tensor.

    Returns:
        A new Tensor.
    """
    x = _input("flipud", input)
    if x._value.ndim < 1:
        raise FgradRuntimeError("Input must be >= 1-d.")
    return O.flip(x, [0])


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False):
    """The r-length combinations of a 1-D tensor's elements, as rows, in
    itertools.combinations' order (PyTorch's composition: masked_select of a meshgrid, then
    stack).

    Args:
        input: a 1-D Tensor.
        r: the combinations' length, >= 0.
        with_replacement: allow repeated elements.

    Returns:
        A Tensor of shape (count, r).
    """
    x = _input("combinations", input)
    if x._value.ndim != 1:
        raise FgradRuntimeError(f"Expect a 1D vector, but got shape {list(x._value.shape)}")
    if r < 0:
        raise FgradRuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return C.empty(0, dtype=x.dtype)
    # PyTorch's composition: a meshgrid of r views of the input, each masked to the index
    # tuples in increasing (non-decreasing with replacement) order, stacked as columns
    n = x._value.shape[0]
    grid = np.indices((n,) * r)
    mask = np.ones((n,) * r, np.bool_)
    for k in builtins.range(r - 1):
        mask &= grid[k] <= grid[k + 1] if with_replacement else grid[k] < grid[k + 1]
    m = C.tensor(mask, device=x.device)
    cols = []
    for k in builtins.range(r):
        shape = [1] * r
        shape[k] = n
        cols.append(x.view(*shape).expand(*(n,) * r).masked_select(m))
    return O.stack(cols, 1)


def broadcast_tensors(*tensors):
    """The tensors expanded to their broadcast shape (views; a tensor of that shape as it is).

    Args:
        *tensors: Tensors.

    Returns:
        A tuple of Tensors.
    """
    ts = _tensors("broadcast_tensors", tensors)
    shape = O.broadcast_shapes(*(tuple(t._value.shape) for t in ts))
    return tuple(t if tuple(t._value.shape) == tuple(shape) else O.expand(t, *shape) for t in ts)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0):
    """Pieces of the given sizes along `dim` (views, SplitWithSizesBackward0).

    Args:
        input: a Tensor.
        split_sizes: the pieces' sizes, summing to input's size at dim.
        dim: the dimension.

    Returns:
        A tuple of views.
    """
    return O.split(_input("split_with_sizes", input), list(split_sizes), dim)


def _unsafe(outs):
    return tuple(_own(o) for o in outs)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0):
    """split, as new tensors outside view tracking (UnsafeSplitBackward0).

    Args:
        input: a Tensor.
        split_size: the pieces' size (the last may be smaller).
        dim: the dimension.

    Returns:
        A tuple of Tensors.
    """
    x = _input("unsafe_split", input)
    pieces = O.split(x, split_size, dim)
    sizes = [p._value.shape[_dim(dim, x._value.ndim)] for p in pieces]
    return _copies_of_split("UnsafeSplitBackward0", x, sizes, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0):
    """split_with_sizes, as new tensors (UnsafeSplitWithSizesBackward0).

    Args:
        input: a Tensor.
        split_sizes: the pieces' sizes, summing to input's size at dim.
        dim: the dimension.

    Returns:
        A tuple of Tensors.
    """
    return _copies_of_split("UnsafeSplitWithSizesBackward0", _input("unsafe_split_with_sizes", input),
                            list(split_sizes), dim, check=True)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0):
    """chunk, as new tensors (UnsafeSplitBackward0).

    Args:
        input: a Tensor.
        chunks: the number of pieces.
        dim: the dimension.

    Returns:
        A tuple of Tensors.
    """
    x = _input("unsafe_chunk", input)
    sizes = [p._value.shape[_dim(dim, x._value.ndim)] for p in O.chunk(x, chunks, dim)]
    return _copies_of_split("UnsafeSplitBackward0", x, sizes, dim)


def _copies_of_split(name, x, sizes, dim, check=False):
    shape = tuple(x._value.shape)
    d = _dim(dim, len(shape))
    if check and builtins.sum(sizes) != shape[d]:
        raise FgradRuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {shape[d]} (input tensor's "
                                f"size at dimension {d}), but got split_sizes={sizes}")
    bounds = np.cumsum([0] + [int(s) for s in sizes]).tolist()
    idxs = [(slice(None),) * d + (slice(a, b),) for a, b in zip(bounds[:-1], bounds[1:])]
    return _unsafe(call(name, lambda v: tuple(fnp.copy(fnp.getitem(v, i)) for i in idxs), (x,)))


def tensordot(a: Any, b: Tensor, dims: Sequence[int] = 2):
    """The sum of products over the last `dims` dims of `a` and first of `b`, or over the
    paired dims ([dims_a], [dims_b]), as PyTorch composes it (permutes, reshapes, one mm).

    Args:
        a, b: Tensors.
        dims: an int, or two lists of dims.

    Returns:
        A Tensor.
    """
    x, y = _input("tensordot", a), b
    if not isinstance(y, Tensor):
        raise FgradTypeError(f"tensordot(): argument 'b' must be Tensor, not {type(y).__name__}")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int) and dims < 0:
        raise FgradRuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
    if x._value.dtype != y._value.dtype:
        raise FgradRuntimeError(f"expected both tensors of tensordot to have one dtype, but got {x.dtype} and "
                                f"{y.dtype}")
    na, nb = x._value.ndim, y._value.ndim
    if isinstance(dims, int):
        da, db = list(builtins.range(na - dims, na)), list(builtins.range(dims))
    else:
        da = list(dims[0]) if isinstance(dims[0], (list, tuple)) else [dims[0]]
        db = list(dims[1]) if isinstance(dims[1], (list, tuple)) else [dims[1]]
    if len(da) != len(db):
        raise FgradRuntimeError(f"both dimension lists should have same length, got {da} and {db}")
    da, db = [_dim(d, na) for d in da], [_dim(d, nb) for d in db]
    # PyTorch's composition: size-1 contracted dims summed away, both operands permuted to
    # (free, contracted) / (contracted, free) and reshaped to matrices, one mm, a reshape
    csize = 1
    for i, j in zip(da, db):
        s1, s2 = x._value.shape[i], y._value.shape[j]
        if s2 == 1:
            x = x.sum(i, True, dtype=x.dtype)
        elif s1 == 1:
            y = y.sum(j, True, dtype=y.dtype)
        elif s1 != s2:
            raise FgradRuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {i} and "
                                    f"second has size {s2} in dim {j}")
        else:
            csize *= s1
    free_a = [i for i in builtins.range(na) if i not in da]
    free_b = [j for j in builtins.range(nb) if j not in db]
    sizes = [x._value.shape[i] for i in free_a] + [y._value.shape[j] for j in free_b]
    ma = x.permute(*free_a, *da).reshape(math.prod(sizes[:len(free_a)]), csize)
    mb = y.permute(*db, *free_b).reshape(csize, math.prod(sizes[len(free_a):]))
    return O.mm(ma, mb).reshape(*sizes)


def vdot(input: Tensor, other: Any):
    """sum(conj(input) * other) of two 1-D tensors of one dtype (VdotBackward0).

    Args:
        input: a 1-D Tensor.
        other: a 1-D Tensor of input's size and dtype.

    Returns:
        A 0-d Tensor.
    """
    x = _input("vdot", input)
    if not isinstance(other, Tensor):
        raise FgradTypeError(f"vdot(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    if x._value.ndim != 1 or other._value.ndim != 1:
        raise FgradRuntimeError(f"1D tensors expected, but got {x._value.ndim}D and {other._value.ndim}D tensors")
    if x._value.dtype != other._value.dtype:
        raise FgradRuntimeError(f"vdot : expected both vectors to have same dtype, but found {x.dtype} and "
                                f"{other.dtype}")
    if x._value.shape != other._value.shape:
        raise FgradRuntimeError(f"inconsistent tensor size, expected tensor [{x._value.shape[0]}] and src "
                                f"[{other._value.shape[0]}] to have the same number of elements, but got "
                                f"{x._value.shape[0]} and {other._value.shape[0]} elements respectively")
    return call("VdotBackward0", fnp.vdot, (x, other))


def _multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices (the first may be a row, the last a column vector,
    each 1-D), multiplied in the cheapest order as PyTorch composes it: the 1-D ends
    unsqueezed, matrix products, a view to the result's shape. torch.linalg.multi_dot and
    chain_matmul check their arguments and call it.

    Args:
        tensors: two or more Tensors, 2-D but for the ends.

    Returns:
        A Tensor.
    """
    dt = P.result_dtype(*tensors)
    ts = [t if t._value.dtype == dt else t.to(D.of_np(dt)) for t in tensors]
    out_shape = []
    if ts[0]._value.ndim == 1:
        ts[0] = ts[0].unsqueeze(0)
    else:
        out_shape.append(ts[0]._value.shape[0])
    if ts[-1]._value.ndim == 1:
        ts[-1] = ts[-1].unsqueeze(-1)
    else:
        out_shape.append(ts[-1]._value.shape[1])
    if len(ts) == 3:  # PyTorch's rule for three: (A B) C unless A (B C) is strictly cheaper
        a, b = ts[0]._value.shape
        c, d = ts[2]._value.shape
        if a * c * (b + d) > b * d * (a + c):
            return _matmul(ts[0], _matmul(ts[1], ts[2])).view(tuple(out_shape))
        return _matmul(_matmul(ts[0], ts[1]), ts[2]).view(tuple(out_shape))
    split = chain_order([ts[0]._value.shape[0]] + [t._value.shape[1] for t in ts])

    def product(i, j):
        if i == j:
            return ts[i]
        return _matmul(product(i, split[i][j]), product(split[i][j] + 1, j))
    return product(0, len(ts) - 1).view(tuple(out_shape))


def chain_matmul(*matrices):
    """The product of 2-D matrices (PyTorch deprecates it for linalg.multi_dot, whose
    composition it is: products in the cheapest order, then a view).

    Args:
        *matrices: 2-D Tensors with matching inner sizes.

    Returns:
        Their product, a 2-D Tensor.
    """
    ms = _tensors("chain_matmul", matrices)
    if not ms:
        raise FgradRuntimeError("chain_matmul(): Expected one or more matrices")
    for m in ms:
        if m._value.ndim != 2:
            raise FgradRuntimeError(f"Tensor dimension is {m._value.ndim}, expected 2 instead.")
    if len(ms) == 1:
        return O.clone(ms[0])
    return _multi_dot(ms)


def adjoint(input: Tensor):
    """The conjugate transpose of the last two dims (a view; TransposeBackward0 for reals).

    Args:
        input: a Tensor.

    Returns:
        A view of input with its last two dims swapped and conjugated.
    """
    x = _input("adjoint", input)
    if x._value.ndim < 2:
        raise FgradRuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D "
                                "tensor." if x._value.ndim == 1 else "tensor.adjoint() is only supported on "
                                "matrices or batches of matrices. Got 0-D tensor.")
    return O.conj(O.transpose(x, -2, -1))


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: float = 1, alpha: float = 1):
    """beta * input + alpha * outer(vec1, vec2) (AddrBackward0).

    Args:
        input: a Tensor broadcastable to (n, m).
        vec1: a 1-D Tensor (n,).
        vec2: a 1-D Tensor (m,).
        beta, alpha: numbers.

    Returns:
        A Tensor (n, m).
    """
    x = _input("addr", input)
    for nm, v in (("vec1", vec1), ("vec2", vec2)):
        if not isinstance(v, Tensor) or v._value.ndim != 1:
            raise FgradRuntimeError(f"addr: Expected 1-D argument {nm}, but got "
                                    f"{getattr(getattr(v, '_value', None), 'ndim', type(v).__name__)}-D")

    def values(i, a, b):
        prod = fnp.outer(a, b)
        if alpha != 1:
            prod = fnp.multiply(prod, alpha, policy=P)
        if beta == 0:
            return fnp.broadcast_to(prod, fnp.shape(prod))
        return fnp.add(i if beta == 1 else fnp.multiply(i, beta, policy=P), prod, policy=P)
    return call("AddrBackward0", values, (x, vec1, vec2))


def vander(x: Any, N: Any = None, increasing: bool = False):
    """The Vandermonde matrix of a 1-D tensor: columns x**(N-1), ..., x**0 (reversed with
    `increasing`); integer tensors stay int64 (FlipBackward0).

    Args:
        x: a 1-D Tensor.
        N: the number of columns (len(x) by default).
        increasing: powers increasing from left to right.

    Returns:
        A Tensor (len(x), N).
    """
    t = _input("vander", x)
    if t._value.ndim != 1:
        raise FgradRuntimeError("x must be a one-dimensional tensor.")
    n = t._value.shape[0] if N is None else int(N)
    if n < 0:
        raise FgradRuntimeError("N must be non-negative.")

    def values(v):
        dt = dtype_of(v)
        if dt.kind in "biu":
            v = cast(v, _I64)
        if n == 0:
            return fnp.zeros((fnp.shape(v)[0], 0), dtype_of(v))
        cols = [fnp.ones_like(v)] + [v] * (n - 1)
        out = fnp.cumprod(fnp.stack(cols, axis=1), axis=1)
        return out if increasing else fnp.flip(out, 1)
    return call("FlipBackward0" if not increasing else "CumprodBackward0", values, (t,))


def constant_pad_nd(input: Tensor, pad, value: Any = 0):
    """`input` padded with `value`: pad = (last dim's left, right, second-to-last's left,
    right, ...); negative pads crop (ConstantPadNdBackward0).

    Args:
        input: a Tensor.
        pad: a sequence of an even number of ints, at most 2 * input.dim().
        value: the fill value.

    Returns:
        A Tensor.
    """
    x = _input("constant_pad_nd", input)
    pad = [int(p) for p in pad]
    nd = x._value.ndim
    if len(pad) % 2 or len(pad) // 2 > nd:
        raise FgradRuntimeError(f"Length of pad must be even but instead it equals {len(pad)}" if len(pad) % 2
                                else f"Length of pad should be no more than twice the number of dimensions of the "
                                f"input. Pad length is {len(pad)} while the input has {nd} dimensions.")
    widths = [(0, 0)] * nd
    for i in builtins.range(len(pad) // 2):
        widths[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    shape = x._value.shape
    for k, (lo, hi) in enumerate(widths):
        if shape[k] + lo + hi < 0:
            raise FgradRuntimeError(f"The input size {shape[k]}, plus negative padding {lo} and {hi} resulted in a "
                                    f"negative output size, which is invalid. Check dimension {k} of your input.")

    def values(v):
        crop = tuple(slice(builtins.max(-lo, 0), fnp.shape(v)[k] - builtins.max(-hi, 0))
                     for k, (lo, hi) in enumerate(widths))
        v = fnp.getitem(v, crop)
        grow = [(builtins.max(lo, 0), builtins.max(hi, 0)) for lo, hi in widths]
        return fnp.pad(v, grow, constant_values=np.asarray(value).astype(dtype_of(v)))
    return call("ConstantPadNdBackward0", values, (x,))


def channel_shuffle(input: Tensor, groups: int):
    """Channels (dim 1) of (N, C, *) regrouped: viewed as (groups, C / groups), transposed
    (ChannelShuffleBackward0... PyTorch's native op).

    Args:
        input: a Tensor with at least 3 dims.
        groups: divides C.

    Returns:
        A Tensor of input's shape.
    """
    x = _input("channel_shuffle", input)
    shape = tuple(x._value.shape)
    if len(shape) < 3:
        raise FgradRuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                                f"sizes {list(shape)}")
    if groups <= 0:
        raise FgradRuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if shape[1] % groups:
        raise FgradRuntimeError(f"Number of channels must be divisible by groups. Got {shape[1]} channels and "
                                f"{groups} groups.")

    def values(v):
        w = fnp.reshape(v, (shape[0], groups, shape[1] // groups) + shape[2:])
        return fnp.reshape(fnp.swapaxes(w, 1, 2), shape)
    return call("ChannelShuffleBackward0", values, (x,))


def index_reduce(input: Tensor, dim: int, index: int, source: Tensor, reduce: str, *, include_self: bool = True):
    """`input` with source's slices along `dim` reduced into the positions `index` by 'prod',
    'mean', 'amax' or 'amin' (without include_self, input's own values at those positions
    take no part; integer means divide with floor) (IndexReduceBackward0).

    Args:
        input: a Tensor.
        dim: the dimension.
        index: a 1-D int64 Tensor, one position per slice of source along dim.
        source: a Tensor of input's shape with index.numel() at dim.
        reduce: 'prod', 'mean', 'amax' or 'amin'.
        include_self: whether input's values take part.

    Returns:
        A Tensor.
    """
    x = _input("index_reduce", input)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise FgradRuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                                f"{reduce}.")
    pos, d = _along("index_reduce", x, dim, index, source)
    dt = x._value.dtype
    shape = tuple(x._value.shape)
    ident = {"prod": 1, "mean": 0}.get(reduce)
    if ident is None:
        if dt.kind == "f":
            ident = -np.inf if reduce == "amax" else np.inf
        else:
            info = np.iinfo(dt) if dt.kind in "iu" else None
            ident = (info.min if reduce == "amax" else info.max) if info else (reduce == "amin")
    n_idx = int(np.asarray(pos[-1]).shape[0]) if shape else 1

    def values(v, s):
        base = v if include_self else fnp.at_set(v, pos, np.asarray(ident, dt))
        if reduce != "mean":
            out = _REDUCE_UPDATES[reduce](base, pos, s)
            return out
        total = fnp.at_add(base, pos, s)
        ones = np.ones(shape[:d] + (n_idx,) + shape[d + 1:], _I64)
        count = fnp.at_add(np.full(shape, 1 if include_self else 0, _I64), pos, ones)
        count = cast(fnp.maximum(count, np.ones((), _I64)), dt)
        return fnp.floor_divide(total, count, policy=P) if dt.kind in "biu" else fnp.true_divide(total, count,
                                                                                                policy=P)
    return call("IndexReduceBackward0", values, (x, source))


def put(input: Tensor, index: int, source: Tensor, accumulate: bool = False):
    """`input` with `source`'s values written (or added, with `accumulate`) at the flat
    positions `index` of the flattened input (PutBackward0).

    Args:
        input: a Tensor.
        index: an int64 Tensor of flat positions (negative counts from the end).
        source: a Tensor with index's number of elements, of input's dtype.
        accumulate: add instead of write (repeated positions add up).

    Returns:
        A Tensor of input's shape.
    """
    x = _input("put", input)
    if not isinstance(index, Tensor) or index._value.dtype != _I64:
        raise FgradRuntimeError(f"put_(): Expected a long tensor for index, but got "
                                f"{getattr(index, 'dtype', type(index).__name__)}")
    if not isinstance(source, Tensor) or source._value.dtype != x._value.dtype:
        raise FgradRuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                                f"{x.dtype} and source.dtype = {getattr(source, 'dtype', type(source).__name__)}")
    if index._value.size != source._value.size:
        raise FgradRuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                                f"source.numel() = {source._value.size}, index.numel() = {index._value.size}")
    n = x._value.size
    flat = np.asarray(index.detach().numpy()).reshape(-1)
    if flat.size and (flat.min() < -n or flat.max() >= n):
        bad = int(flat[(flat < -n) | (flat >= n)][0])
        raise FgradIndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    flat = flat % builtins.max(n, 1)
    shape = tuple(x._value.shape)

    def values(v, s):
        f = fnp.reshape(v, (-1,))
        s = fnp.reshape(s, (-1,))
        f = fnp.at_add(f, flat, s) if accumulate else fnp.at_set(f, flat, s)
        return fnp.reshape(f, shape)
    return call("PutBackward0", values, (x, source))


def as_strided(input: Tensor, size: Sequence[int], stride: Any, storage_offset: int | None = None):
    """A tensor of `size` whose element (i0, i1, ...) is element offset + sum(ik * stride[k])
    of input's elements in row-major order (AsStridedBackward0). fgrad tensors hold their
    own values, so this reads input's row-major layout: PyTorch's result for a contiguous
    input; a non-contiguous input is refused (call .contiguous() first).

    Args:
        input: a contiguous Tensor.
        size: the result's shape.
        stride: a stride per result dim, in elements.
        storage_offset: the first element's position (0 by default).

    Returns:
        A Tensor.
    """
    x = _input("as_strided", input)
    pos = _strided_positions("as_strided", x, size, stride, storage_offset)
    return call("AsStridedBackward0", lambda v: fnp.take(fnp.reshape(v, (-1,)), pos), (x,))


def _strided_positions(name: str, x: Tensor, size: Sequence[int], stride: Any, storage_offset: int | None):
    """The row-major element positions as_strided(x, size, stride, storage_offset) reads, an
    int64 array of shape `size`, with PyTorch's checks (x contiguous: see as_strided)."""
    if not O.is_contiguous(x):
        raise FgradRuntimeError(f"{name}(): fgrad reads the input's row-major elements, so the input must be "
                                "contiguous; call .contiguous() on it first")
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise FgradRuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes, {len(stride)} strides")
    if builtins.any(s < 0 for s in stride):
        raise FgradRuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                                f"{list(stride)}")
    off = int(storage_offset or 0)
    pos = np.full(size, off, np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        pos = pos + (np.arange(n) * st).reshape((n,) + (1,) * (len(size) - k - 1))
    if pos.size and pos.max() >= x._value.size:
        raise FgradRuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off} "
                                f"require {int(pos.max()) + 1} elements, but the input has {x._value.size}")
    return pos


def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Any, storage_offset: int | None = None):
    """`input` with `src` written at the positions as_strided(input, size, stride,
    storage_offset) reads (a new tensor; AsStridedScatterBackward0; input contiguous).

    Args:
        input: a contiguous Tensor.
        src: a Tensor of shape `size`, of input's dtype.
        size, stride, storage_offset: as for as_strided.

    Returns:
        A Tensor of input's shape.
    """
    x = _input("as_strided_scatter", input)
    view = as_strided(x.detach(), size, stride, storage_offset)  # (its checks)
    if not isinstance(src, Tensor) or tuple(src._value.shape) != tuple(view._value.shape):
        raise FgradRuntimeError(f"as_strided_scatter: expected src to have a size equal to the slice of self. src "
                                f"size = {list(getattr(src, 'shape', ()))}, slice size = {list(view._value.shape)}")
    off = int(storage_offset or 0)
    pos = np.full(tuple(int(n) for n in size), off, np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        pos = pos + (np.arange(int(n)) * int(st)).reshape((int(n),) + (1,) * (len(size) - k - 1))
    shape = tuple(x._value.shape)

    def values(v, s):
        return fnp.reshape(fnp.at_set(fnp.reshape(v, (-1,)), pos.reshape(-1), fnp.reshape(s, (-1,))), shape)
    return call("AsStridedScatterBackward0", values, (x, src))


def as_strided_copy(input: Tensor, size: Sequence[int], stride: Any, storage_offset: int | None = None):
    """as_strided as a new tensor (AsStridedBackward0_copy).

    Args:
        input: a contiguous Tensor.
        size, stride, storage_offset: as for as_strided.

    Returns:
        A new Tensor.
    """
    x = _input("as_strided_copy", input)
    pos = _strided_positions("as_strided_copy", x, size, stride, storage_offset)
    return _own(call("AsStridedBackward0_copy", lambda v: fnp.take(fnp.reshape(v, (-1,)), pos), (x,)))


_gradient_args = ("spacing", "dim", "edge_order")


def gradient(input: Tensor, *, spacing: Any = 1, dim: int = None, edge_order: int = 1):
    """The derivative estimated by central differences inside and one-sided ones at the edges
    (of order `edge_order`), along each of `dim` (every dim by default).

    Args:
        input: a Tensor.
        spacing: a number (the step of every dim), a list of numbers (one per dim), or a
            list of 1-D Tensors of coordinates (one per dim).
        dim: an int, a list of ints, or None.
        edge_order: 1 or 2.

    Returns:
        A tuple of Tensors of input's shape, one per dim.
    """
    x = _input("gradient", input)
    nd = x._value.ndim
    dims = list(builtins.range(nd)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [_dim(d, nd) for d in dims]
    if edge_order not in (1, 2):
        raise FgradRuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    for d in dims:
        if x._value.shape[d] < edge_order + 1:
            raise FgradRuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1, got "
                                    f"size {x._value.shape[d]} at dim {d}")
    sp = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(sp) == 1 and len(dims) > 1:
        sp = list(sp) * len(dims)
    if len(sp) != len(dims):
        raise FgradRuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                                f"dim arguments to have the same length, but got a spacing argument of length "
                                f"{len(sp)} and a dim argument of length {len(dims)}.")
    coords = [t for t in sp if isinstance(t, Tensor)]

    def values(v, *cs):
        it = iter(cs)
        args = [next(it) if isinstance(t, Tensor) else t for t in sp]
        v = _float(v)
        outs = fnp.gradient(v, *args, axis=tuple(dims), edge_order=edge_order)
        return tuple(outs) if isinstance(outs, (list, tuple)) else (outs,)
    return tuple(call("CatBackward0", values, (x, *coords)))


def unravel_index(indices: Tensor, shape: Any):
    """The coordinates in `shape` of flat (row-major) `indices`.

    Args:
        indices: an integer Tensor (or int) of flat positions, each in [-prod(shape), prod(shape)).
        shape: the shape (a sequence of ints, or an int).

    Returns:
        A tuple of int64 Tensors of indices' shape, one per dim.
    """
    idx = indices if isinstance(indices, Tensor) else C.tensor(indices)
    if idx._value.dtype.kind not in "iu":
        raise FgradTypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise FgradValueError(f"'shape' cannot have negative values, but got {shape}")
    total = int(np.prod(shape))
    flat = np.asarray(idx.detach().numpy())
    if flat.size and (flat.min() < -total or flat.max() >= total):
        raise FgradValueError(f"'indices' must be in range [{-total}, {total - 1}] for shape {shape}")

    def values(v):
        v = fnp.remainder(cast(v, _I64), np.int64(builtins.max(total, 1)))
        out = []
        for s in reversed(shape):
            out.append(fnp.remainder(v, np.int64(s)) if s else v)
            v = fnp.floor_divide(v, np.int64(builtins.max(s, 1)))
        return tuple(reversed(out))
    return tuple(call(None, values, (idx,)))


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1):
    """nonzero(input) with exactly `size` rows: cut, or padded with `fill_value`.

    Args:
        input: a Tensor.
        size: the number of rows, >= 0.
        fill_value: the padding value.

    Returns:
        An int64 Tensor (size, input.dim()).
    """
    x = _input("nonzero_static", input)
    if size < 0:
        raise FgradRuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    nz = np.argwhere(np.asarray(x.detach().numpy()))[:size]
    nd = builtins.max(x._value.ndim, 1) if x._value.ndim else 0
    out = np.full((size, nd), fill_value, np.int64)
    out[:len(nz)] = nz.reshape(len(nz), nd)
    return C.tensor(out)


_histogramdd_t = _result_tuple("histogramdd", ("hist", "bin_edges"))


def histogramdd(input: Tensor, bins: Any = 10, *, range: Any = None, weight: Tensor = None, density: bool = False):
    """The D-dimensional histogram of the rows of `input` (N, D) (not differentiable).

    Args:
        input: a float Tensor (..., D), its last dim the coordinates.
        bins: an int (each dim), a list of D ints, or a list of D 1-D Tensors of edges.
        range: a flat sequence (min0, max0, min1, max1, ...) of the bins' range.
        weight: a Tensor of the points' weights.
        density: normalise to a probability density.

    Returns:
        torch.return_types.histogramdd(hist, bin_edges): hist, and a list of D edge Tensors.
    """
    x = _input("histogramdd", input)
    if x._value.dtype.kind != "f":
        raise FgradRuntimeError(f"torch.histogramdd: input tensor should be floating point, got {x.dtype}")
    pts = np.asarray(x.detach().numpy(), np.float64)
    d = pts.shape[-1]
    pts = pts.reshape(-1, d)
    b = [t.detach().numpy() for t in bins] if isinstance(bins, (list, tuple)) and bins and \
        isinstance(bins[0], Tensor) else bins
    rng = None
    if range is not None:
        rng = [(range[2 * k], range[2 * k + 1]) for k in builtins.range(d)]
    elif not (isinstance(b, list) and b and isinstance(b[0], np.ndarray)):
        rng = [(float(pts[:, k].min()), float(pts[:, k].max())) if len(pts) else (0.0, 1.0)
               for k in builtins.range(d)]
    w = None if weight is None else np.asarray(weight.detach().numpy(), np.float64).reshape(-1)
    hist, edges = np.histogramdd(pts, b, range=rng, weights=w, density=density)
    dt = x._value.dtype
    return _histogramdd_t(C.tensor(hist.astype(dt)), [C.tensor(e.astype(dt)) for e in edges])


_PAD_MODES = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}


def _stft_window(window, win_length: int, n_fft: int, name: str):
    """(window values padded to n_fft, centred; whether it is real), from a Tensor or None."""
    if win_length <= 0 or win_length > n_fft:
        raise FgradRuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window._value.ndim != 1 or window._value.shape[0] != win_length):
        raise FgradRuntimeError(f"{name}: expected a 1D window tensor of size equal to win_length={win_length}, but "
                                f"got window with size {list(window._value.shape)}")
    left = (n_fft - win_length) // 2
    return left, n_fft - win_length - left


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None):
    """The short-time Fourier transform: the FFT of each windowed frame of n_fft samples, frames
    hop_length apart (the signal padded by n_fft // 2 at both ends with `center`).

    Args:
        input: a 1-D (L,) or 2-D (B, L) Tensor, real or complex.
        n_fft: the FFT size.
        hop_length: the frame step (n_fft // 4 by default).
        win_length: the window's size (n_fft by default), centred in the frame.
        window: a 1-D Tensor of win_length (ones by default).
        center: pad the signal so that frame t is centred at t * hop_length.
        pad_mode: "reflect", "constant", "replicate" or "circular" (with center).
        normalized: scale by n_fft ** -0.5.
        onesided: keep the n_fft // 2 + 1 non-negative frequencies (the default for real input and window).
        return_complex: a complex result (required for real input); False: a real one with a last dim of 2.

    Returns:
        A Tensor (B?, n_freq, n_frames) (complex), or (B?, n_freq, n_frames, 2).
    """
    x = _input("stft", input)
    complex_in = x._value.dtype.kind == "c" or (window is not None and window._value.dtype.kind == "c")
    if return_complex is None:
        if not complex_in:
            raise FgradRuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                                    "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if x._value.ndim not in (1, 2):
        raise FgradRuntimeError(f"stft: expected a 1D or 2D tensor, got {x._value.ndim}D")
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if hop <= 0:
        raise FgradRuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    left, right = _stft_window(window, win, n_fft, "stft")
    if pad_mode not in _PAD_MODES:
        raise FgradRuntimeError(f"stft: pad_mode must be one of {sorted(_PAD_MODES)}, got {pad_mode!r}")
    sided = (not complex_in) if onesided is None else bool(onesided)
    if sided and complex_in:
        raise FgradRuntimeError("Cannot have onesided output if window or input is complex")
    length = x._value.shape[-1] + (2 * (n_fft // 2) if center else 0)
    if n_fft <= 0 or n_fft > length:
        raise FgradRuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    frames = 1 + (length - n_fft) // hop
    batched = x._value.ndim == 2
    if x._value.dtype.kind not in "fc":
        x = x.to(D.get_default_dtype())
    # PyTorch's composition, op by op (its graph): the signal viewed as 3-D, padded by n_fft // 2
    # at both ends and viewed back; one row for a 1-D signal; the frames as a strided view;
    # times the window (centred in n_fft); the FFT of each frame; (B, freq, frame) by an
    # in-place transpose; the row squeezed away in place; a real view last
    if center:
        p = n_fft // 2
        if pad_mode == "reflect" and p >= x._value.shape[-1]:
            raise FgradRuntimeError(f"stft: reflect padding {p} (n_fft // 2) must be less than the signal's length "
                                    f"{x._value.shape[-1]}; pass center=False or pad_mode='constant'")
        nd = x._value.ndim
        mode = _PAD_MODES[pad_mode]
        pad_name = {"constant": "ConstantPadNdBackward0", "circular": "CopySlices"}.get(pad_mode) or \
            f"{'Reflection' if pad_mode == 'reflect' else 'Replication'}Pad1DBackward0"
        padded = call(pad_name, lambda v: fnp.pad(v, ((0, 0), (0, 0), (p, p)), mode=mode),
                      (x.view(*(1,) * (3 - nd), *x._value.shape),))
        x = padded.view(*padded._value.shape[3 - nd:])
    rows = x if batched else x.unsqueeze(0)
    # (PyTorch's as_strided over the rows' own strides reads frame t as elements t * hop ...
    # of each row, whatever the layout: those positions of the row-major elements here)
    b, n = rows._value.shape
    pos = (np.arange(b) * n)[:, None, None] + (np.arange(frames) * hop)[None, :, None] + np.arange(n_fft)
    framed = call("AsStridedBackward0", lambda v: fnp.take(fnp.reshape(v, (-1,)), pos), (rows,))
    w = window
    if win < n_fft:
        w = C.zeros(n_fft, dtype=window.dtype if window is not None else x.dtype, device=x.device)
        w[left:left + win] = 1 if window is None else window
    if w is not None:
        framed = framed.mul(w)
    norm = "ortho" if normalized else "backward"
    if framed._value.dtype.kind == "c":
        out = call("FftC2CBackward0", lambda v: fnp.fft.fft(v, axis=-1, norm=norm), (framed,))
    elif sided:
        out = call("FftR2CBackward0", lambda v: fnp.fft.rfft(v, axis=-1, norm=norm), (framed,))
    else:
        out = call("FftR2CBackward0", lambda v: fnp.fft.fft(v, axis=-1, norm=norm), (framed,))
    out = out.transpose_(1, 2)
    if not batched:
        out = out.squeeze_(0)
    return out if return_complex else O.view_as_real(out)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool | None = None,
          length: int | None = None, return_complex: bool = False):
    """The inverse of stft: each frame's inverse FFT, windowed, overlap-added and divided by the
    overlap-added squared window (which must not vanish).

    Args:
        input: a complex Tensor (B?, n_freq, n_frames).
        n_fft, hop_length, win_length, window, center, normalized: as given to stft.
        onesided: input holds the n_fft // 2 + 1 non-negative frequencies (the default when
            n_freq != n_fft).
        length: the signal's length (cut or zero-padded to it).
        return_complex: a complex signal (input was the stft of one).

    Returns:
        A Tensor (B?, length).
    """
    z = _input("istft", input)
    if z._value.dtype.kind != "c":
        raise FgradRuntimeError("istft requires a complex-valued input tensor")
    if z._value.ndim not in (2, 3):
        raise FgradRuntimeError(f"istft: expected a 2D or 3D complex tensor, got {z._value.ndim}D")
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    left, right = _stft_window(window, win, n_fft, "istft")
    n_freq, frames = z._value.shape[-2:]
    sided = (n_freq != n_fft) if onesided is None else bool(onesided)
    if sided and n_freq != n_fft // 2 + 1:
        raise FgradRuntimeError(f"istft: expected the frequency dim to have size n_fft // 2 + 1 = {n_fft // 2 + 1} "
                                f"for a onesided input, got {n_freq}")
    if sided and return_complex:
        raise FgradRuntimeError("cannot have onesided output if window or input is complex")
    total = n_fft + hop * (frames - 1)
    wv = np.ones(win) if window is None else np.asarray(window.detach().numpy())
    wfull = np.pad(wv, (left, right))
    envelope = np.zeros(total, np.result_type(wfull.dtype, np.float32))
    for k in builtins.range(frames):
        envelope[k * hop:k * hop + n_fft] += np.abs(wfull) ** 2
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else min(start + int(length), total)
    if np.abs(envelope[start:end]).min(initial=1.0) < 1e-11:
        raise FgradRuntimeError("istft: window overlap add min below 1e-11: the window's overlap does not cover "
                                "the signal (NOLA fails); use another window or hop_length")
    batched = z._value.ndim == 3
    args = (z,) if window is None else (z, window)

    def values(v, w=None):
        v = v if batched else fnp.expand_dims(v, 0)
        f = fnp.swapaxes(v, -1, -2)  # (B, frames, n_freq)
        f = fnp.fft.irfft(f, n=n_fft, axis=-1) if sided else fnp.fft.ifft(f, n=n_fft, axis=-1)
        if not sided and not return_complex:
            f = fnp.real(f)
        if normalized:
            f = fnp.multiply(f, n_fft ** 0.5)
        w = np.ones(win, dtype_of(f).type(0).real.dtype) if w is None else w
        f = fnp.multiply(f, fnp.pad(w, ((left, right),)))
        y = builtins.sum(fnp.pad(fnp.take(f, k, axis=1), ((0, 0), (k * hop, total - k * hop - n_fft)))
                         for k in builtins.range(frames))
        y = fnp.true_divide(fnp.getitem(y, (slice(None), slice(start, end))), envelope[start:end].astype(
            dtype_of(f).type(0).real.dtype))
        if length is not None and end - start < int(length):
            y = fnp.pad(y, ((0, 0), (0, int(length) - (end - start))))
        return y if batched else fnp.squeeze(y, 0)
    return call("DivBackward0", values, args)


# --- copies of views (PyTorch's *_copy functions: a new tensor, grad_fn "<view's>_copy") -----------

def _copy_op(name: str, grad_fn, fn):
    def op(input, *args, **kwargs):
        x = _input(name, input)
        label = grad_fn(x, *args, **kwargs) if callable(grad_fn) else grad_fn
        out = call(label, lambda v: fn(v, *args, **kwargs), (x,))
        return tuple(_own(o) for o in out) if isinstance(out, tuple) else _own(out)
    op.__name__ = op.__qualname__ = name
    view = name[:-len("_copy")]
    op.__doc__ = (f"torch.{name}(input, ...): torch.{view}(input, ...) as a new tensor, not a view of input.\n\n"
                  f"Args:\n    input: a Tensor.\n    *args, **kwargs: torch.{view}'s other arguments.\n\n"
                  f"Returns:\n    A Tensor (or a tuple of them, as torch.{view} returns) with storage of its own.")
    return op


def _squeeze_values(v, dim=None):
    if dim is None:
        return fnp.squeeze(v)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    nd = fnp.ndim(v)
    keep = tuple(d % nd for d in dims if fnp.shape(v)[d % nd] == 1) if nd else ()
    return fnp.squeeze(v, keep) if keep else v


def _unfold_values(v, dimension, size, step):
    nd = fnp.ndim(v)
    d = dimension % nd if nd else 0
    if nd == 0:
        return fnp.reshape(v, (1,))
    n = fnp.shape(v)[d]
    count = (n - size) // step + 1
    pieces = [_slice_dim(v, i * step, i * step + size, axis=d) for i in builtins.range(count)]
    return fnp.moveaxis(fnp.stack(pieces, axis=d), d + 1, -1)


def _slice_values(v, dim=0, start=None, end=None, step=1):
    return fnp.getitem(v, (slice(None),) * (dim % fnp.ndim(v)) + (slice(start, end, step),))


def _split_values(v, split_size, dim=0):
    n = fnp.shape(v)[dim]
    d = dim % fnp.ndim(v)
    if isinstance(split_size, int):
        bounds = list(builtins.range(0, n, split_size)) + [n] if split_size else [0, n]
    else:
        bounds = np.cumsum([0] + list(split_size)).tolist()
    return tuple(_slice_dim(v, a, b, axis=d) for a, b in zip(bounds[:-1], bounds[1:]))


alias_copy = _copy_op("alias_copy", "AliasBackward0_copy", fnp.copy)
diagonal_copy = _copy_op("diagonal_copy", "DiagonalBackward0_copy",
                         lambda v, offset=0, dim1=0, dim2=1: fnp.diagonal(v, offset, dim1, dim2))
expand_copy = _copy_op("expand_copy", "ExpandBackward0_copy",
                       lambda v, size, *, implicit=False: fnp.broadcast_to(
                           v, tuple(fnp.shape(v)[i - (len(size) - fnp.ndim(v))] if s == -1 else s
                                    for i, s in enumerate(size))))
permute_copy = _copy_op("permute_copy", "PermuteBackward0_copy", lambda v, dims: fnp.transpose(v, tuple(dims)))
select_copy = _copy_op("select_copy", "SelectBackward0_copy", lambda v, dim, index: fnp.take(v, index, axis=dim))
slice_copy = _copy_op("slice_copy", "SliceBackward0_copy", _slice_values)
squeeze_copy = _copy_op("squeeze_copy", lambda x, dim=None: "SqueezeBackward0_copy" if dim is None else
                        "SqueezeBackward1_copy" if isinstance(dim, int) else "SqueezeBackward2_copy", _squeeze_values)
t_copy = _copy_op("t_copy", "TBackward0_copy", lambda v: fnp.transpose(v))
transpose_copy = _copy_op("transpose_copy", "TransposeBackward0_copy",
                          lambda v, dim0, dim1: fnp.swapaxes(v, dim0, dim1))
unbind_copy = _copy_op("unbind_copy", "UnbindBackward0_copy",
                       lambda v, dim=0: tuple(fnp.take(v, i, axis=dim) for i in builtins.range(fnp.shape(v)[dim])))
unfold_copy = _copy_op("unfold_copy", "UnfoldBackward0_copy", _unfold_values)
unsqueeze_copy = _copy_op("unsqueeze_copy", "UnsqueezeBackward0_copy", lambda v, dim: fnp.expand_dims(v, dim))
view_copy = _copy_op("view_copy", "ViewBackward0_copy", lambda v, size: fnp.reshape(v, tuple(size)))
split_copy = _copy_op("split_copy", "SplitBackward0_copy", _split_values)
split_with_sizes_copy = _copy_op("split_with_sizes_copy", "SplitWithSizesBackward0_copy", _split_values)
narrow_copy = _copy_op("narrow_copy", "NarrowCopyBackward0",
                       lambda v, dim, start, length: _slice_dim(v, start % fnp.shape(v)[dim] if start < 0
                                                                      else start,
                                                                      (start % fnp.shape(v)[dim] if start < 0
                                                                       else start) + length, axis=dim % fnp.ndim(v)))


def view_as_real_copy(input: Tensor):
    """view_as_real as a new tensor (ViewAsRealBackward0_copy).

    Args:
        input: a complex Tensor.

    Returns:
        A new real Tensor with a last dim of 2.
    """
    O._complex_input(_input("view_as_real_copy", input), "view_as_real")
    return _own(call("ViewAsRealBackward0_copy", lambda z: fnp.stack([fnp.real(z), fnp.imag(z)], axis=-1), (input,)))


def view_as_complex_copy(input: Tensor):
    """view_as_complex as a new tensor (ViewAsComplexBackward0_copy).

    Args:
        input: a float32/float64 Tensor with a last dim of 2.

    Returns:
        A new complex Tensor.
    """
    out = O.view_as_complex(_input("view_as_complex_copy", input))
    return _own(call("ViewAsComplexBackward0_copy", fnp.copy, (out,))) if out._node is not None else _own(out)


def detach_copy(input: Tensor):
    """A new tensor with input's values and no history.

    Args:
        input: a Tensor.

    Returns:
        A Tensor with a copy of input's values, without history.
    """
    return _own(O.clone(_input("detach_copy", input).detach()))


def detach(input: Tensor):
    """input.detach(): the values without history (shares them).

    Args:
        input: a Tensor.

    Returns:
        A Tensor sharing input's values, without history.
    """
    return _input("detach", input).detach()


def fill(input: Tensor, value: Any):
    """A new tensor of input's shape and dtype filled with `value` (a number or a 0-d Tensor,
    through which the gradient flows) (FillBackward0; the input gets a zero gradient).

    Args:
        input: a Tensor.
        value: a number or a 0-d Tensor.

    Returns:
        A Tensor.
    """
    x = _input("fill", input)
    if isinstance(value, Tensor):
        if value._value.ndim:
            raise FgradRuntimeError(f"fill only supports 0-dimension value tensor but got tensor with "
                                    f"{value._value.ndim} dimensions.")
        return call("FillBackward1", lambda v, c: fnp.add(fnp.multiply(v, 0), cast(c, dtype_of(v))), (x, value))
    return call("FillBackward0", lambda v: _constant_pieces(fnp.full(fnp.shape(v), value, dtype_of(v)), v), (x,))


def rsub(input: Tensor, other: Any, *, alpha: float = 1):
    """other - alpha * input (RsubBackward0 / RsubBackward1).

    Args:
        input: a Tensor.
        other: a Tensor or a number.
        alpha: input's factor.

    Returns:
        A Tensor.
    """
    return O.rsub(_input("rsub", input), other, alpha=alpha)


# --- in-place functions (torch.relu_(x) is x.relu_()) ----------------------------------------------

def _inplace(name: str, fn):
    """torch.<name>(input, ...): `fn`'s result written into input (checked as Tensor methods
    check in-place ops: leaves that require grad are refused under grad mode)."""
    def op(input, *args, **kwargs):
        x = _input(name, input)
        check_inplace(x)
        return commit_inplace(x, fn(x, *args, **kwargs))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input, ...): torch.{name[:-1]} written into `input`, which is returned.\n\n"
                  f"Args:\n    input: a Tensor (not a leaf that requires grad, under grad mode).\n\nReturns:\n"
                  "    input.")
    return op


_INPLACE_FUNCTIONS = {
    "abs_": O.abs, "acos_": O.acos, "acosh_": O.acosh, "arccos_": O.acos, "arccosh_": O.acosh, "arcsin_": O.asin,
    "arcsinh_": O.asinh, "arctan_": O.atan, "arctanh_": O.atanh, "asin_": O.asin, "asinh_": O.asinh,
    "atan_": O.atan, "atanh_": O.atanh, "ceil_": O.ceil, "clamp_": O.clamp, "clamp_max_": O.clamp_max,
    "clamp_min_": O.clamp_min, "clip_": O.clamp, "conj_physical_": O.conj_physical, "cos_": O.cos,
    "cosh_": O.cosh, "deg2rad_": deg2rad, "erf_": O.erf, "erfc_": erfc, "exp2_": O.exp2,  # noqa: F821
    "exp_": O.exp, "expm1_": O.expm1, "fix_": O.trunc, "floor_": O.floor, "frac_": O.frac, "gcd_": gcd,
    "i0_": i0, "lcm_": lcm, "ldexp_": ldexp, "log10_": O.log10, "log1p_": O.log1p, "log2_": O.log2,
    "log_": O.log, "logit_": on_copy(O.logit), "nan_to_num_": nan_to_num, "neg_": O.neg,
    "negative_": O.neg, "rad2deg_": rad2deg, "reciprocal_": O.reciprocal, "relu_": O.relu,  # noqa: F821
    "round_": O.round, "rsqrt_": O.rsqrt, "sigmoid_": O.sigmoid, "sin_": O.sin, "sinc_": sinc,  # noqa: F821
    "sinh_": O.sinh, "sqrt_": O.sqrt, "square_": O.square, "tan_": O.tan, "tanh_": O.tanh,
    "trunc_": O.trunc, "xlogy_": on_copy(O.xlogy), "addmv_": O.addmv, "index_put_": O.index_put,
}
globals().update({n: _inplace(n, f) for n, f in _INPLACE_FUNCTIONS.items()})


def copy_values(input: Tensor, src: Tensor) -> Tensor:
    """What `input.copy_(src)` writes, recorded as PyTorch's CopyBackwards: one node over
    (input's old history, src), `src` cast to input's dtype and broadcast to its shape. The
    write overwrites every entry, so input's old history gets zeros; its edge stays, as
    PyTorch's does (the leaf below it then gets a zero gradient, not None). The gradient
    reads neither value, so later writes into either leave the node valid.

    Args:
        input: the Tensor written into.
        src: a Tensor on input's device, broadcastable to input's shape.

    Returns:
        A Tensor of input's shape and dtype (the values to commit into input).
    """
    if compute_dtype(input._value.dtype) != input._value.dtype and src._value.dtype != input._value.dtype:
        # (the boundary rounds a result to bfloat16 & co. when its operands all have that dtype:
        # src converted first, a ToCopyBackward0 between it and the node)
        src = O._to_dtype(src, input._value.dtype)
    return call("CopyBackwards", _copied, (input, src), operands=(0, 1), saves=())


@replayable
def _copied(old, s):
    # (old's dtype: bfloat16's float32 stand-in inside the boundary, which rounds the result)
    return _lax_select(np.bool_(True), fnp.broadcast_to(cast(s, dtype_of(old)), fnp.shape(old), policy=P), old)


def overwrite(grad_fn: str, input: Tensor, values: Tensor, others: Sequence = ()) -> Tensor:
    """`values`, to be written over every entry of `input`, recorded as PyTorch records an
    in-place op whose result has no derivative (a random fill, a comparison written in place):
    one node `grad_fn` over input's old history and the Tensors among `others` (its other
    operands, in order), each of which gets zeros. The edges stay, so a leaf below them gets a
    zero gradient, not None.

    Args:
        grad_fn: PyTorch's node name (UniformBackward0, EqBackward1, ...).
        input: the Tensor written into.
        values: a Tensor of input's shape that requires no grad (the values to write).
        others: the op's other arguments; its Tensors become the node's further inputs.

    Returns:
        A Tensor of input's shape and dtype (the values to commit into input).
    """
    ops = tuple(o for o in others if isinstance(o, Tensor))
    if compute_dtype(input._value.dtype) != input._value.dtype:
        # (as in copy_values: operands of input's dtype, so the boundary rounds the result to it)
        ops = tuple(O._to_dtype(o, input._value.dtype) if o._value.dtype.kind in "fc" else o for o in ops)
    return call(grad_fn, _overwritten, (input, values, *ops), operands=(0, *[2 + k for k, _ in enumerate(ops)]),
                saves=())


@replayable
def _overwritten(a, c, *others):
    dt = dtype_of(a)
    return cast(_constant_pieces(cast(c, dt), a, *others), dt)


def _fill_inplace(name: str, input, value, grad_fn: str):
    """`input` filled with `value` in place (torch.fill_/zero_ and the Tensor methods). With
    history, the write is one node over input's old history alone, as PyTorch's (`grad_fn`:
    FillBackward2 or ZeroBackward0; FillBackward3 for a 0-d Tensor value, which is its second
    input); without, the values are written where they are."""
    x = _input(name, input)
    check_inplace(x)
    v = x._value
    grad = _state.grad_enabled
    if isinstance(value, Tensor):
        if value._value.ndim:
            raise FgradRuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                                    f"{value._value.ndim} dimensions.")
        if grad and (value._requires_grad or x._requires_grad):
            # (on a view, the base's CopySlices wraps this node, as PyTorch's wraps FillBackward3)
            if not value._requires_grad and value._value.dtype != v.dtype:
                value = value.to(x.dtype)
            dt = compute_dtype(v.dtype)
            return commit_inplace(x, call("FillBackward3", lambda a, c: _constant_pieces(
                fnp.broadcast_to(cast(c, dt), fnp.shape(a)), a), (x, value)))
        value = value.item()
    if not (grad and x._requires_grad) and _writable(v):
        v.fill(value)
        x._vbox[0] += 1
        return x
    full = C.full(tuple(v.shape), value, dtype=x.dtype, device=x.device)
    if grad and x._requires_grad and x._view is None:  # (a view: CopySlices over its base, tensor.py)
        return commit_inplace(x, overwrite(grad_fn, x, full))
    return commit_inplace(x, full, grad_fn)


def zero_(input: Tensor):
    """input filled with zeros in place (returned; ZeroBackward0 when input has history).

    Args:
        input: a Tensor.

    Returns:
        input.
    """
    return _fill_inplace("zero_", input, 0, "ZeroBackward0")


def fill_(input: Tensor, value: Any):
    """input filled with `value` (a number or a 0-d Tensor) in place (returned; FillBackward2
    when input has history).

    Args:
        input: a Tensor.
        value: a number or a 0-d Tensor.

    Returns:
        input.
    """
    return _fill_inplace("fill_", input, value, "FillBackward2")


def detach_(input: Tensor):
    """input detached from its history in place (returned).

    Args:
        input: a Tensor.

    Returns:
        input, detached.
    """
    return _input("detach_", input).detach_()


# --- queries -----------------------------------------------------------------------------------------

def is_complex(input: Tensor) -> bool:
    """Whether input's dtype is complex.

    Args:
        input: a Tensor.

    Returns:
        bool.
    """
    return _input("is_complex", input)._value.dtype.kind == "c"


def is_signed(input: Tensor) -> bool:
    """Whether input's dtype holds negative values (every dtype but bool and uint8).

    Args:
        input: a Tensor.

    Returns:
        bool.
    """
    return _input("is_signed", input)._value.dtype.kind not in "bu"


def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is not zero (an error for other sizes, as PyTorch's).

    Args:
        input: a one-element Tensor.

    Returns:
        bool.
    """
    x = _input("is_nonzero", input)
    if x._value.size == 0:
        raise FgradRuntimeError("Boolean value of Tensor with no values is ambiguous")
    if x._value.size > 1:
        raise FgradRuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(x.item() != 0)


def is_same_size(input: Tensor, other: Any) -> bool:
    """Whether the two tensors have one shape.

    Args:
        input: a Tensor.
        other: a Tensor.

    Returns:
        bool.
    """
    return tuple(_input("is_same_size", input)._value.shape) == tuple(_input("is_same_size", other)._value.shape)


def is_neg(input: Tensor) -> bool:
    """False: fgrad negates eagerly, so no tensor carries a lazy negation bit.

    Args:
        input: a Tensor.

    Returns:
        False.
    """
    _input("is_neg", input)
    return False


def resolve_neg(input: Tensor):
    """input itself: there is no lazy negation to resolve (see is_neg).

    Args:
        input: a Tensor.

    Returns:
        input.
    """
    return _input("resolve_neg", input)


def is_inference(input: Tensor) -> bool:
    """Whether input was made under inference_mode (fgrad marks no tensor so: False).

    Args:
        input: a Tensor.

    Returns:
        bool.
    """
    _input("is_inference", input)
    return False


def get_device(input: Tensor) -> int:
    """The CUDA device index of input, -1 for a CPU tensor.

    Args:
        input: a Tensor.

    Returns:
        An int.
    """
    d = _input("get_device", input).device
    return -1 if d.type == "cpu" else (d.index or 0)


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules allow `from_` to `to` in an in-place op: no float to
    integer, no complex to non-complex, nothing but bool to bool.

    Args:
        from_: an fgrad.torch dtype.
        to: an fgrad.torch dtype.

    Returns:
        bool.
    """
    for nm, dt in (("from", from_), ("to", to)):
        if not isinstance(dt, D.dtype):
            raise FgradTypeError(f"can_cast(): argument '{nm}' must be torch.dtype, not {type(dt).__name__}")
    order = "biufc"
    a, b = D.np_dtype(from_).kind, D.np_dtype(to).kind
    ka, kb = order.index(a.replace("u", "i")), order.index(b.replace("u", "i"))
    return ka <= kb


def result_type(tensor1: Any, tensor2: Any):
    """The dtype PyTorch's promotion gives an op on the two operands (Tensors or numbers).

    Args:
        tensor1: a Tensor or a number.
        tensor2: a Tensor or a number.

    Returns:
        An fgrad.torch dtype.
    """
    a, b = _operand(tensor1), _operand(tensor2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = C.tensor(a)
    return D.of_np(P.result_dtype(a._value if isinstance(a, Tensor) else a,
                                    b._value if isinstance(b, Tensor) else b))


# --- creation ------------------------------------------------------------------------------------------

def range(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, **kwargs):
    """Values from `start` to `end` INCLUSIVE in steps of `step`, in the default float dtype
    (PyTorch deprecates it for arange, whose end is exclusive).

    Args:
        start: the first value (the end, when it is the only argument).
        end: the last value reached.
        step: the spacing, not 0.
        dtype, device, requires_grad: as for torch.arange.

    Returns:
        A 1-D Tensor of floor((end - start) / step) + 1 values.
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise FgradRuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise FgradRuntimeError(f"upper bound and larger bound inconsistent with step sign (start={start}, "
                                f"end={end}, step={step})")
    n = int(math.floor((end - start) / step)) + 1
    npd = D.np_dtype(dtype) if dtype is not None else D.np_dtype(D.get_default_dtype())
    vals = (start + step * np.arange(n, dtype=np.float64)).astype(npd)
    return C.tensor(vals, dtype=dtype or D.get_default_dtype(), device=device, requires_grad=requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kwargs):
    """A 0-d tensor holding the number `s`, in the default float dtype unless `dtype` is given.

    Args:
        s: a number (or a one-element Tensor).
        dtype, device, requires_grad: as for torch.tensor.

    Returns:
        A 0-d Tensor.
    """
    if isinstance(s, Tensor):
        s = s.item()
    return C.tensor(s, dtype=dtype or D.get_default_dtype(), device=device, requires_grad=requires_grad)


def empty_strided(size: Sequence[int], stride: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **kwargs):
    """An uninitialised tensor of `size` (fgrad tensors are row-major; `stride` must fit in
    len(size) entries, and the values are zeros).

    Args:
        size: the shape.
        stride: one stride per dim (checked for its length only).
        dtype, device, requires_grad: as for torch.empty.

    Returns:
        A Tensor.
    """
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise FgradRuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes, {len(stride)} strides")
    return C.empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False, **kwargs):
    """An uninitialised tensor of `size`; `physical_layout` (a permutation of its dims) is
    checked, the memory stays row-major.

    Args:
        size: the shape.
        physical_layout: a permutation of range(len(size)).
        dtype, device, requires_grad: as for torch.empty.

    Returns:
        A Tensor.
    """
    size, layout = tuple(size), tuple(physical_layout)
    if sorted(layout) != list(builtins.range(len(size))):
        raise FgradRuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                                f"or it is not a permutation: size {list(size)}, physical_layout {list(layout)}")
    return C.empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


def _window(name: str, formula):
    def op(window_length: int, periodic: bool = True, *args, dtype=None, layout=None, device=None,
           requires_grad: bool = False, pin_memory: bool = False):
        if window_length < 0:
            raise FgradRuntimeError(f"{name} requires non-negative window_length, got window_length="
                                    f"{window_length}")
        dt = dtype or D.get_default_dtype()
        if D.np_dtype(dt).kind not in "f":
            raise FgradRuntimeError(f"{name} expects floating point dtypes, got: {dt}")
        if window_length == 0:
            vals = np.zeros(0)
        elif window_length == 1:
            vals = np.ones(1)
        else:
            n = window_length + 1 if periodic else window_length
            vals = formula(np.arange(n, dtype=np.float64), n, *args)[:window_length]
        return C.tensor(vals.astype(D.np_dtype(dt)), dtype=dt, device=device, requires_grad=requires_grad)
    op.__name__ = op.__qualname__ = name
    return op


def _cosine_sum(*a):
    def formula(k, n):
        return builtins.sum(((-1) ** j) * c * np.cos(2 * math.pi * j * k / (n - 1)) for j, c in enumerate(a))
    return formula


bartlett_window = _window("bartlett_window", lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1))
blackman_window = _window("blackman_window", _cosine_sum(0.42, 0.5, 0.08))
hann_window = _window("hann_window", _cosine_sum(0.5, 0.5))
hamming_window = _window("hamming_window", lambda k, n, alpha=0.54, beta=0.46:
                         alpha - beta * np.cos(2 * math.pi * k / (n - 1)))
kaiser_window = _window("kaiser_window", lambda k, n, beta=12.0:
                        np.i0(beta * np.sqrt(np.clip(1 - ((k - (n - 1) / 2) / ((n - 1) / 2)) ** 2, 0, None)))
                        / np.i0(beta))
for _w in (bartlett_window, blackman_window, hann_window, hamming_window, kaiser_window):
    _w.__doc__ = (f"torch.{_w.__name__}(window_length, periodic=True, ...): the window as a 1-D float Tensor "
                  "(periodic: the first window_length values of the symmetric window of window_length + 1).\n\n"
                  "Args:\n    window_length: the number of values.\n    periodic: periodic (for spectral "
                  "analysis) or symmetric (for filter design).\n\nReturns:\n    A Tensor (the default float "
                  "dtype unless dtype= is given).")


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False):
    """A 1-D tensor over an object exposing the buffer protocol (its memory shared, as
    PyTorch's).

    Args:
        buffer: bytes, bytearray, memoryview, array.array, ...
        dtype: the elements' fgrad.torch dtype.
        count: how many elements (-1: all after offset).
        offset: bytes to skip.
        requires_grad: as for torch.tensor.

    Returns:
        A Tensor.
    """
    npd = D.np_dtype(dtype)
    nbytes = memoryview(buffer).nbytes
    if offset < 0 or offset >= nbytes and nbytes:
        raise FgradValueError(f"both buffer length ({nbytes}) and offset ({offset}) must be positive and offset "
                              "must be less than buffer length")
    if count == 0 or (count < 0 and (nbytes - offset) % npd.itemsize):
        raise FgradValueError(f"buffer length ({nbytes - offset} bytes after offset {offset}) must be a multiple of "
                              f"the element size ({npd.itemsize}) when count is -1, and count must not be 0")
    arr = np.frombuffer(buffer, dtype=npd, count=count, offset=offset)
    t = C.from_numpy(arr) if arr.flags.writeable else C.tensor(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


__all__ = sorted({n for n, v in globals().items() if not n.startswith("_") and callable(v)
                  and getattr(v, "__module__", None) == __name__ and not isinstance(v, type)}
                 | {row.split("|")[0].strip() for row in _TABLE.strip().splitlines()} | set(_INPLACE_FUNCTIONS))

# The names installed from tables above, declared for static checkers (pyright, mypy); the stub
# is generated by tools/gen_type_stubs.py and never imported at run time.
import typing as _typing  # noqa: E402
if _typing.TYPE_CHECKING:
    from ._ops_breadth_names import *  # noqa: F401,F403
