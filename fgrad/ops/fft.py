"""Discrete Fourier transforms: fft (complex to complex, forward or inverse), rfft (real to
the half spectrum) and irfft (half spectrum to real), each over a tuple of axes, with NumPy's
`norm` ("backward", "ortho" or "forward"). fgrad.numpy.fft pads or crops the input to the
transform lengths before binding, so every primitive sees exactly the lengths it transforms
(irfft alone needs its output lengths as a parameter: n // 2 + 1 inputs stand for two n).

Derivatives follow JAX's complex convention (fgrad.ops.complex): a VJP is the transpose under
the pairing Re(sum(a * b)). Every transform is linear, so its JVP is the transform of the
tangent and its VJP a transform of the cotangent: the DFT matrix is symmetric, so the
transpose of fft is fft itself (same direction and norm); rfft's is the real part of the fft
of the zero-padded cotangent; irfft's is the conjugate of the rfft of the cotangent, with
the half-spectrum bins that stand for two (all but the zero and the Nyquist frequency)
weighted 2 (JAX's _irfft_transpose).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_linear
from ..core.trace import aval_of
from .complex import complex_dtype, conj, real, real_dtype
from .elementwise import mul
from .shape import broadcast_in_dim, move_to_front, pad

NORMS = ("backward", "ortho", "forward")


def _check_axes(name, x, axes):
    if not axes or len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"{name}: axes {axes} must be distinct and in range for an array of shape {x.shape} "
                         "(fgrad.numpy.fft normalises them before binding)")


def _check_norm(name, norm):
    if norm not in NORMS:
        raise FgradValueError(f"{name}: norm must be one of {NORMS}, got {norm!r}")


def _batch_rule(prim):
    """vmap: the batch axis goes first and every transformed axis moves up by one."""
    def rule(n, vals, dims, *, axes, **params):
        return prim.bind(move_to_front(vals[0], dims[0]), axes=tuple(a + 1 for a in axes), **params), 0
    return rule


# --- fft: complex to complex -------------------------------------------------------------------

fft_p = Primitive("fft")


def _fft_aval(x, *, axes, inverse, norm):
    _check_axes("fft", x, axes)
    _check_norm("fft", norm)
    if x.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise FgradTypeError(f"fft: expected a float32/64 or complex64/128 array, got dtype {x.dtype}")
    return ShapedArray(x.shape, complex_dtype(x.dtype))


def fft(x, axes: tuple, *, inverse: bool = False, norm: str = "backward"):
    """The n-dimensional DFT of x over `axes` (the inverse DFT with `inverse`); real input is
    read as complex. The result is complex."""
    axes = tuple(int(a) for a in axes)
    _fft_aval(aval_of(x), axes=axes, inverse=inverse, norm=norm)
    return fft_p.bind(x, axes=axes, inverse=bool(inverse), norm=norm)


def _fft_impl(x, *, axes, inverse, norm, xp):
    out = (xp.fft.ifftn if inverse else xp.fft.fftn)(x, axes=axes, norm=norm)
    return out.astype(complex_dtype(x.dtype), copy=False)


def _fft_transpose(ct, x_aval, *, axes, inverse, norm):
    out = fft(ct, axes, inverse=inverse, norm=norm)
    return out if x_aval.dtype.kind == "c" else real(out)


fft_p.def_impl(_fft_impl)
fft_p.def_abstract_eval(_fft_aval)
def_linear(fft_p, _fft_transpose)
fft_p.def_batch(_batch_rule(fft_p))


# --- rfft: real to the half spectrum along the last of `axes` ------------------------------------

rfft_p = Primitive("rfft")


def _rfft_aval(x, *, axes, norm):
    _check_axes("rfft", x, axes)
    _check_norm("rfft", norm)
    if x.dtype not in (np.float32, np.float64):
        raise FgradTypeError(f"rfft: expected a float32 or float64 array, got dtype {x.dtype}")
    shape = list(x.shape)
    shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return ShapedArray(shape, complex_dtype(x.dtype))


def rfft(x, axes: tuple, *, norm: str = "backward"):
    """The DFT of a real array over `axes`, keeping along the last of them the n // 2 + 1
    non-negative frequencies (the rest are their conjugates)."""
    axes = tuple(int(a) for a in axes)
    _rfft_aval(aval_of(x), axes=axes, norm=norm)
    return rfft_p.bind(x, axes=axes, norm=norm)


def _rfft_impl(x, *, axes, norm, xp):
    return xp.fft.rfftn(x, axes=axes, norm=norm).astype(complex_dtype(x.dtype), copy=False)


def _rfft_transpose(ct, x_aval, *, axes, norm):
    last = axes[-1]
    widths = [(0, 0)] * x_aval.ndim
    widths[last] = (0, x_aval.shape[last] - aval_of(ct).shape[last])
    return real(fft(pad(ct, widths), axes, norm=norm))


rfft_p.def_impl(_rfft_impl)
rfft_p.def_abstract_eval(_rfft_aval)
def_linear(rfft_p, _rfft_transpose)
rfft_p.def_batch(_batch_rule(rfft_p))


# --- irfft: the half spectrum to a real array of the given lengths ------------------------------

irfft_p = Primitive("irfft")


def _irfft_aval(x, *, axes, lengths, norm):
    _check_axes("irfft", x, axes)
    _check_norm("irfft", norm)
    if x.dtype not in (np.complex64, np.complex128):
        raise FgradTypeError(f"irfft: expected a complex64 or complex128 array, got dtype {x.dtype}")
    if len(lengths) != len(axes) or any(d < 1 for d in lengths):
        raise ShapeError(f"irfft: lengths {lengths} must be positive, one per axis of {axes}")
    for a, d in zip(axes[:-1], lengths[:-1]):
        if x.shape[a] != d:
            raise ShapeError(f"irfft: axis {a} has size {x.shape[a]} but the output length is {d} "
                             "(fgrad.numpy.fft crops or pads before binding)")
    if x.shape[axes[-1]] != lengths[-1] // 2 + 1:
        raise ShapeError(f"irfft: an output length of {lengths[-1]} needs {lengths[-1] // 2 + 1} inputs along "
                         f"axis {axes[-1]}, got {x.shape[axes[-1]]}")
    shape = list(x.shape)
    shape[axes[-1]] = lengths[-1]
    return ShapedArray(shape, real_dtype(x.dtype))


def irfft(x, axes: tuple, lengths: tuple, *, norm: str = "backward"):
    """The inverse of rfft: a real array with `lengths` along `axes` from the half spectrum
    (n // 2 + 1 entries along the last axis; the imaginary parts of the zero and Nyquist
    frequencies are ignored, as NumPy ignores them)."""
    axes, lengths = tuple(int(a) for a in axes), tuple(int(d) for d in lengths)
    _irfft_aval(aval_of(x), axes=axes, lengths=lengths, norm=norm)
    return irfft_p.bind(x, axes=axes, lengths=lengths, norm=norm)


def _irfft_impl(x, *, axes, lengths, norm, xp):
    return xp.fft.irfftn(x, s=lengths, axes=axes, norm=norm).astype(real_dtype(x.dtype), copy=False)


def _irfft_transpose(ct, x_aval, *, axes, lengths, norm):
    n = lengths[-1]
    count = math.prod(lengths)
    scale = {"backward": 1.0 / count, "ortho": 1.0 / math.sqrt(count), "forward": 1.0}[norm]
    weights = np.full(n // 2 + 1, 2.0 * scale)
    weights[0] = scale
    if n % 2 == 0:
        weights[-1] = scale
    spectrum = rfft(ct, axes)
    w = broadcast_in_dim(weights.astype(x_aval.dtype), aval_of(spectrum).shape, (axes[-1],))
    return conj(mul(spectrum, w))


irfft_p.def_impl(_irfft_impl)
irfft_p.def_abstract_eval(_irfft_aval)
def_linear(irfft_p, _irfft_transpose)
irfft_p.def_batch(_batch_rule(irfft_p))

__all__ = ["fft", "fft_p", "rfft", "rfft_p", "irfft", "irfft_p", "NORMS"]
