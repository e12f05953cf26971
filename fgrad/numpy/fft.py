"""fgrad.numpy.fft: NumPy's FFT API over fgrad's three transform primitives (fgrad.ops.fft).

Arguments are NumPy's: `n`/`s` crop or zero-pad the input along the transformed axes before
the transform, `axis`/`axes` choose them (negative ones count from the end), `norm` is
None/"backward", "ortho" or "forward". Results have NumPy's dtypes (float32 input gives
complex64; integers and booleans compute in float64). Repeated axes are refused (NumPy
would transform twice).

Derivatives follow JAX's complex convention (fgrad.ops.complex): for a real-valued function
of a complex z, the gradient is df/dx - i df/dy. hfft2/hfftn/ihfft2/ihfftn are scipy.fft's
(NumPy has only the one-axis ones).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..core.rules import shape_of
from ..ops import complex as cx
from ..ops import fft as ops_fft
from ..ops import shape as sh
from ._creation import zeros_like
from ._shape import roll
from ._util import as_value, cast, dtype_of, fresh, int_arg, normalize_axis, reject_out

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
           "hfft2", "hfftn", "ihfft2", "ihfftn"]

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm, name: str) -> str:
    norm = "backward" if norm is None else norm
    if norm not in ops_fft.NORMS:
        raise FgradValueError(f'{name}: invalid norm {norm!r}; use None, "backward", "ortho" or "forward"')
    return norm


def _float_input(a, name: str):
    """a as float32 (float32/float16 input) or float64 (integers, booleans, float64)."""
    x = as_value(a, name)
    dt = dtype_of(x)
    if dt.kind == "c":
        raise FgradTypeError(f"{name}: the input has complex dtype {dt}; this transform takes real arrays "
                        "(use fft/fftn for complex input, or take .real first)")
    return cast(x, np.dtype(np.float32) if dt in (np.float16, np.float32) else np.dtype(np.float64))


def _any_input(a, name: str):
    """a as a float32/64 or complex64/128 array (integers and booleans as float64)."""
    x = as_value(a, name)
    dt = dtype_of(x)
    if dt.kind == "c":
        return x
    return cast(x, np.dtype(np.float32) if dt in (np.float16, np.float32) else np.dtype(np.float64))


def _complex_input(a, name: str):
    """a as a complex64/128 array: real input gets a zero imaginary part."""
    x = _any_input(a, name)
    return x if dtype_of(x).kind == "c" else cx.complex(x, zeros_like(x))


def _fit(x, axis: int, n: int):
    """x cropped or zero-padded to length n along `axis`."""
    shape = shape_of(x)
    d = shape[axis]
    if n == d:
        return x
    if n < d:
        return sh.slice(x, (0,) * len(shape), shape[:axis] + (n,) + shape[axis + 1:])
    widths = [(0, 0)] * len(shape)
    widths[axis] = (0, n - d)
    return sh.pad(x, widths)


def _length(n, name: str, what: str = "n") -> int:
    n = int_arg(n, name, what)
    if n < 1:
        raise FgradValueError(f"{name}: invalid number of FFT data points ({n}) specified; {what} must be >= 1")
    return n


def _axes_lengths(x, s, axes, name: str, inverse_real: bool = False):
    """(axes, lengths) as NumPy's fftn family reads s and axes: axes default to the last
    len(s) axes (all axes without s); lengths default to the input's (for the inverse real
    transforms the last is 2 (m - 1))."""
    shape = shape_of(x)
    nd = len(shape)
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(normalize_axis(a, nd, name, "axes") for a in axes)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: axes {axes} repeat an axis; fgrad transforms each axis once (NumPy would "
                         "transform a repeated axis twice)")
    if not axes:
        raise ShapeError(f"{name}: no axes to transform (shape {shape}, axes {axes})")
    if s is None:
        lengths = [shape[a] for a in axes]
        if inverse_real:
            lengths[-1] = 2 * (shape[axes[-1]] - 1)
    else:
        if isinstance(s, (int, np.integer)):
            s = (s,)
        if len(s) != len(axes):
            raise ShapeError(f"{name}: s {tuple(s)} and axes {axes} have different lengths")
        lengths = [shape[a] if d is None else d for a, d in zip(axes, s)]
    return axes, tuple(_length(d, name, "s") for d in lengths)


def _one_axis(a, n, axis, name):
    """(axis, n) of the one-axis functions (fft, rfft, ...), normalised and checked."""
    x = as_value(a, name)
    nd = len(shape_of(x))
    if nd == 0:
        raise ShapeError(f"{name}: the input is 0-d; it needs an axis to transform")
    ax = normalize_axis(axis, nd, name)
    return ax, None if n is None else _length(n, name)


# --- complex to complex ----------------------------------------------------------------------------

def _c2c(a, s, axes, norm, name, inverse, out):
    reject_out(out, name)
    x = _any_input(a, name)
    axes, lengths = _axes_lengths(x, s, axes, name)
    for ax, d in zip(axes, lengths):
        x = _fit(x, ax, d)
    return ops_fft.fft(x, axes, inverse=inverse, norm=_norm(norm, name))


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """One-dimensional DFT along `axis` (input cropped or zero-padded to n)."""
    ax, n = _one_axis(a, n, axis, "fft")
    return _c2c(a, None if n is None else (n,), (ax,), norm, "fft", False, out)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """One-dimensional inverse DFT along `axis`."""
    ax, n = _one_axis(a, n, axis, "ifft")
    return _c2c(a, None if n is None else (n,), (ax,), norm, "ifft", True, out)


def fftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Any:
    """N-dimensional DFT over `axes` (all axes by default), input cropped or padded to s."""
    return _c2c(a, s, axes, norm, "fftn", False, out)


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Any:
    """N-dimensional inverse DFT."""
    return _c2c(a, s, axes, norm, "ifftn", True, out)


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Any:
    """Two-dimensional DFT over `axes` (the last two by default)."""
    return _c2c(a, s, axes, norm, "fft2", False, out)


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Any:
    """Two-dimensional inverse DFT."""
    return _c2c(a, s, axes, norm, "ifft2", True, out)


# --- real to half spectrum, and back -----------------------------------------------------------------

def _r2c(a, s, axes, norm, name, out):
    reject_out(out, name)
    x = _float_input(a, name)
    axes, lengths = _axes_lengths(x, s, axes, name)
    for ax, d in zip(axes, lengths):
        x = _fit(x, ax, d)
    return ops_fft.rfft(x, axes, norm=_norm(norm, name))


def _c2r(a, s, axes, norm, name, out):
    reject_out(out, name)
    x = _complex_input(a, name)
    axes, lengths = _axes_lengths(x, s, axes, name, inverse_real=True)
    for ax, d in zip(axes[:-1], lengths[:-1]):
        x = _fit(x, ax, d)
    x = _fit(x, axes[-1], lengths[-1] // 2 + 1)
    return ops_fft.irfft(x, axes, lengths, norm=_norm(norm, name))


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """DFT of a real array along `axis`: the n // 2 + 1 non-negative frequencies."""
    ax, n = _one_axis(a, n, axis, "rfft")
    return _r2c(a, None if n is None else (n,), (ax,), norm, "rfft", out)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """Inverse of rfft: n real values (default 2 (m - 1)) from m half-spectrum entries."""
    ax, n = _one_axis(a, n, axis, "irfft")
    return _c2r(a, None if n is None else (n,), (ax,), norm, "irfft", out)


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Any:
    """N-dimensional DFT of a real array; the last of `axes` keeps its non-negative frequencies."""
    return _r2c(a, s, axes, norm, "rfftn", out)


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Any:
    """Inverse of rfftn: a real array with lengths s along `axes`."""
    return _c2r(a, s, axes, norm, "irfftn", out)


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Any:
    """Two-dimensional rfftn over `axes` (the last two by default)."""
    return _r2c(a, s, axes, norm, "rfft2", out)


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Any:
    """Two-dimensional irfftn."""
    return _c2r(a, s, axes, norm, "irfft2", out)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """The DFT of a signal with Hermitian symmetry, given by its first half: a real spectrum
    of n values (default 2 (m - 1)). irfft of the conjugate with the norm's direction swapped."""
    ax, n = _one_axis(a, n, axis, "hfft")
    x = _complex_input(a, "hfft")
    return _c2r(cx.conj(x), None if n is None else (n,), (ax,), _SWAP[_norm(norm, "hfft")], "hfft", out)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """The inverse of hfft: the first half of a Hermitian spectrum from a real signal."""
    ax, n = _one_axis(a, n, axis, "ihfft")
    return cx.conj(_r2c(a, None if n is None else (n,), (ax,), _SWAP[_norm(norm, "ihfft")], "ihfft", out))


# --- frequencies and shifts ---------------------------------------------------------------------------

def fftfreq(n: int, d: float = 1.0, device: Any = None) -> Any:
    """Sample frequencies of an n-point DFT with sample spacing d (a constant array)."""
    return np.fft.fftfreq(int_arg(n, "fftfreq", "n"), d)


def rfftfreq(n: int, d: float = 1.0, device: Any = None) -> Any:
    """Sample frequencies of rfft's output (a constant array)."""
    return np.fft.rfftfreq(int_arg(n, "rfftfreq", "n"), d)


def _shift(x, axes, name, sign):
    x = as_value(x, name)
    shape = shape_of(x)
    nd = len(shape)
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(normalize_axis(a, nd, name, "axes") for a in axes)
    if not axes:
        return fresh(x, x)  # (NumPy's roll by nothing: a new array)
    return roll(x, tuple(sign * (shape[a] // 2) for a in axes), axes)


def fftshift(x: Any, axes: Any = None) -> Any:
    """Move the zero frequency to the centre along `axes` (all by default)."""
    return _shift(x, axes, "fftshift", 1)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of fftshift."""
    return _shift(x, axes, "ifftshift", -1)


# --- Hermitian transforms over several axes (scipy.fft's hfft2/hfftn/ihfft2/ihfftn) ----------------

def hfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Any:
    """The N-dimensional DFT of a signal Hermitian-symmetric along the last of `axes`, given
    by its first half there (scipy.fft.hfftn): irfftn of the conjugate with the norm's
    direction swapped, a real array with lengths s (the last default 2 (m - 1))."""
    x = _complex_input(a, "hfftn")
    return _c2r(cx.conj(x), s, axes, _SWAP[_norm(norm, "hfftn")], "hfftn", out)


def ihfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Any:
    """The inverse of hfftn (scipy.fft.ihfftn): the conjugate of rfftn of the real input
    with the norm's direction swapped; the last of `axes` keeps n // 2 + 1 frequencies."""
    return cx.conj(_r2c(a, s, axes, _SWAP[_norm(norm, "ihfftn")], "ihfftn", out))


def hfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Any:
    """Two-dimensional hfftn over `axes` (the last two by default)."""
    return hfftn(a, s, axes, norm, out)


def ihfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Any:
    """Two-dimensional ihfftn over `axes` (the last two by default)."""
    return ihfftn(a, s, axes, norm, out)
