"""Dense-layer and loss primitives: linear, relu (-> relu_grad, ct where y > 0, linear in ct
and its own transpose), log_softmax and nll_loss, with softmax and cross_entropy built on them.

Impls are CPU/GPU-agnostic NumPy code (xp); relu and relu_grad on the CPU use Numba kernels
(fgrad.ops.numba_kernels), float32 log_softmax and its backward the row kernels of
_softmax_kernels (through _softmax_rows, from _softmax_rows.MIN_ELEMENTS elements on).
nll_loss at class indices of [N, C] inputs gathers the N terms at the targets (_nll_picked);
other inputs take the one-hot target weights. relu'(0) = 0, and a NaN cotangent at an
inactive unit is zeroed: JAX and PyTorch agree on both, and fgrad.torch reproduces PyTorch's
gradients.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numba_kernels import kernels as _numba
from ...core.avals import ShapedArray, is_float
from ...core.errors import FgradIndexError, FgradTypeError, FgradValueError, ShapeError
from ...core.primitive import Primitive
from ...core.rules import def_linear, elementwise_shape, shape_of
from ...core.trace import Tracer, aval_of, xp_of
from .._batching import def_vectorized, loop_batch
from ..index import ARRAY, getitem
from ..elementwise import (
    _logistic,
    add,
    add_tangents,
    bilinear_tangent,
    const,
    convert_element_type,
    def_bilinear,
    div,
    eq,
    exp,
    logistic,
    lt,
    mul,
    ne,
    neg,
    scalar_lowering,
    select,
    sub,
)
from ..linalg import dot_general, dot_general_p, matmul_2d
from ..reduce import expand_back, reduce_sum
from ..shape import batch_front, broadcast_in_dim, move_to_front, reshape, transpose
from . import _softmax_rows
from ._geometry import _checked_bind

# --- linear: x @ w.T + b ----------------------------------------------------------------------

linear_p = Primitive("linear")


def _linear_aval(x, w, b):
    if w.ndim != 2 or x.ndim < 1 or x.shape[-1] != w.shape[1] or b.shape != (w.shape[0],):
        raise ShapeError(f"linear: input shape {x.shape}, weight shape {w.shape} and bias shape "
                         f"{b.shape} do not fit (expected [..., in], [out, in], [out])")
    if not x.dtype == w.dtype == b.dtype:
        raise FgradTypeError(f"linear: dtypes {x.dtype}, {w.dtype} and {b.dtype} differ")
    return ShapedArray(x.shape[:-1] + (w.shape[0],), x.dtype)


def _linear_impl(x, w, b, *, xp):
    lead = x.shape[:-1]
    x2 = x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x
    out = matmul_2d(x2, w.T, b, xp=xp)  # one GEMM with the bias (oneDNN's, or NumPy's + in place)
    return out.reshape(lead + (w.shape[0],)) if x.ndim != 2 else out


def _linear_dims(x_ndim):
    return (((x_ndim - 1,), (1,)), ((), ()))


def _linear_jvp(primals, tangents):
    # bilinear in (x, w) through dot_general, plus the bias (linear)
    x, w, b = primals
    tx, tw, tb = tangents
    out = linear_p.bind(x, w, b)
    shape = shape_of(out)
    nd = len(shape)
    out_dot = bilinear_tangent(dot_general_p, x, w, tx, tw, dimension_numbers=_linear_dims(nd))
    if tb is not None:
        out_dot = add_tangents(out_dot, broadcast_in_dim(tb, shape, (nd - 1,)))
    return out, out_dot


def _linear_vjp(needs, ct, out, x, w, b):
    nd = len(shape_of(ct))
    lead = tuple(range(nd - 1))
    return [dot_general(ct, w, (((nd - 1,), (0,)), ((), ()))) if needs[0] else None,
            dot_general(ct, x, ((lead, lead), ((), ()))) if needs[1] else None,
            reduce_sum(ct, lead) if needs[2] else None]


def _linear_batch(n, vals, dims):
    if dims[1] is not None or dims[2] is not None:
        return loop_batch(linear_p, n, vals, dims)
    return linear_p.bind(move_to_front(vals[0], dims[0]), vals[1], vals[2]), 0


linear_p.def_impl(_linear_impl)
linear_p.def_abstract_eval(_linear_aval)
linear_p.def_jvp(_linear_jvp)
linear_p.def_vjp(_linear_vjp)
linear_p.def_saves(inputs=(0, 1), output=False)
linear_p.def_batch(_linear_batch)


def linear(x, w, b=None):
    """x @ w.T + b (PyTorch's linear: w is [out, in]); without b a dot_general."""
    if b is None:
        return dot_general(x, w, _linear_dims(len(shape_of(x))))
    return _checked_bind(linear_p, (x, w, b), {})


# --- addmm: b + x @ wt, linear with its weight transposed (PyTorch's addmm(bias, input, weight.t())) --

addmm_p = Primitive("addmm")
_ADDMM_DIMS = (((1,), (0,)), ((), ()))


def _addmm_aval(b, x, wt):
    if x.ndim != 2 or wt.ndim != 2 or x.shape[1] != wt.shape[0] or b.shape != (wt.shape[1],):
        raise ShapeError(f"addmm: bias shape {b.shape}, input shape {x.shape} and matrix shape {wt.shape} "
                         "do not fit (expected [out], [n, in], [in, out])")
    if not x.dtype == wt.dtype == b.dtype:
        raise FgradTypeError(f"addmm: dtypes {b.dtype}, {x.dtype} and {wt.dtype} differ")
    return ShapedArray((x.shape[0], wt.shape[1]), x.dtype)


def _addmm_impl(b, x, wt, *, xp):
    return matmul_2d(x, wt, b, xp=xp)  # linear's GEMM (wt is the weight's transposed view there too)


def _addmm_jvp(primals, tangents):
    b, x, wt = primals
    tb, tx, twt = tangents
    out = addmm_p.bind(b, x, wt)
    out_dot = bilinear_tangent(dot_general_p, x, wt, tx, twt, dimension_numbers=_ADDMM_DIMS)
    if tb is not None:
        out_dot = add_tangents(out_dot, broadcast_in_dim(tb, shape_of(out), (1,)))
    return out, out_dot


def _addmm_vjp(needs, ct, out, b, x, wt):
    return [reduce_sum(ct, (0,)) if needs[0] else None,
            dot_general(ct, wt, (((1,), (1,)), ((), ()))) if needs[1] else None,
            # (ct^T x, weight-shaped, then transposed: the transpose node above wt turns it
            # back into a C-ordered weight gradient, as linear's own rule gives)
            transpose(dot_general(ct, x, (((0,), (0,)), ((), ()))), (1, 0)) if needs[2] else None]


addmm_p.def_impl(_addmm_impl)
addmm_p.def_abstract_eval(_addmm_aval)
addmm_p.def_jvp(_addmm_jvp)
addmm_p.def_vjp(_addmm_vjp)
addmm_p.def_saves(inputs=(1, 2), output=False)
addmm_p.def_batch(lambda n, vals, dims: loop_batch(addmm_p, n, vals, dims))


def addmm(b, x, wt):
    """b + x @ wt for a 2-D x: F.linear with the weight's transposed view wt (PyTorch's
    addmm(bias, input, weight.t()), the one GEMM of linear)."""
    return _checked_bind(addmm_p, (b, x, wt), {})


# --- relu -----------------------------------------------------------------------------------------

relu_p = Primitive("relu")


def _relu_impl(x, *, xp):
    # x.ndim: np.ascontiguousarray turns a 0-d array into shape (1,)
    if xp is np and x.dtype in (np.float32, np.float64) and x.size and x.ndim and _numba() is not None:
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
relu_p.def_saves(inputs=False)
def_vectorized(relu_p)
# as the Numba kernel: 0 where x <= 0 (so -0.0 gives 0.0), x elsewhere (NaN stays)
relu_p.def_lowering(lambda x: f"({x.const(0)} if {x} <= {x.const(0)} else {x})" if x.dtype.kind in "iuf" else None)

# relu_grad(ct, y) = ct where y > 0, else 0 (PyTorch's threshold_backward; a NaN cotangent at
# an inactive unit is zeroed, as PyTorch and JAX both do). Linear in ct and its own
# transpose; y only selects, so it gets no derivative.
relu_grad_p = Primitive("relu_grad")


def _relu_grad_impl(ct, y, *, xp):
    if xp is np and ct.dtype == y.dtype and ct.dtype in (np.float32, np.float64) and ct.size \
            and ct.ndim and ct.shape == y.shape and _numba() is not None:
        return _numba()["relu_grad"](np.ascontiguousarray(ct), np.ascontiguousarray(y))
    return xp.where(y > 0, ct, ct.dtype.type(0))


relu_grad_p.def_impl(_relu_grad_impl)
relu_grad_p.def_abstract_eval(
    lambda ct, y: ShapedArray(elementwise_shape("relu_grad", (ct, y)), ct.dtype))
def_linear(relu_grad_p, lambda ct, c_aval, y: relu_grad_p.bind(ct, y))
def_vectorized(relu_grad_p)
relu_grad_p.def_lowering(scalar_lowering("({0} if {1} > 0 else 0.0)", "f"))


def relu(x):
    """max(x, 0) with relu'(0) = 0; NaN propagates."""
    return relu_p.bind(x)


# --- softplus ----------------------------------------------------------------------------------------
# PyTorch's softplus: log(1 + exp(beta x)) / beta, and x itself where beta x > threshold. The
# smooth branch is logaddexp(beta x, 0) / beta (finite at any magnitude). Written as a composite
# it passed through logaddexp's max/abs and lost curvature at x == 0; as a primitive its
# derivative is softplus_grad = logistic(beta x) (1 where beta x > threshold), whose own
# derivative is beta s (1 - s), s = logistic(beta x), where beta x < threshold and 0 elsewhere.
# At beta x == threshold that is PyTorch's convention: value and first derivative from the
# smooth branch, second and higher derivatives 0 (softplus_double_backward masks x < threshold).

softplus_p = Primitive("softplus")
softplus_grad_p = Primitive("softplus_grad")


def _float_aval(name):
    def aval(x, **params):
        if not is_float(x.dtype):
            raise FgradTypeError(f"{name}: expected a floating-point input, got dtype {x.dtype}")
        return ShapedArray(x.shape, x.dtype)
    return aval


# Elements per block of the softplus impls on large arrays: each makes four or five
# temporaries as large as its input, which block by block stay small (a multiple of every
# SIMD width, so each element is computed as in the whole-array call).
_BLOCK = 1 << 16


def _blocked(fn):
    """The impl `fn(x, xp=..., **params)` of an element-wise function, run block by block on
    large contiguous NumPy arrays (its output has x's dtype)."""
    def impl(x, *, xp, **params):
        if xp is not np or x.size <= _BLOCK or not x.flags.c_contiguous:
            return fn(x, xp=xp, **params)
        out = np.empty(x.shape, x.dtype)
        flat, o = x.reshape(-1), out.reshape(-1)
        for i in range(0, flat.size, _BLOCK):
            o[i:i + _BLOCK] = fn(flat[i:i + _BLOCK], xp=xp, **params)
        return out
    return impl


@_blocked
def _softplus_impl(x, *, beta, threshold, xp):
    z = x * x.dtype.type(beta)
    with np.errstate(all="ignore"):
        smooth = xp.logaddexp(z, x.dtype.type(0)) / x.dtype.type(beta)
    return xp.asarray(xp.where(z > threshold, x, smooth), dtype=x.dtype)


@_blocked
def _softplus_grad_impl(x, *, beta, threshold, xp):
    z = x * x.dtype.type(beta)
    return xp.asarray(xp.where(z > threshold, x.dtype.type(1), _logistic(xp, xp.asarray(z))), dtype=x.dtype)


def _softplus_second(x, *, beta, threshold):
    """d softplus_grad / dx: beta s (1 - s) where beta x < threshold, else 0 (fgrad ops)."""
    z = mul(x, const(x, beta))
    s = logistic(z)
    curv = mul(const(x, beta), mul(s, sub(const(s, 1.0), s)))
    return select(lt(z, const(z, threshold)), curv, const(x, 0.0))


softplus_p.def_impl(_softplus_impl)
softplus_p.def_abstract_eval(_float_aval("softplus"))
softplus_p.def_jvp(lambda primals, tangents, **params: (
    softplus_p.bind(primals[0], **params), mul(tangents[0], softplus_grad_p.bind(primals[0], **params))))
softplus_p.def_vjp(lambda needs, ct, out, x, **params: [mul(ct, softplus_grad_p.bind(x, **params))])
def_vectorized(softplus_p)

softplus_grad_p.def_impl(_softplus_grad_impl)
softplus_grad_p.def_abstract_eval(_float_aval("softplus_grad"))
softplus_grad_p.def_jvp(lambda primals, tangents, **params: (
    softplus_grad_p.bind(primals[0], **params), mul(tangents[0], _softplus_second(primals[0], **params))))
softplus_grad_p.def_vjp(lambda needs, ct, out, x, **params: [mul(ct, _softplus_second(x, **params))])
def_vectorized(softplus_grad_p)


def _softplus_lowering(grad: bool):
    def rule(x, *, beta, threshold):
        if x.dtype.kind != "f":
            return None
        b, z, th = x.const(beta), f"({x} * {x.const(beta)})", x.const(threshold)
        smooth = f"fg_logistic({z})" if grad else f"(fg_logaddexp({z}, 0.0) / {b})"
        return f"({'1.0' if grad else x} if {z} > {th} else {smooth})"
    return rule


softplus_p.def_lowering(_softplus_lowering(False))
softplus_grad_p.def_lowering(_softplus_lowering(True))


def softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """PyTorch's softplus, log(1 + exp(beta x)) / beta, linear where beta x > threshold; finite
    at any magnitude, and smooth at 0 to every derivative order."""
    return softplus_p.bind(x, beta=float(beta), threshold=float(threshold))


# --- log_softmax ------------------------------------------------------------------------------------

log_softmax_p = Primitive("log_softmax")


def _log_softmax_impl(x, *, axis, xp):
    out = _softmax_rows.log_softmax(x, axis) if xp is np else None  # (large float32: a Numba kernel)
    if out is not None:
        return out
    if x.size == 0:
        return x.copy()  # an empty input has an empty result (max would refuse it)
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
        raise FgradTypeError(f"log_softmax: expected a floating-point input, got dtype {x.dtype}")
    return ShapedArray(x.shape, x.dtype)


def _log_softmax_jvp(primals, tangents, *, axis):
    (x,), (t,) = primals, tangents
    out = log_softmax(x, axis)
    shape = shape_of(out)
    return out, sub(t, expand_back(reduce_sum(mul(exp(out), t), (axis,)), shape, (axis,)))


def _log_softmax_vjp(needs, ct, out, x, *, axis):
    shape = shape_of(out)
    if not shape or aval_of(ct).dtype != aval_of(out).dtype:  # (a 0-d one; a mixed-precision ct)
        return [sub(ct, mul(exp(out), expand_back(reduce_sum(ct, (axis,)), shape, (axis,))))]
    return [log_softmax_grad_p.bind(ct, out, axis=axis)]


def _log_softmax_batch(n, vals, dims, *, axis):
    (x,), (d,) = vals, dims
    return log_softmax_p.bind(move_to_front(x, d), axis=axis + 1), 0


log_softmax_p.def_impl(_log_softmax_impl)
log_softmax_p.def_abstract_eval(_log_softmax_aval)
log_softmax_p.def_jvp(_log_softmax_jvp)
log_softmax_p.def_vjp(_log_softmax_vjp)
log_softmax_p.def_saves(inputs=False)
log_softmax_p.def_batch(_log_softmax_batch)


# --- log_softmax_grad: ct - exp(out) * sum(ct, axis), log_softmax's backward in one op --------------
# (the composite exp, reduce_sum, broadcast, mul and sub make four whole-array temporaries; this
# makes one, computing the same values in the same order)

log_softmax_grad_p = Primitive("log_softmax_grad")


def _log_softmax_grad_impl(ct, out, *, axis, xp):
    g = _softmax_rows.log_softmax_grad(ct, out, axis) if xp is np else None
    if g is not None:
        return g
    total = xp.sum(ct, axis=axis, keepdims=True, dtype=ct.dtype)  # reduce_sum's sum
    g = xp.exp(out)
    g *= total
    return xp.subtract(ct, g, out=g)


def _log_softmax_grad_aval(ct, out, *, axis):
    if ct.shape != out.shape:
        raise ShapeError(f"log_softmax_grad: cotangent of shape {ct.shape} for an output of shape "
                         f"{out.shape}; they must match")
    return ShapedArray(out.shape, out.dtype)


def _row_sum(v, shape, axis):
    return expand_back(reduce_sum(v, (axis,)), shape, (axis,))


def _log_softmax_grad_jvp(primals, tangents, *, axis):
    # g(ct, out) = ct - e * S(ct) with e = exp(out): linear in ct, and d/d out = -e * S(ct)
    (ct, out), (t_ct, t_out) = primals, tangents
    g = log_softmax_grad_p.bind(ct, out, axis=axis)
    dot = None if t_ct is None else log_softmax_grad_p.bind(t_ct, out, axis=axis)
    if t_out is not None:
        shape = shape_of(out)
        dot = add_tangents(dot, neg(mul(mul(exp(out), t_out), _row_sum(ct, shape, axis))))
    return g, dot


def _log_softmax_grad_vjp(needs, ct_g, g, ct, out, *, axis):
    shape = shape_of(out)
    e = exp(out)
    # the transpose in ct of ct - e * S(ct) is ct_g - S(e * ct_g)
    d_ct = sub(ct_g, _row_sum(mul(e, ct_g), shape, axis)) if needs[0] else None
    d_out = neg(mul(mul(ct_g, e), _row_sum(ct, shape, axis))) if needs[1] else None
    return [d_ct, d_out]


def _log_softmax_grad_batch(n, vals, dims, *, axis):
    ct, out = batch_front(n, vals, dims)
    return log_softmax_grad_p.bind(ct, out, axis=axis + 1), 0


log_softmax_grad_p.def_impl(_log_softmax_grad_impl)
log_softmax_grad_p.def_abstract_eval(_log_softmax_grad_aval)
log_softmax_grad_p.def_jvp(_log_softmax_grad_jvp)
log_softmax_grad_p.def_vjp(_log_softmax_grad_vjp)
log_softmax_grad_p.def_saves(output=False)
log_softmax_grad_p.def_batch(_log_softmax_grad_batch)


def log_softmax(x, axis: int = -1):
    """log(softmax(x)) along `axis`, computed stably (max subtracted first)."""
    nd = len(shape_of(x))
    return log_softmax_p.bind(x, axis=int(axis) % max(nd, 1) if nd else 0)


def softmax(x, axis: int = -1):
    """exp(x) normalised to sum to 1 along `axis` (the exp of log_softmax)."""
    return exp(log_softmax(x, axis))


# --- nll_loss: -sum(weights * logp) -----------------------------------------------------------------

nll_loss_p = Primitive("nll_loss")


def _nll_impl(logp, w, *, axes, xp):
    prod = logp * w
    return xp.negative(prod.sum(axis=axes) if axes else prod)


def _nll_aval(logp, w, *, axes):
    if logp.shape != w.shape:
        raise ShapeError(f"nll_loss: log-probabilities of shape {logp.shape} and target weights of "
                         f"shape {w.shape} differ")
    return ShapedArray(tuple(d for i, d in enumerate(logp.shape) if i not in axes), logp.dtype)


# nll_loss(logp, w) = -sum(logp * w) is bilinear: the cotangent of each operand is -ct,
# broadcast back over the summed axes, times the other operand
def _nll_transpose_lhs(ct, logp, w, *, axes):
    return mul(expand_back(neg(ct), shape_of(logp), axes), w)


def _nll_transpose_rhs(ct, logp, w, *, axes):
    return mul(expand_back(neg(ct), shape_of(w), axes), logp)


def _nll_batch(n, vals, dims, *, axes):
    logp, w = batch_front(n, vals, dims)
    return nll_loss_p.bind(logp, w, axes=tuple(a + 1 for a in axes)), 0


nll_loss_p.def_impl(_nll_impl)
nll_loss_p.def_abstract_eval(_nll_aval)
def_bilinear(nll_loss_p, _nll_transpose_lhs, _nll_transpose_rhs)
nll_loss_p.def_batch(_nll_batch)


def check_targets(target, C: int, ignore_index: int) -> None:
    """Raise FgradIndexError when a concrete array of class indices holds one outside 0..C-1
    that is not ignore_index (PyTorch refuses these; a gather or a one-hot would give a wrong
    loss instead). Traced targets hold no values and pass."""
    if isinstance(target, Tracer) or not getattr(target, "size", 0):
        return
    bad = (target != ignore_index) & ((target < 0) | (target >= C))
    if bad.any():
        raise FgradIndexError(f"Target {int(target[bad].flat[0])} is out of bounds: the input has {C} "
                              f"classes (valid targets 0..{C - 1}, or ignore_index={ignore_index})")


def _target_weights(logp, target, weight, ignore_index, reduction, label_smoothing):
    """Per-element weights W with loss = -sum(W * logp) reduced as asked (PyTorch's
    nll_loss / cross_entropy semantics, including ignore_index, class weights and
    label smoothing), and the axes to sum over."""
    shape = shape_of(logp)
    dtype = aval_of(logp).dtype
    C = shape[1]
    if not isinstance(target, Tracer) and xp_of((target,)) is np:  # a GPU target stays on its GPU
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
            W = mul(W, class_bcast(convert_element_type(weight, dtype)))
        denom = float(np.prod(shape) // C) if reduction == "mean" else None
        if denom is not None:
            W = div(W, const(W, denom))
        return W
    if t_aval.shape != shape[:1] + shape[2:]:
        raise ShapeError(f"nll_loss: target of shape {t_aval.shape} does not fit an input of shape "
                         f"{shape}; expected {shape[:1] + shape[2:]} (class indices)")
    check_targets(target, C, ignore_index)
    if not isinstance(target, Tracer):
        if type(target) is np.ndarray and (weight is None or type(weight) is np.ndarray):
            return _target_weights_np(shape, dtype, target, weight, ignore_index, reduction,
                                      label_smoothing)
    t_dims = (0,) + tuple(range(2, len(shape)))
    xp = np if isinstance(target, Tracer) else xp_of((target,))  # constants on target's device
    classes = xp.arange(C, dtype=t_aval.dtype)
    tb = broadcast_in_dim(target, shape, t_dims)
    onehot = convert_element_type(eq(tb, broadcast_in_dim(classes, shape, (1,))), dtype)
    keep = convert_element_type(ne(target, xp.asarray(ignore_index, t_aval.dtype)), dtype)
    keep_b = broadcast_in_dim(keep, shape, t_dims)
    wb = None if weight is None else class_bcast(convert_element_type(weight, dtype))
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
    if weight is None and not label_smoothing:
        # one-hot rows scaled by 1 / (kept targets) for "mean": writing that value at the
        # targets alone gives the bits the general path's whole-array passes below give
        # (0 * anything kept is 0, and 1 / n is the same division); no kept target at all
        # (0 / 0: NaN everywhere) takes the general path
        kept = int(keep.sum()) if reduction == "mean" else 1
        if kept:
            one = np.ones((), dtype)
            value = np.divide(one, np.asarray(kept, dtype)) if reduction == "mean" else one
            np.put_along_axis(W, idx, np.expand_dims(np.where(keep, value, np.zeros((), dtype)), 1), axis=1)
            return W
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


def _nll_picked(logp, target, weight, ignore_index, reduction):
    """nll_loss of [N, C] log-probabilities at class indices [N]: the N log-probabilities at
    the targets, gathered, times their weights (the values _target_weights puts at the
    targets: the class weight or 1, 0 where ignored, divided by their sum for "mean"), summed.
    A sum over N terms instead of N * C mostly zero ones, whose transpose writes N values into
    zeros; and PyTorch's gather semantics: a -inf away from the targets (a masked class) does
    not make the loss NaN. Primitives throughout, so traced targets (a tape, jit) take it too.
    None for float (probability) targets, or targets on another device."""
    if not isinstance(target, Tracer):
        if xp_of((target,)) is not np:
            return None
        target = np.asarray(target)
    N, C = shape_of(logp)
    t_aval = aval_of(target)
    if t_aval.dtype.kind not in "iu" or t_aval.shape != (N,):
        return None  # (probabilities, or a shape _target_weights explains)
    check_targets(target, C, ignore_index)
    dtype = aval_of(logp).dtype
    keep = ne(target, np.asarray(ignore_index, t_aval.dtype))
    idx = select(keep, target, np.zeros((N,), t_aval.dtype))
    w = convert_element_type(keep, dtype)
    if weight is not None:
        w = mul(getitem(convert_element_type(weight, dtype), [idx], (ARRAY,)), w)
    if reduction == "mean":  # (0 / 0 = NaN where nothing is kept, as PyTorch)
        w = div(w, broadcast_in_dim(reduce_sum(w, (0,)), (N,), ()))
    prod = mul(getitem(logp, [np.arange(N), idx], (ARRAY, ARRAY)), w)
    return neg(prod if reduction == "none" else reduce_sum(prod, (0,)))


_REDUCTIONS = ("mean", "sum", "none")


def _nll(logp, target, weight, ignore_index, reduction, label_smoothing, name):
    if reduction not in _REDUCTIONS:
        raise FgradValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise FgradValueError(f"{name}: label_smoothing must be in [0, 1], got {label_smoothing}")
    shape = shape_of(logp)
    if len(shape) == 1:  # unbatched: [C] input, scalar target
        t = target
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
        if len(shape) == 2 and not label_smoothing:
            picked = _nll_picked(logp, target, weight, ignore_index, reduction)
            if picked is not None:
                return picked
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
