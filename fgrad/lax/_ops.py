"""lax's primitive functions (JAX's jax.lax.add, dot_general, pad, ...): lax's signatures and
lax's rule that operands already agree. No dtype promotion: arrays of different dtypes are a
TypeError (a Python scalar takes its partner's dtype when it is of the same kind, as JAX's
weak types do); shapes must be equal, a rank-0 operand excepted. They compute with fgrad's
primitives (fgrad.ops) and fgrad.numpy, so every transform goes through them.
"""
from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Sequence

import numpy as np

from .. import numpy as fnp
from ..api import stop_gradient as _tree_stop_gradient
from ..core.avals import PY_NUMBERS
from ..core.errors import FgradNotImplementedError, FgradTypeError, FgradValueError
from ..core.trace import aval_of
from ..numpy._util import as_value
from ..ops import cumulative, linalg, reduce
from ._cumulative import cumlogsumexp, cummax, cummin, cumprod  # noqa: F401 (in __all__)
from ..ops import shape as _shape
from ..ops import elementwise as ew
from ..ops.nn import conv as _conv

__all__ = [
    "stop_gradient", "add", "sub", "mul", "div", "neg", "exp", "log", "sin", "cos", "tanh", "max",
    "min", "pow", "integer_pow", "sqrt", "rsqrt", "abs", "sign", "square", "select",
    "convert_element_type", "broadcast_in_dim", "reshape", "transpose", "slice", "dynamic_slice",
    "dynamic_update_slice", "concatenate", "pad", "reduce_sum", "reduce_max", "reduce_min",
    "dot_general", "dot", "conv_general_dilated", "conv", "conv_with_general_padding",
    "ConvDimensionNumbers", "conv_dimension_numbers", "iota", "full", "cumsum", "cummax", "cummin",
    "cumlogsumexp", "cumprod", "sort", "argmax",
    "clamp", "eq", "ne", "lt", "le", "gt", "ge",
]

_KIND_OF_SCALAR = {bool: "b", int: "iu", float: "f", complex: "c"}


def _operands(name: str, *xs) -> list:
    """The operands as arrays of one dtype and shape (rank-0 ones broadcast), or JAX's
    TypeError. A Python scalar takes the dtype of the first array operand when that dtype is
    of the scalar's kind (an int scalar with an integer array, a float with a float array)."""
    arrays = [as_value(x, f"lax.{name}") for x in xs if type(x) not in PY_NUMBERS]
    like = aval_of(arrays[0]).dtype if arrays else None
    vals = []
    for x in xs:
        if type(x) in PY_NUMBERS:
            fits = like is not None and like.kind in _KIND_OF_SCALAR[type(x)]
            x = np.asarray(x, like if fits else None)
        vals.append(as_value(x, f"lax.{name}"))
    dtypes = [aval_of(v).dtype for v in vals]
    if len(set(dtypes)) > 1:
        raise FgradTypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {', '.join(d.name for d in dtypes)}. "
            f"(Tip: fgrad.numpy.{name} is a similar function that does automatic type promotion "
            "on inputs; or convert with lax.convert_element_type.)")
    shapes = {aval_of(v).shape for v in vals} - {()}
    if len(shapes) > 1:
        ndims = {len(s) for s in shapes}
        why = (f"arrays must have the same number of dimensions, got {ndims}" if len(ndims) > 1
               else f"incompatible shapes for broadcasting: {', '.join(map(str, sorted(shapes)))}")
        raise FgradTypeError(f"{name}: {why}; lax does not broadcast (fgrad.numpy.{name} does)")
    return vals


def _float_only(name: str, x) -> Any:
    v = as_value(np.asarray(x) if type(x) in PY_NUMBERS else x, f"lax.{name}")
    dtype = aval_of(v).dtype
    if dtype.kind not in "fc":
        raise FgradTypeError(f"{name} does not accept dtype {dtype.name}. Accepted dtypes are subtypes "
                             "of floating, complexfloating.")
    return v


def _binary(name: str, fn):
    def op(x: Any, y: Any) -> Any:
        return fn(*_operands(name, x, y))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"lax.{name}(x, y): element-wise, on operands of one dtype and shape (no promotion)."
    return op


def _unary(name: str, fn, float_only: bool = True):
    def op(x: Any) -> Any:
        return fn(_float_only(name, x) if float_only else _operands(name, x)[0])
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"lax.{name}(x): element-wise{' (floating or complex x)' if float_only else ''}."
    return op


def stop_gradient(x: Any) -> Any:
    """x (a pytree of arrays), with a zero derivative."""
    return _tree_stop_gradient(x)


def _lax_div(x, y):
    if aval_of(x).dtype.kind in "iu":  # C's integer division: rounds toward zero
        q = fnp.floor_divide(x, y)
        return fnp.where((fnp.remainder(x, y) != 0) & ((x < 0) != (y < 0)), q + 1, q)
    return ew.div(x, y)


add = _binary("add", fnp.add)
sub = _binary("sub", fnp.subtract)
mul = _binary("mul", fnp.multiply)
div = _binary("div", _lax_div)
max = _binary("max", fnp.maximum)  # noqa: A001 (lax's names)
min = _binary("min", fnp.minimum)  # noqa: A001
eq = _binary("eq", fnp.equal)
ne = _binary("ne", fnp.not_equal)
lt = _binary("lt", fnp.less)
le = _binary("le", fnp.less_equal)
gt = _binary("gt", fnp.greater)
ge = _binary("ge", fnp.greater_equal)
neg = _unary("neg", fnp.negative, float_only=False)
abs = _unary("abs", lambda x: _abs(x), float_only=False)  # noqa: A001
sign = _unary("sign", fnp.sign, float_only=False)
square = _unary("square", fnp.square, float_only=False)
exp = _unary("exp", fnp.exp)
log = _unary("log", fnp.log)
sin = _unary("sin", fnp.sin)
cos = _unary("cos", fnp.cos)
tanh = _unary("tanh", fnp.tanh)
sqrt = _unary("sqrt", fnp.sqrt)
rsqrt = _unary("rsqrt", lambda x: 1 / fnp.sqrt(x))


def pow(x: Any, y: Any) -> Any:  # noqa: A001
    """x ** y element-wise: x floating or complex; y of x's dtype, or of an integer dtype
    (then x's dtype is the result's, as JAX's lax.pow)."""
    x = _float_only("pow", x)
    yv = as_value(np.asarray(y) if type(y) is int else y, "lax.pow")
    if aval_of(yv).dtype.kind in "iu":
        xv, _ = _operands("pow", x, fnp.zeros(aval_of(yv).shape, aval_of(x).dtype))
        return fnp.power(xv, yv).astype(aval_of(x).dtype)
    return fnp.power(*_operands("pow", x, y))


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a Python integer y (repeated multiplication; any numeric x)."""
    return ew.integer_pow(_operands("integer_pow", x)[0], int(y))


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """Element-wise `on_true if pred else on_false`: pred boolean, the cases of one dtype and
    one shape (pred's, or pred is a scalar)."""
    p = as_value(pred, "lax.select")
    if aval_of(p).dtype != np.bool_:
        raise FgradTypeError(f"select pred must be boolean type, got {aval_of(p).dtype.name}")
    t, f = _operands("select", on_true, on_false)
    if aval_of(t).shape != aval_of(f).shape:
        raise FgradTypeError(f"select cases must have the same shapes, got "
                             f"{[aval_of(t).shape, aval_of(f).shape]}.")
    if aval_of(p).shape not in ((), aval_of(t).shape):
        raise FgradTypeError(f"select pred must be scalar or have the same shape as cases, got "
                             f"pred shape {aval_of(p).shape} for cases of shape {aval_of(t).shape}.")
    return fnp.where(p, t, f)


def _abs(x):
    # JAX's lax.abs has derivative 1 at 0 (select(x >= 0, 1, -1)); fgrad.numpy.abs has 0 there,
    # PyTorch's convention. `x + 0` turns -0.0 into +0.0 (abs(-0.0) is +0.0) with derivative 1
    if aval_of(x).dtype.kind == "c":
        return fnp.abs(x)
    return fnp.where(x >= 0, x + 0, -x)


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002 (lax's parameter names)
    """x limited to [min, max] element-wise (min and max: scalars or x's shape, x's dtype).
    As JAX's, the derivative goes to x strictly inside the bounds and to a bound strictly
    outside; at a bound (x == min or x == max) it is zero for all three."""
    lo, v, hi = _operands("clamp", min, x, max)
    tie = _tree_stop_gradient(v)
    return fnp.where((v > lo) & (v < hi), v, fnp.where(lo > v, lo, fnp.where(v > hi, hi, tie)))


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """operand cast to new_dtype (float to int truncates toward zero)."""
    return ew.convert_element_type(as_value(operand, "lax.convert_element_type"), np.dtype(new_dtype))


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """operand broadcast to `shape`: its axis i becomes axis broadcast_dimensions[i]."""
    return _shape.broadcast_in_dim(as_value(operand, "lax.broadcast_in_dim"), tuple(shape),
                                  tuple(broadcast_dimensions))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Any:
    """operand (its axes first permuted by `dimensions`, if given) reshaped to new_sizes."""
    x = as_value(operand, "lax.reshape")
    if dimensions is not None:
        x = _shape.transpose(x, dimensions)
    return _shape.reshape(x, tuple(new_sizes))


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """operand with output axis i = input axis permutation[i]."""
    return _shape.transpose(as_value(operand, "lax.transpose"), tuple(permutation))


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    """operand[start:limit:stride] along every axis (static bounds)."""
    x = as_value(operand, "lax.slice")
    if strides is None or all(s == 1 for s in strides):
        return _shape.slice(x, start_indices, limit_indices)
    return x[tuple(builtins.slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, strides))]


def _clamped_starts(name: str, x, start_indices, sizes) -> list:
    shp = aval_of(x).shape
    if len(start_indices) != len(shp) or len(sizes) != len(shp):
        raise FgradTypeError(f"{name}: operand of shape {shp} needs {len(shp)} start indices and sizes, "
                             f"got {len(start_indices)} and {len(sizes)}")
    # JAX clamps each start into [0, dim - size] (a slice never leaves the array)
    return [fnp.clip(fnp.where(fnp.asarray(s) < 0, fnp.asarray(s) + d, s), 0, d - n)
            for s, d, n in zip(start_indices, shp, sizes)]


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int]) -> Any:
    """The block of static size slice_sizes at start_indices (traced values allowed; each start
    is clamped so the block stays inside operand, negative starts count from the end)."""
    x = as_value(operand, "lax.dynamic_slice")
    sizes = tuple(int(n) for n in slice_sizes)
    for ax, s in enumerate(_clamped_starts("dynamic_slice", x, list(start_indices), sizes)):
        x = fnp.take(x, s + fnp.arange(sizes[ax]), axis=ax)
    return x


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any) -> Any:
    """operand with the block at start_indices replaced by update (starts clamped as in
    dynamic_slice)."""
    x, u = fnp.asarray(operand), as_value(update, "lax.dynamic_update_slice")
    sizes = aval_of(u).shape
    starts = _clamped_starts("dynamic_update_slice", x, list(start_indices), sizes)
    nd = len(sizes)
    idx = tuple(fnp.reshape(s + fnp.arange(n), tuple(n if a == k else 1 for a in range(nd)))
                for k, (s, n) in enumerate(zip(starts, sizes)))  # an open mesh (NumPy's ix_)
    return x.at[idx].set(u)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """The operands (one dtype, equal shapes but along dimension) joined along dimension."""
    return _shape.concatenate(_operands_any_shape("concatenate", operands), int(dimension))


def _operands_any_shape(name: str, xs) -> list:
    vals = [as_value(x, f"lax.{name}") for x in xs]
    dtypes = {aval_of(v).dtype for v in vals}
    if len(dtypes) > 1:
        raise FgradTypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                             f"{', '.join(sorted(d.name for d in dtypes))}.")
    return vals


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """operand padded with padding_value: padding_config[i] = (low, high, interior) for axis i
    (negative low/high crop; interior puts that many values between elements)."""
    x, v = _operands_any_shape("pad", [operand, np.asarray(padding_value, aval_of(as_value(operand)).dtype)
                                       if type(padding_value) in PY_NUMBERS else padding_value])
    if aval_of(v).shape != ():
        raise FgradTypeError(f"pad: padding_value must be a scalar, got shape {aval_of(v).shape}")
    config = [tuple(int(c) for c in cfg) for cfg in padding_config]
    if len(config) != aval_of(x).ndim or builtins.any(len(c) != 3 for c in config):
        raise FgradValueError(f"pad: padding_config must have one (low, high, interior) triple per "
                              f"axis of the operand (shape {aval_of(x).shape}), got {padding_config}")
    for ax, (lo, hi, interior) in enumerate(config):
        if interior < 0:
            raise FgradValueError(f"pad: interior padding must be non-negative, got {interior} for axis {ax}")
        n = aval_of(x).shape[ax]
        if interior and n > 1:  # spread: element k lands at k * (interior + 1)
            filled = fnp.broadcast_to(fnp.expand_dims(v, tuple(range(aval_of(x).ndim))),
                                      tuple((n - 1) * (interior + 1) + 1 if a == ax else d
                                            for a, d in enumerate(aval_of(x).shape)))
            idx = [builtins.slice(None)] * aval_of(x).ndim
            idx[ax] = builtins.slice(None, None, interior + 1)
            x = fnp.asarray(filled).at[tuple(idx)].set(x)
        n = aval_of(x).shape[ax]
        if lo < 0 or hi < 0:  # negative padding crops
            x = fnp.take(x, fnp.arange(builtins.max(-lo, 0), n - builtins.max(-hi, 0)), axis=ax)
        widths = [(0, 0)] * aval_of(x).ndim
        widths[ax] = (builtins.max(lo, 0), builtins.max(hi, 0))
        x = fnp.pad(x, widths, constant_values=v)
    return x


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    """Sum over axes (removed), in operand's dtype."""
    return reduce.reduce_sum(as_value(operand, "lax.reduce_sum"), tuple(int(a) for a in axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    """Maximum over axes (removed)."""
    return reduce.reduce_max(as_value(operand, "lax.reduce_max"), tuple(int(a) for a in axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    """Minimum over axes (removed)."""
    return reduce.reduce_min(as_value(operand, "lax.reduce_min"), tuple(int(a) for a in axes))


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """Contract lhs and rhs: dimension_numbers = ((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch)); output axes: batch, lhs free, rhs free. `precision` is accepted
    (fgrad computes in the operands' dtype); preferred_element_type casts the result."""
    a, b = _operands_any_shape("dot_general", [lhs, rhs])
    out = linalg.dot_general(a, b, dimension_numbers)
    return out if preferred_element_type is None else ew.convert_element_type(out, np.dtype(preferred_element_type))


def dot(lhs: Any, rhs: Any, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None) -> Any:
    """Vector/matrix product (lhs's last axis with rhs's first), or dot_general with
    dimension_numbers."""
    a, b = _operands_any_shape("dot", [lhs, rhs])
    if dimension_numbers is None:
        dimension_numbers = (((aval_of(a).ndim - 1,), (0,)), ((), ()))
    return dot_general(a, b, dimension_numbers, precision, preferred_element_type)


class ConvDimensionNumbers(NamedTuple):
    """A convolution's layouts as axis positions (JAX's lax.ConvDimensionNumbers): for lhs
    and out (batch, feature, spatial...), for rhs (out feature, in feature, spatial...)."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three strings or axis tuples) as ConvDimensionNumbers.

    Args:
        lhs_shape, rhs_shape: the operands' shapes (their rank is what matters).
        dimension_numbers: as conv_general_dilated takes it.
    Returns:
        The ConvDimensionNumbers.
    """
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise FgradValueError(f"conv_dimension_numbers: lhs and rhs need the same rank, got shapes "
                              f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    return ConvDimensionNumbers(*_conv_perms(dimension_numbers, nd, "conv_dimension_numbers"))


def _conv_perms(specs, nd: int, name: str) -> tuple[tuple, tuple, tuple]:
    """(lhs, rhs, out) permutations to (N, C, spatial...), (O, I, spatial...), (N, C,
    spatial...) from JAX's dimension_numbers: None (that layout already), three strings
    ("NWC", "WIO", "NWC": spatial axes in the rhs string's order) or three tuples of axis
    positions (ConvDimensionNumbers)."""
    if specs is None:
        same = tuple(range(nd))
        return same, same, same
    if not (isinstance(specs, (tuple, list)) and len(specs) == 3):
        raise FgradTypeError(f"{name}: dimension_numbers must be None, three strings such as "
                             f"('NHWC', 'HWIO', 'NHWC') or three tuples of axes, got {specs!r:.80}")
    if builtins.all(isinstance(s, str) for s in specs):
        lhs, rhs, out = specs
        if builtins.any(len(s) != nd for s in specs) or sorted(lhs) != sorted(out) or \
                {"N", "C"} - set(lhs) or {"O", "I"} - set(rhs) or \
                sorted(c for c in lhs if c not in "NC") != sorted(c for c in rhs if c not in "OI"):
            raise FgradValueError(f"{name}: dimension_numbers {tuple(specs)} do not describe "
                                  f"{nd}-d operands: each string names every axis once (N and C, "
                                  "O and I, and the same spatial letters)")
        spatial = [c for c in rhs if c not in "OI"]
        return (tuple(lhs.index(c) for c in ["N", "C", *spatial]),
                tuple(rhs.index(c) for c in ["O", "I", *spatial]),
                tuple(out.index(c) for c in ["N", "C", *spatial]))
    perms = tuple(tuple(int(i) for i in p) for p in specs)
    if builtins.any(sorted(p) != list(range(nd)) for p in perms):
        raise FgradValueError(f"{name}: dimension_numbers {perms} must each be a permutation of "
                              f"the {nd} axes")
    return perms


def _conv_canonical(x, w, strides: tuple, dil: tuple, groups: int):
    """Convolution of x (N, C, spatial...) with w (O, I, spatial...), no padding: 2-D directly,
    1-D as 2-D with a unit axis, more axes as a sum over the first spatial axis's taps of
    convolutions of one axis less (the positions that axis's output reads, folded into the
    batch)."""
    xs, ws = aval_of(x).shape, aval_of(w).shape
    nsp = len(xs) - 2
    if nsp == 2:
        return _conv.conv2d(x, w, stride=strides, padding=(0, 0), dilation=dil, groups=groups)
    if nsp == 1:
        out = _conv.conv2d(_shape.reshape(x, (xs[0], xs[1], 1, xs[2])), _shape.reshape(w, (ws[0], ws[1], 1, ws[2])),
                           stride=(1, strides[0]), padding=(0, 0), dilation=(1, dil[0]), groups=groups)
        return _shape.reshape(out, (xs[0], ws[0], aval_of(out).shape[-1]))
    n, depth, k, s, d = xs[0], xs[2], ws[2], strides[0], dil[0]
    od = builtins.max((depth - (k - 1) * d - 1) // s + 1, 0)
    rest = xs[3:]
    total = None
    for tap in range(k):
        lo = tap * d
        xk = fnp.getitem(x, (builtins.slice(None), builtins.slice(None),
                             builtins.slice(lo, lo + (od - 1) * s + 1 if od else lo, s)))
        xk = _shape.transpose(xk, (0, 2, 1) + tuple(range(3, len(xs))))
        xk = _shape.reshape(xk, (n * od, xs[1]) + rest)
        wk = _shape.reshape(_shape.slice(w, (0, 0, tap) + (0,) * len(rest), (ws[0], ws[1], tap + 1) + ws[3:]),
                            (ws[0], ws[1]) + ws[3:])
        ok = _conv_canonical(xk, wk, strides[1:], dil[1:], groups)
        total = ok if total is None else ew.add(total, ok)
    orest = aval_of(total).shape[2:]
    total = _shape.reshape(total, (n, od, ws[0]) + orest)
    return _shape.transpose(total, (0, 2, 1) + tuple(range(3, 3 + len(orest))))


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """N-d convolution (JAX's lax.conv_general_dilated: a cross-correlation), differentiable
    in both operands to any order.

    Args:
        lhs: the input, (N, C, spatial...) unless dimension_numbers says otherwise; 1 to 3
            spatial axes (or more).
        rhs: the kernel, (O, I, spatial...), I = C / feature_group_count.
        window_strides: one stride per spatial axis.
        padding: "VALID", "SAME", "SAME_LOWER" or one (low, high) pair per spatial axis
            (negative values crop).
        lhs_dilation: per spatial axis, the input's dilation (zeros between its entries: a
            transposed convolution); None is 1.
        rhs_dilation: per spatial axis, the kernel's dilation (atrous); None is 1.
        dimension_numbers: None, three strings ("NCH", "OIH", "NCH"; "NHWC", "HWIO", "NHWC";
            ...) or three tuples of axes (ConvDimensionNumbers).
        feature_group_count: grouped convolution's group count.
        batch_group_count: must be 1 (not supported).
        precision: accepted; fgrad computes in the operands' dtype.
        preferred_element_type: the result's dtype, if given.
    Returns:
        The output, in the layout dimension_numbers gives for it.
    """
    name = "conv_general_dilated"
    x, w = _operands_any_shape(name, [lhs, rhs])
    nd = aval_of(x).ndim
    if nd < 3 or aval_of(w).ndim != nd:
        raise FgradValueError(f"{name}: lhs and rhs need the same rank, at least 3 (batch, feature and "
                              f"a spatial axis), got shapes {aval_of(x).shape} and {aval_of(w).shape}")
    if batch_group_count != 1:
        raise FgradNotImplementedError(f"{name}: batch_group_count != 1 is not supported by fgrad")
    nsp = nd - 2
    lhs_perm, rhs_perm, out_perm = _conv_perms(dimension_numbers, nd, name)
    x = _shape.transpose(x, lhs_perm)
    w = _shape.transpose(w, rhs_perm)

    def per_axis(v, what):
        v = (1,) * nsp if v is None else tuple(int(i) for i in v)
        if len(v) != nsp or builtins.any(i < 1 for i in v):
            raise FgradValueError(f"{name}: {what} must give one positive int per spatial axis ({nsp}), got {v}")
        return v
    strides = per_axis(window_strides, "window_strides")
    dil = per_axis(rhs_dilation, "rhs_dilation")
    ldil = per_axis(lhs_dilation, "lhs_dilation")
    groups = int(feature_group_count)
    c, i = aval_of(x).shape[1], aval_of(w).shape[1]
    if groups < 1 or c != i * groups or aval_of(w).shape[0] % groups:
        raise FgradValueError(f"{name}: lhs has {c} features, rhs takes {i} per group and "
                              f"feature_group_count is {groups}: need features = in-features x groups, "
                              f"and out-features ({aval_of(w).shape[0]}) divisible by the groups")
    if isinstance(padding, str):
        if ldil != (1,) * nsp:
            raise FgradValueError(f"{name}: string padding ({padding!r}) with lhs_dilation {ldil} (a "
                                  "transposed convolution) is ambiguous, as in JAX: give the (low, high) "
                                  "pairs explicitly")
        if padding not in ("VALID", "SAME", "SAME_LOWER"):
            raise FgradValueError(f"{name}: padding must be 'VALID', 'SAME', 'SAME_LOWER' or (low, high) "
                                  f"pairs, got {padding!r}")
        pads = []
        for n, k, s, d in zip(aval_of(x).shape[2:], aval_of(w).shape[2:], strides, dil):
            eff = (k - 1) * d + 1
            total = 0 if padding == "VALID" else builtins.max((-(-n // s) - 1) * s + eff - n, 0)
            lo = total // 2 if padding == "SAME" else total - total // 2
            pads.append((lo, total - lo))
    else:
        pads = [tuple(int(v) for v in p) for p in padding]
        if len(pads) != nsp or builtins.any(len(p) != 2 for p in pads):
            raise FgradValueError(f"{name}: padding needs one (low, high) pair per spatial axis ({nsp}), "
                                  f"got {padding!r:.80}")
    if nsp == 2 and ldil == (1, 1) and builtins.all(lo == hi >= 0 for lo, hi in pads):
        out = _conv.conv2d(x, w, stride=strides, padding=tuple(lo for lo, _ in pads), dilation=dil,
                           groups=groups)
    else:
        if builtins.any(p != (0, 0) for p in pads) or ldil != (1,) * nsp:
            x = pad(x, np.zeros((), aval_of(x).dtype),
                    [(0, 0, 0), (0, 0, 0)] + [(lo, hi, ld - 1) for (lo, hi), ld in zip(pads, ldil)])
        out = _conv_canonical(x, w, strides, dil, groups)
    out = _shape.transpose(out, tuple(int(j) for j in np.argsort(out_perm)))
    return out if preferred_element_type is None else ew.convert_element_type(out, np.dtype(preferred_element_type))


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any, precision: Any = None,
         preferred_element_type: Any = None) -> Any:
    """conv_general_dilated with (N, C, spatial...) operands and no dilation (JAX's lax.conv).

    Args:
        lhs, rhs, window_strides, padding, precision, preferred_element_type: as
            conv_general_dilated.
    Returns:
        The (N, O, spatial...) output.
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                              lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
                              precision: Any = None, preferred_element_type: Any = None) -> Any:
    """conv_general_dilated with (N, C, spatial...) operands (JAX's
    lax.conv_with_general_padding).

    Args:
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision,
            preferred_element_type: as conv_general_dilated.
    Returns:
        The (N, O, spatial...) output.
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


def iota(dtype: Any, size: int) -> Any:
    """[0, 1, ..., size - 1] in dtype."""
    return fnp.arange(int(size), dtype=np.dtype(dtype))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:  # noqa: A002
    """An array of `shape` filled with fill_value (in dtype, else fill_value's dtype)."""
    return fnp.full(tuple(shape) if not isinstance(shape, int) else (shape,), fill_value, dtype=dtype)


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Inclusive cumulative sum along axis (from the end when reverse), in operand's dtype."""
    return cumulative.cumsum(as_value(operand, "lax.cumsum"), axis, reverse)


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """operand sorted along dimension (ascending, NaNs last). A sequence of operands is sorted
    together by the first num_keys of them (lexicographically), returned as a tuple."""
    if isinstance(operand, (list, tuple)):
        ops = _operands_any_shape_dims("sort", operand)
        order = None
        for key in reversed(ops[:num_keys]):  # stable sorts, least significant key first
            k = key if order is None else fnp.take_along_axis(key, order, axis=dimension)
            step = fnp.argsort(k, axis=dimension, stable=True)
            order = step if order is None else fnp.take_along_axis(order, step, axis=dimension)
        return tuple(fnp.take_along_axis(o, order, axis=dimension) for o in ops)
    return fnp.sort(as_value(operand, "lax.sort"), axis=dimension, stable=True)


def _operands_any_shape_dims(name: str, xs) -> list:
    vals = [as_value(x, f"lax.{name}") for x in xs]
    if len({aval_of(v).shape for v in vals}) > 1:
        raise FgradTypeError(f"{name}: all operands must have the same shape, got "
                             f"{[aval_of(v).shape for v in vals]}")
    return vals


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the first maximum along axis, in index_dtype."""
    out = reduce.argmax(as_value(operand, "lax.argmax"), int(axis))
    return ew.convert_element_type(out, np.dtype(index_dtype))
