"""The loss fast paths of fgrad.ops.nn.dense against the general code they skip: the one-hot
target weights of nll_loss / cross_entropy without class weights or label smoothing, and
log_softmax's fused backward (log_softmax_grad) against its composite formula, bit for bit
in float64 (float32 runs the row kernels, tests/ops/nn/test_softmax_kernels.py), with every
derivative order still right."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.ops.nn import dense as D


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(700, 1000), (6, 5, 3, 2), (1, 4)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignored", [0.0, 0.3, 1.0])
def test_one_hot_weights_match_the_general_path(dtype, shape, reduction, ignored):
    rng = np.random.default_rng(0)
    dt = np.dtype(dtype)
    target = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    target[rng.random(target.shape) < ignored] = -100
    fast = D._target_weights_np(shape, dt, target, None, -100, reduction, 0.0)
    # class weights of one take the general path (W * 1 and a sum of ones are exact)
    general = D._target_weights_np(shape, dt, target, np.ones(shape[1], dt), -100, reduction, 0.0)
    assert fast.dtype == general.dtype
    np.testing.assert_array_equal(fast, general)  # NaN where all are ignored ("mean": 0 / 0)
    np.testing.assert_array_equal(np.signbit(fast), np.signbit(general))


def _composite_grad(ct, out, axis):
    """log_softmax's backward as the composite it replaces: ct - exp(out) * sum(ct)."""
    total = np.sum(ct, axis=axis, keepdims=True, dtype=ct.dtype)
    return ct - np.exp(out) * total


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((700, 1000), 1), ((4, 6, 5), 1), ((3, 8), 0)])
def test_fused_backward_matches_the_composite_bit_for_bit(dtype, shape, axis):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    ct = rng.standard_normal(shape).astype(dtype)
    ct.reshape(-1)[::37] = -0.0
    out = D._log_softmax_impl(x, axis=axis, xp=np)
    got = D._log_softmax_grad_impl(ct, out, axis=axis, xp=np)
    assert got.dtype == np.dtype(dtype)
    if dtype == np.float32:
        # float32 runs the row kernels (fgrad/ops/nn/_softmax_kernels.py: their own exp and
        # sums in a fixed lane order), so it is compared with the composite in float64
        ref = _composite_grad(ct.astype(np.float64), out.astype(np.float64), axis)
        scale = np.abs(ct).sum(axis=axis, keepdims=True)
        assert np.all(np.abs(got - ref) <= 4e-7 * (np.abs(ref) + scale))
    else:
        np.testing.assert_array_equal(got.view(np.uint8), _composite_grad(ct, out, axis).view(np.uint8))
    g = fgrad.vjp(lambda v: D.log_softmax(v, axis), x)[1](ct)[0]
    np.testing.assert_array_equal(np.asarray(g).view(np.uint8), got.view(np.uint8))


def _reference_log_softmax(x):
    # the same function from elementary ops, whose derivatives of every order fgrad knows
    m = fgrad.lax.stop_gradient(fnp.max(x, axis=1, keepdims=True))
    s = x - m
    return s - fnp.log(fnp.sum(fnp.exp(s), axis=1, keepdims=True))


def test_higher_derivatives_through_the_fused_backward():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6))
    w = rng.standard_normal((4, 6))

    def loss(ls):
        return lambda v: fnp.sum(ls(v) ** 2 * w)
    f, ref = loss(lambda v: D.log_softmax(v, 1)), loss(_reference_log_softmax)
    for name, tf in (("hessian (reverse over reverse)", fgrad.hessian),
                     ("forward over reverse", lambda h: fgrad.jacfwd(fgrad.grad(h))),
                     ("jit grad", lambda h: fgrad.jit(fgrad.grad(h)))):
        np.testing.assert_allclose(tf(f)(x), tf(ref)(x), rtol=1e-10, atol=1e-12, err_msg=name)

    def third(h):
        return fgrad.jacrev(fgrad.grad(lambda v: fnp.sum(fgrad.grad(h)(v) ** 2)))
    np.testing.assert_allclose(third(f)(x), third(ref)(x), rtol=1e-9, atol=1e-10)
    xs = np.stack([x, x + 1.0, -x])  # vmap: the batch rule moves the batch axis first
    np.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(xs), np.stack([fgrad.grad(ref)(v) for v in xs]),
                               rtol=1e-12, atol=1e-12)
    # one operand batched, the other not (batch_front broadcasts the unbatched one)
    out = D.log_softmax(x, 1)
    cts = rng.standard_normal((3, 4, 6))
    batched = fgrad.vmap(lambda c: D.log_softmax_grad_p.bind(c, out, axis=1))(cts)
    np.testing.assert_allclose(batched, np.stack([_composite_grad(c, np.asarray(out), 1) for c in cts]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ["picked", "weighted", "smoothed", "spatial", "unbatched", "negative"])
@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
def test_every_path_refuses_an_out_of_bounds_target(case, fn):
    """nll_loss's paths (the gather at [N] targets, the general [N, C, ...] weights, label
    smoothing, class weights, an unbatched [C] input) check targets with one rule: a class index
    outside 0..C-1 other than ignore_index raises IndexError naming it; ignore_index passes."""
    from fgrad.ops import nn as nnops
    rng = np.random.default_rng(0)
    shape, target, kw = {
        "picked": ((4, 3), [0, 3, 1, 2], {}),
        "weighted": ((4, 3), [0, 1, 7, 2], {"weight": np.ones(3)}),
        "smoothed": ((4, 3), [0, 1, 3, 2], {"label_smoothing": 0.1}),
        "spatial": ((2, 3, 5), [[0, 1, 2, 0, 1], [0, 0, 3, 0, 0]], {}),
        "unbatched": ((3,), 3, {}),
        "negative": ((4, 3), [0, -1, 1, 2], {}),
    }[case]
    if fn == "nll_loss":
        kw.pop("label_smoothing", None)
    x = rng.standard_normal(shape)
    bad = int(np.asarray(target)[(np.asarray(target) < 0) | (np.asarray(target) >= 3)].flat[0])
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds: the input has 3 classes"):
        getattr(nnops, fn)(x, np.asarray(target), **kw)
    masked = np.where((np.asarray(target) < 0) | (np.asarray(target) >= 3), -100, target)
    assert np.isfinite(getattr(nnops, fn)(x, np.asarray(masked), **kw)) or case == "unbatched"
