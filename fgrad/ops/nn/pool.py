"""Pooling primitives, in two closed families:
  * max_pool2d -> max_pool2d_grad (routes the cotangent to the arg-max) <-> max_pool2d_gather
    (reads at the arg-max), the last two linear and each other's transposes;
  * avg_pool2d <-> avg_pool2d_grad, linear and mutually transposed;
and max_pool2d_indices (where each window's maximum is, PyTorch's return_indices), which has
no derivative. Impls are CPU/GPU-agnostic NumPy code (xp); 2x2 max pooling on the CPU uses
a Numba kernel (fgrad.ops.numba_kernels). Images are NCHW.

Max pooling routes each window's cotangent to the *first* maximal element of the window
(row-major order inside the window, padding never chosen; NaN counts as maximal); ties are
not split, so gradients match PyTorch's, which fgrad.torch reproduces (the README's table of
derivatives at non-differentiable points lists this convention).
"""
from __future__ import annotations

import numpy as np

from ..numba_kernels import kernels as _numba
from ...core.avals import ShapedArray
from ...core.errors import FgradValueError
from ...core.primitive import Primitive
from ...core.rules import def_linear, def_nondiff, shape_of
from ..shape import move_to_front, reshape
from ._geometry import (
    _checked_bind,
    _crop_like,
    _fold_batch,
    _offset_views,
    _padded_for_pool,
    _pool_aval,
    _pool_hw,
    _pool_padded_hw,
    _pool_params,
)


def _is_22(xp, x, window, strides, padding, dilation):
    return (xp is np and window == (2, 2) and strides == (2, 2) and padding == (0, 0)
            and dilation == (1, 1) and x.dtype in (np.float32, np.float64) and x.size > 0
            and _numba() is not None)


# --- max pooling --------------------------------------------------------------------------------

max_pool2d_p = Primitive("max_pool2d")
max_pool2d_grad_p = Primitive("max_pool2d_grad")
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


def _valid_offsets(x_shape, hw, params):
    """For each window offset (i, j) in row-major order, a boolean [Ho, Wo] mask of the windows
    whose element at that offset lies inside x (not in the padding); None when all do."""
    rows, cols = ([(np.arange(o) * s + i * d - p) for i in range(k)]
                  for o, k, s, p, d in zip(hw, params["window"], params["strides"], params["padding"],
                                           params["dilation"]))
    H, W = x_shape[2:]
    if all(r.min() >= 0 and r.max() < H for r in rows) and all(c.min() >= 0 and c.max() < W for c in cols):
        return None
    return [((r >= 0) & (r < H))[:, None] & ((c >= 0) & (c < W))[None, :] for r in rows for c in cols]


def _argmax_offsets(xp, x, y, hw, params):
    """For every window, the row-major offset of its first maximal element (an element equal
    to y, or NaN when y is NaN) among those inside x: a window of -inf values picks its first
    element, not the padding (PyTorch's rule)."""
    neg_inf = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xpad = _padded_for_pool(xp, x, hw, params["window"], params["strides"], params["padding"],
                            params["dilation"], neg_inf)
    idx = xp.full(y.shape, -1, np.int32)
    nan_y = xp.isnan(y) if y.dtype.kind == "f" else None
    valid = _valid_offsets(x.shape, hw, params)
    for k, v in enumerate(_offset_views(xpad, hw, params["window"], params["strides"],
                                        params["dilation"])):
        hit = v == y
        if nan_y is not None:
            hit |= nan_y & xp.isnan(v)
        hit &= idx < 0
        if valid is not None:
            hit &= valid[k] if xp is np else xp.asarray(valid[k])
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
def_linear(max_pool2d_grad_p,
           lambda ct, c_aval, x, y, **params: max_pool2d_gather_p.bind(ct, x, y, **params))

max_pool2d_gather_p.def_impl(_max_pool_gather_impl)
max_pool2d_gather_p.def_abstract_eval(lambda t, x, y, **params: ShapedArray(y.shape, t.dtype))
def_linear(max_pool2d_gather_p,
           lambda ct, t_aval, x, y, **params: max_pool2d_grad_p.bind(ct, x, y, **params))

max_pool2d_p.def_batch(_fold_batch(max_pool2d_p, 1))
for _p in (max_pool2d_grad_p, max_pool2d_gather_p):
    _p.def_batch(_fold_batch(_p, 3))


# max_pool2d_indices(x): where each window's maximum is, as PyTorch's return_indices gives
# it: the flat index h * W + w into x's spatial plane of the window's first maximal element
# (int64, pooled shape). Piecewise constant in x: no derivative.

max_pool2d_indices_p = Primitive("max_pool2d_indices")


def _max_pool_indices_impl(x, *, window, strides, padding, dilation, ceil_mode, xp):
    params = dict(window=window, strides=strides, padding=padding, dilation=dilation)
    y = _max_pool_impl(x, ceil_mode=ceil_mode, xp=xp, **params)
    k = _argmax_offsets(xp, x, y, y.shape[2:], params).astype(np.int64)
    i, j = k // window[1], k % window[1]
    Ho, Wo = y.shape[2:]
    h = (xp.arange(Ho) * strides[0] - padding[0])[:, None] + i * dilation[0]
    w = (xp.arange(Wo) * strides[1] - padding[1])[None, :] + j * dilation[1]
    return h * x.shape[3] + w


def _max_pool_indices_aval(x, **params):
    out = _pool_aval("max_pool2d")(x, **params)
    return ShapedArray(out.shape, np.dtype(np.int64))


max_pool2d_indices_p.def_impl(_max_pool_indices_impl)
max_pool2d_indices_p.def_abstract_eval(_max_pool_indices_aval)
def_nondiff(max_pool2d_indices_p)
max_pool2d_indices_p.def_batch(_fold_batch(max_pool2d_indices_p, 1))


def max_pool2d_indices(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """For each window of max_pool2d(x, ...), the flat index h * W + w (int64) of its first
    maximal element in x's [H, W] plane (PyTorch's return_indices)."""
    return _checked_bind(max_pool2d_indices_p, (x,), _pool_params(kernel_size, stride, padding,
                                                                  dilation, ceil_mode))


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max over windows of x [N, C, H, W] (PyTorch's max_pool2d). The derivative goes to
    the first maximal element of each window."""
    return _checked_bind(max_pool2d_p, (x,), _pool_params(kernel_size, stride, padding, dilation,
                                                          ceil_mode))


def max_pool2d_grad(ct, x, y, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """The cotangent ct of y = max_pool2d(x) routed to the first maximum of each window (x's shape)."""
    return max_pool2d_grad_p.bind(ct, x, y, **_pool_params(kernel_size, stride, padding, dilation,
                                                           ceil_mode))


def max_pool2d_gather(t, x, y, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """t (x's shape) read at the first maximum of each window of x (y's shape): max_pool2d's jvp."""
    return max_pool2d_gather_p.bind(t, x, y, **_pool_params(kernel_size, stride, padding, dilation,
                                                            ceil_mode))


# --- average pooling ------------------------------------------------------------------------------

avg_pool2d_p = Primitive("avg_pool2d")
avg_pool2d_grad_p = Primitive("avg_pool2d_grad")


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
def_linear(avg_pool2d_p, lambda ct, x_aval, **params: avg_pool2d_grad_p.bind(
    ct, x_shape=x_aval.shape, **params))

avg_pool2d_grad_p.def_impl(_avg_pool_grad_impl)
avg_pool2d_grad_p.def_abstract_eval(lambda ct, *, x_shape, **params: ShapedArray(x_shape, ct.dtype))
def_linear(avg_pool2d_grad_p, lambda ct, g_aval, *, x_shape, **params: avg_pool2d_p.bind(ct, **params))


def _avg_pool_grad_batch(n, vals, dims, *, x_shape, **params):
    (g,), (d,) = vals, dims
    g = move_to_front(g, d)
    s = shape_of(g)
    out = avg_pool2d_grad_p.bind(reshape(g, (s[0] * s[1],) + tuple(s[2:])),
                                 x_shape=(n * x_shape[0],) + tuple(x_shape[1:]), **params)
    return reshape(out, (n,) + tuple(x_shape)), 0


avg_pool2d_p.def_batch(_fold_batch(avg_pool2d_p, 1))
avg_pool2d_grad_p.def_batch(_avg_pool_grad_batch)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over windows of x [N, C, H, W] (PyTorch's avg_pool2d); linear."""
    params = _pool_params(kernel_size, stride, padding, 1, ceil_mode)
    del params["dilation"]
    if divisor_override is not None and int(divisor_override) <= 0:
        raise FgradValueError(f"avg_pool2d: divisor_override must be positive, got {divisor_override}")
    params.update(count_include_pad=bool(count_include_pad),
                  divisor_override=None if divisor_override is None else int(divisor_override))
    return _checked_bind(avg_pool2d_p, (x,), params)


def avg_pool2d_grad(ct, x_shape, kernel_size, stride=None, padding=0, ceil_mode=False,
                    count_include_pad=True, divisor_override=None):
    """The transpose of avg_pool2d: ct spread evenly over each window, into shape `x_shape`."""
    params = _pool_params(kernel_size, stride, padding, 1, ceil_mode)
    del params["dilation"]
    return avg_pool2d_grad_p.bind(ct, x_shape=tuple(x_shape), count_include_pad=bool(count_include_pad),
                                  divisor_override=divisor_override, **params)
