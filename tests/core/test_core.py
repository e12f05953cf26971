"""Composition, the IR, and the seed examples of the functional API."""
import math
import sys

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.errors import DifferentiationError, TracerBoolConversionError, UnexpectedTracerError


def test_seed_second_derivative():
    assert fgrad.grad(fgrad.grad(lambda x: x ** 2))(3.0) == 2.0


def test_perturbation_confusion():
    assert fgrad.grad(lambda x: x * fgrad.grad(lambda y: x + y)(1.0))(2.0) == 1.0


def test_fourth_derivative_closed_form():
    f = lambda x: np.sin(x) * np.exp(-x ** 2)
    d4 = fgrad.grad(fgrad.grad(fgrad.grad(fgrad.grad(f))))
    x = 0.7
    s, c, e = onp.sin(x), onp.cos(x), onp.exp(-x * x)
    # d^4/dx^4 of sin(x) exp(-x^2), expanded by hand (Leibniz rule with Hermite polynomials)
    h = [1, -2 * x, 4 * x * x - 2, -8 * x ** 3 + 12 * x, 16 * x ** 4 - 48 * x * x + 12]
    ds = [s, c, -s, -c, s]
    want = sum(math.comb(4, k) * ds[4 - k] * h[k] * e for k in range(5))
    onp.testing.assert_allclose(d4(x), want, rtol=1e-10)


def test_hessian_three_ways():
    f = lambda x: np.sum(np.sin(x) * x ** 3 * np.exp(x))
    x = onp.array([0.3, -1.2, 0.8])
    h1 = fgrad.hessian(f)(x)
    h2 = fgrad.jacrev(fgrad.jacrev(f))(x)
    h3 = fgrad.jacfwd(fgrad.jacfwd(f))(x)
    onp.testing.assert_allclose(h1, h2, rtol=1e-12)
    onp.testing.assert_allclose(h1, h3, rtol=1e-12)
    assert h1.shape == (3, 3)


def test_jacobians_run_the_function_once_for_all_basis_vectors():
    # jacfwd pushes every basis tangent through one vmap-ed jvp, jacrev pulls every basis
    # cotangent through one vmap-ed pullback of one recording: f runs once, not once per row
    calls = []

    def f(x, y):
        calls.append(1)
        return {"a": np.sin(x) * y[0], "b": np.sum(x * x) * y}

    x, y = onp.array([[0.3, -1.2, 0.8], [0.1, 0.2, 0.4]]), onp.array([1.5, -0.5])
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        del calls[:]
        out = jac(f, argnums=(0, 1))(x, y)
        assert len(calls) == 1, jac.__name__
        assert out["a"][0].shape == (2, 3, 2, 3) and out["b"][1].shape == (2, 2)
        onp.testing.assert_allclose(out["a"][0].reshape(6, 6), onp.diag(onp.cos(x).ravel() * y[0]), atol=1e-15)
        onp.testing.assert_allclose(out["b"][0], 2 * y[:, None, None] * x, rtol=1e-15)
    del calls[:]
    h = fgrad.hessian(lambda x: f(x, y)["b"].sum())(x)
    assert len(calls) == 1 and h.shape == (2, 3, 2, 3)
    onp.testing.assert_allclose(h.reshape(6, 6), 2 * y.sum() * onp.eye(6), rtol=1e-14)


def test_hvp_forward_over_reverse_equals_reverse_over_forward():
    f = lambda x: np.sum(np.tanh(x) * np.log1p(x * x))
    x, v = onp.array([0.5, -0.4, 2.0]), onp.array([1.0, 0.3, -0.2])
    fwd_rev = fgrad.jvp(fgrad.grad(f), (x,), (v,))[1]
    rev_fwd = fgrad.grad(lambda y: fgrad.jvp(f, (y,), (v,))[1])(x)
    onp.testing.assert_allclose(fwd_rev, rev_fwd, rtol=1e-12)
    onp.testing.assert_allclose(fwd_rev, fgrad.hessian(f)(x) @ v, rtol=1e-12)


def test_long_chain_has_no_recursion_limit():
    def f(x):
        for _ in range(100_000):
            x = np.sin(x)
        return x
    assert sys.getrecursionlimit() < 100_000
    g = fgrad.grad(f)(0.5)
    assert onp.isfinite(g) and 0 < g < 1


def test_make_jaxpr_prints_spec_example():
    text = str(fgrad.make_jaxpr(lambda x: np.sin(x) * 2.0)(onp.ones(3, onp.float32)))
    assert text == ("{ lambda ; a:f32[3]. let\n"
                    "    b:f32[3] = sin a\n"
                    "    c:f32[3] = mul b 2.0\n"
                    "  in (c,) }")


def test_closed_jaxpr_structure_and_eval():
    closed = fgrad.make_jaxpr(lambda x, y: np.exp(x) + y * 3.0)(1.0, onp.ones(2))
    assert [e.primitive.name for e in closed.eqns][0] == "exp"
    out = fgrad.core.ir.eval_jaxpr(closed.jaxpr, closed.consts, 0.0, onp.array([1.0, 2.0]))
    onp.testing.assert_allclose(out[0], [4.0, 7.0])


def test_grad_ir_stays_small():
    f = lambda x: np.sin(x) * np.exp(-x ** 2)
    sizes, g = [], f
    for _ in range(4):
        g = fgrad.grad(g)
        sizes.append(len(fgrad.make_jaxpr(g)(0.7).eqns))
    assert sizes == sorted(sizes) and sizes[-1] < 100, sizes


def test_weak_python_scalars_keep_float32():
    x = onp.ones(3, onp.float32)
    assert (np.asarray(x) * 2.0).dtype == onp.float32
    assert fgrad.grad(lambda x: np.sum(x * 2.0))(x).dtype == onp.float32


def test_python_control_flow_under_grad():
    f = lambda x: x * 2 if x > 0 else -x
    assert fgrad.grad(f)(3.0) == 2.0 and fgrad.grad(f)(-3.0) == -1.0


def test_control_flow_under_make_jaxpr_is_a_clear_error():
    with pytest.raises(TracerBoolConversionError, match="static_argnums|where"):
        fgrad.make_jaxpr(lambda x: x if x > 0 else -x)(1.0)
    assert fgrad.grad(lambda x: x * x)(2.0) == 4.0


def test_leaked_tracer_is_detected():
    stash = []
    fgrad.grad(lambda x: stash.append(x) or x * 1.0)(1.0)
    with pytest.raises(UnexpectedTracerError, match="leaked"):
        np.sin(stash[0])
    assert np.sin(0.0) == 0.0


def test_grad_of_non_scalar_and_int_and_bad_argnums():
    with pytest.raises(TypeError, match="scalar"):
        fgrad.grad(np.sin)(onp.ones(3))
    with pytest.raises(DifferentiationError, match="int64"):
        fgrad.grad(lambda x: x * 1.0)(3)
    with pytest.raises(ValueError, match="argnums"):
        fgrad.grad(lambda x: x, argnums=2)(1.0)
    with pytest.raises(TypeError, match="not numeric|cannot use"):
        fgrad.grad(lambda x: x)("abc")


def test_argnums_tuple_and_has_aux_and_pytrees():
    from collections import namedtuple
    P = namedtuple("P", "a b")
    f = lambda p, x: (np.sum(p.a * x) + p.b ** 2, {"aux": x})
    g, aux = fgrad.grad(f, has_aux=True)(P(onp.array([1.0, 2.0]), 3.0), onp.array([5.0, 7.0]))
    assert isinstance(g, P)
    onp.testing.assert_allclose(g.a, [5.0, 7.0])
    assert g.b == 6.0
    onp.testing.assert_allclose(aux["aux"], [5.0, 7.0])
    gx, gy = fgrad.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 5.0)
    assert (gx, gy) == (5.0, 2.0)


def test_linearize_and_jit():
    out, f_jvp = fgrad.linearize(np.sin, 1.0)
    assert out == onp.sin(1.0) and onp.isclose(f_jvp(2.0), 2 * onp.cos(1.0))
    f = fgrad.jit(lambda x: np.sum(np.exp(x)))
    x = onp.arange(3.0)
    assert onp.isclose(f(x), onp.exp(x).sum()) and onp.isclose(f(x + 1), onp.exp(x + 1).sum())
    assert len(f._cache) == 1
    onp.testing.assert_allclose(fgrad.grad(f)(x), onp.exp(x))


def test_stop_gradient():
    assert fgrad.grad(lambda x: x * fgrad.stop_gradient(x))(3.0) == 3.0


def test_concretization_error_names_the_argument_it_depends_on():
    def f(x, y):
        return x if np.sin(y) * 2 > 0 else -x
    with pytest.raises(TracerBoolConversionError, match=r"argument 1 \('y'\) of f"):
        fgrad.jit(f)(1.0, 2.0)
    assert fgrad.jit(f, static_argnums=1)(1.0, 2.0) == 1.0


# --- misuse that used to be accepted quietly ----------------------------------------------

@pytest.mark.parametrize("transform", [fgrad.grad, fgrad.value_and_grad, fgrad.jacrev, fgrad.jacfwd,
                                       fgrad.hessian])
def test_repeated_argnums_is_an_error(transform):
    f = lambda x, y: x * y
    for argnums in [(0, 0), (1, -1)]:
        with pytest.raises(ValueError, match=r"argnums=\(.*\) of <lambda> repeats argument"):
            transform(f, argnums=argnums)(2.0, 3.0)
    assert fgrad.grad(f, argnums=(0, 1))(2.0, 3.0) == (3.0, 2.0)


def test_vjp_cotangent_dtype_must_match_the_output():
    out, f_vjp = fgrad.vjp(lambda x: x * 2.0, onp.ones(2, onp.float32))
    for bad in [onp.ones(2), onp.ones(2, onp.float16), onp.ones(2, complex), onp.ones(2, int)]:
        with pytest.raises(ValueError, match=rf"cotangent 0 has type {bad.dtype.name[0]}\w*\[2\] but "
                                             r"output 0 has type f32\[2\]"):
            f_vjp(bad)
    (g,) = f_vjp(onp.ones(2, onp.float32))
    assert g.dtype == onp.float32 and g.tolist() == [2.0, 2.0]
    _, f_vjp = fgrad.vjp(lambda x: np.sum(x * 2.0), onp.ones(2, onp.float32))
    assert f_vjp(1.0)[0].dtype == onp.float32  # a Python number is weakly typed
    _, f_vjp = fgrad.vjp(lambda x: (x * 2.0, np.argmax(x)), onp.ones(2))
    assert f_vjp((onp.ones(2), 0))[0].tolist() == [2.0, 2.0]  # an integer output has no cotangent


def test_jvp_tangent_dtype_must_match_the_primal():
    x = onp.ones(2, onp.float32)
    with pytest.raises(TypeError, match=r"tangent 0 has type f64\[2\] but its primal has type f32\[2\]"):
        fgrad.jvp(lambda x: x * 2.0, (x,), (onp.ones(2),))
    out, t = fgrad.jvp(lambda x: x * 2.0, (onp.float32(1.0),), (1.0,))
    assert t.dtype == onp.float32 and t == 2.0
    with pytest.raises(DifferentiationError, match=r"primal 0 has dtype int64.*zeros_like"):
        fgrad.jvp(lambda n: n * 2.0, (3,), (1.0,))
    assert fgrad.jvp(lambda x, n: x * n, (2.0, 3), (1.0, 0))[1] == 3.0  # integer primal held constant


@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd", "hessian", "linearize"])
def test_integer_inputs_raise_in_every_transform_that_grad_refuses(transform):
    run = {"grad": lambda x: fgrad.grad(lambda x: np.sum(x * 2.0))(x),
           "jacrev": lambda x: fgrad.jacrev(lambda x: x * 2)(x),
           "jacfwd": lambda x: fgrad.jacfwd(lambda x: x * 2)(x),
           "hessian": lambda x: fgrad.hessian(lambda x: np.sum(x * x))(x),
           "linearize": lambda x: fgrad.linearize(lambda x: x * 2, x)}[transform]
    with pytest.raises(DifferentiationError, match=rf"^{transform} of <lambda> with respect to "
                                                   r"(argument|primal) 0, which has dtype int64: only "
                                                   r"floating-point inputs have"):
        run(onp.arange(2))
    run(onp.arange(2.0))


def test_vjp_of_an_integer_input_is_an_integer_zero_as_jax_float0():
    _, f_vjp = fgrad.vjp(lambda x, n: x * n, 2.0, 3)
    assert f_vjp(1.0) == (3.0, 0)


COMPLEX_RUNS = {
    "grad": (lambda m, g: g.grad(lambda z: m.abs(z * z))(1 + 2j)),
    "vjp": (lambda m, g: g.vjp(lambda z: z * z, 1 + 2j)[1](0.5 - 1j)),
    "jvp": (lambda m, g: g.jvp(lambda z: z * z, (1 + 2j,), (1 + 2j,))),
    "jacfwd": (lambda m, g: g.jacfwd(lambda z: z * z, holomorphic=True)(1 + 2j)),
    "jacrev": (lambda m, g: g.jacrev(lambda z: m.abs(z * z))(1 + 2j)),
    "hessian": (lambda m, g: g.hessian(lambda z: z * z * z, holomorphic=True)(1 + 2j)),
    "linearize": (lambda m, g: g.linearize(lambda z: z * z, 1 + 2j)[1](1j)),
}


@pytest.mark.parametrize("transform", sorted(COMPLEX_RUNS))
def test_complex_inputs_differentiate_as_in_jax(transform):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    got, want = COMPLEX_RUNS[transform](np, fgrad), COMPLEX_RUNS[transform](jax.numpy, jax)
    for g, w in zip(fgrad.tree_util.tree_flatten(got)[0], jax.tree_util.tree_leaves(want)):
        onp.testing.assert_allclose(g, w, rtol=1e-12)


def test_grad_of_a_complex_output_is_a_type_error_as_in_jax_and_autograd():
    jax = pytest.importorskip("jax")
    autograd = pytest.importorskip("autograd")
    with pytest.raises(TypeError):
        jax.grad(lambda x: x * (1 + 1j))(1.0)
    with pytest.raises(TypeError):
        autograd.grad(lambda x: x * (1 + 1j))(1.0)
    with pytest.raises(TypeError, match="complex128.*holomorphic=True"):
        fgrad.grad(lambda x: x * (1 + 1j))(1.0)
    with pytest.raises(TypeError, match="jacrev of <lambda>: output 0 has dtype complex128"):
        fgrad.jacrev(lambda x: x * (1 + 1j))(1.0)
    # vjp, jvp and jacfwd of a real input to a complex output are defined (as in JAX)
    assert fgrad.vjp(lambda x: x * (1 + 1j), 1.0)[1](1 - 1j)[0] == 2.0
    assert fgrad.jvp(lambda x: x * (1 + 1j), (1.0,), (2.0,))[1] == 2 + 2j
    assert fgrad.jacfwd(lambda x: x * (1 + 1j))(1.0) == 1 + 1j
    # holomorphic=True: complex in and out, as JAX's
    assert fgrad.grad(lambda z: z * z, holomorphic=True)(1 + 2j) == 2 + 4j
    with pytest.raises(DifferentiationError, match="holomorphic=True requires complex inputs"):
        fgrad.grad(lambda z: z * z, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="holomorphic=True requires complex outputs"):
        fgrad.grad(lambda z: np.abs(z), holomorphic=True)(1j)
    with pytest.raises(DifferentiationError, match="jacfwd of <lambda> .*complex128: without holomorphic=True"):
        fgrad.jacfwd(lambda z: z * z)(1j)


def test_complex_intermediates_of_real_functions_are_differentiated_not_refused():
    """grad(|x (1+i)|) is sqrt 2 (it was 0.0 before the complex rules; then a
    DifferentiationError), under grad, jvp and their compositions with jit and vmap."""
    f = lambda x: np.abs(x * (1 + 1j))  # noqa: E731
    r2 = 2 ** 0.5
    assert fgrad.grad(f)(0.7) == pytest.approx(r2)
    assert fgrad.jvp(f, (0.7,), (1.0,))[1] == pytest.approx(r2)
    assert fgrad.grad(fgrad.grad(f))(0.7) == pytest.approx(0.0)
    assert fgrad.jit(fgrad.grad(f))(0.7) == pytest.approx(r2)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(onp.ones(3)), [r2] * 3)
    # complex values that do not depend on the differentiated input are constants
    assert fgrad.grad(lambda x: x * np.abs(np.asarray(3 + 4j)))(2.0) == 5.0
    assert fgrad.jit(f)(0.7) == pytest.approx(0.7 * r2)


# --- has_aux on every transform (JAX's signatures) ------------------------------------------

def test_has_aux_on_jvp_jacfwd_jacrev_hessian_and_linearize_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)
    f = lambda x: (np.sum(x ** 3), {"x2": x * 2.0})
    jf = lambda x: (jnp.sum(x ** 3), {"x2": x * 2.0})
    x, v = onp.array([1.0, 2.0]), onp.array([0.5, -1.0])
    out, t, aux = fgrad.jvp(f, (x,), (v,), has_aux=True)
    jout, jt, jaux = jax.jvp(jf, (x,), (v,), has_aux=True)
    onp.testing.assert_allclose([out, t], [jout, jt])
    onp.testing.assert_allclose(aux["x2"], jaux["x2"])
    assert isinstance(aux["x2"], onp.ndarray)  # aux is a plain value, not a tracer
    for ours, theirs in [(fgrad.jacfwd, jax.jacfwd), (fgrad.jacrev, jax.jacrev), (fgrad.hessian, jax.hessian)]:
        jac, aux = ours(f, has_aux=True)(x)
        jjac, jaux = theirs(jf, has_aux=True)(x)
        onp.testing.assert_allclose(jac, jjac)
        onp.testing.assert_allclose(aux["x2"], jaux["x2"])
        assert isinstance(aux["x2"], onp.ndarray)
    out, f_jvp, aux = fgrad.linearize(f, x, has_aux=True)
    jout, jf_jvp, jaux = jax.linearize(jf, x, has_aux=True)
    onp.testing.assert_allclose([out, f_jvp(v)], [jout, jf_jvp(v)])
    onp.testing.assert_allclose(aux["x2"], jaux["x2"])
    with pytest.raises(TypeError, match="return a pair"):
        fgrad.jvp(lambda x: x, (1.0,), (1.0,), has_aux=True)


def test_linearize_f_jvp_checks_its_tangents():
    _, f_jvp = fgrad.linearize(lambda x: x * 2.0, onp.ones(3, onp.float32))
    with pytest.raises(fgrad.core.errors.ShapeError, match=r"tangent 0 has shape \(2,\)"):
        f_jvp(onp.ones(2, onp.float32))
    with pytest.raises(TypeError, match=r"tangent 0 has type f64\[3\] but its primal has type f32\[3\]"):
        f_jvp(onp.ones(3))
    assert f_jvp(onp.ones(3, onp.float32)).tolist() == [2.0, 2.0, 2.0]
