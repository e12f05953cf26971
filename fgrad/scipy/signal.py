"""fgrad.scipy.signal: SciPy's n-dimensional convolve and correlate (modes 'full', 'valid',
'same'), differentiable in both arrays to any order. One primitive computes the full
convolution (fgrad.ops.convolve); the other modes crop it as SciPy does. `method` is
accepted for SciPy's signature: the values are SciPy's (its 'auto' choice).

Also convolve2d/correlate2d (with SciPy's boundary modes: the input is extended by the
boundary rule, then convolved), fftconvolve (products of fgrad.numpy.fft spectra), detrend
(the least-squares trend removed by constant projections: linear in the data), and the
spectral estimators stft, istft, welch and csd, written from fgrad.numpy (segments gathered
at static positions, windowed, transformed with fgrad.numpy.fft, scaled as SciPy does), so
each is differentiable in its signal(s) (and an array window) under every transform; stft's
and csd's results are complex.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..core.avals import float_dtype
from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..numpy._util import as_value, aval_of, cast, dtype_of, result_dtype
from ..ops import convolve as cv
from ..ops import index as ix
from ..ops import shape as sh
from .. import numpy as fnp
from ..numpy import fft as _fft

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend", "stft", "istft",
           "welch", "csd"]

_MODES = ("full", "valid", "same")


def _operands(in1, in2, name):
    x, k = as_value(in1, name), as_value(in2, name)
    for v in (x, k):
        if dtype_of(v).kind == "c":
            raise FgradTypeError(f"{name}: complex arrays are not supported (dtype {dtype_of(v)}); fgrad's {name} "
                            "takes real arrays")
    dt = float_dtype(result_dtype(x, k))
    x, k = cast(x, dt), cast(k, dt)
    sx, sk = aval_of(x).shape, aval_of(k).shape
    if len(sx) != len(sk):
        raise ShapeError(f"{name}: in1 and in2 should have the same dimensionality, got shapes {sx} and {sk}")
    if not sx:   # 0-d: a product
        return sh.reshape(x, (1,)), sh.reshape(k, (1,)), True
    return x, k, False


def _crop(y, start, size):
    return sh.slice(y, tuple(start), tuple(s + n for s, n in zip(start, size)))


def _convolve(x, k, mode, name):
    if mode not in _MODES:
        raise FgradValueError(f"{name}: mode must be 'full', 'valid' or 'same', got {mode!r}")
    sx, sk = aval_of(x).shape, aval_of(k).shape
    full = cv.conv_full(x, k)
    if mode == "full":
        return full
    if mode == "same":   # centred on the full result, in1's shape
        return _crop(full, [(f - a) // 2 for f, a in zip(aval_of(full).shape, sx)], sx)
    if not (all(a >= b for a, b in zip(sx, sk)) or all(a <= b for a, b in zip(sx, sk))):
        raise ShapeError(f"{name}: for 'valid' mode one of in1 {sx} and in2 {sk} must be at least as large as "
                         "the other in every dimension")
    small = [min(a, b) for a, b in zip(sx, sk)]
    return _crop(full, [s - 1 for s in small], [abs(a - b) + 1 for a, b in zip(sx, sk)])


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """The n-dimensional convolution of two real arrays of one rank: 'full' (every overlap),
    'valid' (complete overlaps; one array must be at least as large as the other in every
    dimension) or 'same' (centred, in1's shape)."""
    x, k, scalar = _operands(in1, in2, "convolve")
    out = _convolve(x, k, mode, "convolve")
    return sh.reshape(out, ()) if scalar else out


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """The n-dimensional cross-correlation of two real arrays of one rank: convolve with in2
    reversed along every axis (SciPy's modes, and its alignment for 'valid' with a larger in2)."""
    x, k, scalar = _operands(in1, in2, "correlate")
    nd = len(aval_of(x).shape)
    sx, sk = aval_of(x).shape, aval_of(k).shape
    if mode == "valid" and all(a <= b for a, b in zip(sx, sk)) and sx != sk:
        # SciPy swaps the operands when in2 is the larger: the result is reversed
        out = ix.rev(_convolve(k, ix.rev(x, tuple(range(nd))), mode, "correlate"), tuple(range(nd)))
    else:
        out = _convolve(x, ix.rev(k, tuple(range(nd))), mode, "correlate")
    return sh.reshape(out, ()) if scalar else out


# --- 2-d convolution with boundary modes -----------------------------------------------------------

_BOUNDARIES = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap", "symm": "symmetric",
               "symmetric": "symmetric"}


def _swap_needed(mode: str, s1: tuple, s2: tuple, name: str) -> bool:
    """SciPy's _inputs_swap_needed: in 'valid' mode the larger array goes first."""
    if mode != "valid":
        return False
    if all(a >= b for a, b in zip(s1, s2)):
        return False
    if all(a <= b for a, b in zip(s1, s2)):
        return True
    raise ShapeError(f"{name}: For 'valid' mode, one must be at least as large as the other in every dimension "
                     f"(got shapes {s1} and {s2})")


def _conv2d(in1: Any, in2: Any, mode: str, boundary: str, fillvalue: Any, name: str, flip: bool) -> Any:
    x, k, _ = _operands(in1, in2, name)
    if len(aval_of(x).shape) != 2 or len(aval_of(k).shape) != 2:
        raise ShapeError(f"{name}: {name} inputs must both be 2-D arrays, got shapes {aval_of(x).shape} and "
                         f"{aval_of(k).shape}")
    if mode not in _MODES:
        raise FgradValueError(f"{name}: Acceptable mode flags are 'valid', 'same', or 'full', got {mode!r}")
    if boundary not in _BOUNDARIES:
        raise FgradValueError(f"{name}: Acceptable boundary flags are 'fill', 'circular' (or 'wrap'), and "
                              f"'symmetric' (or 'symm'), got {boundary!r}")
    fill = as_value(fillvalue, name)
    if aval_of(fill).size != 1:
        raise FgradValueError(f"{name}: fillvalue must be scalar or an array with one element, got shape "
                              f"{aval_of(fill).shape}")
    fill = cast(sh.reshape(fill, ()), dtype_of(x))
    swap = _swap_needed(mode, aval_of(x).shape, aval_of(k).shape, name)
    if swap:
        x, k = k, x
    if flip:   # correlation: the kernel reversed
        k = ix.rev(k, (0, 1))
    sx, sk = aval_of(x).shape, aval_of(k).shape
    if mode == "valid":
        out = _convolve(x, k, "valid", name)
    else:
        # the input extended by the boundary rule wherever the kernel overlaps it, then the
        # complete overlaps of the extension: SciPy's 'full' (and 'same', its centre)
        pad = [(n - 1, n - 1) for n in sk]
        if _BOUNDARIES[boundary] == "constant":
            xe = fnp.pad(x, pad, mode="constant", constant_values=fill)
        else:
            xe = fnp.pad(x, pad, mode=_BOUNDARIES[boundary])
        full = _crop(cv.conv_full(xe, k), [n - 1 for n in sk], [a + b - 1 for a, b in zip(sx, sk)])
        # 'same' is centred on the full result; SciPy's correlate2d rounds the other way (its
        # correlation is a convolution with the kernel reversed, centred as a convolution)
        extra = [f - a for f, a in zip(aval_of(full).shape, sx)]
        out = full if mode == "full" else _crop(full, [d - d // 2 if flip else d // 2 for d in extra], sx)
    return ix.rev(out, (0, 1)) if swap and flip else out


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0) -> Any:
    """The 2-d convolution of two real 2-d arrays, SciPy's convolve2d: modes 'full', 'valid'
    and 'same'; outside in1 the boundary rule 'fill' (with `fillvalue`), 'wrap' (circular) or
    'symm' (reflected, the edge repeated). Differentiable in both arrays and the fill value."""
    return _conv2d(in1, in2, mode, boundary, fillvalue, "convolve2d", False)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0) -> Any:
    """The 2-d cross-correlation of two real 2-d arrays, SciPy's correlate2d (its modes,
    boundary rules, and its reversed result when 'valid' swaps a larger in2 first)."""
    return _conv2d(in1, in2, mode, boundary, fillvalue, "correlate2d", True)


# --- FFT convolution ---------------------------------------------------------------------------------

def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """The convolution of two n-d arrays through FFTs, SciPy's fftconvolve: the product of
    their spectra (fgrad.numpy.fft, rfftn for real arrays) over `axes` (all by default; the
    other axes must agree or be 1, and broadcast), cropped to 'full', 'same' (in1's shape)
    or 'valid'. Complex arrays are supported."""
    x, k = as_value(in1, "fftconvolve"), as_value(in2, "fftconvolve")
    if mode not in _MODES:
        raise FgradValueError(f"fftconvolve: acceptable mode flags are 'valid', 'same', or 'full', got {mode!r}")
    s1, s2 = aval_of(x).shape, aval_of(k).shape
    if len(s1) != len(s2):
        raise ShapeError(f"fftconvolve: in1 and in2 should have the same dimensionality, got shapes {s1} and {s2}")
    complex_ = "c" in (dtype_of(x).kind, dtype_of(k).kind)
    dt = result_dtype(x, k)
    dt = dt if dt.kind in "fc" else np.dtype(np.float64)
    x, k = cast(x, dt), cast(k, dt)
    if not s1:
        return fnp.multiply(x, k)
    if aval_of(x).size == 0 or aval_of(k).size == 0:
        return np.array([], dt)
    nd = len(s1)
    axes = tuple(range(nd)) if axes is None else tuple(sorted(
        {a % nd if -nd <= a < nd else _bad_axis(a, nd) for a in np.atleast_1d(axes).tolist()}))
    axes = tuple(a for a in axes if s1[a] != 1 or s2[a] != 1)   # SciPy drops axes of length 1 in both
    for a in range(nd):
        if a not in axes and s1[a] != s2[a] and s1[a] != 1 and s2[a] != 1:
            raise ShapeError(f"fftconvolve: incompatible shapes for in1 and in2: {s1} and {s2}")
    if not axes:
        return fnp.multiply(x, k)
    swap = mode == "valid" and _swap_needed(mode, tuple(s1[a] for a in axes), tuple(s2[a] for a in axes),
                                            "fftconvolve")
    if swap:
        x, k, s1, s2 = k, x, s2, s1
    lengths = [s1[a] + s2[a] - 1 for a in axes]
    if complex_:
        ret = _fft.ifftn(fnp.multiply(_fft.fftn(x, lengths, axes), _fft.fftn(k, lengths, axes)), lengths, axes)
    else:
        ret = _fft.irfftn(fnp.multiply(_fft.rfftn(x, lengths, axes), _fft.rfftn(k, lengths, axes)), lengths, axes)
    ret = cast(ret, dt)
    if mode == "full":
        return ret
    shape = aval_of(ret).shape
    if mode == "same":
        want = [s1[a] if a in axes else shape[a] for a in range(nd)]
    else:
        want = [s1[a] - s2[a] + 1 if a in axes else shape[a] for a in range(nd)]
    return _crop(ret, [(n - w) // 2 for n, w in zip(shape, want)], want)


def _bad_axis(a: int, nd: int) -> int:
    raise FgradValueError(f"fftconvolve: axes exceeds dimensionality of input (axis {a} for {nd} dimensions)")


# --- detrend -----------------------------------------------------------------------------------------

def detrend(data: Any, axis: int = -1, type: str = "linear", bp: Any = 0, overwrite_data: bool = False) -> Any:
    """`data` minus its least-squares trend along `axis`, SciPy's detrend: 'constant' removes
    the mean, 'linear' a straight line fitted to each piece between the breakpoints `bp`.
    The trend is a fixed projection of the data, so the result is linear in it."""
    x = as_value(data, "detrend")
    if type not in ("linear", "l", "constant", "c"):
        raise FgradValueError(f"detrend: Trend type must be 'linear' or 'constant', got {type!r}")
    dt = dtype_of(x) if dtype_of(x).char in "dfDF" else np.dtype(np.float64)
    x = cast(x, dt)
    if type in ("constant", "c"):
        return fnp.subtract(x, fnp.mean(x, axis=axis, keepdims=True))
    shape = aval_of(x).shape
    nd = len(shape)
    if not nd:
        raise FgradValueError("detrend: data must have at least one dimension")
    ax = axis % nd if -nd <= axis < nd else _bad_axis(axis, nd)
    n = shape[ax]
    bps = np.sort(np.unique(np.concatenate(np.atleast_1d(0, bp, n)))).astype(np.int64)
    if np.any(bps > n):
        raise FgradValueError("detrend: Breakpoints must be less than length of data along given axis.")
    moved = fnp.moveaxis(x, ax, 0)
    rest = aval_of(moved).shape[1:]
    flat = sh.reshape(moved, (n, int(np.prod(rest, dtype=np.int64))))
    pieces = []
    real_dt = np.finfo(dt).dtype
    for lo, hi in zip(bps[:-1], bps[1:]):
        m = int(hi - lo)
        seg = fnp.getitem(flat, slice(int(lo), int(hi)))
        if m == 0:
            continue
        a = np.ones((m, 2))
        a[:, 0] = np.arange(1, m + 1) / m
        # the residual of the least-squares fit: seg - A pinv(A) seg (SciPy's lstsq fit)
        fit = fnp.matmul(cast(a, real_dt), fnp.matmul(cast(np.linalg.pinv(a), real_dt), seg))
        pieces.append(fnp.subtract(seg, fit))
    out = pieces[0] if len(pieces) == 1 else fnp.concatenate(pieces, axis=0)
    return fnp.moveaxis(sh.reshape(out, (n,) + rest), 0, ax)


# --- spectral analysis: stft, istft, welch, csd --------------------------------------------------------

def _hann(n: int) -> np.ndarray:
    """The periodic Hann window (SciPy's 'hann_periodic', get_window('hann', n))."""
    return np.array([1.0]) if n == 1 else 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)


def _window(window: Any, nperseg: int | None, input_length: int, name: str) -> tuple:
    """(window as an array, nperseg), SciPy's _triage_segments: a named window of nperseg
    points (256 by default, at most the input's length, with SciPy's warning), or an array
    (its length is nperseg)."""
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            nperseg = 256
        if nperseg > input_length:
            warnings.warn(f"nperseg = {nperseg:d} is greater than input length  = {input_length:d}, using "
                          f"nperseg = {input_length:d}", stacklevel=3)
            nperseg = input_length
        if window in ("hann", "hann_periodic"):
            return _hann(nperseg), nperseg
        # scipy.signal is slow to import; only other named windows need it
        from scipy.signal import get_window
        return get_window(window, nperseg), nperseg
    win = as_value(window, f"{name}'s window")
    wshape = aval_of(win).shape
    if len(wshape) != 1:
        raise FgradValueError(f"{name}: window must be 1-D, got shape {wshape}")
    if input_length < wshape[0]:
        raise FgradValueError(f"{name}: window is longer than input signal ({wshape[0]} > {input_length})")
    if nperseg is None:
        nperseg = wshape[0]
    elif nperseg != wshape[0]:
        raise FgradValueError(f"{name}: value specified for nperseg ({nperseg}) is different from length of window "
                              f"({wshape[0]})")
    return win, nperseg


def _odd_ext(x: Any, n: int) -> Any:
    """x extended by n points at both ends of the last axis by odd reflection (SciPy's odd_ext)."""
    length = aval_of(x).shape[-1]
    if n < 1:
        return x
    if n > length - 1:
        raise FgradValueError(f"The extension length n ({n}) is too big. It must not exceed x.shape[axis]-1, which is "
                              f"{length - 1}.")
    first, last = fnp.getitem(x, (Ellipsis, slice(0, 1))), fnp.getitem(x, (Ellipsis, slice(length - 1, length)))
    left = fnp.getitem(x, (Ellipsis, slice(n, 0, -1)))
    right = fnp.getitem(x, (Ellipsis, slice(length - 2, length - n - 2 if length - n - 2 >= 0 else None, -1)))
    return fnp.concatenate([fnp.subtract(fnp.multiply(2.0, first), left), x,
                            fnp.subtract(fnp.multiply(2.0, last), right)], axis=-1)


def _extend(x: Any, n: int, boundary: Any, name: str) -> Any:
    if boundary is None:
        return x
    if boundary == "odd":
        return _odd_ext(x, n)
    modes = {"even": "reflect", "constant": "edge", "zeros": "constant"}
    if boundary not in modes:
        raise FgradValueError(f"{name}: Unknown boundary option '{boundary}', must be one of: "
                              "['even', 'odd', 'constant', 'zeros', None]")
    if boundary == "even" and n > aval_of(x).shape[-1] - 1:
        raise FgradValueError(f"The extension length n ({n}) is too big. It must not exceed x.shape[axis]-1, which is "
                              f"{aval_of(x).shape[-1] - 1}.")
    return fnp.pad(x, [(0, 0)] * (len(aval_of(x).shape) - 1) + [(n, n)], mode=modes[boundary])


def _segments(x: Any, nperseg: int, nstep: int) -> Any:
    """The segments of x's last axis: (..., nseg, nperseg), gathered at static positions."""
    length = aval_of(x).shape[-1]
    starts = np.arange(0, length - nperseg + 1, nstep)
    return fnp.getitem(x, (Ellipsis, starts[:, None] + np.arange(nperseg)[None, :]))


def _detrender(detrend_type: Any) -> Callable:
    if callable(detrend_type):
        return detrend_type
    if detrend_type is False or detrend_type is None:
        return lambda d: d
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, type=detrend_type, axis=-1)
    raise FgradValueError(f"Unsupported detrend type: {detrend_type!r}")


def _spectral(x: Any, y: Any, fs: float, window: Any, nperseg: int | None, noverlap: int | None, nfft_: int | None,
              detrend_type: Any, return_onesided: bool, scaling: str, axis: int, mode: str, boundary: Any,
              padded: bool, name: str) -> tuple:
    """SciPy's _spectral_helper: (freqs, times, result) with the frequency axis where the time
    axis was and the segments last."""
    x = as_value(x, name)
    cross = y is not None
    y = as_value(y, name) if cross else x
    dt = result_dtype(x, y)
    out_dt = np.result_type(dt, np.complex64)
    real_dt = np.finfo(out_dt).dtype
    x, y = cast(x, np.result_type(dt, np.float32)), cast(y, np.result_type(dt, np.float32))
    nd = len(aval_of(x).shape)
    if not nd or not aval_of(y).shape:
        raise FgradValueError(f"{name}: x (and y) must have at least one dimension")
    ax = axis % nd if -nd <= axis < nd else _bad_axis(axis, nd)
    x = fnp.moveaxis(x, ax, -1)
    if cross:   # the other axes broadcast, as SciPy's
        ndy = len(aval_of(y).shape)
        y = fnp.moveaxis(y, axis % ndy if -ndy <= axis < ndy else _bad_axis(axis, ndy), -1)
        try:
            np.broadcast_shapes(aval_of(x).shape[:-1], aval_of(y).shape[:-1])
        except ValueError:
            raise ShapeError(f"{name}: x and y cannot be broadcast together (shapes {aval_of(x).shape} and "
                             f"{aval_of(y).shape} without the time axis)") from None
        nx, ny = aval_of(x).shape[-1], aval_of(y).shape[-1]
        if nx < ny:
            x = fnp.pad(x, [(0, 0)] * (nd - 1) + [(0, ny - nx)])
        elif ny < nx:
            y = fnp.pad(y, [(0, 0)] * (ndy - 1) + [(0, nx - ny)])
    length = aval_of(x).shape[-1]
    if nperseg is not None and int(nperseg) < 1:
        raise FgradValueError(f"{name}: nperseg must be a positive integer, got {nperseg}")
    win, nperseg = _window(window, None if nperseg is None else int(nperseg), length, name)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft_ = nperseg if nfft_ is None else int(nfft_)
    if nfft_ < nperseg:
        raise FgradValueError(f"{name}: nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise FgradValueError(f"{name}: noverlap must be less than nperseg.")
    nstep = nperseg - noverlap
    xs = [x, y] if cross else [x]
    xs = [_extend(v, nperseg // 2, boundary, name) for v in xs]
    if padded:
        nadd = (-(aval_of(xs[0]).shape[-1] - nperseg) % nstep) % nperseg
        xs = [fnp.pad(v, [(0, 0)] * (len(aval_of(v).shape) - 1) + [(0, nadd)]) for v in xs]
    win = cast(win, real_dt)
    if scaling == "density":
        scale = 1.0 / (fs * fnp.sum(fnp.multiply(win, win)))
    elif scaling == "spectrum":
        scale = 1.0 / fnp.sum(win) ** 2
    else:
        raise FgradValueError(f"{name}: Unknown scaling: {scaling!r}")
    if mode == "stft":
        scale = fnp.sqrt(scale)
    twosided = not return_onesided or any(dtype_of(v).kind == "c" for v in xs)
    if return_onesided and twosided:
        warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=3)
    freqs = np.fft.fftfreq(nfft_, 1 / fs) if twosided else np.fft.rfftfreq(nfft_, 1 / fs)
    detrend_func = _detrender(detrend_type)

    def transform(v):
        seg = detrend_func(_segments(v, nperseg, nstep))
        seg = fnp.multiply(seg, win)
        return _fft.fft(seg, nfft_) if twosided else _fft.rfft(seg, nfft_)
    res = transform(xs[0])
    if cross:
        res = fnp.multiply(fnp.conj(res), transform(xs[1]))
    elif mode == "psd":
        res = fnp.multiply(fnp.conj(res), res)
    res = fnp.multiply(res, cast(scale, real_dt))
    if not twosided and mode == "psd":
        double = np.full(aval_of(res).shape[-1], 2.0, real_dt)
        double[0] = 1.0
        if nfft_ % 2 == 0:
            double[-1] = 1.0
        res = fnp.multiply(res, double)
    n_ext = aval_of(xs[0]).shape[-1]
    times = np.arange(nperseg / 2, n_ext - nperseg / 2 + 1, nperseg - noverlap) / fs
    if boundary is not None:
        times -= (nperseg / 2) / fs
    res = cast(res, out_dt)
    if not cross and mode != "stft":
        res = fnp.real(res)
    # (..., nseg, nfreq) -> frequencies where the time axis was, segments last
    res = fnp.moveaxis(res, -1, ax if ax < nd - 1 else nd - 1)
    return freqs, times, res


def stft(x: Any, fs: float = 1.0, window: Any = "hann_periodic", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: Any = False, return_onesided: bool = True, boundary: Any = "zeros",
         padded: bool = True, axis: int = -1, scaling: str = "spectrum") -> tuple:
    """SciPy's short-time Fourier transform: (frequencies, segment times, Zxx), Zxx complex
    with the frequencies where `axis` was and the segments last. Hann window, half-overlapping
    segments, the signal zero-extended at both ends and padded to whole segments, as SciPy's
    defaults; `scaling` 'spectrum' or 'psd'. Differentiable in x (and an array window)."""
    if scaling == "psd":
        scaling = "density"
    elif scaling != "spectrum":
        raise FgradValueError(f"stft: Parameter scaling={scaling!r} not in ['spectrum', 'psd']!")
    return _spectral(x, None, float(fs), window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
                     "stft", boundary, padded, "stft")


def _average(p: Any, average: str, name: str) -> Any:
    """The mean (or bias-corrected median) of the periodograms over the last axis (SciPy's)."""
    n = aval_of(p).shape[-1]
    if n == 1:
        return sh.reshape(p, aval_of(p).shape[:-1])
    if average == "mean":
        return fnp.mean(p, axis=-1)
    if average == "median":
        bias = _median_bias(n)
        if dtype_of(p).kind == "c":
            med = fnp.add(fnp.median(fnp.real(p), axis=-1),
                          fnp.multiply(1j, fnp.median(fnp.imag(p), axis=-1)))
        else:
            med = fnp.median(p, axis=-1)
        return fnp.divide(med, cast(np.asarray(bias), np.finfo(dtype_of(med)).dtype))
    raise FgradValueError(f"{name}: average must be \"median\" or \"mean\", got {average!r}")


def _median_bias(n: int) -> float:
    """SciPy's _median_bias: the bias of the median of n periodograms."""
    ii_2 = 2 * np.arange(1.0, (n - 1) // 2 + 1)
    return float(1 + np.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2))


def _welch(x, y, fs, window, nperseg, noverlap, nfft_, detrend_type, return_onesided, scaling, axis, average,
           name: str) -> tuple:
    """Welch's method: the periodograms of the segments (cross-periodograms with y), averaged."""
    freqs, _, p = _spectral(x, y, float(fs), window, nperseg, noverlap, nfft_, detrend_type, return_onesided, scaling,
                            axis, "psd", None, False, name)
    if aval_of(p).size and len(aval_of(p).shape) >= 2:
        p = _average(p, average, name)
    return freqs, p


def csd(x: Any, y: Any, fs: float = 1.0, window: Any = "hann_periodic", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant", return_onesided: bool = True,
        scaling: str = "density", axis: int = -1, average: str = "mean") -> tuple:
    """SciPy's cross power spectral density of x and y by Welch's method: (frequencies, Pxy),
    Pxy complex (the segments' conj(X) Y averaged by `average`). Differentiable in x and y."""
    return _welch(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average, "csd")


def welch(x: Any, fs: float = 1.0, window: Any = "hann_periodic", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant", return_onesided: bool = True,
          scaling: str = "density", axis: int = -1, average: str = "mean") -> tuple:
    """SciPy's power spectral density of x by Welch's method: (frequencies, Pxx), the real
    periodograms of Hann-windowed, half-overlapping, mean-detrended segments averaged by
    `average`. Differentiable in x."""
    return _welch(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average,
                  "welch")


def istft(Zxx: Any, fs: float = 1.0, window: Any = "hann_periodic", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True, boundary: bool = True,
          time_axis: int = -1, freq_axis: int = -2, scaling: str = "spectrum") -> tuple:
    """SciPy's inverse short-time Fourier transform: (times, x), the inverse FFTs of the
    segments windowed, overlap-added and divided by the summed squared window (NOLA).
    Differentiable in Zxx (and an array window)."""
    z = as_value(Zxx, "istft")
    shape = aval_of(z).shape
    nd = len(shape)
    if nd < 2:
        raise FgradValueError(f"istft: Input stft must be at least 2d!, got shape {shape}")
    fa, ta = freq_axis % nd, time_axis % nd
    if fa == ta:
        raise FgradValueError("istft: Must specify differing time and frequency axes!")
    z = cast(z, np.result_type(dtype_of(z), np.complex64))
    nseg = shape[ta]
    n_default = 2 * (shape[fa] - 1) if input_onesided else shape[fa]
    nperseg = n_default if nperseg is None else int(nperseg)
    if nperseg < 1:
        raise FgradValueError("istft: nperseg must be a positive integer")
    if nfft is None:
        nfft = nperseg if input_onesided and nperseg == n_default + 1 else n_default
    elif nfft < nperseg:
        raise FgradValueError("istft: nfft must be greater than or equal to nperseg.")
    nfft = int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise FgradValueError("istft: noverlap must be less than nperseg.")
    nstep = nperseg - noverlap
    if ta != nd - 1 or fa != nd - 2:
        outer = [d for d in range(nd) if d not in (ta, fa)]
        z = fnp.transpose(z, outer + [fa, ta])
    if isinstance(window, (str, tuple)):
        win = _hann(nperseg) if window in ("hann", "hann_periodic") else _window(window, nperseg, nperseg, "istft")[0]
    else:
        win = as_value(window, "istft's window")
        if len(aval_of(win).shape) != 1:
            raise FgradValueError("istft: window must be 1-D")
        if aval_of(win).shape[0] != nperseg:
            raise FgradValueError(f"istft: window must have length of {nperseg}")
    xsubs = _fft.irfft(z, nfft, axis=-2) if input_onesided else _fft.ifft(z, nfft, axis=-2)
    xsubs = fnp.getitem(xsubs, (Ellipsis, slice(0, nperseg), slice(None)))
    real_dt = np.finfo(dtype_of(xsubs)).dtype
    win = cast(win, real_dt)
    if scaling == "spectrum":
        xsubs = fnp.multiply(xsubs, fnp.sum(win))
    elif scaling == "psd":
        xsubs = fnp.multiply(xsubs, fnp.sqrt(fnp.multiply(float(fs), fnp.sum(fnp.multiply(win, win)))))
    else:
        raise FgradValueError(f"istft: Parameter scaling={scaling!r} not in ['spectrum', 'psd']!")
    length = nperseg + (nseg - 1) * nstep
    # overlap-add: every windowed segment added at its offset (one scatter-add)
    positions = (np.arange(nseg)[:, None] * nstep + np.arange(nperseg)[None, :])   # (nseg, nperseg)
    frames = fnp.multiply(fnp.swapaxes(xsubs, -1, -2), win)                        # (..., nseg, nperseg)
    lead = aval_of(frames).shape[:-2]
    out = fnp.at_add(fnp.zeros(lead + (length,), dtype_of(frames)), (Ellipsis, positions), frames)
    win2 = fnp.multiply(win, win)
    norm = fnp.at_add(fnp.zeros((length,), real_dt), positions, fnp.broadcast_to(win2, (nseg, nperseg)))
    if boundary:
        cut = slice(nperseg // 2, -(nperseg // 2))
        out, norm = fnp.getitem(out, (Ellipsis, cut)), fnp.getitem(norm, cut)
    try:
        nola_ok = bool(np.sum(np.asarray(norm) > 1e-10) == aval_of(norm).shape[0])
    except Exception:  # noqa: BLE001 - a traced window: the check needs its values
        nola_ok = True
    if not nola_ok:
        warnings.warn("NOLA condition failed, STFT may not be invertible."
                      + (" Possibly due to missing boundary" if not boundary else ""), stacklevel=2)
    out = fnp.divide(out, fnp.where(fnp.greater(norm, 1e-10), norm, 1.0))
    if input_onesided:
        out = fnp.real(out)
    if len(aval_of(out).shape) > 1 and ta != nd - 1:
        t = ta - 1 if fa < ta else ta
        out = fnp.moveaxis(out, -1, t)
    times = np.arange(aval_of(out).shape[0]) / float(fs)
    return times, out

