"""Sliding-block primitives: unfold (im2col) and fold (col2im), PyTorch's F.unfold / F.fold.

unfold(x) [N, C, H, W] -> [N, C*kh*kw, L] copies every kernel-sized block of the (zero-padded)
image into a column; row c*kh*kw + i*kw + j holds tap (i, j) of channel c, and the L columns
are the blocks in row-major order. fold is its adjoint: it sums every column back into the
image. Both are linear and each is the other's transpose, so every derivative of either is
again one of the two. Their kernels are the convolution's own im2col/col2im.
"""
from __future__ import annotations

from ...core.avals import ShapedArray
from ...core.errors import FgradValueError, ShapeError
from ...core.primitive import Primitive
from ...core.rules import def_linear
from ._geometry import _checked_bind, _dilated, _fold_batch, _pair
from .conv import col2im, im2col

__all__ = ["unfold", "fold", "unfold_p", "fold_p"]

unfold_p = Primitive("unfold")
fold_p = Primitive("fold")


def _blocks(name, hw, kernel, dilation, padding, stride):
    """The number of blocks along each spatial axis, after PyTorch's checks."""
    out = tuple((n + 2 * p - _dilated(k, d)) // s + 1
                for n, k, d, p, s in zip(hw, kernel, dilation, padding, stride))
    if min(out) <= 0:
        raise ShapeError(f"{name}: Given input with spatial size {tuple(hw)}, kernel_size={kernel}, "
                         f"dilation={dilation}, padding={padding}, calculated shape of the array of "
                         f"sliding blocks as {out}, but its components must be at least one "
                         "(use a smaller kernel or more padding)")
    return out


def _unfold_aval(x, *, kernel, dilation, padding, stride):
    if x.ndim != 4:
        raise ShapeError(f"unfold: expected a 4-D input [N, C, H, W], got shape {x.shape}")
    blocks = _blocks("unfold", x.shape[2:], kernel, dilation, padding, stride)
    return ShapedArray((x.shape[0], x.shape[1] * kernel[0] * kernel[1], blocks[0] * blocks[1]),
                       x.dtype)


def _fold_aval(cols, *, output_size, kernel, dilation, padding, stride):
    if cols.ndim != 3:
        raise ShapeError(f"fold: expected a 3-D input [N, C*kh*kw, L], got shape {cols.shape}")
    K = kernel[0] * kernel[1]
    if cols.shape[1] % K:
        raise ShapeError(f"fold: Expected size of input's dimension 1 to be divisible by the product "
                         f"of kernel_size, but got input.size(1)={cols.shape[1]} and "
                         f"kernel_size={kernel} (input shape {cols.shape})")
    blocks = _blocks("fold", output_size, kernel, dilation, padding, stride)
    if cols.shape[2] != blocks[0] * blocks[1]:
        raise ShapeError(f"fold: Given output_size={output_size}, kernel_size={kernel}, "
                         f"dilation={dilation}, padding={padding}, stride={stride}, expected size of "
                         f"input's dimension 2 to match the calculated number of sliding blocks "
                         f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                         f"input.size(2)={cols.shape[2]} (input shape {cols.shape})")
    return ShapedArray((cols.shape[0], cols.shape[1] // K) + tuple(output_size), cols.dtype)


def _pads(padding):
    return tuple((p, p) for p in padding)


def _unfold_impl(x, *, kernel, dilation, padding, stride, xp):
    hw = _blocks("unfold", x.shape[2:], kernel, dilation, padding, stride)
    return im2col(xp, x, kernel, stride, _pads(padding), dilation, hw)


def _fold_impl(cols, *, output_size, kernel, dilation, padding, stride, xp):
    hw = _blocks("fold", output_size, kernel, dilation, padding, stride)
    N, CK = cols.shape[:2]
    C = CK // (kernel[0] * kernel[1])
    if not cols.flags.c_contiguous:
        cols = xp.ascontiguousarray(cols)
    return col2im(xp, cols.reshape(N, C, kernel[0], kernel[1], hw[0], hw[1]),
                  (N, C) + tuple(output_size), kernel, stride, _pads(padding), dilation, hw)


unfold_p.def_impl(_unfold_impl)
unfold_p.def_abstract_eval(_unfold_aval)
def_linear(unfold_p, lambda ct, x_aval, **params: fold_p.bind(ct, output_size=x_aval.shape[2:],
                                                                **params))
unfold_p.def_batch(_fold_batch(unfold_p, 1))

fold_p.def_impl(_fold_impl)
fold_p.def_abstract_eval(_fold_aval)
def_linear(fold_p, lambda ct, c_aval, *, output_size, **params: unfold_p.bind(ct, **params))
fold_p.def_batch(_fold_batch(fold_p, 1))


def _block_params(name, kernel_size, dilation, padding, stride):
    params = dict(kernel=_pair(kernel_size, "kernel_size"), dilation=_pair(dilation, "dilation"),
                  padding=_pair(padding, "padding"), stride=_pair(stride, "stride"))
    for key, low in (("kernel", 1), ("dilation", 1), ("padding", 0), ("stride", 1)):
        if min(params[key]) < low:
            raise FgradValueError(f"{name}: {key} must be {'non-negative' if low == 0 else 'positive'}, "
                             f"got {params[key]}")
    return params


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of x [N, C, H, W] as columns [N, C*kh*kw, L] (PyTorch's unfold)."""
    return _checked_bind(unfold_p, (x,), _block_params("unfold", kernel_size, dilation, padding,
                                                       stride))


def fold(cols, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: columns [N, C*kh*kw, L] summed back into [N, C, *output_size]."""
    params = _block_params("fold", kernel_size, dilation, padding, stride)
    out = tuple(int(n) for n in _pair(output_size, "output_size"))
    if min(out) < 1:
        raise FgradValueError(f"fold: output_size must be positive, got {out}")
    return _checked_bind(fold_p, (cols,), dict(output_size=out, **params))

