"""Python operators and array methods of traced values, each routed to the fgrad.numpy function
of the same meaning (through `array_api`, which fgrad.numpy fills in).

The operators mean what they mean on NumPy arrays (`%` is remainder, with the sign of the
divisor; `&` `|` `^` `~` are bitwise), so a function gives the same result eagerly on arrays
and on the values grad, jvp, jit and vmap trace. The methods take ndarray's signatures:
plain NumPy functions that defer to a method (numpy.sum(x) calls
x.sum(axis=None, dtype=None, out=None), likewise mean, std, var, max, min, prod, any, all,
cumsum, round, clip, reshape, transpose) then work on traced values, as in autograd. What
cannot work (an out= buffer) raises TracerArrayConversionError.
"""
from __future__ import annotations

from typing import Any, Callable

from .avals import is_weak
from .errors import FgradTypeError, TracerArrayConversionError, reject_out


class _ArrayAPI:
    """The array namespace traced values compute with. fgrad.numpy registers itself here when
    it is imported, so that the core defines the operators without importing a layer above."""
    module = None


array_api = _ArrayAPI()


def _fnp():
    return array_api.module


class ArrayMethods:
    """Python operators and ndarray's methods for traced values (the base class of Tracer),
    each one the fgrad.numpy function of the same meaning."""

    __slots__ = ()
    _weak = False  # stands for a Python number (weakly typed); see core.avals.WeakShapedArray


def _weak_result(out, *operands):
    """Python arithmetic on Python numbers gives a Python number, which promotes weakly. Under
    jit those numbers are traced (weakly typed), so the result of an operator whose operands
    are all weak is weak too: x32 * (s * 2.0) stays float32 with or without jit.
    (`_weak` is a cheap flag on tracers: this runs on every operator.)"""
    for v in operands:
        if not is_weak(v):
            return out
    return out._trace.weaken(out) if isinstance(out, ArrayMethods) else out


def _binop(name: str, reverse: bool = False) -> Callable:
    """`self <op> other` (or `other <op> self` for the reflected dunder) as fgrad.numpy.<name>."""
    # (_weak_result inlined: `self` is a traced value, so its `_weak` flag is a plain read;
    # operators run for every op of a traced program)
    if reverse:
        def op(self, other):
            out = getattr(array_api.module, name)(other, self)
            return _weak_result(out, other) if self._weak else out
    else:
        def op(self, other):
            out = getattr(array_api.module, name)(self, other)
            return _weak_result(out, other) if self._weak else out
    op.__name__ = name
    return op


_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "remainder", "divmod": "divmod", "pow": "power",
           "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}
for _dunder, _fn in _BINARY.items():
    setattr(ArrayMethods, f"__{_dunder}__", _binop(_fn))
    setattr(ArrayMethods, f"__r{_dunder}__", _binop(_fn, reverse=True))
# comparisons need no reflected form: Python turns `2 < x` into `x > 2` itself
for _dunder, _fn in {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                     "eq": "equal", "ne": "not_equal"}.items():
    setattr(ArrayMethods, f"__{_dunder}__", _binop(_fn))


def _pow(self, other: Any):
    """self ** other, as ndarray.__pow__: numpy.power, except that NumPy squares a boolean
    array raised to the Python int 2 with numpy.square (its fast path), which gives int8."""
    if type(other) is int and other == 2 and self.dtype.kind == "b":
        return _fnp().square(self)
    return _weak_result(_fnp().power(self, other), self, other)


ArrayMethods.__pow__ = _pow
ArrayMethods.__hash__ = object.__hash__
ArrayMethods.__neg__ = lambda self: _weak_result(_fnp().negative(self), self)
ArrayMethods.__pos__ = lambda self: _fnp().positive(self)
ArrayMethods.__abs__ = lambda self: _weak_result(_fnp().abs(self), self)
ArrayMethods.__invert__ = lambda self: _fnp().invert(self)
# JAX's indexing (out-of-bounds indices clamp; fgrad.numpy.getitem, fgrad.torch's, raises)
ArrayMethods.__getitem__ = lambda self, idx: _fnp()._index.jax_getitem(self, idx)
ArrayMethods.T = property(lambda self: _fnp().transpose(self))


def _setitem(self, idx: Any, value: Any) -> None:
    """Item assignment is refused: traced values are immutable (a write in place would hide
    the old value from the derivative). The error names the functional update to use."""
    raise FgradTypeError(
        f"A traced value ({self.aval}) does not support item assignment (x[idx] = v): values "
        "that fgrad traces are immutable, like JAX arrays. Write the update functionally instead: "
        "x = x.at[idx].set(v) (or .add(v)), or fgrad.numpy.at_set(x, idx, v); it is "
        "differentiable in both x and v.", doc="tracer-setitem")


ArrayMethods.__setitem__ = _setitem


# --- methods with ndarray's signatures ------------------------------------------------------

def _method(name: str) -> Callable:
    """x.<name>(...) as fgrad.numpy.<name>(x, ...): for functions whose signature after the
    array is ndarray.<name>'s (sum(axis, dtype, out, keepdims, initial, where), ...)."""
    def method(self, *args, **kwargs):
        return getattr(_fnp(), name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"fgrad.numpy.{name}(x, ...), with ndarray.{name}'s arguments."
    return method


for _name in ("sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin", "cumsum",
              "any", "all", "round", "squeeze", "swapaxes", "repeat", "take", "dot", "diagonal",
              "trace", "nonzero", "conj", "conjugate"):
    setattr(ArrayMethods, _name, _method(_name))


def _transpose(self, *axes: Any):
    """x.transpose(), x.transpose((1, 0)) or x.transpose(1, 0), as ndarray.transpose."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _fnp().transpose(self, axes if axes != () else None)


def _reshape(self, *shape: Any, order: str = "C", copy: bool | None = None):
    """x.reshape(2, 3) or x.reshape((2, 3)), as ndarray.reshape; C order only, and the copy
    flag is moot (values are immutable)."""
    _check_order(order, "reshape")
    return _fnp().reshape(self, shape[0] if len(shape) == 1 else shape)


def _check_order(order: Any, name: str) -> None:
    if order not in ("C", "A", "K", None):
        raise TracerArrayConversionError(
            f"{name}(order={order!r}) on a traced value: fgrad arrays are laid out in C order only. "
            f"Transpose explicitly instead (e.g. x.T.{name}(...)).", doc="layout-order")


def _ravel(self, order: str = "C"):
    """The flattened array, as ndarray.ravel (C order)."""
    _check_order(order, "ravel")
    return _fnp().ravel(self)


def _flatten(self, order: str = "C"):
    """The flattened array, as ndarray.flatten (C order)."""
    _check_order(order, "flatten")
    return _fnp().ravel(self)


def _clip(self, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any):
    """x.clip(min, max), as ndarray.clip (numpy.clip(x, lo, hi) calls it)."""
    reject_out(out, "clip")
    if kwargs:
        raise TracerArrayConversionError(
            f"clip: ufunc arguments {sorted(kwargs)} are not supported on traced values; "
            "call fgrad.numpy.clip(x, lo, hi) and cast the result if needed.")
    return _fnp().clip(self, min, max)


def _astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
            copy: bool = True):
    """x as `dtype`, as ndarray.astype (only the C layout exists; copy is moot)."""
    _check_order(order, "astype")
    return _fnp().astype(self, dtype)


def _copy(self, order: str = "C"):
    """The value itself: traced values are immutable, so a copy is indistinguishable."""
    _check_order(order, "copy")
    return self


ArrayMethods.transpose = _transpose
ArrayMethods.reshape = _reshape
ArrayMethods.ravel = _ravel
ArrayMethods.flatten = _flatten
ArrayMethods.clip = _clip
ArrayMethods.astype = _astype
ArrayMethods.copy = _copy

ArrayMethods.at = property(lambda self: _fnp().at(self))  # JAX's functional updates x.at[idx]
ArrayMethods.real = property(lambda self: _fnp().real(self))  # numpy.real(x) reads x.real
ArrayMethods.imag = property(lambda self: _fnp().imag(self))
