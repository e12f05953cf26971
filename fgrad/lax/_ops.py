"""lax's primitive functions (JAX's jax.lax.add, dot_general, pad, ...): lax's signatures and
lax's rule that operands already agree. No dtype promotion: arrays of different dtypes are a
TypeError (a Python scalar takes its partner's dtype when it is of the same kind, as JAX's
weak types do); shapes must be equal, a rank-0 operand excepted. They compute with fgrad's
primitives (fgrad.ops) and fgrad.numpy, so every transform goes through them.
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

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
    "dot_general", "dot", "conv_general_dilated", "iota", "full", "cumsum", "cummax", "cummin",
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


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """2-D convolution (JAX's lax.conv_general_dilated, cross-correlation): padding "VALID",
    "SAME", "SAME_LOWER" or ((lo, hi), (lo, hi)); rhs_dilation, feature_group_count and
    dimension_numbers as strings ("NCHW", "OIHW", "NCHW") or None. lhs_dilation (transposed
    convolution), batch_group_count and 1-D/3-D convolutions are not supported (an error)."""
    x, w = _operands_any_shape("conv_general_dilated", [lhs, rhs])
    if aval_of(x).ndim != 4:
        raise FgradNotImplementedError(f"conv_general_dilated: fgrad supports 2-D convolutions (4-D operands), "
                                  f"got lhs of shape {aval_of(x).shape}")
    if (lhs_dilation is not None and builtins.any(d != 1 for d in lhs_dilation)) or batch_group_count != 1:
        raise FgradNotImplementedError("conv_general_dilated: lhs_dilation != 1 and batch_group_count != 1 "
                                  "are not supported by fgrad")
    specs = dimension_numbers or ("NCHW", "OIHW", "NCHW")
    if not (isinstance(specs, (tuple, list)) and builtins.all(isinstance(s, str) for s in specs)):
        raise FgradNotImplementedError("conv_general_dilated: give dimension_numbers as three strings "
                                  "such as ('NHWC', 'HWIO', 'NHWC')")
    lhs_spec, rhs_spec, out_spec = specs
    x = _shape.transpose(x, tuple(lhs_spec.index(c) for c in "NCHW"))
    w = _shape.transpose(w, tuple(rhs_spec.index(c) for c in "OIHW"))
    kh, kw = aval_of(w).shape[2:]
    dil = tuple(rhs_dilation or (1, 1))
    strides = tuple(window_strides)
    if isinstance(padding, str):
        pads = []
        for n, k, s, d in zip(aval_of(x).shape[2:], (kh, kw), strides, dil):
            eff = (k - 1) * d + 1
            total = 0 if padding == "VALID" else builtins.max((-(-n // s) - 1) * s + eff - n, 0)
            lo = total // 2 if padding in ("SAME", "VALID") else total - total // 2
            pads.append((lo, total - lo))
    else:
        pads = [tuple(p) for p in padding]
    if builtins.any(lo != hi for lo, hi in pads) or builtins.any(lo < 0 for lo, _ in pads):
        x = pad(x, np.zeros((), aval_of(x).dtype), [(0, 0, 0), (0, 0, 0)] + [(lo, hi, 0) for lo, hi in pads])
        pads = [(0, 0), (0, 0)]
    out = _conv.conv2d(x, w, stride=strides, padding=tuple(lo for lo, _ in pads), dilation=dil,
                       groups=int(feature_group_count))
    out = _shape.transpose(out, tuple("NCHW".index(c) for c in out_spec))
    return out if preferred_element_type is None else ew.convert_element_type(out, np.dtype(preferred_element_type))


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
