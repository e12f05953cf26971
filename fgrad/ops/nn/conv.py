"""Convolution primitives: conv2d, conv2d_input_grad, conv2d_weight_grad, each with
`groups` (see the comments below). Layouts follow PyTorch: images NCHW, weights
[O, C/groups, kH, kW]. im2col/col2im are also the kernels of unfold/fold (unfold.py).
"""
from __future__ import annotations

import threading
import weakref
import zlib

import numpy as np

from ...core.avals import ShapedArray, is_float
from ...core.errors import FgradTypeError, FgradValueError, ShapeError
from ...core.primitive import Primitive
from ...core.rules import shape_of
from ..elementwise import add_tangents, bilinear_tangent, def_bilinear
from ..reduce import reduce_sum
from ..shape import broadcast_in_dim, move_axis, reshape
from . import onednn
from ._geometry import _checked_bind, _dilated, _fold_batch, _pad, _pair, _windows

# --- convolution ------------------------------------------------------------------------------
# Three primitives, each bilinear and each the others' transposes (PyTorch's split):
#   conv2d(x, w)                 y = x (*) w               (cross-correlation)
#   conv2d_input_grad(g, w)      the adjoint in x:   <conv2d(v, w), g> = <v, conv2d_input_grad(g, w)>
#   conv2d_weight_grad(x, g)     the adjoint in w:   <conv2d(x, v), g> = <v, conv2d_weight_grad(x, g)>
# so every derivative of every order is again one of the three. Their impls run oneDNN's
# float32 convolutions when the optional library is installed (_onednn_layout decides), else
# choose between im2col + one GEMM and an FFT (stride 1) by estimated cost, and share intermediates
# (im2col columns, spectra) through a small identity-keyed cache: the forward pass stores
# what the backward pass of the same arrays needs.

conv2d_p = Primitive("conv2d")
conv2d_input_grad_p = Primitive("conv2d_input_grad")
conv2d_weight_grad_p = Primitive("conv2d_weight_grad")


class _Memo(threading.local):
    """Values derived from arrays (im2col columns, spectra), keyed by the arrays' identity,
    shared between a convolution and its gradients (one memo per thread). An entry is used
    only while its source array is alive, is the same object, and keeps its buffer and layout.

    Modes: 'weight' entries also keep a checksum of the contents and may be read any
    number of times (kernels change in place between steps). Other entries belong to
    activations and cotangents: 'put' stores (a forward pass), 'take' consumes a stored
    value or computes without storing, 'share' consumes or computes and stores for the
    next reader. Reading a stale one would need an in-place change of a value saved for
    backward, which fgrad.torch refuses (its version counters)."""

    def __init__(self, max_items: int = 32, max_bytes: int = 256 << 20) -> None:
        self.max_items, self.max_bytes = max_items, max_bytes
        self.entries: dict = {}
        self.nbytes = 0

    @staticmethod
    def _sig(a, checksum: bool):
        sig = (a.shape, a.strides, a.dtype.str, a.__array_interface__["data"][0])
        if checksum:
            sig += (zlib.crc32(a if a.flags.c_contiguous else np.ascontiguousarray(a)),)
        return sig

    def cached(self, tag, a, extra, compute, mode: str):
        key = (tag, id(a), extra)
        checksum = mode == "weight"
        sig = None
        if mode != "put":
            e = self.entries.get(key)
            if e is not None:
                ref, esig, value = e
                sig = self._sig(a, checksum)
                if ref() is a and esig == sig:
                    if not checksum:
                        self._drop(key)
                    return value
                self._drop(key)
        value = compute()
        if mode == "take":
            return value
        try:
            ref = weakref.ref(a)
        except TypeError:
            return value
        self._drop(key)
        self.entries[key] = (ref, sig if sig is not None else self._sig(a, checksum), value)
        self.nbytes += value.nbytes
        while self.entries and (len(self.entries) > self.max_items or self.nbytes > self.max_bytes):
            self._drop(next(iter(self.entries)))
        return value

    def _drop(self, key):
        e = self.entries.pop(key, None)
        if e is not None:
            self.nbytes -= e[2].nbytes

    def clear(self):
        self.entries.clear()
        self.nbytes = 0


_memo = _Memo()


def _conv_out_hw(x_hw, k_hw, stride, padding, dilation):
    return tuple((n + lo + hi - _dilated(k, d)) // s + 1
                 for n, k, s, (lo, hi), d in zip(x_hw, k_hw, stride, padding, dilation))


def _check_conv(name, x_shape, w_shape, x_dtype, w_dtype, *, groups=1, **params):
    """The output's spatial size, after PyTorch's checks (with its wording, naming the shapes)."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise ShapeError(f"{name}: expected input [N, C, H, W] and weight [O, C/groups, kH, kW], got "
                         f"input shape {x_shape} and weight shape {w_shape}")
    if groups < 1:
        raise ShapeError(f"{name}: non-positive groups is not supported, got groups={groups}")
    if w_shape[0] % groups:
        raise ShapeError(f"{name}: Given groups={groups}, expected weight to be divisible by {groups} "
                         f"at dimension 0, but got weight of size {list(w_shape)} instead")
    if x_shape[1] != w_shape[1] * groups:
        raise ShapeError(f"{name}: Given groups={groups}, weight of size {list(w_shape)}, expected "
                         f"input{list(x_shape)} to have {w_shape[1] * groups} channels, but got "
                         f"{x_shape[1]} channels instead (input shape {x_shape}, weight shape "
                         f"{w_shape}: weight.shape[1] * groups must equal the input's channels)")
    if x_dtype != w_dtype:
        raise FgradTypeError(f"{name}: input dtype {x_dtype} and weight dtype {w_dtype} differ; convert "
                        "one of them (e.g. x.float())")
    if not is_float(x_dtype):
        raise FgradTypeError(f"{name}: convolution needs floating-point data, got dtype {x_dtype}")
    hw = _conv_out_hw(x_shape[2:], w_shape[2:], **params)
    if min(hw) <= 0:
        raise ShapeError(f"{name}: input shape {x_shape} (padding {params['padding']}) is smaller "
                         f"than the kernel of weight shape {w_shape} (dilation "
                         f"{params['dilation']}): the output size would be {hw}")
    return hw


def _conv_aval(x, w, b=None, **params):
    hw = _check_conv("conv2d", x.shape, w.shape, x.dtype, w.dtype, **params)
    if b is not None and (b.shape != (w.shape[0],) or b.dtype != x.dtype):
        raise ShapeError(f"conv2d: bias of shape {b.shape} and dtype {b.dtype} does not fit weight "
                         f"shape {w.shape} and dtype {x.dtype} (expected ({w.shape[0]},))")
    return ShapedArray((x.shape[0], w.shape[0]) + hw, x.dtype)


def _input_grad_aval(g, w, *, x_hw, groups=1, **params):
    x_shape = (g.shape[0], w.shape[1] * groups) + tuple(x_hw)
    hw = _check_conv("conv2d_input_grad", x_shape, w.shape, g.dtype, w.dtype, groups=groups, **params)
    if g.ndim != 4 or g.shape[1:] != (w.shape[0],) + hw:
        raise ShapeError(f"conv2d_input_grad: cotangent shape {g.shape} does not match the output "
                         f"{(g.shape[0], w.shape[0]) + hw} of an input of shape {x_shape}")
    return ShapedArray(x_shape, g.dtype)


def _weight_grad_aval(x, g, *, k_hw, groups=1, **params):
    if x.ndim != 4 or x.shape[1] % groups:
        raise ShapeError(f"conv2d_weight_grad: input shape {x.shape} is not [N, C, H, W] with C "
                         f"divisible by groups={groups}")
    w_shape = (g.shape[1], x.shape[1] // groups) + tuple(k_hw)
    hw = _check_conv("conv2d_weight_grad", x.shape, w_shape, x.dtype, g.dtype, groups=groups, **params)
    if g.ndim != 4 or g.shape != (x.shape[0], w_shape[0]) + hw:
        raise ShapeError(f"conv2d_weight_grad: cotangent shape {g.shape} does not match the output "
                         f"{(x.shape[0], w_shape[0]) + hw} of input shape {x.shape} and kernel "
                         f"{tuple(k_hw)}")
    return ShapedArray(w_shape, x.dtype)


# im2col + GEMM ---------------------------------------------------------------------------------

def im2col(xp, x, k_hw, stride, padding, dilation, hw):
    """Columns [N, C*kh*kw, Ho*Wo] of x: row c*kh*kw + i*kw + j holds kernel tap (i, j) of
    channel c at every output position (PyTorch's unfold layout)."""
    N, C = x.shape[:2]
    xpad = _pad(xp, x, padding)
    win = _windows(xp, xpad, hw, k_hw, stride, dilation)
    return xp.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(
        N, C * k_hw[0] * k_hw[1], hw[0] * hw[1])


def _im2col(xp, x, k_hw, stride, padding, dilation, hw, mode="put"):
    """im2col through the memo (the forward pass stores the columns for the weight gradient)."""
    def compute():
        return im2col(xp, x, k_hw, stride, padding, dilation, hw)
    if xp is not np:
        return compute()
    return _memo.cached("cols", x, (k_hw, stride, padding, dilation), compute, mode)


def col2im(xp, cols, x_shape, k_hw, stride, padding, dilation, hw):
    """Adjoint of _im2col: scatter-add columns [N, C, kh, kw, Ho, Wo] back into an image."""
    N, C, H, W = x_shape
    (plo, phi), (qlo, qhi) = padding
    out = xp.zeros((N, C, H + plo + phi, W + qlo + qhi), cols.dtype)
    for i in range(k_hw[0]):
        for j in range(k_hw[1]):
            y0, x0 = i * dilation[0], j * dilation[1]
            out[:, :, y0:y0 + (hw[0] - 1) * stride[0] + 1:stride[0],
                x0:x0 + (hw[1] - 1) * stride[1] + 1:stride[1]] += cols[:, :, i, j]
    out = out[:, :, plo:plo + H, qlo:qlo + W]
    return out if out.flags.c_contiguous else xp.ascontiguousarray(out)


# FFT (stride 1, dilation 1, 0 <= padding <= k - 1) ---------------------------------------------

def _fft_ok(k_hw, stride, padding, dilation, dtype):
    return (stride == (1, 1) and dilation == (1, 1) and np.dtype(dtype) in (np.float32, np.float64)
            and all(0 <= lo <= k - 1 and 0 <= hi <= k - 1 for k, (lo, hi) in zip(k_hw, padding)))


def _fft_shape(x_hw, k_hw, padding):
    """The transform size per axis: the smallest fast length P >= max(n + max(lo, hi), k).

    The products are circular convolutions of period P. All three (the forward crop
    [k-1-lo, k-1-lo+Ho), and the input and weight gradients, whose cotangent sits at offset
    k-1-lo) need the full linear support n + k - 1 only outside the samples they keep:
    what wraps around lands on indices below n + k - 1 - P, and those are cropped away (or
    are zeros of the embedding) as long as P >= n + max(lo, hi). With 'same' padding of a
    5x5 kernel over 14x14 images that is 16 instead of 18 (a quarter fewer points, radix 2)."""
    # SciPy's FFT is imported on first use: importing it adds about a tenth of a second to
    # `import fgrad` (every program pays it), and only convolutions that choose the FFT need it
    from scipy.fft import next_fast_len
    return tuple(next_fast_len(max(n + max(lo, hi), k), True) for n, k, (lo, hi) in zip(x_hw, k_hw, padding))


class _ScratchBuffers(threading.local):
    def __init__(self) -> None:
        self.bufs: dict = {}


_scratch_state = _ScratchBuffers()


def _scratch(slot: str, shape, dtype):
    """A reusable work buffer (contents undefined) for a temporary inside one impl call, one
    per (slot, shape, dtype) and thread: fresh allocations of megabytes cost page faults."""
    key = (slot, tuple(shape), np.dtype(dtype))
    bufs = _scratch_state.bufs
    b = bufs.pop(key, None)
    if b is None:
        b = np.empty(shape, dtype)
    bufs[key] = b  # most recently used last
    while len(bufs) > 12:
        del bufs[next(iter(bufs))]
    return b


def _fft_spectrum(tag, a, S, mode, flip=False, offset=(0, 0), lead_swap=False):
    """rfft2 of a (flipped, placed at `offset` in an S-sized zero image), laid out
    [F, A, B] for batched matmul ([F, B, A] when lead_swap)."""
    def compute():
        from scipy import fft  # on first use (import time, see _fft_shape)
        src = a[:, :, ::-1, ::-1] if flip else a
        if offset != (0, 0):
            buf = _scratch("embed", a.shape[:2] + S, a.dtype)
            buf.fill(0)
            buf[:, :, offset[0]:offset[0] + a.shape[2], offset[1]:offset[1] + a.shape[3]] = src
            spec = fft.rfft2(buf)
        else:
            spec = fft.rfft2(src, s=S)
        A, B = a.shape[:2]
        spec = spec.reshape(A, B, -1)
        return np.ascontiguousarray(spec.transpose(2, 1, 0) if lead_swap else spec.transpose(2, 0, 1))
    return _memo.cached(tag, a, (S, flip, offset, lead_swap), compute, mode)


def _conj(a):
    """conj(a) in a work buffer."""
    return np.conjugate(a, out=_scratch("conj", a.shape, a.dtype))


def _fft_product_back(a, b, dtype, S, crop0, size, flip=False):
    """irfft2 of the batched product a @ b ([F, A, K] @ [F, K, B]), cropped from crop0 to
    `size` (and flipped): real [A, B, *size]. The product is written straight into the
    layout irfft2 reads."""
    from scipy import fft  # on first use (import time, see _fft_shape)
    F, A = a.shape[:2]
    B = b.shape[2]
    spec = _scratch("spec", (A, B, F), a.dtype)
    np.matmul(a, b, out=spec.transpose(2, 0, 1))
    img = fft.irfft2(spec.reshape(A, B, S[0], S[1] // 2 + 1), s=S, overwrite_x=True)
    out = img[:, :, crop0[0]:crop0[0] + size[0], crop0[1]:crop0[1] + size[1]]
    if flip:
        out = out[:, :, ::-1, ::-1]
    return np.ascontiguousarray(out, dtype=dtype)


# cost model (seconds, one core; calibrated on AVX-512 with OpenBLAS and scipy's pocketfft)

def _gemm_cost(macs, copied):
    return 2.8e-11 * macs + 3.5e-10 * copied


def _fft_cost(n_transforms, S, cmacs):
    n = S[0] * S[1]
    return 3e-10 * n_transforms * n * np.log2(n) + 1.2e-10 * cmacs + 2e-4


# "auto": oneDNN where _onednn_layout takes it, else im2col + GEMM or the FFT by estimated
# cost; "gemm" or "fft" force one of fgrad's own paths (tests run both).
conv_algorithm = "auto"


def _onednn_layout(xp, kind: str, x_shape, w_shape, groups: int, dtype) -> str | None:
    """Whether oneDNN computes this convolution product, and in which layouts: None (fgrad's
    own paths), "any" (oneDNN's blocked layouts) or "plain" (NCHW as given).

    The one place that decides, from the shapes, the dtype and whether the library loaded,
    never from a timing: eager and jit call the same impls, so they take the same kernels.
    oneDNN's direct convolutions in blocked layouts beat im2col + GEMM and the FFT on all
    three products (grouped and depthwise ones included; 1x1 kernels tie) over W3's layers
    and a sweep of CNN shapes (bench/kernel_compare.py, issue 28), except the input gradient
    of an ungrouped convolution with fewer than 8 input channels (a first layer's): there
    the blocked kernel loses to fgrad's col2im, and oneDNN's plain-layout (GEMM) kernel beats
    both. Without the library, or for float64 (oneDNN's CPU engine has no float64
    convolution), None."""
    if (xp is not np or conv_algorithm in ("gemm", "fft") or not onednn.supports_dtype(dtype)
            or 0 in x_shape or 0 in w_shape or not onednn.available()):
        return None
    if kind == "backward_data" and groups == 1 and x_shape[1] < 8:
        return "plain"
    return "any"


def _use_fft(xp, x_shape, w_shape, params, n_transforms):
    # grouped convolutions take the GEMM path: their per-group products are small, and the
    # FFT's transforms of every channel would dominate
    if xp is not np or conv_algorithm == "gemm" or params.get("groups", 1) != 1 or not _fft_ok(
            w_shape[2:], params["stride"], params["padding"], params["dilation"], params["dtype"]):
        return None
    if conv_algorithm == "fft":
        return _fft_shape(x_shape[2:], w_shape[2:], params["padding"])
    N, C, H, W = x_shape
    O, _, kh, kw = w_shape
    hw = _conv_out_hw((H, W), (kh, kw), params["stride"], params["padding"], params["dilation"])
    S = _fft_shape((H, W), (kh, kw), params["padding"])
    F = S[0] * (S[1] // 2 + 1)
    direct = _gemm_cost(N * O * C * kh * kw * hw[0] * hw[1], N * C * kh * kw * hw[0] * hw[1])
    fft = _fft_cost(n_transforms(N, C, O), S, N * C * O * F)
    return S if fft < direct else None


# Grouped convolutions (groups G > 1) run one GEMM per group over the whole batch. Their
# im2col columns are laid out channel-major, [C*kh*kw, N*Ho*Wo]: input channel c belongs to
# group c // (C/G), so the columns reshape without a copy to [G, C/G*kh*kw, N*L] and the
# weight [O, C/G, kh, kw] to [G, O/G, C/G*kh*kw]; a matmul batched over the G groups then
# does every group (depthwise convolutions included) with long GEMM rows, where the
# batch-major layout of groups == 1 would make N*G small products.

def _im2col_grouped(xp, x, k_hw, stride, padding, dilation, hw, mode="put"):
    """Channel-major columns [C*kh*kw, N*Ho*Wo] of x, through the memo (the forward pass
    stores them for the weight gradient)."""
    def compute():
        N, C = x.shape[:2]
        win = _windows(xp, _pad(xp, x, padding), hw, k_hw, stride, dilation)  # [N, C, Ho, Wo, kh, kw]
        return xp.ascontiguousarray(win.transpose(1, 4, 5, 0, 2, 3)).reshape(
            C * k_hw[0] * k_hw[1], N * hw[0] * hw[1])
    if xp is not np:
        return compute()
    return _memo.cached("gcols", x, (k_hw, stride, padding, dilation), compute, mode)


def _channel_major(xp, g, groups):
    """g [N, O, Ho, Wo] as [G, O/G, N*Ho*Wo] (a copy)."""
    N, O = g.shape[:2]
    return xp.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(groups, O // groups, -1)

def _conv_impl(x, w, b=None, *, stride, padding, dilation, xp, groups=1):
    N, C = x.shape[:2]
    O, Cg, kh, kw = w.shape
    hw = _conv_out_hw(x.shape[2:], (kh, kw), stride, padding, dilation)
    layout = _onednn_layout(xp, "forward", x.shape, w.shape, groups, x.dtype)
    if layout is not None:
        out = onednn.conv_forward(x, w, b, stride, padding, dilation, groups, hw, layout)
        if out is not None:
            return out
    params = dict(stride=stride, padding=padding, dilation=dilation, dtype=x.dtype, groups=groups)
    S = _use_fft(xp, x.shape, w.shape, params, lambda n, c, o: n * c + n * o + o * c)
    if S is not None:
        X = _fft_spectrum("xf", x, S, "put")                           # [F, N, C]
        Wf = _fft_spectrum("wf", w, S, "weight", flip=True, lead_swap=True)  # [F, C, O]
        out = _fft_product_back(X, Wf, x.dtype, S, (kh - 1 - padding[0][0], kw - 1 - padding[1][0]), hw)
    elif groups == 1:
        cols = _im2col(xp, x, (kh, kw), stride, padding, dilation, hw)
        out = xp.matmul(w.reshape(O, C * kh * kw), cols).reshape(N, O, hw[0], hw[1])
    else:
        G = groups
        cols = _im2col_grouped(xp, x, (kh, kw), stride, padding, dilation, hw).reshape(G, Cg * kh * kw, -1)
        out = xp.matmul(w.reshape(G, O // G, Cg * kh * kw), cols)               # [G, O/G, N*L]
        out = xp.ascontiguousarray(out.reshape(O, N, hw[0], hw[1]).transpose(1, 0, 2, 3))
    if b is not None:
        out += b.reshape(1, O, 1, 1)  # in place: no temporary
    return out


def _input_grad_impl(g, w, *, x_hw, stride, padding, dilation, xp, groups=1):
    N, O = g.shape[:2]
    _, Cg, kh, kw = w.shape
    C = Cg * groups
    x_shape = (N, C) + tuple(x_hw)
    hw = g.shape[2:]
    layout = _onednn_layout(xp, "backward_data", x_shape, w.shape, groups, g.dtype)
    if layout is not None:
        out = onednn.conv_backward_data(g, w, tuple(x_hw), stride, padding, dilation, groups, layout)
        if out is not None:
            return out
    params = dict(stride=stride, padding=padding, dilation=dilation, dtype=g.dtype, groups=groups)
    S = _use_fft(xp, x_shape, w.shape, params, lambda n, c, o: n * c + n * o + o * c)
    if S is not None:
        off = (kh - 1 - padding[0][0], kw - 1 - padding[1][0])
        G = _fft_spectrum("gf", g, S, "share", offset=off)             # [F, N, O]
        Wf = _fft_spectrum("wf", w, S, "weight", flip=True, lead_swap=True)  # [F, C, O]
        return _fft_product_back(G, _conj(Wf).transpose(0, 2, 1), g.dtype, S, (0, 0), x_hw)
    if groups == 1:
        cols = xp.matmul(w.reshape(O, C * kh * kw).T, g.reshape(N, O, hw[0] * hw[1]))
        cols = cols.reshape(N, C, kh, kw, hw[0], hw[1])
    elif O == groups:
        return _input_grad_one_output_per_group(xp, g, w, x_shape, stride, padding, dilation)
    else:
        G = groups
        wt = w.reshape(G, O // G, Cg * kh * kw).transpose(0, 2, 1)      # [G, C/G*kh*kw, O/G]
        cols = xp.matmul(wt, _channel_major(xp, g, G))                  # [G, C/G*kh*kw, N*L]
        cols = cols.reshape(C, kh, kw, N, hw[0], hw[1]).transpose(3, 0, 1, 2, 4, 5)
    return col2im(xp, cols, x_shape, (kh, kw), stride, padding, dilation, hw)


def _input_grad_one_output_per_group(xp, g, w, x_shape, stride, padding, dilation):
    """conv2d_input_grad when each group has one output channel (depthwise convolutions):
    the columns would be outer products, so each kernel tap's contribution, g times that
    tap's weights, is added straight into the image instead."""
    N, C, H, W = x_shape
    G, Cg, kh, kw = w.shape
    Ho, Wo = g.shape[2:]
    (plo, phi), (qlo, qhi) = padding
    out = xp.zeros((N, C, H + plo + phi, W + qlo + qhi), g.dtype)
    g5 = g.reshape(N, G, 1, Ho, Wo)
    for i in range(kh):
        for j in range(kw):
            y0, x0 = i * dilation[0], j * dilation[1]
            view = out[:, :, y0:y0 + (Ho - 1) * stride[0] + 1:stride[0],
                       x0:x0 + (Wo - 1) * stride[1] + 1:stride[1]].reshape(N, G, Cg, Ho, Wo)
            view += g5 * w[:, :, i, j].reshape(1, G, Cg, 1, 1)
    out = out[:, :, plo:plo + H, qlo:qlo + W]
    return out if out.flags.c_contiguous else xp.ascontiguousarray(out)


def _weight_grad_impl(x, g, *, k_hw, stride, padding, dilation, xp, groups=1):
    N, C = x.shape[:2]
    O = g.shape[1]
    kh, kw = k_hw
    hw = g.shape[2:]
    layout = _onednn_layout(xp, "backward_weights", x.shape, (O, C // groups, kh, kw), groups, x.dtype)
    if layout is not None:
        out = onednn.conv_backward_weights(x, g, (kh, kw), stride, padding, dilation, groups, layout)
        if out is not None:
            return out
    params = dict(stride=stride, padding=padding, dilation=dilation, dtype=x.dtype, groups=groups)
    S = _use_fft(xp, x.shape, (O, C, kh, kw), params, lambda n, c, o: n * c + n * o + o * c)
    if S is not None:
        off = (kh - 1 - padding[0][0], kw - 1 - padding[1][0])
        G = _fft_spectrum("gf", g, S, "share", offset=off)             # [F, N, O]
        X = _fft_spectrum("xf", x, S, "take")                          # [F, N, C]
        return _fft_product_back(G.transpose(0, 2, 1), _conj(X), x.dtype, S, (0, 0), (kh, kw),
                                 flip=True)                     # [F, O, N] @ [F, N, C]
    if groups == 1:
        cols = _im2col(xp, x, (kh, kw), stride, padding, dilation, hw, "take")
        g3 = g.reshape(N, O, hw[0] * hw[1])
        return xp.matmul(g3, cols.transpose(0, 2, 1)).sum(axis=0).reshape(O, C, kh, kw)
    G, Cg = groups, C // groups
    cols = _im2col_grouped(xp, x, (kh, kw), stride, padding, dilation, hw, "take")
    cols = cols.reshape(G, Cg * kh * kw, -1).transpose(0, 2, 1)          # [G, N*L, C/G*kh*kw]
    return xp.matmul(_channel_major(xp, g, G), cols).reshape(O, Cg, kh, kw)


def _conv_jvp(primals, tangents, **params):
    # bilinear in (x, w), plus the bias (linear) when there is one
    out = conv2d_p.bind(*primals, **params)
    out_dot = bilinear_tangent(conv2d_p, *primals[:2], *tangents[:2], **params)
    if len(tangents) == 3 and tangents[2] is not None:
        out_dot = add_tangents(out_dot, broadcast_in_dim(tangents[2], shape_of(out), (1,)))
    return out, out_dot


def _conv_vjp(needs, ct, out, x, w, *bias, **params):
    cts = [conv2d_input_grad_p.bind(ct, w, x_hw=shape_of(x)[2:], **params) if needs[0] else None,
           conv2d_weight_grad_p.bind(x, ct, k_hw=shape_of(w)[2:], **params) if needs[1] else None]
    if bias:
        cts.append(reduce_sum(ct, (0, 2, 3)) if needs[2] else None)
    return cts


conv2d_p.def_impl(_conv_impl)
conv2d_p.def_abstract_eval(_conv_aval)
conv2d_p.def_jvp(_conv_jvp)
conv2d_p.def_vjp(_conv_vjp)
conv2d_p.def_saves(inputs=(0, 1), output=False)

# conv2d_input_grad(g, w): transposed in g it is conv2d (its adjoint), in w conv2d_weight_grad
conv2d_input_grad_p.def_impl(_input_grad_impl)
conv2d_input_grad_p.def_abstract_eval(_input_grad_aval)
def_bilinear(conv2d_input_grad_p,
             lambda ct, g, w, *, x_hw, **params: conv2d_p.bind(ct, w, **params),
             lambda ct, g, w, *, x_hw, **params: conv2d_weight_grad_p.bind(
                 ct, g, k_hw=shape_of(w)[2:], **params))

# conv2d_weight_grad(x, g): transposed in x it is conv2d_input_grad, in g conv2d
conv2d_weight_grad_p.def_impl(_weight_grad_impl)
conv2d_weight_grad_p.def_abstract_eval(_weight_grad_aval)
def_bilinear(conv2d_weight_grad_p,
             lambda ct, x, g, *, k_hw, **params: conv2d_input_grad_p.bind(
                 g, ct, x_hw=shape_of(x)[2:], **params),
             lambda ct, x, g, *, k_hw, **params: conv2d_p.bind(x, ct, **params))

# Batching. A vmapped image alone folds into the batch axis N. A vmapped kernel (per-example
# kernels, or per-example weight gradients) folds into the groups instead: with B examples,
# example b's channels become channels b*C .. b*C + C - 1 of one image [N, B*C, H, W] and
# its kernel the rows b*O .. of one weight [B*O, C/G, kh, kw], so groups B*G compute all B
# convolutions in one call (an unbatched operand is repeated B times).

def _batch_into_channels(v, d, n, axis):
    """v [..., K, ...] (K at `axis` of the unbatched shape) batched at d (None: unbatched)
    -> the B examples stacked along that axis: [..., B*K, ...]."""
    if d is None:
        shape = shape_of(v)
        v = broadcast_in_dim(v, shape[:axis] + (n,) + shape[axis:],
                             tuple(i if i < axis else i + 1 for i in range(len(shape))))
    else:
        v = move_axis(v, d, axis)
    s = shape_of(v)
    return reshape(v, s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2:])


def _split_channels(v, n, axis):
    s = shape_of(v)
    return reshape(v, s[:axis] + (n, s[axis] // n) + s[axis + 1:]), axis


_fold_conv = _fold_batch(conv2d_p, 1)
_fold_input_grad = _fold_batch(conv2d_input_grad_p, 1)


def _conv_batch(n, vals, dims, *, groups=1, **params):
    if all(d is None for d in dims[1:]):
        return _fold_conv(n, vals, dims, groups=groups, **params)
    x, w = _batch_into_channels(vals[0], dims[0], n, 1), _batch_into_channels(vals[1], dims[1], n, 0)
    rest = [_batch_into_channels(vals[2], dims[2], n, 0)] if len(vals) == 3 else []
    return _split_channels(conv2d_p.bind(x, w, *rest, groups=n * groups, **params), n, 1)


def _input_grad_batch(n, vals, dims, *, groups=1, **params):
    if dims[1] is None:
        return _fold_input_grad(n, vals, dims, groups=groups, **params)
    g, w = _batch_into_channels(vals[0], dims[0], n, 1), _batch_into_channels(vals[1], dims[1], n, 0)
    return _split_channels(conv2d_input_grad_p.bind(g, w, groups=n * groups, **params), n, 1)


def _weight_grad_batch(n, vals, dims, *, groups=1, **params):
    x, g = _batch_into_channels(vals[0], dims[0], n, 1), _batch_into_channels(vals[1], dims[1], n, 1)
    return _split_channels(conv2d_weight_grad_p.bind(x, g, groups=n * groups, **params), n, 0)


conv2d_p.def_batch(_conv_batch)
conv2d_input_grad_p.def_batch(_input_grad_batch)
conv2d_weight_grad_p.def_batch(_weight_grad_batch)


def _conv_padding(padding, k_hw, dilation):
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0), (0, 0))
        if padding == "same":
            pads = []
            for k, d in zip(k_hw, dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
        raise FgradValueError(f"conv2d: padding must be 'valid', 'same', an int or a pair, got {padding!r}")
    if isinstance(padding, (int, np.integer)):
        padding = (int(padding),) * 2
    pads = tuple((int(p), int(p)) if isinstance(p, (int, np.integer)) else (int(p[0]), int(p[1]))
                 for p in padding)
    if len(pads) != 2 or min(min(p) for p in pads) < 0:
        raise FgradValueError(f"conv2d: padding must be non-negative ints (one, a pair, or (lo, hi) pairs), "
                         f"got {padding!r}")
    return pads


def _groups(groups) -> int:
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise FgradValueError(f"conv2d: groups must be a positive int, got {groups!r}")
    return int(groups)


def conv2d(x, w, stride=1, padding=0, dilation=1, bias=None, groups=1):
    """PyTorch's conv2d (a cross-correlation): x [N, C, H, W], w [O, C/groups, kH, kW],
    optional bias [O] (added in the same pass). `padding` is an int, a pair, a pair of
    (lo, hi) pairs, 'valid' or 'same'. With groups G, input channels and output channels
    split into G groups, each convolved with its own kernels (G = C: depthwise)."""
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) <= 0 or min(dilation) <= 0:
        raise FgradValueError(f"conv2d: stride {stride} and dilation {dilation} must be positive")
    if isinstance(padding, str) and padding == "same" and stride != (1, 1):
        raise FgradValueError("padding='same' is not supported for strided convolutions")
    pads = _conv_padding(padding, shape_of(w)[2:], dilation)
    args = (x, w) if bias is None else (x, w, bias)
    return _checked_bind(conv2d_p, args, dict(stride=stride, padding=pads, dilation=dilation,
                                              groups=_groups(groups)))


def conv2d_input_grad(g, w, x_hw, stride=1, padding=0, dilation=1, groups=1):
    """The adjoint of conv2d in its input (a transposed convolution) for inputs of spatial
    size x_hw: g [N, O, Ho, Wo], w [O, C/groups, kH, kW] -> [N, C, *x_hw]."""
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    return _checked_bind(conv2d_input_grad_p, (g, w), dict(
        x_hw=tuple(int(n) for n in x_hw), stride=stride,
        padding=_conv_padding(padding, shape_of(w)[2:], dilation), dilation=dilation,
        groups=_groups(groups)))


def conv2d_weight_grad(x, g, k_hw, stride=1, padding=0, dilation=1, groups=1):
    """The adjoint of conv2d in its kernel, for kernels of spatial size k_hw:
    x [N, C, H, W], g [N, O, Ho, Wo] -> [O, C/groups, *k_hw]."""
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    k_hw = tuple(int(k) for k in k_hw)
    return _checked_bind(conv2d_weight_grad_p, (x, g), dict(
        k_hw=k_hw, stride=stride, padding=_conv_padding(padding, k_hw, dilation), dilation=dilation,
        groups=_groups(groups)))
