"""Neural-network primitives: conv2d, max/avg pooling, relu, linear, log_softmax, nll_loss
(and cross_entropy built on the last two).

Every rule is written with fgrad ops, so derivatives of any order work. The primitives come
in closed families, each member's derivative being another member:
  * conv2d / conv2d_input_grad / conv2d_weight_grad: three bilinear maps, each the adjoint
    of the others in one argument (PyTorch's forward / grad-input / grad-weight split);
  * max_pool2d -> max_pool2d_grad (routes the cotangent to the arg-max) <-> max_pool2d_gather
    (reads at the arg-max), the last two linear and each other's transposes;
  * avg_pool2d <-> avg_pool2d_grad, linear and mutually transposed;
  * relu -> relu_grad (ct where y > 0), linear in ct and its own transpose.
Impls are CPU/GPU-agnostic NumPy code (xp), with CPU overrides where NumPy is slow:
convolutions pick im2col + one GEMM or an FFT by estimated cost and share intermediates
between the forward pass and the gradients (_Memo); relu and 2x2 max pooling use Numba.

Layouts follow PyTorch: images NCHW, convolution weights OIHW.

Conventions at non-differentiable points (SPEC 3b):
  * relu'(0) = 0; a NaN cotangent at an inactive unit is zeroed (JAX and PyTorch agree).
  * max pooling routes each window's cotangent to the *first* maximal element of the window
    (row-major order inside the window; NaN counts as maximal); ties are not split.
"""
from __future__ import annotations

import threading

import numpy as np

from ..core.avals import ShapedArray, is_float
from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.rules import elementwise_shape, shape_of
from ..core.trace import Tracer, aval_of, facade, xp_of
from .elementwise import add, const, convert_element_type, div, eq, exp, mul, ne, neg, sub
from .reduce import expand_back, reduce_sum
from .shape import broadcast_in_dim, reshape

__all__ = ["conv2d", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d", "max_pool2d_grad",
           "max_pool2d_gather", "avg_pool2d", "avg_pool2d_grad", "relu", "linear", "log_softmax",
           "softmax", "nll_loss", "cross_entropy",
           "conv2d_p", "conv2d_input_grad_p", "conv2d_weight_grad_p", "max_pool2d_p",
           "max_pool2d_grad_p", "max_pool2d_gather_p", "avg_pool2d_p", "avg_pool2d_grad_p", "relu_p",
           "relu_grad_p", "linear_p", "log_softmax_p", "nll_loss_p"]


def _pair(v, name: str) -> tuple:
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v}")
    return v


def _windows(xp, x, out_hw, window, strides, dilation):
    """View [N, C, Ho, Wo, kh, kw] of the windows of the 4-d array x (no copy)."""
    N, C = x.shape[:2]
    sN, sC, sH, sW = x.strides
    (Ho, Wo), (kh, kw), (sh, sw), (dh, dw) = out_hw, window, strides, dilation
    return xp.lib.stride_tricks.as_strided(
        x, (N, C, Ho, Wo, kh, kw), (sN, sC, sH * sh, sW * sw, sH * dh, sW * dw), writeable=False)


def _pad(xp, x, padding, fill=0):
    """x with (lo, hi) padding (non-negative) on its two spatial axes, filled with `fill`."""
    (plo, phi), (qlo, qhi) = padding
    if plo == phi == qlo == qhi == 0:
        return x
    N, C, H, W = x.shape
    out = (xp.zeros if fill == 0 else lambda shape, dtype: xp.full(shape, fill, dtype))(
        (N, C, H + plo + phi, W + qlo + qhi), x.dtype)
    out[:, :, plo:plo + H, qlo:qlo + W] = x
    return out


def _dilated(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


# --- convolution ------------------------------------------------------------------------------
# Three primitives, each bilinear and each the others' transposes (PyTorch's split):
#   conv2d(x, w)                 y = x (*) w               (cross-correlation)
#   conv2d_input_grad(g, w)      the adjoint in x:   <conv2d(v, w), g> = <v, conv2d_input_grad(g, w)>
#   conv2d_weight_grad(x, g)     the adjoint in w:   <conv2d(x, v), g> = <v, conv2d_weight_grad(x, g)>
# so every derivative of every order is again one of the three. Their impls choose between
# im2col + one GEMM and an FFT (stride 1) by estimated cost, and share intermediates
# (im2col columns, spectra) through a small identity-keyed cache: the forward pass stores
# what the backward pass of the same arrays needs.

conv2d_p = Primitive("conv2d", backward_name="ConvolutionBackward0")
conv2d_input_grad_p = Primitive("conv2d_input_grad", backward_name="ConvolutionBackwardBackward0")
conv2d_weight_grad_p = Primitive("conv2d_weight_grad", backward_name="ConvolutionBackwardBackward1")


class _Memo(threading.local):
    """Values derived from arrays (im2col columns, spectra), keyed by the arrays' identity,
    shared between a convolution and its gradients (one memo per thread). An entry is used
    only while its source array is alive, is the same object, and keeps its buffer and layout.

    Modes: 'weight' entries also keep a checksum of the contents and may be read any
    number of times (kernels change in place between steps). Other entries belong to
    activations and cotangents: 'put' stores (a forward pass), 'take' consumes a stored
    value or computes without storing, 'share' consumes or computes and stores for the
    next reader. Reading a stale one would need an in-place change of a value saved for
    backward, which the facade refuses."""

    def __init__(self, max_items: int = 32, max_bytes: int = 256 << 20) -> None:
        self.max_items, self.max_bytes = max_items, max_bytes
        self.entries: dict = {}
        self.nbytes = 0

    @staticmethod
    def _sig(a, checksum: bool):
        sig = (a.shape, a.strides, a.dtype.str, a.__array_interface__["data"][0])
        if checksum:
            import zlib
            sig += (zlib.crc32(a if a.flags.c_contiguous else np.ascontiguousarray(a)),)
        return sig

    def cached(self, tag, a, extra, compute, mode: str):
        import weakref
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


def _check_conv(name, x_shape, w_shape, x_dtype, w_dtype, **params):
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise ShapeError(f"{name}: expected input [N, C, H, W] and weight [O, C, kH, kW], got input "
                         f"shape {x_shape} and weight shape {w_shape}")
    if x_shape[1] != w_shape[1]:
        raise ShapeError(f"{name}: input shape {x_shape} has {x_shape[1]} channels but weight shape "
                         f"{w_shape} expects {w_shape[1]} input channels")
    if x_dtype != w_dtype:
        raise TypeError(f"{name}: input dtype {x_dtype} and weight dtype {w_dtype} differ; convert "
                        "one of them (e.g. x.float())")
    if not is_float(x_dtype):
        raise TypeError(f"{name}: convolution needs floating-point data, got dtype {x_dtype}")
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


def _input_grad_aval(g, w, *, x_hw, **params):
    x_shape = (g.shape[0], w.shape[1]) + tuple(x_hw)
    hw = _check_conv("conv2d_input_grad", x_shape, w.shape, g.dtype, w.dtype, **params)
    if g.ndim != 4 or g.shape[1:] != (w.shape[0],) + hw:
        raise ShapeError(f"conv2d_input_grad: cotangent shape {g.shape} does not match the output "
                         f"{(g.shape[0], w.shape[0]) + hw} of an input of shape {x_shape}")
    return ShapedArray(x_shape, g.dtype)


def _weight_grad_aval(x, g, *, k_hw, **params):
    w_shape = (g.shape[1], x.shape[1]) + tuple(k_hw)
    hw = _check_conv("conv2d_weight_grad", x.shape, w_shape, x.dtype, g.dtype, **params)
    if g.ndim != 4 or g.shape != (x.shape[0], w_shape[0]) + hw:
        raise ShapeError(f"conv2d_weight_grad: cotangent shape {g.shape} does not match the output "
                         f"{(x.shape[0], w_shape[0]) + hw} of input shape {x.shape} and kernel "
                         f"{tuple(k_hw)}")
    return ShapedArray(w_shape, x.dtype)


# im2col + GEMM ---------------------------------------------------------------------------------

def _im2col(xp, x, k_hw, stride, padding, dilation, hw, mode="put"):
    """Columns [N, C*kh*kw, Ho*Wo] of x (the forward pass stores them for the weight gradient)."""
    def compute():
        N, C = x.shape[:2]
        xpad = _pad(xp, x, padding)
        win = _windows(xp, xpad, hw, k_hw, stride, dilation)
        return xp.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(
            N, C * k_hw[0] * k_hw[1], hw[0] * hw[1])
    if xp is not np:
        return compute()
    return _memo.cached("cols", x, (k_hw, stride, padding, dilation), compute, mode)


def _col2im(xp, cols, x_shape, k_hw, stride, padding, dilation, hw):
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


def _fft_shape(x_hw, k_hw):
    from scipy.fft import next_fast_len
    return tuple(next_fast_len(n + k - 1, True) for n, k in zip(x_hw, k_hw))


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
        from scipy import fft
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
    from scipy import fft
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


# "auto" picks by estimated cost; "gemm" or "fft" force one (tests run both).
conv_algorithm = "auto"


def _use_fft(xp, x_shape, w_shape, params, n_transforms):
    if xp is not np or conv_algorithm == "gemm" or not _fft_ok(
            w_shape[2:], params["stride"], params["padding"], params["dilation"], params["dtype"]):
        return None
    if conv_algorithm == "fft":
        return _fft_shape(x_shape[2:], w_shape[2:])
    N, C, H, W = x_shape
    O, _, kh, kw = w_shape
    hw = _conv_out_hw((H, W), (kh, kw), params["stride"], params["padding"], params["dilation"])
    S = _fft_shape((H, W), (kh, kw))
    F = S[0] * (S[1] // 2 + 1)
    direct = _gemm_cost(N * O * C * kh * kw * hw[0] * hw[1], N * C * kh * kw * hw[0] * hw[1])
    fft = _fft_cost(n_transforms(N, C, O), S, N * C * O * F)
    return S if fft < direct else None


def _conv_impl(x, w, b=None, *, stride, padding, dilation, xp):
    N, C = x.shape[:2]
    O, _, kh, kw = w.shape
    hw = _conv_out_hw(x.shape[2:], (kh, kw), stride, padding, dilation)
    params = dict(stride=stride, padding=padding, dilation=dilation, dtype=x.dtype)
    S = _use_fft(xp, x.shape, w.shape, params, lambda n, c, o: n * c + n * o + o * c)
    if S is not None:
        X = _fft_spectrum("xf", x, S, "put")                           # [F, N, C]
        Wf = _fft_spectrum("wf", w, S, "weight", flip=True, lead_swap=True)  # [F, C, O]
        out = _fft_product_back(X, Wf, x.dtype, S, (kh - 1 - padding[0][0], kw - 1 - padding[1][0]), hw)
    else:
        cols = _im2col(xp, x, (kh, kw), stride, padding, dilation, hw)
        out = xp.matmul(w.reshape(O, C * kh * kw), cols).reshape(N, O, hw[0], hw[1])
    if b is not None:
        out += b.reshape(1, O, 1, 1)  # in place: no temporary
    return out


def _input_grad_impl(g, w, *, x_hw, stride, padding, dilation, xp):
    N, O = g.shape[:2]
    _, C, kh, kw = w.shape
    x_shape = (N, C) + tuple(x_hw)
    hw = g.shape[2:]
    params = dict(stride=stride, padding=padding, dilation=dilation, dtype=g.dtype)
    S = _use_fft(xp, x_shape, w.shape, params, lambda n, c, o: n * c + n * o + o * c)
    if S is not None:
        off = (kh - 1 - padding[0][0], kw - 1 - padding[1][0])
        G = _fft_spectrum("gf", g, S, "share", offset=off)             # [F, N, O]
        Wf = _fft_spectrum("wf", w, S, "weight", flip=True, lead_swap=True)  # [F, C, O]
        return _fft_product_back(G, _conj(Wf).transpose(0, 2, 1), g.dtype, S, (0, 0), x_hw)
    cols = xp.matmul(w.reshape(O, C * kh * kw).T, g.reshape(N, O, hw[0] * hw[1]))
    return _col2im(xp, cols.reshape(N, C, kh, kw, hw[0], hw[1]), x_shape, (kh, kw), stride,
                   padding, dilation, hw)


def _weight_grad_impl(x, g, *, k_hw, stride, padding, dilation, xp):
    N, C = x.shape[:2]
    O = g.shape[1]
    kh, kw = k_hw
    hw = g.shape[2:]
    params = dict(stride=stride, padding=padding, dilation=dilation, dtype=x.dtype)
    S = _use_fft(xp, x.shape, (O, C, kh, kw), params, lambda n, c, o: n * c + n * o + o * c)
    if S is not None:
        off = (kh - 1 - padding[0][0], kw - 1 - padding[1][0])
        G = _fft_spectrum("gf", g, S, "share", offset=off)             # [F, N, O]
        X = _fft_spectrum("xf", x, S, "take")                          # [F, N, C]
        return _fft_product_back(G.transpose(0, 2, 1), _conj(X), x.dtype, S, (0, 0), (kh, kw),
                                 flip=True)                     # [F, O, N] @ [F, N, C]
    cols = _im2col(xp, x, (kh, kw), stride, padding, dilation, hw, "take")
    g3 = g.reshape(N, O, hw[0] * hw[1])
    return xp.matmul(g3, cols.transpose(0, 2, 1)).sum(axis=0).reshape(O, C, kh, kw)




def _bilinear_jvp(prim):
    def jvp(primals, tangents, **params):
        a, b = primals
        ta, tb = tangents
        out = prim.bind(a, b, **params)
        out_dot = None if ta is None else prim.bind(ta, b, **params)
        if tb is not None:
            t = prim.bind(a, tb, **params)
            out_dot = t if out_dot is None else add(out_dot, t)
        return out, out_dot
    return jvp


def _conv_jvp(primals, tangents, **params):
    out = conv2d_p.bind(*primals, **params)
    x, w = primals[:2]
    tx, tw = tangents[:2]
    terms = []
    if tx is not None:
        terms.append(conv2d_p.bind(tx, w, **params))
    if tw is not None:
        terms.append(conv2d_p.bind(x, tw, **params))
    if len(tangents) == 3 and tangents[2] is not None:
        terms.append(broadcast_in_dim(tangents[2], shape_of(out), (1,)))
    out_dot = None
    for t in terms:
        out_dot = t if out_dot is None else add(out_dot, t)
    return out, out_dot


def _conv_vjp(needs, ct, out, x, w, *bias, **params):
    cts = [conv2d_input_grad_p.bind(ct, w, x_hw=shape_of(x)[2:], **params) if needs[0] else None,
           conv2d_weight_grad_p.bind(x, ct, k_hw=shape_of(w)[2:], **params) if needs[1] else None]
    if bias:
        cts.append(reduce_sum(ct, (0, 2, 3)) if needs[2] else None)
    return cts


def _input_grad_vjp(needs, ct, out, g, w, *, x_hw, **params):
    return [conv2d_p.bind(ct, w, **params) if needs[0] else None,
            conv2d_weight_grad_p.bind(ct, g, k_hw=shape_of(w)[2:], **params) if needs[1] else None]


def _weight_grad_vjp(needs, ct, out, x, g, *, k_hw, **params):
    return [conv2d_input_grad_p.bind(g, ct, x_hw=shape_of(x)[2:], **params) if needs[0] else None,
            conv2d_p.bind(x, ct, **params) if needs[1] else None]


for _p, _impl, _aval, _vjp in ((conv2d_p, _conv_impl, _conv_aval, _conv_vjp),
                               (conv2d_input_grad_p, _input_grad_impl, _input_grad_aval, _input_grad_vjp),
                               (conv2d_weight_grad_p, _weight_grad_impl, _weight_grad_aval, _weight_grad_vjp)):
    _p.def_impl(_impl)
    _p.def_abstract_eval(_aval)
    _p.def_jvp(_conv_jvp if _p is conv2d_p else _bilinear_jvp(_p))
    _p.def_vjp(_vjp)


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
        raise ValueError(f"conv2d: padding must be 'valid', 'same', an int or a pair, got {padding!r}")
    if isinstance(padding, (int, np.integer)):
        padding = (int(padding),) * 2
    pads = tuple((int(p), int(p)) if isinstance(p, (int, np.integer)) else (int(p[0]), int(p[1]))
                 for p in padding)
    if len(pads) != 2 or min(min(p) for p in pads) < 0:
        raise ValueError(f"conv2d: padding must be non-negative ints (one, a pair, or (lo, hi) pairs), "
                         f"got {padding!r}")
    return pads


def conv2d(x, w, stride=1, padding=0, dilation=1, bias=None):
    """PyTorch's conv2d (a cross-correlation): x [N, C, H, W], w [O, C, kH, kW], optional
    bias [O] (added in the same pass). `padding` is an int, a pair, a pair of (lo, hi)
    pairs, 'valid' or 'same'."""
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) <= 0 or min(dilation) <= 0:
        raise ValueError(f"conv2d: stride {stride} and dilation {dilation} must be positive")
    if isinstance(padding, str) and padding == "same" and stride != (1, 1):
        raise ValueError("conv2d: padding='same' is not supported for strided convolutions")
    pads = _conv_padding(padding, shape_of(w)[2:], dilation)
    args = (x, w) if bias is None else (x, w, bias)
    return _checked_bind(conv2d_p, args, dict(stride=stride, padding=pads, dilation=dilation))


def _checked_bind(prim, args, params):
    """bind after the shape/dtype rule: eager evaluation runs only impls, and the rules'
    messages (naming both shapes) beat a failure deep inside a kernel."""
    prim.abstract_eval(*[aval_of(a) for a in args], **params)
    return prim.bind(*args, **params)


def conv2d_input_grad(g, w, x_hw, stride=1, padding=0, dilation=1):
    """The adjoint of conv2d in its input (a transposed convolution) for inputs of spatial
    size x_hw."""
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    return _checked_bind(conv2d_input_grad_p, (g, w), dict(
        x_hw=tuple(int(n) for n in x_hw), stride=stride,
        padding=_conv_padding(padding, shape_of(w)[2:], dilation), dilation=dilation))


def conv2d_weight_grad(x, g, k_hw, stride=1, padding=0, dilation=1):
    """The adjoint of conv2d in its kernel, for kernels of spatial size k_hw."""
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    k_hw = tuple(int(k) for k in k_hw)
    return _checked_bind(conv2d_weight_grad_p, (x, g), dict(
        k_hw=k_hw, stride=stride, padding=_conv_padding(padding, k_hw, dilation), dilation=dilation))


# --- pooling geometry -------------------------------------------------------------------------

def _pool_params(kernel_size, stride, padding, dilation=1, ceil_mode=False):
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0) \
        else _pair(stride, "stride")
    p = _pair(padding, "padding")
    d = _pair(dilation, "dilation")
    for kk, pp, dd in zip(k, p, d):
        if kk <= 0 or dd <= 0:
            raise ValueError(f"pooling: kernel_size {k} and dilation {d} must be positive")
        if pp < 0 or 2 * pp > kk:
            raise ValueError(f"pooling: padding {p} should be at most half of the kernel size {k}")
    if min(s) <= 0:
        raise ValueError(f"pooling: stride {s} must be positive")
    return dict(window=k, strides=s, padding=p, dilation=d, ceil_mode=bool(ceil_mode))


def _pool_out(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - _dilated(k, d)
    if span < 0:
        return 0
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= n + p:  # the last window must start inside the input or left pad
            out -= 1
        return out
    return span // s + 1


def _pool_hw(shape, window, strides, padding, dilation, ceil_mode):
    return tuple(_pool_out(n, k, s, p, d, ceil_mode)
                 for n, k, s, p, d in zip(shape[-2:], window, strides, padding, dilation))


def _pool_aval(name):
    def rule(x, *rest, window, strides, padding, dilation, ceil_mode, **_):
        if x.ndim != 4:
            raise ShapeError(f"{name}: expected input [N, C, H, W], got shape {x.shape}")
        hw = _pool_hw(x.shape, window, strides, padding, dilation, ceil_mode)
        if min(hw) <= 0:
            raise ShapeError(f"{name}: input shape {x.shape} (padding {padding}) is smaller than "
                             f"the window {window} (dilation {dilation})")
        return ShapedArray(x.shape[:2] + hw, x.dtype)
    return rule


def _pool_pads(shape, hw, window, strides, padding, dilation):
    return [(p, max((o - 1) * s + _dilated(k, d) - n - p, 0))
            for n, o, k, s, p, d in zip(shape[2:], hw, window, strides, padding, dilation)]


def _pool_padded_hw(shape, hw, window, strides, padding, dilation):
    return tuple(n + lo + hi for n, (lo, hi) in
                 zip(shape[2:], _pool_pads(shape, hw, window, strides, padding, dilation)))


def _padded_for_pool(xp, x, hw, window, strides, padding, dilation, fill):
    """x padded on the two spatial axes so that every window lies inside it."""
    return _pad(xp, x, _pool_pads(x.shape, hw, window, strides, padding, dilation), fill)


def _offset_views(a, hw, window, strides, dilation):
    """For each window offset (i, j), in row-major order: the strided view of `a`
    holding that element of every window, shape [N, C, Ho, Wo]."""
    (Ho, Wo), (kh, kw), (sh, sw), (dh, dw) = hw, window, strides, dilation
    for i in range(kh):
        for j in range(kw):
            yield a[:, :, i * dh:i * dh + (Ho - 1) * sh + 1:sh, j * dw:j * dw + (Wo - 1) * sw + 1:sw]


def _crop_like(xp, gpad, x_shape, padding):
    (ph, pw), (H, W) = padding, x_shape[2:]
    g = gpad[:, :, ph:ph + H, pw:pw + W]
    return g if g.flags.c_contiguous else xp.ascontiguousarray(g)


# --- Numba kernels (CPU overrides of impls; the rules never see them) -------------------------

_NB = None


def _numba():
    """Compiled CPU kernels, or None without Numba. Compiled on first use, cached on disk."""
    global _NB
    if _NB is None:
        try:
            import numba
        except ImportError:  # pragma: no cover - numba is a dependency
            _NB = False
            return None
        _NB = _build_kernels(numba)
    return _NB or None


def _build_kernels(numba):
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def relu(x):
        out = np.empty_like(x)
        xf, of = x.reshape(-1), out.reshape(-1)
        zero = np.zeros(1, x.dtype)[0]
        for i in range(xf.size):
            v = xf[i]
            of[i] = zero if v <= 0 else v   # NaN propagates
        return out

    @jit
    def max_pool22(x, Ho, Wo):
        N, C = x.shape[0], x.shape[1]
        out = np.empty((N, C, Ho, Wo), x.dtype)
        for n in range(N):
            for c in range(C):
                for oy in range(Ho):
                    for ox in range(Wo):
                        a, b = x[n, c, 2 * oy, 2 * ox], x[n, c, 2 * oy, 2 * ox + 1]
                        d, e = x[n, c, 2 * oy + 1, 2 * ox], x[n, c, 2 * oy + 1, 2 * ox + 1]
                        m = a if (a >= b or a != a) else b
                        m2 = d if (d >= e or d != d) else e
                        out[n, c, oy, ox] = m if (m >= m2 or m != m) else m2
        return out

    @jit
    def max_pool22_grad(ct, x, y):
        # the first (row-major) element of each 2x2 window equal to its max gets ct
        N, C, Ho, Wo = ct.shape
        g = np.zeros(x.shape, ct.dtype)
        zero = np.zeros(1, ct.dtype)[0]
        for n in range(N):
            for c in range(C):
                for oy in range(Ho):
                    for ox in range(Wo):
                        t, v = y[n, c, oy, ox], ct[n, c, oy, ox]
                        nan = t != t  # NaN counts as the maximum
                        a, b = x[n, c, 2 * oy, 2 * ox], x[n, c, 2 * oy, 2 * ox + 1]
                        d = x[n, c, 2 * oy + 1, 2 * ox]
                        ha = (a == t) | (nan & (a != a))
                        hb = ((b == t) | (nan & (b != b))) & ~ha
                        hc = ((d == t) | (nan & (d != d))) & ~(ha | hb)
                        hd = ~(ha | hb | hc)
                        g[n, c, 2 * oy, 2 * ox] = v if ha else zero
                        g[n, c, 2 * oy, 2 * ox + 1] = v if hb else zero
                        g[n, c, 2 * oy + 1, 2 * ox] = v if hc else zero
                        g[n, c, 2 * oy + 1, 2 * ox + 1] = v if hd else zero
        return g

    @jit
    def relu_grad(ct, y):
        out = np.empty_like(ct)
        cf, yf, of = ct.reshape(-1), y.reshape(-1), out.reshape(-1)
        zero = np.zeros(1, ct.dtype)[0]
        for i in range(cf.size):
            of[i] = cf[i] if yf[i] > 0 else zero
        return out

    return dict(relu=relu, relu_grad=relu_grad, max_pool22=max_pool22, max_pool22_grad=max_pool22_grad)


def _is_22(xp, x, window, strides, padding, dilation):
    return (xp is np and window == (2, 2) and strides == (2, 2) and padding == (0, 0)
            and dilation == (1, 1) and x.dtype in (np.float32, np.float64) and x.size > 0
            and _numba() is not None)


# --- max pooling --------------------------------------------------------------------------------

max_pool2d_p = Primitive("max_pool2d", backward_name="MaxPool2DWithIndicesBackward0")
max_pool2d_grad_p = Primitive("max_pool2d_grad", backward_name="MaxPool2DWithIndicesBackwardBackward0")
max_pool2d_gather_p = Primitive("max_pool2d_gather")


def _max_pool_impl(x, *, window, strides, padding, dilation, ceil_mode, xp):
    hw = _pool_hw(x.shape, window, strides, padding, dilation, ceil_mode)
    if _is_22(xp, x, window, strides, padding, dilation) and hw == (x.shape[2] // 2, x.shape[3] // 2):
        return _numba()["max_pool22"](x, *hw)
    neg_inf = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xpad = _padded_for_pool(xp, x, hw, window, strides, padding, dilation, neg_inf)
    views = _offset_views(xpad, hw, window, strides, dilation)
    out = xp.array(next(views))
    for v in views:
        xp.maximum(out, v, out=out)
    return out


def _argmax_offsets(xp, x, y, hw, params):
    """For every window, the row-major offset of its first maximal element
    (an element equal to y, or NaN when y is NaN)."""
    neg_inf = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xpad = _padded_for_pool(xp, x, hw, params["window"], params["strides"], params["padding"],
                            params["dilation"], neg_inf)
    idx = xp.full(y.shape, -1, np.int32)
    nan_y = xp.isnan(y) if y.dtype.kind == "f" else None
    for k, v in enumerate(_offset_views(xpad, hw, params["window"], params["strides"],
                                        params["dilation"])):
        hit = v == y
        if nan_y is not None:
            hit |= nan_y & xp.isnan(v)
        hit &= idx < 0
        idx[hit] = k
    return idx


def _max_pool_grad_impl(ct, x, y, *, window, strides, padding, dilation, ceil_mode, xp):
    """Route ct (pooled shape) to the first arg-max of each window of x (y = max_pool2d(x))."""
    params = dict(window=window, strides=strides, padding=padding, dilation=dilation)
    hw = y.shape[2:]
    if _is_22(xp, x, window, strides, padding, dilation) and hw == (x.shape[2] // 2, x.shape[3] // 2) \
            and ct.dtype == x.dtype:
        return _numba()["max_pool22_grad"](ct, x, y)
    idx = _argmax_offsets(xp, x, y, hw, params)
    gpad = xp.zeros(x.shape[:2] + _pool_padded_hw(x.shape, hw, window, strides, padding, dilation),
                    ct.dtype)
    zero = ct.dtype.type(0)
    for k, v in enumerate(_offset_views(gpad, hw, window, strides, dilation)):
        v += xp.where(idx == k, ct, zero)
    return _crop_like(xp, gpad, x.shape, padding)


def _max_pool_gather_impl(t, x, y, *, window, strides, padding, dilation, ceil_mode, xp):
    """t (input shape) read at the first arg-max of each window of x: pooled shape."""
    params = dict(window=window, strides=strides, padding=padding, dilation=dilation)
    hw = y.shape[2:]
    idx = _argmax_offsets(xp, x, y, hw, params)
    tpad = _padded_for_pool(xp, t, hw, window, strides, padding, dilation, 0)
    out = xp.zeros(y.shape, t.dtype)
    for k, v in enumerate(_offset_views(tpad, hw, window, strides, dilation)):
        hit = idx == k
        out[hit] = v[hit]
    return out




def _max_pool_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    y = max_pool2d_p.bind(x, **params)
    return y, max_pool2d_gather_p.bind(t, x, y, **params)


def _max_pool_vjp(needs, ct, out, x, **params):
    return [max_pool2d_grad_p.bind(ct, x, out, **params)]


max_pool2d_p.def_impl(_max_pool_impl)
max_pool2d_p.def_abstract_eval(_pool_aval("max_pool2d"))
max_pool2d_p.def_jvp(_max_pool_jvp)
max_pool2d_p.def_vjp(_max_pool_vjp)

# max_pool2d_grad(ct, x, y) and max_pool2d_gather(t, x, y) are linear in their first
# input and transposes of each other; x and y only choose the routing, which is
# piecewise constant in x, so they get zero derivatives.
max_pool2d_grad_p.def_impl(_max_pool_grad_impl)
max_pool2d_grad_p.def_abstract_eval(lambda ct, x, y, **params: ShapedArray(x.shape, ct.dtype))
max_pool2d_grad_p.def_jvp(lambda primals, tangents, **params: (
    max_pool2d_grad_p.bind(*primals, **params),
    None if tangents[0] is None else max_pool2d_grad_p.bind(tangents[0], *primals[1:], **params)))
max_pool2d_grad_p.def_vjp(lambda needs, ct, out, c, x, y, **params: [
    max_pool2d_gather_p.bind(ct, x, y, **params) if needs[0] else None, None, None])

max_pool2d_gather_p.def_impl(_max_pool_gather_impl)
max_pool2d_gather_p.def_abstract_eval(lambda t, x, y, **params: ShapedArray(y.shape, t.dtype))
max_pool2d_gather_p.def_jvp(lambda primals, tangents, **params: (
    max_pool2d_gather_p.bind(*primals, **params),
    None if tangents[0] is None else max_pool2d_gather_p.bind(tangents[0], *primals[1:], **params)))
max_pool2d_gather_p.def_vjp(lambda needs, ct, out, t, x, y, **params: [
    max_pool2d_grad_p.bind(ct, x, y, **params) if needs[0] else None, None, None])


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max over windows of x [N, C, H, W] (PyTorch's max_pool2d). The derivative goes to
    the first maximal element of each window."""
    return _checked_bind(max_pool2d_p, (x,), _pool_params(kernel_size, stride, padding, dilation,
                                                          ceil_mode))


def max_pool2d_grad(ct, x, y, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return max_pool2d_grad_p.bind(ct, x, y, **_pool_params(kernel_size, stride, padding, dilation,
                                                           ceil_mode))


def max_pool2d_gather(t, x, y, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return max_pool2d_gather_p.bind(t, x, y, **_pool_params(kernel_size, stride, padding, dilation,
                                                            ceil_mode))


# --- average pooling ------------------------------------------------------------------------------

avg_pool2d_p = Primitive("avg_pool2d", backward_name="AvgPool2DBackward0")
avg_pool2d_grad_p = Primitive("avg_pool2d_grad", backward_name="AvgPool2DBackwardBackward0")


def _avg_divisor(shape, hw, window, strides, padding, count_include_pad, divisor_override, dtype):
    """The divisor of each output pixel, PyTorch's rule: a scalar or an [Ho, Wo] array."""
    if divisor_override:
        return np.array(divisor_override, dtype)
    counts = []
    for n, o, k, s, p in zip(shape[2:], hw, window, strides, padding):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start
        if not count_include_pad:
            size = np.minimum(end, n) - np.maximum(start, 0)
        counts.append(size)
    div = np.outer(counts[0], counts[1]).astype(dtype)
    return np.array(div.flat[0], dtype) if (div == div.flat[0]).all() else div


def _avg_pool_impl(x, *, window, strides, padding, ceil_mode, count_include_pad, divisor_override,
                   xp, dilation=(1, 1)):
    hw = _pool_hw(x.shape, window, strides, padding, dilation, ceil_mode)
    xpad = _padded_for_pool(xp, x, hw, window, strides, padding, dilation, 0)
    views = _offset_views(xpad, hw, window, strides, dilation)
    out = xp.array(next(views))
    for v in views:
        out += v
    d = _avg_divisor(x.shape, hw, window, strides, padding, count_include_pad, divisor_override,
                     x.dtype)
    out /= d if xp is np else xp.asarray(d)
    return out


def _avg_pool_grad_impl(ct, *, x_shape, window, strides, padding, ceil_mode, count_include_pad,
                        divisor_override, xp, dilation=(1, 1)):
    hw = ct.shape[2:]
    d = _avg_divisor(x_shape, hw, window, strides, padding, count_include_pad, divisor_override,
                     ct.dtype)
    g = ct / (d if xp is np else xp.asarray(d))
    gpad = xp.zeros(tuple(x_shape[:2]) + _pool_padded_hw(x_shape, hw, window, strides, padding,
                                                         dilation), ct.dtype)
    for v in _offset_views(gpad, hw, window, strides, dilation):
        v += g
    return _crop_like(xp, gpad, x_shape, padding)




avg_pool2d_p.def_impl(_avg_pool_impl)
avg_pool2d_p.def_abstract_eval(
    lambda x, **params: _pool_aval("avg_pool2d")(x, dilation=(1, 1), **params))
avg_pool2d_p.def_jvp(lambda primals, tangents, **params: (
    avg_pool2d_p.bind(primals[0], **params), avg_pool2d_p.bind(tangents[0], **params)))
avg_pool2d_p.def_vjp(lambda needs, ct, out, x, **params: [
    avg_pool2d_grad_p.bind(ct, x_shape=shape_of(x), **params)])

avg_pool2d_grad_p.def_impl(_avg_pool_grad_impl)
avg_pool2d_grad_p.def_abstract_eval(lambda ct, *, x_shape, **params: ShapedArray(x_shape, ct.dtype))
avg_pool2d_grad_p.def_jvp(lambda primals, tangents, **params: (
    avg_pool2d_grad_p.bind(primals[0], **params), avg_pool2d_grad_p.bind(tangents[0], **params)))
avg_pool2d_grad_p.def_vjp(lambda needs, ct, out, g, *, x_shape, **params: [
    avg_pool2d_p.bind(ct, **params)])


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over windows of x [N, C, H, W] (PyTorch's avg_pool2d); linear."""
    params = _pool_params(kernel_size, stride, padding, 1, ceil_mode)
    del params["dilation"]
    if divisor_override is not None and int(divisor_override) <= 0:
        raise ValueError(f"avg_pool2d: divisor_override must be positive, got {divisor_override}")
    params.update(count_include_pad=bool(count_include_pad),
                  divisor_override=None if divisor_override is None else int(divisor_override))
    return _checked_bind(avg_pool2d_p, (x,), params)


def avg_pool2d_grad(ct, x_shape, kernel_size, stride=None, padding=0, ceil_mode=False,
                    count_include_pad=True, divisor_override=None):
    params = _pool_params(kernel_size, stride, padding, 1, ceil_mode)
    del params["dilation"]
    return avg_pool2d_grad_p.bind(ct, x_shape=tuple(x_shape), count_include_pad=bool(count_include_pad),
                                  divisor_override=divisor_override, **params)


# --- linear: x @ w.T + b ----------------------------------------------------------------------

linear_p = Primitive("linear", backward_name="AddmmBackward0")


def _linear_aval(x, w, b):
    if w.ndim != 2 or x.ndim < 1 or x.shape[-1] != w.shape[1] or b.shape != (w.shape[0],):
        raise ShapeError(f"linear: input shape {x.shape}, weight shape {w.shape} and bias shape "
                         f"{b.shape} do not fit (expected [..., in], [out, in], [out])")
    if not x.dtype == w.dtype == b.dtype:
        raise TypeError(f"linear: dtypes {x.dtype}, {w.dtype} and {b.dtype} differ")
    return ShapedArray(x.shape[:-1] + (w.shape[0],), x.dtype)


def _linear_impl(x, w, b, *, xp):
    lead = x.shape[:-1]
    x2 = x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x
    out = xp.matmul(x2, w.T)          # one GEMM; the bias is added in place (no temporary)
    out += b
    return out.reshape(lead + (w.shape[0],)) if x.ndim != 2 else out


def _linear_dims(x_ndim):
    return (((x_ndim - 1,), (1,)), ((), ()))


def _linear_jvp(primals, tangents):
    from .linalg import dot_general
    x, w, b = primals
    tx, tw, tb = tangents
    out = linear_p.bind(x, w, b)
    shape = shape_of(out)
    nd = len(shape)
    terms = []
    if tx is not None:
        terms.append(dot_general(tx, w, _linear_dims(nd)))
    if tw is not None:
        terms.append(dot_general(x, tw, _linear_dims(nd)))
    if tb is not None:
        terms.append(broadcast_in_dim(tb, shape, (nd - 1,)))
    out_dot = None
    for t in terms:
        out_dot = t if out_dot is None else add(out_dot, t)
    return out, out_dot


def _linear_vjp(needs, ct, out, x, w, b):
    from .linalg import dot_general
    nd = len(shape_of(ct))
    lead = tuple(range(nd - 1))
    return [dot_general(ct, w, (((nd - 1,), (0,)), ((), ()))) if needs[0] else None,
            dot_general(ct, x, ((lead, lead), ((), ()))) if needs[1] else None,
            reduce_sum(ct, lead) if needs[2] else None]


linear_p.def_impl(_linear_impl)
linear_p.def_abstract_eval(_linear_aval)
linear_p.def_jvp(_linear_jvp)
linear_p.def_vjp(_linear_vjp)


def linear(x, w, b=None):
    """x @ w.T + b (PyTorch's linear: w is [out, in]); without b a dot_general."""
    if b is None:
        from .linalg import dot_general
        return dot_general(x, w, _linear_dims(len(shape_of(x))))
    return _checked_bind(linear_p, (x, w, b), {})


# --- relu -----------------------------------------------------------------------------------------

relu_p = Primitive("relu")


def _relu_impl(x, *, xp):
    if xp is np and x.dtype in (np.float32, np.float64) and x.size and _numba() is not None:
        return _numba()["relu"](np.ascontiguousarray(x))
    return xp.maximum(x, x.dtype.type(0))


relu_p.def_impl(_relu_impl)
relu_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))


def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = relu(x)
    return out, relu_grad_p.bind(t, out)


relu_p.def_jvp(_relu_jvp)
relu_p.def_vjp(lambda needs, ct, out, x: [relu_grad_p.bind(ct, out)])

# relu_grad(ct, y) = ct where y > 0, else 0 (PyTorch's threshold_backward; a NaN cotangent at
# an inactive unit is zeroed, as PyTorch and JAX both do). Linear in ct and its own
# transpose; y only selects, so it gets no derivative.
relu_grad_p = Primitive("relu_grad", backward_name="ThresholdBackwardBackward0")


def _relu_grad_impl(ct, y, *, xp):
    if xp is np and ct.dtype == y.dtype and ct.dtype in (np.float32, np.float64) and ct.size \
            and ct.shape == y.shape and _numba() is not None:
        return _numba()["relu_grad"](np.ascontiguousarray(ct), np.ascontiguousarray(y))
    return xp.where(y > 0, ct, ct.dtype.type(0))


relu_grad_p.def_impl(_relu_grad_impl)
relu_grad_p.def_abstract_eval(
    lambda ct, y: ShapedArray(elementwise_shape("relu_grad", (ct, y)), ct.dtype))
relu_grad_p.def_jvp(lambda primals, tangents: (
    relu_grad_p.bind(*primals),
    None if tangents[0] is None else relu_grad_p.bind(tangents[0], primals[1])))
relu_grad_p.def_vjp(lambda needs, ct, out, c, y: [relu_grad_p.bind(ct, y) if needs[0] else None, None])


def relu(x):
    """max(x, 0) with relu'(0) = 0; NaN propagates."""
    return relu_p.bind(x)


# --- log_softmax ------------------------------------------------------------------------------------

log_softmax_p = Primitive("log_softmax", backward_name="LogSoftmaxBackward0")


def _log_softmax_impl(x, *, axis, xp):
    m = x.max(axis=axis, keepdims=True)
    if x.dtype.kind == "f":
        m = xp.where(xp.isfinite(m), m, x.dtype.type(0))
    s = x - m
    with np.errstate(divide="ignore"):
        lse = xp.log(xp.exp(s).sum(axis=axis, keepdims=True))
    s -= lse
    return s


def _log_softmax_aval(x, *, axis):
    if not is_float(x.dtype):
        raise TypeError(f"log_softmax: expected a floating-point input, got dtype {x.dtype}")
    return ShapedArray(x.shape, x.dtype)


def _log_softmax_jvp(primals, tangents, *, axis):
    (x,), (t,) = primals, tangents
    out = log_softmax(x, axis)
    shape = shape_of(out)
    return out, sub(t, expand_back(reduce_sum(mul(exp(out), t), (axis,)), shape, (axis,)))


def _log_softmax_vjp(needs, ct, out, x, *, axis):
    shape = shape_of(out)
    return [sub(ct, mul(exp(out), expand_back(reduce_sum(ct, (axis,)), shape, (axis,))))]


log_softmax_p.def_impl(_log_softmax_impl)
log_softmax_p.def_abstract_eval(_log_softmax_aval)
log_softmax_p.def_jvp(_log_softmax_jvp)
log_softmax_p.def_vjp(_log_softmax_vjp)


def log_softmax(x, axis: int = -1):
    """log(softmax(x)) along `axis`, computed stably (max subtracted first)."""
    nd = len(shape_of(x))
    return log_softmax_p.bind(x, axis=int(axis) % max(nd, 1) if nd else 0)


def softmax(x, axis: int = -1):
    return exp(log_softmax(x, axis))


# --- nll_loss: -sum(weights * logp) -----------------------------------------------------------------

nll_loss_p = Primitive("nll_loss", backward_name="NllLossBackward0")


def _nll_impl(logp, w, *, axes, xp):
    prod = logp * w
    return xp.negative(prod.sum(axis=axes) if axes else prod)


def _nll_aval(logp, w, *, axes):
    if logp.shape != w.shape:
        raise ShapeError(f"nll_loss: log-probabilities of shape {logp.shape} and target weights of "
                         f"shape {w.shape} differ")
    return ShapedArray(tuple(d for i, d in enumerate(logp.shape) if i not in axes), logp.dtype)


def _nll_jvp(primals, tangents, *, axes):
    logp, w = primals
    tl, tw = tangents
    out = nll_loss_p.bind(logp, w, axes=axes)
    out_dot = None if tl is None else nll_loss_p.bind(tl, w, axes=axes)
    if tw is not None:
        t = nll_loss_p.bind(logp, tw, axes=axes)
        out_dot = t if out_dot is None else add(out_dot, t)
    return out, out_dot


def _nll_vjp(needs, ct, out, logp, w, *, axes):
    shape = shape_of(logp)
    ctb = neg(expand_back(ct, shape, axes))
    return [mul(ctb, w) if needs[0] else None, mul(ctb, logp) if needs[1] else None]


nll_loss_p.def_impl(_nll_impl)
nll_loss_p.def_abstract_eval(_nll_aval)
nll_loss_p.def_jvp(_nll_jvp)
nll_loss_p.def_vjp(_nll_vjp)


def _unbox(x):
    if facade.tensor_type is not None and isinstance(x, facade.tensor_type):
        return x._value
    return x


def _target_weights(logp, target, weight, ignore_index, reduction, label_smoothing):
    """Per-element weights W with loss = -sum(W * logp) reduced as asked (PyTorch's
    nll_loss / cross_entropy semantics, including ignore_index, class weights and
    label smoothing), and the axes to sum over."""
    shape = shape_of(logp)
    dtype = aval_of(logp).dtype
    C = shape[1]
    target = _unbox(target)
    if not isinstance(target, Tracer):
        target = np.asarray(target)
    t_aval = aval_of(target)
    class_bcast = lambda v: broadcast_in_dim(v, shape, (1,))  # noqa: E731
    if is_float(t_aval.dtype):  # class probabilities
        if t_aval.shape != shape:
            raise ShapeError(f"cross_entropy: probability targets of shape {t_aval.shape} must match "
                             f"the input shape {shape}")
        W = convert_element_type(target, dtype)
        if label_smoothing:
            W = add(mul(W, const(W, 1.0 - label_smoothing)), const(W, label_smoothing / C))
        if weight is not None:
            W = mul(W, class_bcast(convert_element_type(_unbox(weight), dtype)))
        denom = float(np.prod(shape) // C) if reduction == "mean" else None
        if denom is not None:
            W = div(W, const(W, denom))
        return W
    if t_aval.shape != shape[:1] + shape[2:]:
        raise ShapeError(f"nll_loss: target of shape {t_aval.shape} does not fit an input of shape "
                         f"{shape}; expected {shape[:1] + shape[2:]} (class indices)")
    if not isinstance(target, Tracer):
        bad = (target != ignore_index) & ((target < 0) | (target >= C))
        if bad.any():
            raise IndexError(f"Target {int(target[bad].flat[0])} is out of bounds: the input has {C} "
                             f"classes (valid targets 0..{C - 1}, or ignore_index={ignore_index})")
        w_val = None if weight is None else _unbox(weight)
        if type(target) is np.ndarray and (w_val is None or type(w_val) is np.ndarray):
            return _target_weights_np(shape, dtype, target, w_val, ignore_index, reduction,
                                      label_smoothing)
    t_dims = (0,) + tuple(range(2, len(shape)))
    xp = np if isinstance(target, Tracer) else xp_of((target,))  # constants on target's device
    classes = xp.arange(C, dtype=t_aval.dtype)
    tb = broadcast_in_dim(target, shape, t_dims)
    onehot = convert_element_type(eq(tb, broadcast_in_dim(classes, shape, (1,))), dtype)
    keep = convert_element_type(ne(target, xp.asarray(ignore_index, t_aval.dtype)), dtype)
    keep_b = broadcast_in_dim(keep, shape, t_dims)
    wb = None if weight is None else class_bcast(convert_element_type(_unbox(weight), dtype))
    W = onehot if wb is None else mul(onehot, wb)
    if label_smoothing:
        smooth = broadcast_in_dim(const(W, label_smoothing / C), shape, ()) if wb is None \
            else mul(wb, const(wb, label_smoothing / C))
        W = add(mul(W, const(W, 1.0 - label_smoothing)), smooth)
    W = mul(W, keep_b)
    if reduction == "mean":
        per = keep if weight is None else reduce_sum(mul(mul(onehot, wb), keep_b), (1,))
        denom = reduce_sum(per, tuple(range(len(shape) - 1)))
        W = div(W, broadcast_in_dim(denom, shape, ()))
    return W


def _target_weights_np(shape, dtype, target, weight, ignore_index, reduction, label_smoothing):
    """_target_weights for concrete NumPy targets (and class weights): the same values,
    computed directly (the weights are constants of the graph either way)."""
    C = shape[1]
    keep = target != ignore_index
    idx = np.expand_dims(np.where(keep, target, 0), 1)
    W = np.zeros(shape, dtype)
    np.put_along_axis(W, idx, 1, axis=1)
    bshape = (1, C) + (1,) * (len(shape) - 2)
    wb = None if weight is None else weight.astype(dtype, copy=False).reshape(bshape)
    if wb is not None:
        W *= wb
    if label_smoothing:
        W *= dtype.type(1.0 - label_smoothing)
        W += (np.ones(bshape, dtype) if wb is None else wb) * dtype.type(label_smoothing / C)
    keep_b = np.expand_dims(keep, 1)
    W *= keep_b
    if reduction == "mean":
        if wb is None:
            denom = dtype.type(keep.sum())
        else:
            denom = np.take_along_axis(np.broadcast_to(wb, shape), idx, 1)[:, 0][keep].sum(dtype=dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            W /= denom
    return W


_REDUCTIONS = ("mean", "sum", "none")


def _nll(logp, target, weight, ignore_index, reduction, label_smoothing, name):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{name}: label_smoothing must be in [0, 1], got {label_smoothing}")
    shape = shape_of(logp)
    if len(shape) == 1:  # unbatched: [C] input, scalar target
        t = _unbox(target)
        t_shape = shape_of(t) if isinstance(t, Tracer) else np.shape(t)
        if len(t_shape) == 1:
            t = reshape(t, (1,) + tuple(t_shape)) if isinstance(t, Tracer) else np.reshape(t, (1, -1))
        else:
            t = reshape(t, (1,)) if isinstance(t, Tracer) else np.reshape(t, (1,))
        out = _nll(reshape(logp, (1,) + shape), t, weight, ignore_index, reduction, label_smoothing,
                   name)
        return reshape(out, ()) if reduction == "none" else out
    if len(shape) < 2:
        raise ShapeError(f"{name}: expected an input of shape [N, C, ...] or [C], got {shape}")
    with np.errstate(invalid="ignore", divide="ignore"):
        W = _target_weights(logp, target, weight, ignore_index, reduction, label_smoothing)
        axes = (1,) if reduction == "none" else tuple(range(len(shape)))
        return nll_loss_p.bind(logp, W, axes=axes)


def nll_loss(logp, target, weight=None, ignore_index: int = -100, reduction: str = "mean"):
    """Negative log-likelihood of log-probabilities logp [N, C, ...] at integer targets
    [N, ...] (PyTorch's nll_loss). Targets are not differentiated."""
    return _nll(logp, target, weight, ignore_index, reduction, 0.0, "nll_loss")


def cross_entropy(logits, target, weight=None, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0):
    """PyTorch's cross_entropy: log_softmax over axis 1, then nll_loss. `target` holds
    class indices [N, ...] or class probabilities shaped like `logits`."""
    shape = shape_of(logits)
    logp = log_softmax(logits, 1 if len(shape) > 1 else 0)
    return _nll(logp, target, weight, ignore_index, reduction, float(label_smoothing),
                "cross_entropy")


# --- batching rules (vmap) ----------------------------------------------------------------------
# Image ops fold the vmapped axis into the batch axis N; anything else (per-example kernels,
# per-example weight gradients) falls back to vmap's loop.

def _fold_batch(prim, n_fold):
    """Rule for a primitive whose first `n_fold` operands are [N, ...] images: with the
    vmapped axis moved to the front, [B, N, ...] is reshaped to [B*N, ...] and back."""
    from ..interpreters.batching import batch_front, loop_batch

    def rule(n, vals, dims, **params):
        if any(d is not None for d in dims[n_fold:]):
            return loop_batch(prim, n, vals, dims, **params)
        lead = batch_front(n, vals[:n_fold], dims[:n_fold])
        folded = [reshape(v, (shape_of(v)[0] * shape_of(v)[1],) + tuple(shape_of(v)[2:])) for v in lead]
        out = prim.bind(*folded, *vals[n_fold:], **params)
        s = shape_of(out)
        return reshape(out, (n, s[0] // n) + tuple(s[1:])), 0
    return rule


def _log_softmax_batch(n, vals, dims, *, axis):
    from ..interpreters.batching import move_to_front
    (x,), (d,) = vals, dims
    return log_softmax_p.bind(move_to_front(x, d), axis=axis + 1), 0


def _nll_batch(n, vals, dims, *, axes):
    from ..interpreters.batching import batch_front
    logp, w = batch_front(n, vals, dims)
    return nll_loss_p.bind(logp, w, axes=tuple(a + 1 for a in axes)), 0


def _linear_batch(n, vals, dims):
    from ..interpreters.batching import loop_batch, move_to_front
    if dims[1] is not None or dims[2] is not None:
        return loop_batch(linear_p, n, vals, dims)
    return linear_p.bind(move_to_front(vals[0], dims[0]), vals[1], vals[2]), 0


def _avg_pool_grad_batch(n, vals, dims, *, x_shape, **params):
    from ..interpreters.batching import move_to_front
    (g,), (d,) = vals, dims
    g = move_to_front(g, d)
    s = shape_of(g)
    out = avg_pool2d_grad_p.bind(reshape(g, (s[0] * s[1],) + tuple(s[2:])),
                                 x_shape=(n * x_shape[0],) + tuple(x_shape[1:]), **params)
    return reshape(out, (n,) + tuple(x_shape)), 0


def _def_batch_rules():
    from ..core.rules import def_vectorized
    def_vectorized(relu_p)
    def_vectorized(relu_grad_p)
    conv2d_p.def_batch(_fold_batch(conv2d_p, 1))
    conv2d_input_grad_p.def_batch(_fold_batch(conv2d_input_grad_p, 1))
    for p in (max_pool2d_p, avg_pool2d_p):
        p.def_batch(_fold_batch(p, 1))
    for p in (max_pool2d_grad_p, max_pool2d_gather_p):
        p.def_batch(_fold_batch(p, 3))
    avg_pool2d_grad_p.def_batch(_avg_pool_grad_batch)
    log_softmax_p.def_batch(_log_softmax_batch)
    nll_loss_p.def_batch(_nll_batch)
    linear_p.def_batch(_linear_batch)


_def_batch_rules()
