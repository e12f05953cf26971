"""Transforms keep the meaning of the code they transform: a derivative is never dropped by a
conversion to a Python number, jit never changes a dtype or retraces on a new keyword value,
and det is differentiable at singular matrices (issue 8, items 4, 5, 11, 15, 16)."""
from __future__ import annotations

import math

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.errors import ConcretizationError

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)


# --- item 5: converting a differentiated value to a Python number -------------------------

DROPPING = {
    "float": lambda x: x * float(x),
    "int": lambda x: x * int(x),
    "item": lambda x: x * x.item(),
    "math.sin": lambda x: math.sin(x) + x,
    "numpy.float64": lambda x: onp.float64(x) * x,
    "complex": lambda x: x * complex(x).real,
    "tolist": lambda x: x * x.tolist(),
}


@pytest.mark.parametrize("name", sorted(DROPPING))
@pytest.mark.parametrize("transform", ["grad", "jvp", "grad_of_grad", "jacfwd", "jacrev"])
def test_python_number_of_a_differentiated_value_raises(name, transform):
    f = DROPPING[name]
    run = {
        "grad": lambda: fgrad.grad(f)(3.0),
        "jvp": lambda: fgrad.jvp(f, (3.0,), (1.0,)),
        "grad_of_grad": lambda: fgrad.grad(fgrad.grad(f))(3.0),
        "jacfwd": lambda: fgrad.jacfwd(f)(3.0),
        "jacrev": lambda: fgrad.jacrev(f)(3.0),
    }[transform]
    with pytest.raises((ConcretizationError, fgrad.core.TracerArrayConversionError)):
        run()
    assert fgrad.grad(lambda x: x * x)(3.0) == 6.0  # fgrad keeps working


def test_python_number_error_names_the_fix():
    with pytest.raises(ConcretizationError, match=r"(?s)float\(\).*grad.*stop_gradient"):
        fgrad.grad(lambda x: x * float(x))(3.0)


def test_python_number_of_a_stopped_value_is_a_constant():
    assert fgrad.grad(lambda x: x * float(fgrad.stop_gradient(x)))(3.0) == 3.0


def test_python_control_flow_still_works_under_grad():
    assert fgrad.grad(lambda x: x * x if x > 0 else -x)(3.0) == 6.0
    assert fgrad.grad(lambda x: x * x if bool(x > 0) else -x)(-3.0) == -1.0


def test_tensor_item_keeps_pytorch_semantics_under_grad():
    x = fgrad.torch.tensor([1.0, 2.0])  # (Tensors take the facade's door, torch.func)
    g = fgrad.torch.func.grad(lambda t: (t * t).sum() * 0 + t.sum().item() + float(t.sum()))(x)
    assert g.tolist() == [0.0, 0.0]
    t = fgrad.torch.tensor([3.0], requires_grad=True)
    y = (t * t).sum()
    assert y.item() == 9.0 and float(y) == 9.0 and int(y) == 9


# --- item 4: no transform changes a result's dtype --------------------------------------

WEAK_CASES = {
    "mul": lambda x, s: x * s,
    "rmul": lambda x, s: s * x,
    "scalar_arith_first": lambda x, s: x * (s * 2.0 + 1.0),
    "neg_abs": lambda x, s: x + abs(-s),
    "pow": lambda x, s: x ** s,
    "div": lambda x, s: x / (s - 0.5),
    "numpy_fn_of_scalar": lambda x, s: x * np.sin(s),  # fgrad.numpy of a number is an array
    "int_scalar": lambda x, s: x * int(3) + s,
}


@pytest.mark.parametrize("name", sorted(WEAK_CASES))
@pytest.mark.parametrize("dtype", [onp.float32, onp.float16, onp.int32])
@pytest.mark.parametrize("s", [2.0, 3])
def test_jit_keeps_python_scalar_weakly_typed(name, dtype, s):
    f = WEAK_CASES[name]
    x = onp.arange(1, 4).astype(dtype)
    eager = f(x, s)
    jitted = fgrad.jit(f)(x, s)
    assert jitted.dtype == eager.dtype, (name, dtype, s)
    onp.testing.assert_allclose(jitted, eager, rtol=1e-3)


def test_jit_caches_python_scalars_apart_from_arrays():
    f = fgrad.jit(lambda x, s: x * s)
    x = onp.ones(3, onp.float32)
    assert f(x, 2.0).dtype == onp.float32
    assert f(x, onp.float64(2.0)).dtype == onp.float64  # a NumPy scalar is strongly typed
    assert f(x, 5.0).dtype == onp.float32 and len(f._cache) == 2


# --- item 11: jit traces keyword arguments; static_argnames ---------------------------------

def test_jit_traces_keyword_arguments():
    calls = []

    def f(x, *, w, b=0.0):
        calls.append(1)
        return x * w + b

    jf = fgrad.jit(f)
    onp.testing.assert_allclose(jf(1.0, w=onp.ones(2)), [1.0, 1.0])
    onp.testing.assert_allclose(jf(1.0, w=onp.ones(2) * 3, b=1.0), [4.0, 4.0])
    onp.testing.assert_allclose(jf(2.0, w=onp.ones(2) * 3, b=5.0), [11.0, 11.0])
    assert len(calls) == 2  # a new float value of b does not retrace; passing b does once
    assert fgrad.grad(lambda w: jf(2.0, w=w, b=1.0).sum())(onp.ones(2)).tolist() == [2.0, 2.0]


def test_jit_static_argnames():
    calls = []

    def f(x, n=1):
        calls.append(n)
        return x ** n

    jf = fgrad.jit(f, static_argnames="n")
    assert jf(2.0, n=3) == 8.0 and jf(3.0, n=3) == 27.0 and jf(2.0, n=2) == 4.0
    assert calls == [3, 2]
    assert fgrad.make_jaxpr(f, static_argnames=("n",))(2.0, n=2).jaxpr.eqns


def test_jit_static_argument_that_is_traced_says_how_to_fix():
    jf = fgrad.jit(lambda x, n: x * n, static_argnums=1)
    with pytest.raises(TypeError, match="in_axes=None"):
        fgrad.vmap(jf, in_axes=(0, 0))(onp.ones(3), onp.ones(3))
    with pytest.raises(TypeError, match="not hashable"):
        jf(1.0, onp.ones(2))


def test_vmap_of_jit_with_static_unmapped_scalar():
    jf = fgrad.jit(lambda x, n: x * n, static_argnums=1)
    out = fgrad.vmap(jf, in_axes=(0, None))(onp.ones(3, onp.float32), 2.0)
    assert out.dtype == onp.float32 and out.tolist() == [2.0, 2.0, 2.0]


# --- item 15: det at singular matrices --------------------------------------------------

SINGULAR = [
    onp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]]),  # rank 2
    onp.array([[1.0, 2.0], [2.0, 4.0]]),                                # rank 1 (n - 1)
    onp.zeros((3, 3)),                                                  # rank 0
    onp.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 2.0, 0.5]),             # rank 1 of 4
]


@pytest.mark.parametrize("k", range(len(SINGULAR)))
def test_det_gradient_at_singular_matrix_is_the_adjugate(k):
    a = SINGULAR[k]
    onp.testing.assert_allclose(fgrad.grad(np.linalg.det)(a), jax.grad(jnp.linalg.det)(a), atol=1e-12)
    onp.testing.assert_allclose(fgrad.jvp(np.linalg.det, (a,), (onp.ones_like(a),))[1],
                                jax.jvp(jnp.linalg.det, (a,), (onp.ones_like(a),))[1], atol=1e-12)


@pytest.mark.parametrize("k", range(len(SINGULAR)))
def test_det_hessian_at_singular_matrix_matches_finite_differences(k):
    a = SINGULAR[k]
    n = a.shape[0]
    h = fgrad.hessian(np.linalg.det)(a)
    g = fgrad.grad(np.linalg.det)
    eps = 1e-5
    fd = onp.stack([(g(a + eps * e.reshape(n, n)) - g(a - eps * e.reshape(n, n))) / (2 * eps)
                    for e in onp.eye(n * n)]).reshape(n, n, n, n).transpose(2, 3, 0, 1)
    onp.testing.assert_allclose(h, fd, atol=1e-7)
    onp.testing.assert_allclose(fgrad.jacrev(fgrad.jacrev(np.linalg.det))(a), h, atol=1e-12)


def test_det_derivatives_match_jax_to_third_order():
    a = onp.random.RandomState(0).randn(4, 4)
    onp.testing.assert_allclose(fgrad.hessian(np.linalg.det)(a), jax.hessian(jnp.linalg.det)(a), atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacfwd(fgrad.hessian(np.linalg.det))(a),
                                jax.jacfwd(jax.hessian(jnp.linalg.det))(a), atol=1e-11)
    batch = onp.stack([SINGULAR[0], a[:3, :3]])
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(np.linalg.det))(batch),
                                jax.vmap(jax.grad(jnp.linalg.det))(batch), atol=1e-12)


def test_adjugate_satisfies_its_definition():
    from fgrad.ops.linalg import adjugate
    from fgrad.test_util import check_grads
    a = onp.random.RandomState(1).randn(2, 3, 3)
    adj = adjugate(a)
    onp.testing.assert_allclose(adj @ a, onp.linalg.det(a)[:, None, None] * onp.eye(3), atol=1e-12)
    check_grads(adjugate, (a,), order=2, modes=("fwd", "rev"))


# --- item 16: exports ------------------------------------------------------------------

def test_subpackages_are_attributes_of_fgrad():
    import fgrad as f
    assert callable(f.test_util.check_grads)
    assert callable(f.scipy.special.erf)
    from fgrad.core import Primitive, eval_jaxpr  # noqa: F401
    closed = fgrad.make_jaxpr(lambda x: x * 2.0)(1.0)
    assert eval_jaxpr(closed.jaxpr, closed.consts, onp.asarray(3.0))[0] == 6.0


# --- item 14: x.at[...] on the arrays fgrad.numpy makes ---------------------------------

def _updates(x):
    return x.at[0].set(5.0).at[1].mul(3.0).at[2].max(10.0).at[onp.array([0, 0])].add(1.0).at[3].min(-1.0)


def test_at_updates_run_eagerly_and_under_every_transform_as_in_jax():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    want = _updates(jnp.array([1.0, 2.0, 3.0, 4.0]))
    onp.testing.assert_allclose(_updates(x), want)
    onp.testing.assert_allclose(fgrad.jit(_updates)(x), want)
    onp.testing.assert_allclose(fgrad.grad(lambda v: _updates(v).sum())(x),
                                jax.grad(lambda v: _updates(v).sum())(jnp.asarray(x)))
    onp.testing.assert_allclose(fgrad.vmap(_updates)(np.stack([x, x])), onp.stack([want, want]))


@pytest.mark.parametrize("op", ["mul", "min", "max", "add", "set"])
def test_at_update_with_repeated_indices_matches_jax(op):
    idx, v = onp.array([1, 1, 3, 1]), onp.array([2.0, 3.0, -1.0, 0.5])
    got = getattr(np.arange(5.0).at[idx], op)(v)
    want = getattr(jnp.arange(5.0).at[jnp.asarray(idx)], op)(jnp.asarray(v))
    if op == "set":  # the position's last update wins eagerly; JAX leaves it unspecified
        want = onp.array([0.0, 0.5, 2.0, -1.0, 4.0])
    onp.testing.assert_allclose(got, want)


def test_fgrad_numpy_arrays_are_numpy_arrays_with_at():
    import pickle
    x = np.zeros(3)
    assert isinstance(x, onp.ndarray) and repr(x) == "array([0., 0., 0.])" and str(x) == "[0. 0. 0.]"
    assert type(np.sin(x)) is np.Array and type(x + 1.0) is np.Array  # results keep .at
    assert type(pickle.loads(pickle.dumps(x))) is np.Array
    assert np.asarray(onp.ones(2)).at[0].set(3.0).tolist() == [3.0, 1.0]
    for make in (lambda: np.ones(2), lambda: np.arange(3.0), lambda: np.linspace(0, 1, 3),
                 lambda: np.eye(2), lambda: np.full((2,), 1.0), lambda: np.zeros_like(onp.ones(2))):
        assert hasattr(make(), "at")


# --- caches keyed by what the cached value depends on (state kept between calls) ------------

def test_jit_static_values_that_are_equal_but_not_the_same_trace_apart():
    f = fgrad.jit(lambda x, s: x * s if isinstance(s, bool) else x + s, static_argnums=1)
    assert f(1.0, 1) == 2.0 and f(1.0, True) == 1.0 and f(1.0, 1.0) == 2.0
    g = fgrad.jit(lambda x, s: x * s, static_argnums=1)
    assert math.copysign(1.0, g(1.0, 0.0)) == 1.0 and math.copysign(1.0, g(1.0, -0.0)) == -1.0


def test_jit_takes_arrays_and_refuses_tensors_naming_the_facade_door():
    f = fgrad.jit(lambda x: x * 2.0)
    x = onp.ones(2)  # the same shape and dtype as an array and as a Tensor
    assert type(f(x)) is onp.ndarray
    with pytest.raises(TypeError, match=r"fgrad\.jit got a fgrad\.torch\.Tensor: use fgrad\.torch\.compile"):
        f(fgrad.torch.from_numpy(x))
    assert type(f(x)) is onp.ndarray
    # the facade's door (torch.compile's engine) keys its trace on which arguments are Tensors
    g = fgrad.torch.func.compile_function(lambda x: x * 2.0)
    assert type(g(fgrad.torch.from_numpy(x))) is fgrad.torch.Tensor


def test_rule_constants_keep_the_sign_of_zero():
    from fgrad.ops.elementwise import const
    x = onp.ones(2)
    assert math.copysign(1.0, const(x, 0.0)) == 1.0 and math.copysign(1.0, const(x, -0.0)) == -1.0
    assert onp.isnan(const(x, float("nan"))) and const(x, 0) == 0


# --- vjp's function is a pytree of its residuals (issue 25) ---------------------------------

def test_vjp_function_flattens_to_its_residuals_and_unflattens_to_a_pullback():
    """As JAX's vjp returns a Partial: the leaves are the arrays the graph keeps (x, read
    twice by mul, once), and a pullback rebuilt from other residuals reads those."""
    x = np.asarray([1.0, 2.0, 3.0])
    y, f_vjp = fgrad.vjp(lambda v: v * v, x)
    res, tree = fgrad.tree_util.tree_flatten(f_vjp)
    assert len(res) == 1 and onp.array_equal(res[0], x)
    assert fgrad.tree_util.tree_unflatten(tree, res) is f_vjp
    doubled = fgrad.tree_util.tree_unflatten(tree, [2 * r for r in res])
    onp.testing.assert_allclose(doubled(np.ones(3))[0], 4 * onp.asarray(x))
    onp.testing.assert_allclose(f_vjp(np.ones(3))[0], 2 * onp.asarray(x))  # the original is kept
    shapes = fgrad.tree_util.tree_leaves(fgrad.tree_util.tree_map(lambda a: a.shape, f_vjp))
    assert shapes == [3]  # (the shape tuple's own leaves, as in JAX)
    assert "residuals=[f64[3]]" in repr(f_vjp)
    with pytest.raises(ValueError, match="has 1 leaves but 2 were given"):
        fgrad.tree_util.tree_unflatten(tree, [x, x])


def test_vjp_function_stages_its_backward_pass_alone():
    """The docs' print_fwd_bwd: jit and make_jaxpr of the pullback rebuilt from residual
    tracers, and vjp itself under jit (the function is an output pytree)."""
    def f(w, v):
        return np.sin(np.dot(w, v))

    w, v = np.ones((3, 2)) / 3, np.arange(2.0)
    y, f_vjp = fgrad.vjp(f, w, v)
    res, tree = fgrad.tree_util.tree_flatten(f_vjp)

    def bwd(*args):
        *r, ct = args
        return fgrad.tree_util.tree_unflatten(tree, r)(ct)

    ct = np.asarray([1.0, -2.0, 0.5])
    want = f_vjp(ct)
    got = fgrad.jit(bwd)(*res, ct)
    for g, e in zip(got, want):
        onp.testing.assert_allclose(g, e)
    assert "sin_grad" in str(fgrad.make_jaxpr(bwd)(*res, ct))  # (sin's VJP: ct cos x)
    y2, f_vjp2 = fgrad.jit(lambda a, b: fgrad.vjp(f, a, b))(w, v)
    onp.testing.assert_allclose(y2, y)
    for g, e in zip(f_vjp2(ct), want):
        onp.testing.assert_allclose(g, e)
    _, jax_vjp = jax.vjp(lambda a, b: jnp.sin(jnp.dot(a, b)), onp.asarray(w), onp.asarray(v))
    for g, e in zip(got, jax_vjp(onp.asarray(ct))):
        onp.testing.assert_allclose(g, e)


from fgrad.numpy._array import Array as EagerArray  # noqa: E402 (beside its one test)


def test_jit_of_python_numbers_gives_fgrad_arrays():
    """JAX's jit returns jax.Arrays whatever it is given: of Python numbers, fgrad.numpy
    Arrays (with .block_until_ready() and .at), on the general and the fast path; plain
    NumPy arrays in still give plain arrays out."""
    f = fgrad.jit(lambda a, b: (a + b, a * b))
    for _ in range(2):  # (the second call takes the compiled fast path)
        s, p = f(2, 3)
        assert type(s) is EagerArray and type(p) is EagerArray and s.shape == ()
        assert int(s.block_until_ready()) == 5 and int(p) == 6
        assert type(10 + s) is EagerArray  # not a NumPy scalar: arithmetic keeps the type
    assert type(f(onp.ones(2), onp.ones(2))[0]) is onp.ndarray
    assert type(jax.jit(lambda a: a + 1)(2)) is type(jnp.asarray(3))
