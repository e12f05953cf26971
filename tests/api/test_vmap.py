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


# --- in_axes / out_axes as pytree prefixes, keywords, axis_size, weak scalars (as JAX) ----

def test_vmap_in_axes_prefix_with_none_leaves_in_a_dict():
    p = {"w": onp.array([1.0, 2.0]), "b": onp.arange(3.0)}
    xs = rng.standard_normal((3, 2))
    f = lambda p, x: np.sum(p["w"] * x) + p["b"]
    got = fgrad.vmap(f, in_axes=({"w": None, "b": 0}, 0))(p, xs)
    onp.testing.assert_allclose(got, [f({"w": p["w"], "b": b}, x) for b, x in zip(p["b"], xs)])


def test_vmap_in_axes_prefix_with_none_leaves_in_a_tuple():
    got = fgrad.vmap(lambda p: p[0] * p[1], in_axes=((0, None),))((onp.arange(3.0), 2.0))
    onp.testing.assert_allclose(got, [0.0, 2.0, 4.0])


def test_vmap_in_axes_prefix_mismatch_names_the_key_path():
    with pytest.raises(ValueError, match=r"in_axes\[0\] is a dict with keys \('a',\).*keys \('w',\)"):
        fgrad.vmap(lambda p: p["w"], in_axes=({"a": 0},))({"w": onp.ones(3)})
    with pytest.raises(ValueError, match=r"in_axes\[0\] is a tuple.*list"):
        fgrad.vmap(lambda p: p[0], in_axes=((0, None),))([onp.ones(3), 1.0])
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        fgrad.vmap(lambda x: x, in_axes=(1.5,))(onp.ones(3))


def test_vmap_out_axes_pytree_prefix():
    xs = onp.ones((3, 2))
    out = fgrad.vmap(lambda x: {"a": x, "b": (x, x)}, out_axes={"a": 0, "b": (1, -1)})(xs)
    assert out["a"].shape == (3, 2) and out["b"][0].shape == (2, 3) and out["b"][1].shape == (2, 3)
    with pytest.raises(ValueError, match=r"out_axes is a dict with keys \('a',\)"):
        fgrad.vmap(lambda x: {"a": x, "b": x}, out_axes={"a": 0})(xs)


def test_vmap_out_axes_none_returns_unmapped_output_and_rejects_a_batched_one():
    a, s = fgrad.vmap(lambda x: (x * 2.0, 2.0), out_axes=(0, None))(onp.ones(3))
    assert a.tolist() == [2.0, 2.0, 2.0] and s == 2.0 and isinstance(s, float)
    w = onp.arange(2.0)
    m, c = fgrad.vmap(lambda x, w: (x * w, w * 3.0), in_axes=(0, None), out_axes=(0, None))(onp.ones((4, 2)), w)
    assert m.shape == (4, 2) and c.tolist() == [0.0, 3.0]
    with pytest.raises(ValueError, match="out_axes is None for output, .*depends on a mapped input"):
        fgrad.vmap(lambda x: x, out_axes=None)(onp.ones(3))


def test_vmap_out_axes_out_of_range_is_an_error_not_a_wraparound():
    with pytest.raises(ValueError, match=r"out_axes=3 for output, which has 2 dimension"):
        fgrad.vmap(lambda x: x, out_axes=3)(onp.ones((3, 2)))
    assert fgrad.vmap(lambda x: x, out_axes=-1)(onp.ones((3, 2))).shape == (2, 3)


def test_vmap_keyword_arguments_are_mapped_over_axis_0_as_in_jax():
    jax = pytest.importorskip("jax")
    f = lambda x, s: x + s
    got = fgrad.vmap(f)(onp.ones(3), s=onp.ones((3, 2)))
    want = jax.vmap(f)(onp.ones(3), s=onp.ones((3, 2)))
    assert got.shape == want.shape == (3, 2)
    with pytest.raises(ValueError, match="keyword argument 's' has shape \\(\\).*positionally"):
        fgrad.vmap(f)(onp.ones(3), s=2.0)


def test_vmap_axis_size():
    assert fgrad.vmap(lambda x: x * 2.0, in_axes=None, axis_size=4)(1.5).tolist() == [3.0] * 4
    assert fgrad.vmap(lambda x: x, axis_size=3)(onp.ones(3)).shape == (3,)
    with pytest.raises(ValueError, match="axis_size=4, but argument 0 axis 0 has size 3"):
        fgrad.vmap(lambda x: x, axis_size=4)(onp.ones(3))
    with pytest.raises(ValueError, match="no input is mapped.*axis_size"):
        fgrad.vmap(lambda x: x, in_axes=None)(1.0)


def test_vmap_unmapped_python_scalar_stays_weakly_typed():
    out = fgrad.vmap(lambda x, s: x * s, in_axes=(0, None))(onp.ones(3, onp.float32), 2.0)
    assert out.dtype == onp.float32 and out.tolist() == [2.0, 2.0, 2.0]
    seen = []
    fgrad.vmap(lambda x, s, mode: seen.append((type(s), mode)) or x, in_axes=(0, None, None))(
        onp.ones(2), 3, "sum")
    assert seen == [(int, "sum")]


def test_vmap_of_complex_values_without_differentiation():
    zs = onp.array([1 + 2j, 3 - 1j])
    onp.testing.assert_allclose(fgrad.vmap(lambda z: z * z)(zs), zs * zs)
    onp.testing.assert_allclose(fgrad.jit(fgrad.vmap(lambda z: z * 2.0))(zs), zs * 2.0)


def test_func_vmap_passes_keyword_arguments_unmapped_as_pytorch():
    torch = pytest.importorskip("torch")
    f = lambda x, scale: x * scale
    got = fgrad.torch.func.vmap(f)(fgrad.torch.ones(3, 2), scale=fgrad.torch.tensor([1.0, 2.0]))
    want = torch.func.vmap(f)(torch.ones(3, 2), scale=torch.tensor([1.0, 2.0]))
    assert got.tolist() == want.tolist()
