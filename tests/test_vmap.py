"""vmap equals a Python loop, and composes with grad and jacobians."""
import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np

rng = onp.random.default_rng(0)


def loop(f, xs, ys=None):
    if ys is None:
        return onp.stack([f(x) for x in xs])
    return onp.stack([f(x, y) for x, y in zip(xs, ys)])


FUNCS = [
    lambda x: np.sin(x) * 2.0,
    lambda x: np.sum(x * x),
    lambda x: np.max(x, axis=0),
    lambda x: np.reshape(x, (-1,)) + 1.0,
    lambda x: np.transpose(x) * np.exp(x).T,
    lambda x: np.mean(np.tanh(x), axis=1, keepdims=True),
    lambda x: np.argmax(x, axis=1),
    lambda x: np.where(x > 0, x, -2.0 * x),
    lambda x: np.concatenate([x, 2.0 * x], axis=1),
    lambda x: fgrad.grad(lambda v: np.sum(np.sin(v) ** 2))(x),
]


@pytest.mark.parametrize("f", FUNCS)
@pytest.mark.parametrize("axis", [0, 2])
def test_vmap_equals_loop(f, axis):
    xs = rng.standard_normal((4, 3, 5))
    xs_moved = onp.moveaxis(xs, 0, axis)
    got = fgrad.vmap(f, in_axes=axis)(xs_moved)
    onp.testing.assert_allclose(got, loop(f, xs), rtol=1e-12)


def test_vmap_two_args_unmapped_and_broadcasting():
    xs, w = rng.standard_normal((6, 3)), rng.standard_normal(3)
    f = lambda x, w: np.sum(x * w) + np.sum(x ** 2)
    onp.testing.assert_allclose(fgrad.vmap(f, in_axes=(0, None))(xs, w), [f(x, w) for x in xs])
    onp.testing.assert_allclose(fgrad.vmap(lambda s, v: s * v)(onp.arange(6.0), xs),
                                onp.arange(6.0)[:, None] * xs)


def test_grad_of_vmap_and_vmap_of_grad_and_hessian():
    xs = rng.standard_normal((5, 3))
    f = lambda x: np.sum(np.sin(x) * x)
    per_example = fgrad.vmap(fgrad.grad(f))(xs)
    onp.testing.assert_allclose(per_example, onp.cos(xs) * xs + onp.sin(xs), rtol=1e-12)
    total = fgrad.grad(lambda X: np.sum(fgrad.vmap(f)(X)))(xs)
    onp.testing.assert_allclose(total, per_example, rtol=1e-12)
    hs = fgrad.vmap(fgrad.hessian(f))(xs)
    onp.testing.assert_allclose(hs, onp.stack([fgrad.hessian(f)(x) for x in xs]), rtol=1e-12)


def test_vmap_out_axes_and_errors():
    xs = rng.standard_normal((4, 3))
    assert fgrad.vmap(lambda x: x * 2.0, out_axes=1)(xs).shape == (3, 4)
    with pytest.raises(ValueError, match="different sizes"):
        fgrad.vmap(lambda a, b: a + b)(onp.ones(3), onp.ones(4))
    with pytest.raises(ValueError, match="in_axes"):
        fgrad.vmap(lambda a: a, in_axes=3)(onp.ones(3))
    with pytest.raises(fgrad.core.errors.TracerBoolConversionError):
        fgrad.vmap(lambda a: a if a > 0 else -a)(onp.ones(3))
    assert fgrad.vmap(lambda a: a * 3.0)(onp.ones(2)).tolist() == [3.0, 3.0]


def test_vmap_fallback_loops_for_primitives_without_rules():
    from fgrad.core.primitive import Primitive
    from fgrad.core.avals import ShapedArray
    p = Primitive("test_cumulative")
    p.def_impl(lambda x, *, xp: xp.cumsum(x))
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    xs = rng.standard_normal((3, 4))
    onp.testing.assert_allclose(fgrad.vmap(p.bind)(xs), onp.cumsum(xs, axis=1))
    from fgrad.core.primitive import ALL_PRIMITIVES
    ALL_PRIMITIVES.remove(p)
