"""torch.fft on fgrad.numpy.fft: PyTorch's names, arguments (n/s, dim, norm, out=) and dtypes
(real input of any integer or float dtype gives the matching complex dtype, integers and
booleans computing in the default float dtype; complex64 stays complex64), and its errors
(RuntimeError for a bad norm, length or repeated dims, IndexError for a dim out of range).

Each transform is one torch op (fgrad.torch._tensor._boundary.call) over values whose node has
the name of PyTorch's last node for that call: FftC2CBackward0, FftR2CBackward0 (fft of a real
1-D signal, rfft*), FftC2RBackward0 (irfft*, hfft*), ConjBackward0 (ifft of a real signal,
ihfft), RollBackward0 (fftshift/ifftshift). Derivatives are fgrad.numpy.fft's (the transform
primitives' rules), to any order; a complex leaf's gradient is PyTorch's (dL/dRe + i dL/dIm).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradIndexError, FgradRuntimeError, FgradTypeError
from ..extend.numpy import cast
from ._tensor import _dtypes as D
from ._tensor._boundary import call
from ._tensor._policy import TORCH as P
from ._tensor.tensor import Tensor, _make

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
           "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq",
           "fftshift", "ifftshift"]

_NORMS = (None, "backward", "forward", "ortho")


def _input(name: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise FgradTypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def _norm(norm) -> None:
    if norm not in _NORMS:
        raise FgradRuntimeError(f"Invalid normalization mode: {norm!r}; use None, 'backward', 'forward' or 'ortho'")


def _wrap(d: int, nd: int) -> int:
    if not -max(nd, 1) <= d < max(nd, 1):
        raise FgradIndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, "
                              f"{max(nd, 1) - 1}], but got {d})")
    return d % nd if nd else 0


def _dims_lengths(name: str, x: Tensor, s, dim, last_half: bool = False):
    """PyTorch's reading of (s, dim) as (dims, lengths or None): dim defaults to the last
    len(s) dims (every dim without s); each dim once; each length >= 1 (-1 keeps the input's)."""
    shape = tuple(x._value.shape)
    nd = len(shape)
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(s, int):
        s = (s,)
    if dim is None:
        dims = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
        if s is not None and len(s) > nd:
            raise FgradRuntimeError(f"fft_{name}: Got shape with {len(s)} values but input tensor only has {nd} "
                                    "dimensions.")
    else:
        dims = tuple(_wrap(int(d), nd) for d in dim)
        if len(set(dims)) != len(dims):
            raise FgradRuntimeError(f"fft_{name}: FFT dims must be unique, got dim={list(dim)}")
        if s is not None and len(s) != len(dims):
            raise FgradRuntimeError(f"fft_{name}: When given, dim and shape arguments must have the same length "
                                    f"(s={list(s)}, dim={list(dim)})")
    if nd == 0 or not dims:
        raise FgradRuntimeError(f"fft_{name}: the input of shape {shape} has no dimension to transform")
    if s is None:
        return dims, None
    lengths = []
    for d, n in zip(dims, s):
        n = int(n)
        if n == -1:
            n = 2 * (shape[d] - 1) if last_half and d == dims[-1] else shape[d]
        if n < 1:
            raise FgradRuntimeError(f"fft_{name}: Invalid number of data points ({n}) specified")
        lengths.append(n)
    return dims, tuple(lengths)


def _one(name: str, x: Tensor, n, dim: int):
    """(dims, lengths) of the one-dim transforms."""
    x = _input(name, x)
    if x._value.ndim == 0:
        raise FgradRuntimeError(f"fft_{name}: expected the input to have at least 1 dimension, got a 0-d tensor")
    return _dims_lengths(name, x, None if n is None else (n,), (dim,))


def _as_float(v):
    """v as a floating (or complex) value: integers and booleans in the default float dtype."""
    return cast(v, P.float_dtype(v.dtype))


def _real_only(name: str, x: Tensor) -> None:
    if x._value.dtype.kind == "c":
        raise FgradRuntimeError(f"fft_{name}: expects a real input tensor, but got {D.of_np(x._value.dtype)} "
                                "(use fft/fftn for complex input, or take .real first)")


def _out(result: Tensor, out) -> Tensor:
    """PyTorch's out=: the result written into `out` (resized to the result's shape, as
    PyTorch does), which is returned."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise FgradTypeError(f"fft: argument 'out' must be Tensor, not {type(out).__name__}")
    if result.requires_grad:
        raise FgradRuntimeError("fft: functions with out=... arguments don't support automatic differentiation, "
                                "but one of the arguments requires grad (call it under torch.no_grad(), or "
                                "without out=)")
    if out._value.dtype != result._value.dtype:
        raise FgradRuntimeError(f"fft: the result's dtype {D.of_np(result._value.dtype)} can't be cast to the "
                                f"desired output type {D.of_np(out._value.dtype)}")
    out.data = result.detach()
    return out


def _run(grad_fn: str, fn, x: Tensor, out) -> Tensor:
    """The torch op computing fn on x's value (its node named grad_fn), written into `out` if given."""
    return _out(call(grad_fn, fn, (x,)), out)


# --- complex to complex ------------------------------------------------------------------------------

def _c2c(name: str, x: Tensor, s, dim, norm, inverse: bool, out, one: bool) -> Tensor:
    _norm(norm)
    x = _input(name, x)
    dims, lengths = _one(name, x, s, dim) if one else _dims_lengths(name, x, s, dim)
    real = x._value.dtype.kind != "c"
    f = fnp.fft.ifftn if inverse else fnp.fft.fftn
    grad_fn = "FftC2CBackward0"
    if one and real:  # PyTorch runs a real 1-D signal through its r2c transform (and a conj for ifft)
        grad_fn = "ConjBackward0" if inverse else "FftR2CBackward0"
    return _run(grad_fn, lambda v: f(_as_float(v), lengths, dims, norm), x, out)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The one-dimensional discrete Fourier transform along `dim`.

    Args:
        input: a real or complex tensor.
        n: the signal length: the input is cropped or zero-padded to n along `dim`.
        dim: the dimension to transform.
        norm: "backward" (None: no scaling), "forward" (1/n) or "ortho" (1/sqrt(n)).
        out: a tensor to write the result into.

    Returns:
        The complex spectrum (complex64 for float32 or integer input, complex128 for float64).
    """
    return _c2c("fft", input, n, dim, norm, False, out, True)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of fft (scaled by 1/n under the default norm "backward").

    Args:
        input: a real or complex tensor.
        n: the signal length along `dim` (cropped or zero-padded).
        dim: the dimension to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex signal.
    """
    return _c2c("ifft", input, n, dim, norm, True, out, True)


def fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None) -> Tensor:
    """The two-dimensional DFT over `dim` (the last two dims by default).

    Args:
        input: a real or complex tensor.
        s: the signal lengths along `dim` (cropped or zero-padded; -1 keeps a length).
        dim: the two dimensions.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex spectrum.
    """
    return _c2c("fft2", input, s, dim, norm, False, out, False)


def ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of fft2.

    Args:
        input: a real or complex tensor.
        s: the signal lengths along `dim`.
        dim: the two dimensions.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex signal.
    """
    return _c2c("ifft2", input, s, dim, norm, True, out, False)


def fftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The N-dimensional DFT over `dim` (the last len(s) dims when only s is given, else all).

    Args:
        input: a real or complex tensor.
        s: the signal lengths along `dim`.
        dim: the dimensions to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex spectrum.
    """
    return _c2c("fftn", input, s, dim, norm, False, out, False)


def ifftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of fftn.

    Args:
        input: a real or complex tensor.
        s: the signal lengths along `dim`.
        dim: the dimensions to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex signal.
    """
    return _c2c("ifftn", input, s, dim, norm, True, out, False)


# --- real to half spectrum, and back --------------------------------------------------------------------

def _r2c(name: str, f, x: Tensor, s, dim, norm, out, one: bool, grad_fn: str = "FftR2CBackward0") -> Tensor:
    _norm(norm)
    x = _input(name, x)
    _real_only(name, x)
    dims, lengths = _one(name, x, s, dim) if one else _dims_lengths(name, x, s, dim)
    return _run(grad_fn, lambda v: f(_as_float(v), lengths, dims, norm), x, out)


def _c2r(name: str, f, x: Tensor, s, dim, norm, out, one: bool) -> Tensor:
    _norm(norm)
    x = _input(name, x)
    dims, lengths = _one(name, x, s, dim) if one else _dims_lengths(name, x, s, dim, last_half=True)
    if lengths is None:
        m = x._value.shape[dims[-1]]
        if 2 * (m - 1) < 1:
            raise FgradRuntimeError(f"fft_{name}: Invalid number of data points ({2 * (m - 1)}) specified "
                                    f"(the input has {m} entries along dim {dims[-1]}; pass n/s)")
    return _run("FftC2RBackward0", lambda v: f(_as_float(v), lengths, dims, norm), x, out)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The DFT of a real signal along `dim`: its n // 2 + 1 non-negative frequencies.

    Args:
        input: a real tensor.
        n: the signal length along `dim` (cropped or zero-padded).
        dim: the dimension to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex half spectrum.
    """
    return _r2c("rfft", fnp.fft.rfftn, input, n, dim, norm, out, True)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of rfft: n real values (default 2 (m - 1)) from m half-spectrum entries.

    Args:
        input: the half spectrum (real input counts as complex with zero imaginary part).
        n: the output length along `dim`.
        dim: the dimension to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The real signal.
    """
    return _c2r("irfft", fnp.fft.irfftn, input, n, dim, norm, out, True)


def rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None) -> Tensor:
    """The two-dimensional rfftn over `dim`.

    Args:
        input: a real tensor.
        s: the signal lengths along `dim`.
        dim: the two dimensions (the last one keeps its non-negative frequencies).
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex half spectrum.
    """
    return _r2c("rfft2", fnp.fft.rfftn, input, s, dim, norm, out, False)


def irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of rfft2.

    Args:
        input: the half spectrum.
        s: the output lengths along `dim` (the last defaults to 2 (m - 1)).
        dim: the two dimensions.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The real signal.
    """
    return _c2r("irfft2", fnp.fft.irfftn, input, s, dim, norm, out, False)


def rfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The N-dimensional DFT of a real signal; the last of `dim` keeps its non-negative frequencies.

    Args:
        input: a real tensor.
        s: the signal lengths along `dim`.
        dim: the dimensions to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex half spectrum.
    """
    return _r2c("rfftn", fnp.fft.rfftn, input, s, dim, norm, out, False)


def irfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of rfftn.

    Args:
        input: the half spectrum.
        s: the output lengths along `dim` (the last defaults to 2 (m - 1)).
        dim: the dimensions to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The real signal.
    """
    return _c2r("irfftn", fnp.fft.irfftn, input, s, dim, norm, out, False)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The DFT of a Hermitian-symmetric signal given by its first half: n real values
    (default 2 (m - 1)).

    Args:
        input: the first half of the signal.
        n: the output length along `dim`.
        dim: the dimension to transform.
        norm: "backward" (None: no scaling), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The real spectrum.
    """
    return _c2r("hfft", fnp.fft.hfftn, input, n, dim, norm, out, True)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of hfft: the first half of a Hermitian spectrum from a real signal.

    Args:
        input: a real tensor.
        n: the signal length along `dim`.
        dim: the dimension to transform.
        norm: "backward" (None: 1/n), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex half spectrum.
    """
    return _r2c("ihfft", fnp.fft.ihfftn, input, n, dim, norm, out, True, "ConjBackward0")


def hfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None) -> Tensor:
    """The two-dimensional hfftn over `dim`.

    Args:
        input: the signal, Hermitian-symmetric along the last of `dim` (its first half there).
        s: the output lengths along `dim`.
        dim: the two dimensions.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The real spectrum.
    """
    return _c2r("hfft2", fnp.fft.hfftn, input, s, dim, norm, out, False)


def ihfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of hfft2.

    Args:
        input: a real tensor.
        s: the signal lengths along `dim`.
        dim: the two dimensions.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex half spectrum.
    """
    return _r2c("ihfft2", fnp.fft.ihfftn, input, s, dim, norm, out, False, "FftC2CBackward0")


def hfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The N-dimensional DFT of a signal Hermitian-symmetric along the last of `dim`.

    Args:
        input: the signal (its first half along the last of `dim`).
        s: the output lengths along `dim` (the last defaults to 2 (m - 1)).
        dim: the dimensions to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The real spectrum.
    """
    return _c2r("hfftn", fnp.fft.hfftn, input, s, dim, norm, out, False)


def ihfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of hfftn.

    Args:
        input: a real tensor.
        s: the signal lengths along `dim`.
        dim: the dimensions to transform.
        norm: "backward" (None), "forward" or "ortho".
        out: a tensor to write the result into.

    Returns:
        The complex half spectrum.
    """
    return _r2c("ihfftn", fnp.fft.ihfftn, input, s, dim, norm, out, False, "FftC2CBackward0")


# --- frequencies and shifts -------------------------------------------------------------------------------

def _freq(name: str, values, d, out, dtype, device, requires_grad) -> Tensor:
    if isinstance(d, Tensor):
        d = d.item()
    npd = P.default_float if dtype is None else D.np_dtype(dtype)
    if npd.kind not in "fc":
        raise FgradRuntimeError(f"fft_{name}: expected a floating point or complex dtype, got {dtype}")
    result = _make(np.asarray(values / float(d), npd))
    if device is not None:
        result = result.to(device)
    if requires_grad:
        result.requires_grad_(True)
    return _out(result, out)


def _count(name: str, n) -> int:
    n = int(n)
    if n < 0:
        raise FgradRuntimeError(f"fft_{name}: n must be non-negative, got {n}")
    return n


def fftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point DFT with sample spacing d: [0, 1, ..., -1] / (d n).

    Args:
        n: the signal length.
        d: the sample spacing.
        out: a tensor to write the result into.
        dtype: a floating dtype (default: the default float dtype).
        layout: torch.strided (the only layout).
        device: the result's device.
        requires_grad: whether the result is a leaf that requires grad.

    Returns:
        A 1-D tensor of n frequencies.
    """
    n = _count("fftfreq", n)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)]).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _freq("fftfreq", k / n, d, out, dtype, device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of rfft's output for an n-point signal: [0, 1, ..., n // 2] / (d n).

    Args:
        n: the signal length.
        d: the sample spacing.
        out: a tensor to write the result into.
        dtype: a floating dtype (default: the default float dtype).
        layout: torch.strided (the only layout).
        device: the result's device.
        requires_grad: whether the result is a leaf that requires grad.

    Returns:
        A 1-D tensor of n // 2 + 1 frequencies.
    """
    n = _count("rfftfreq", n)
    k = np.arange(0, n // 2 + 1, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # n = 0: one entry, 0 / 0 = NaN, as PyTorch gives
        return _freq("rfftfreq", k / n, d, out, dtype, device, requires_grad)


def _shift(name: str, x: Tensor, dim, sign: int) -> Tensor:
    x = _input(name, x)
    nd = x._value.ndim
    dims = tuple(range(nd)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(_wrap(int(d), nd) for d in dims)
    shifts = tuple(sign * (x._value.shape[d] // 2) for d in dims)
    if not dims:
        return call("CloneBackward0", fnp.copy, (x,))
    return call("RollBackward0", lambda v: fnp.roll(v, shifts, dims), (x,))


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The spectrum reordered with the zero frequency in the centre of each of `dim` (all dims by default).

    Args:
        input: a tensor (the output of an fft).
        dim: the dimensions to shift.

    Returns:
        input rolled by n // 2 along each of `dim`.
    """
    return _shift("fftshift", input, dim, 1)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of fftshift.

    Args:
        input: a tensor.
        dim: the dimensions to shift.

    Returns:
        input rolled by -(n // 2) along each of `dim`.
    """
    return _shift("ifftshift", input, dim, -1)
