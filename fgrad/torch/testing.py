"""torch.testing on fgrad.torch: `assert_close` with PyTorch's rules and messages.

Two inputs are close when their structure matches (sequences by length, mappings by keys, both
recursively), their attributes match (shape always; device, dtype, layout and strides as the
`check_*` flags ask) and every pair of values satisfies |actual - expected| <= atol + rtol * |expected|,
computed in the inputs' dtype. Omitted tolerances come from the dtypes (the looser of the two when
`check_dtype=False` lets them differ), as in PyTorch's table. A failure raises AssertionError with
PyTorch's message (mismatch counts, greatest absolute and relative differences and their indices,
and where in a nested input it happened).
"""
from __future__ import annotations

import cmath
import collections.abc
import math
import warnings
from typing import Any, Callable

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError
from ._tensor import Tensor, as_tensor, promote_types
from ._tensor import empty, randint, view_as_complex
from ._tensor.creation import tensor
from ._tensor import _dtypes as dt

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# (rtol, atol) per dtype when the caller gives neither; other dtypes compare exactly
_TOLERANCES = {
    dt.float16: (1e-3, 1e-5),
    dt.bfloat16: (1.6e-2, 1e-5),
    dt.complex32: (1e-3, 1e-5),
    dt.float32: (1.3e-6, 1e-5),
    dt.float64: (1e-7, 1e-7),
    dt.complex64: (1.3e-6, 1e-5),
    dt.complex128: (1e-7, 1e-7),
}
# A Python number compares with the tolerances of the dtype PyTorch gives it (a bool beside a
# number counts as an int: PyTorch fails there with an internal KeyError)
_NUMBER_DTYPES = {bool: dt.int64, int: dt.int64, float: dt.float64, complex: dt.complex128}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, its message, and the path to the item."""

    def __init__(self, kind: type[Exception], message: str, path: tuple = ()) -> None:
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path

    def error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(str([key]) for key in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This kind of comparison does not handle these inputs; the next kind is tried."""


def _tolerances(dtypes, rtol: float | None, atol: float | None, path: tuple) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", path)
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_lines(equality: bool, abs_diff, rel_diff, atol: float, rtol: float,
                abs_idx=None, rel_idx=None) -> str:
    lines = []
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol),
                                 ("relative", rel_diff, rel_idx, rtol)):
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        lines.append(line if equality else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _scalar_message(actual, expected, rtol: float, atol: float, what: str = "Scalars") -> str:
    equality = rtol == 0 and atol == 0
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return (f"{what} are not {'equal' if equality else 'close'}!\n\n"
            f"Expected {expected} but got {actual}.\n"
            + _diff_lines(equality, abs_diff, rel_diff, atol, rtol))


def _numbers(actual, expected, *, rtol, atol, equal_nan, check_dtype, path) -> Callable[[], None]:
    """The comparison of two numbers (tolerances checked now, values when it is called)."""
    if isinstance(actual, np.number):
        actual = actual.item()
    if isinstance(expected, np.number):
        expected = expected.item()
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol,
                             path)
    return lambda: _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype, path)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype, path) -> None:
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                        f"{type(expected)}.", path)
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    diff = abs(actual - expected)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_message(actual, expected, rtol, atol), path)


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def _isclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """PyTorch's isclose: equal, or both finite-close in the inputs' dtype (NaNs by `equal_nan`)."""
    with np.errstate(invalid="ignore", over="ignore"):
        if a.dtype.kind in "fc":
            tol = a.dtype.type(atol) + np.abs(a.dtype.type(rtol) * b)
            close = (a == b) | (np.isfinite(a - b) & (np.abs(a - b) <= tol))
            if equal_nan:
                close |= np.isnan(a) & np.isnan(b)
            return close
        if rtol == 0 and atol == 0:
            return a == b
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        return np.abs(a64 - b64) <= atol + rtol * np.abs(b64)


def _computable(x: np.ndarray) -> np.ndarray:
    """`x` with ml_dtypes' types (bfloat16, float8_*, complex32) widened to float32/complex64,
    which hold their values exactly, for NumPy's arithmetic."""
    if x.dtype.type.__module__ != "numpy":
        return x.astype(np.complex64 if x.dtype.kind == "c" else np.float32)
    return x


def _tensor_message(a: np.ndarray, b: np.ndarray, close: np.ndarray, rtol: float,
                    atol: float) -> str:
    equality = rtol == 0 and atol == 0
    total, bad = close.size, int(close.size - np.count_nonzero(close))
    head = (f"Tensor-likes are not {'equal' if equality else 'close'}!\n\n"
            f"Mismatched elements: {bad} / {total} ({bad / total:.1%})\n")
    if a.dtype.kind not in "fc":
        a, b = a.astype(np.int64), b.astype(np.int64)
    a, b, ok = a.ravel(), b.ravel(), close.ravel()
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(a - b)
        abs_diff[ok] = 0
        # integer differences divide to the default float dtype, float32, as torch's true division
        rel_diff = (abs_diff / np.abs(b) if a.dtype.kind in "fc"
                    else abs_diff.astype(np.float32) / np.abs(b).astype(np.float32))
        rel_diff[ok] = 0

    def greatest(diff: np.ndarray):
        nan = np.flatnonzero(np.isnan(diff))  # a NaN is the greatest difference, as in torch.max
        flat = int(nan[0]) if nan.size else int(np.argmax(diff))
        return diff[flat].item(), tuple(int(i) for i in np.unravel_index(flat, close.shape))

    (abs_value, abs_idx), (rel_value, rel_idx) = greatest(abs_diff), greatest(rel_diff)
    return head + _diff_lines(equality, abs_value, rel_value, atol, rtol, abs_idx, rel_idx)


def _as_tensor(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    try:
        return as_tensor(x)
    except Exception:
        raise _Unsupported from None


def _tensors(actual, expected, *, allow_subclasses, rtol, atol, path, **checks) -> Callable[[], None]:
    """The comparison of two tensor-likes (inputs and tolerances checked now, the rest when it is
    called); raises _Unsupported when they are not both tensor-likes of related types."""
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    actual, expected = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, path)
    return lambda: _compare_tensors(actual, expected, rtol=rtol, atol=atol, path=path, **checks)


def _compare_tensors(actual, expected, *, rtol, atol, equal_nan, check_device, check_dtype,
                     check_layout, check_stride, path) -> None:
    def mismatch(attribute: str, a, b):
        raise _Mismatch(AssertionError, f"The values for attribute '{attribute}' do not match: "
                                        f"{a} != {b}.", path)

    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    a, b = _host(actual), _host(expected)
    if actual.layout != expected.layout:
        if check_layout:
            mismatch("layout", actual.layout, expected.layout)
    elif check_stride:
        # fgrad keeps a tensor's values as one array: its strides, in elements, are the tensor's
        strides = [tuple(s // x.itemsize for s in x.strides) for x in (a, b)]
        if strides[0] != strides[1]:
            mismatch("stride()", *strides)
    if check_device and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    if actual.dtype != expected.dtype:
        common = promote_types(actual.dtype, expected.dtype).dtype
        a, b = a.astype(common), b.astype(common)
    a, b = _computable(a), _computable(b)
    close = _isclose(a, b, rtol, atol, equal_nan)
    if close.all():
        return
    if a.ndim == 0:
        message = _scalar_message(a.item(), b.item(), rtol, atol)
    else:
        message = _tensor_message(a, b, close, rtol, atol)
    raise _Mismatch(AssertionError, message, path)


def _leaf(actual, expected, path: tuple, options: dict) -> Callable[[], None]:
    """The comparison of two leaves: None, bools, numbers or tensor-likes."""
    if actual is None or expected is None:
        def compare_none() -> None:
            if not (actual is None and expected is None):
                raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)
        return compare_none
    bools = (bool, np.bool_)
    if isinstance(actual, bools) and isinstance(expected, bools):
        def compare_bools() -> None:
            if bool(actual) is not bool(expected):
                raise _Mismatch(AssertionError, f"Booleans mismatch: {bool(actual)} is not "
                                                f"{bool(expected)}", path)
        return compare_bools
    numbers = (int, float, complex, np.number)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        return _numbers(actual, expected, rtol=options["rtol"], atol=options["atol"],
                        equal_nan=options["equal_nan"], check_dtype=options["check_dtype"],
                        path=path)
    try:
        return _tensors(actual, expected, path=path, **options)
    except _Unsupported:
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                                   f"{type(actual)} and {type(expected)}.", path) from None


def _walk(actual, expected, path: tuple, options: dict, out: list) -> None:
    """Check the structure of nested sequences and mappings and append their leaves' comparisons
    to `out` (PyTorch checks the whole structure before it compares any value)."""
    seq = collections.abc.Sequence
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}", path)
        for i in range(len(actual)):
            _walk(actual[i], expected[i], (*path, i), options, out)
        return
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys_a, keys_b = set(actual.keys()), set(expected.keys())
        if keys_a != keys_b:
            raise _Mismatch(AssertionError,
                            "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(keys_b - keys_a)}\n"
                            f"Additional keys in the actual mapping: {sorted(keys_a - keys_b)}",
                            path)
        try:
            keys = sorted(keys_a)
        except TypeError:
            keys = list(keys_a)
        for key in keys:
            _walk(actual[key], expected[key], (*path, key), options, out)
        return
    out.append(_leaf(actual, expected, path, options))


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None) -> None:
    """Assert that `actual` and `expected` are close, as `torch.testing.assert_close` does.

    Args:
        actual: a Tensor, a Python or NumPy number or bool, None, or a sequence or mapping of
            these (NumPy arrays are compared as tensors when both sides are arrays).
        expected: the same kind of input as `actual`.
        allow_subclasses: whether a Tensor subclass may stand for a Tensor.
        rtol: relative tolerance; give it with `atol` or neither. Omitted: by dtype (float16
            1e-3, float32 and complex64 1.3e-6, float64 and complex128 1e-7, others 0).
        atol: absolute tolerance (omitted: float16, float32, complex64 1e-5, float64 and
            complex128 1e-7, others 0).
        equal_nan: whether two NaNs count as equal.
        check_device: whether both tensors must be on the same device.
        check_dtype: whether both must have the same dtype (else both are promoted to a common one).
        check_layout: whether both must have the same layout.
        check_stride: whether strided tensors must have the same strides (fgrad's: those of the
            array holding the values, so a transpose differs from its `contiguous()` copy, but
            `clone()` always makes a contiguous copy).
        msg: a message replacing the generated one, or a function of the generated message.

    Returns:
        None.

    Raises:
        AssertionError: when the inputs are not close, with PyTorch's description of where.
        ValueError: when only one of `rtol` and `atol` is given.
        TypeError: when two inputs cannot be compared (a Tensor and a number, say).
    """
    __tracebackhide__ = True  # pytest shows the caller's line
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    comparisons: list = []
    try:
        _walk(actual, expected, (), options, comparisons)
    except _Mismatch as failure:  # a structure, type or tolerance error: `msg` does not replace it
        raise failure.error() from None
    for compare in comparisons:
        try:
            compare()
        except _Mismatch as failure:
            raise failure.error(msg) from None


# assert_allclose's own defaults, looser than assert_close's
_ALLCLOSE_TOLERANCES = {dt.float16: (1e-3, 1e-3), dt.float32: (1e-4, 1e-5), dt.float64: (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """PyTorch's deprecated `assert_allclose`: `assert_close` with its older defaults.

    Non-tensors become tensors (`expected` in `actual`'s dtype), dtypes need not match, NaNs are
    equal by default, and omitted tolerances are float16 (1e-3, 1e-3), float32 (1e-4, 1e-5),
    float64 (1e-5, 1e-8), others 0. Warns (FutureWarning) as PyTorch does.

    Args:
        actual: a Tensor or something `torch.tensor` accepts.
        expected: the same.
        rtol: relative tolerance (give it with `atol`, or neither).
        atol: absolute tolerance.
        equal_nan: whether two NaNs count as equal.
        msg: a message replacing the generated one ("" keeps it).

    Returns:
        None.
    """
    __tracebackhide__ = True
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
                  "future release. Please use `torch.testing.assert_close()` instead. You can find "
                  "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
                  FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)


_INTEGRAL = (dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64)
_FLOATING = (dt.float16, dt.float32, dt.float64)
_COMPLEX = {dt.complex64: dt.float32, dt.complex128: dt.float64}


def make_tensor(*shape, dtype, device, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None) -> Tensor:
    """A tensor of `shape` with values drawn uniformly from [low, high), as PyTorch's
    `torch.testing.make_tensor` (the same values after the same `torch.manual_seed`).

    Defaults: bool [0, 2), unsigned [0, 10), signed integers [-9, 10), floating and complex
    [-9, 9) (complex: both parts). Bounds outside the dtype's finite range are clamped to it.

    Args:
        *shape: the sizes, or one sequence of them.
        dtype: the dtype (bool, integer, floating or complex).
        device: the device.
        low: the lowest value (inclusive; rounded up for bool and integers).
        high: the bound (exclusive; rounded up for bool and integers).
        requires_grad: whether the result requires grad (floating and complex only).
        noncontiguous: draw twice the last dimension and keep every second value (as PyTorch,
            whose result is then a non-contiguous view).
        exclude_zero: replace zeros with 1 (bool, integers) or the dtype's smallest normal.
        memory_format: passed to `clone`; exclusive with `noncontiguous`.

    Returns:
        The tensor.

    Raises:
        ValueError: for NaN bounds, `low >= high`, an interval outside the dtype, requires_grad
            on bool or integers, or both `noncontiguous` and `memory_format`.
        TypeError: for a dtype make_tensor does not draw.
    """
    def bounds(lowest, highest_exclusive, default_low, default_high):
        lo = default_low if low is None else low
        hi = default_high if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
            raise FgradValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if lo == hi and dtype in _FLOATING + tuple(_COMPLEX):
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                          "types is deprecated since 2.1 and will be removed in 2.3. Use "
                          "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
        elif lo >= hi:
            raise FgradValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        elif hi < lowest or lo >= highest_exclusive:
            raise FgradValueError(f"The value interval specified by `low` and `high` is [{lo}, {hi}), but "
                             f"{dtype} only supports [{lowest}, {highest_exclusive})")
        lo, hi = (min(max(v, lowest), highest_exclusive) for v in (lo, hi))
        return (math.ceil(lo), math.ceil(hi)) if dtype is dt.bool or dtype in _INTEGRAL else (lo, hi)

    def uniform(t: Tensor, lo: float, hi: float) -> Tensor:
        # a range wider than the dtype's largest value is drawn at half size and doubled
        if hi - lo >= float(np.finfo(t.dtype.dtype).max):
            return t.uniform_(lo / 2, hi / 2).mul_(2)
        return t.uniform_(lo, hi)

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise FgradValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and (dtype is dt.bool or dtype in _INTEGRAL):
        raise FgradValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is dt.bool:
        result = randint(*bounds(0, 2, 0, 2), shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = np.iinfo(dtype.dtype)
        # randint cannot draw int64's largest value
        top = int(info.max) + (1 if dtype is not dt.int64 else 0)
        result = randint(*bounds(int(info.min), top, -9, 10), shape, device=device, dtype=dtype)
    elif dtype in _FLOATING or dtype in _COMPLEX:
        part = _COMPLEX.get(dtype, dtype)
        info = np.finfo(part.dtype)
        lo, hi = bounds(float(info.min), float(info.max), -9, 9)
        if dtype in _COMPLEX:
            # the real and imaginary parts are drawn interleaved, as PyTorch draws view_as_real
            result = view_as_complex(uniform(empty((*shape, 2), device=device, dtype=part), lo, hi))
        else:
            result = uniform(empty(shape, device=device, dtype=dtype), lo, hi)
    else:
        raise FgradTypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). "
                        "To request support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        part = _COMPLEX.get(dtype, dtype)
        result[result == 0] = (1 if dtype is dt.bool or dtype in _INTEGRAL
                               else float(np.finfo(part.dtype).tiny))
    if dtype in _FLOATING or dtype in _COMPLEX:
        result.requires_grad = requires_grad
    return result
