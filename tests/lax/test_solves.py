"""fgrad.lax.custom_root and custom_linear_solve: values and derivatives of orders 1 and 2 in
both modes against closed forms, against differentiating through fgrad.numpy.linalg.solve,
numerical checks (check_grads), and against jax.lax's (slow: JAX compiles every op of these
transforms on first use); jit and vmap; solvers whose own steps cannot be differentiated (a
bisection in a while_loop, whose derivative through its steps would be zero); aux outputs,
pytrees, and the errors for mismatched structures and shapes."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.lax as fl
import fgrad.numpy as fnp
from fgrad.core.errors import FgradTypeError
from fgrad.test_util import check_grads

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:  # the comparisons with JAX skip; the rest runs
    jax = jnp = None
needs_jax = pytest.mark.skipif(jax is None, reason="needs jax")

RNG = np.random.default_rng(0)


def _close(a, b, tol: float = 1e-9) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# --- custom_root: JAX's documented example (sqrt of x**3 by Newton's method) -----------------

def _newton(np_, lax, grad):
    def newton(f, x0):
        return lax.while_loop(lambda x: np_.abs(f(x)) > 1e-12, lambda x: x - f(x) / grad(f)(x), x0)
    return newton


def _sqrt_cubed(np_, lax, grad):
    def sqrt_cubed(x):
        return lax.custom_root(lambda y: y ** 2 - x ** 3, 1.0, _newton(np_, lax, grad), lambda g, y: y / g(1.0))
    return sqrt_cubed


F_SQRT = _sqrt_cubed(fnp, fl, fgrad.grad)
J_SQRT = _sqrt_cubed(jnp, jax.lax, jax.grad) if jax is not None else None


def test_root_sqrt_cubed_derivatives_of_orders_1_and_2() -> None:
    x = 5.0
    _close(F_SQRT(x), x ** 1.5)
    d1, d2 = 1.5 * x ** 0.5, 0.75 * x ** -0.5
    for g in (fgrad.grad, fgrad.jacfwd, fgrad.jacrev):
        _close(g(F_SQRT)(x), d1)
    for outer in (fgrad.grad, fgrad.jacfwd):
        for inner in (fgrad.grad, fgrad.jacfwd):
            _close(outer(inner(F_SQRT))(x), d2)
    _close(fgrad.jvp(F_SQRT, (x,), (2.0,))[1], 2 * d1)
    _close(fgrad.jvp(fgrad.grad(F_SQRT), (x,), (1.0,))[1], d2)
    xs = np.array([1.0, 4.0, 5.0])
    _close(fgrad.jit(fgrad.grad(fgrad.grad(F_SQRT)))(x), d2)
    _close(fgrad.vmap(F_SQRT)(xs), xs ** 1.5)
    _close(fgrad.jit(fgrad.vmap(fgrad.grad(F_SQRT)))(xs), 1.5 * xs ** 0.5)
    _close(fgrad.vmap(fgrad.grad(fgrad.grad(F_SQRT)))(xs), 0.75 * xs ** -0.5)
    _close(fgrad.grad(lambda v: fnp.sum(fgrad.vmap(F_SQRT)(v) ** 2))(xs), 2 * xs ** 1.5 * 1.5 * xs ** 0.5)


@pytest.mark.slow
@needs_jax
def test_root_sqrt_cubed_values_and_derivatives_match_jax() -> None:
    x = 5.0
    _close(F_SQRT(x), x ** 1.5)
    for fg, jg in ((fgrad.grad, jax.grad), (fgrad.jacfwd, jax.jacfwd)):
        _close(fg(F_SQRT)(x), jg(J_SQRT)(x))
        _close(fg(fg(F_SQRT))(x), jg(jg(J_SQRT))(x))
    _close(fgrad.jacfwd(fgrad.grad(F_SQRT))(x), 0.75 * x ** -0.5)
    _close(fgrad.grad(fgrad.jacfwd(F_SQRT))(x), 0.75 * x ** -0.5)
    _close(fgrad.jvp(F_SQRT, (x,), (2.0,))[1], 2 * 1.5 * x ** 0.5)


@pytest.mark.slow
@needs_jax
def test_root_under_jit_and_vmap_matches_jax() -> None:
    xs = np.array([1.0, 4.0, 5.0])
    _close(fgrad.jit(fgrad.grad(fgrad.grad(F_SQRT)))(5.0), jax.grad(jax.grad(J_SQRT))(5.0))
    _close(fgrad.vmap(F_SQRT)(xs), xs ** 1.5)
    _close(fgrad.vmap(fgrad.grad(F_SQRT))(xs), jax.vmap(jax.grad(J_SQRT))(xs))
    _close(fgrad.jit(fgrad.vmap(fgrad.grad(F_SQRT)))(xs), 1.5 * xs ** 0.5)
    _close(fgrad.grad(lambda v: fnp.sum(fgrad.vmap(F_SQRT)(v) ** 2))(xs), 2 * xs ** 1.5 * 1.5 * xs ** 0.5)


def _bisect(f, guess):
    # comparisons and selects only: differentiating these steps would give zero
    def body(c):
        lo, hi = c
        mid = (lo + hi) / 2
        above = f(mid) > 0
        return fnp.where(above, lo, mid), fnp.where(above, mid, hi)
    lo, hi = fl.while_loop(lambda c: c[1] - c[0] > 1e-13, body, (guess * 0.0, guess * 0.0 + 100.0))
    return (lo + hi) / 2


def test_root_under_vmap_of_the_guess_and_of_closed_over_arrays() -> None:
    def root(a, guess):
        return fl.custom_root(lambda y: y ** 2 - a, guess, _newton(fnp, fl, fgrad.grad), lambda g, y: y / g(1.0))
    a, guesses = np.array([2.0, 3.0]), np.array([1.0, 5.0, 0.5])
    _close(fgrad.vmap(root, (None, 0))(2.0, guesses), np.full(3, np.sqrt(2.0)))
    _close(fgrad.vmap(root, (0, 0))(a, guesses[:2]), np.sqrt(a))
    _close(fgrad.vmap(fgrad.grad(root), (0, None))(a, 1.0), 0.5 / np.sqrt(a))
    _close(fgrad.jacfwd(lambda v: fgrad.vmap(root, (0, None))(v, 1.0))(a), np.diag(0.5 / np.sqrt(a)))
    # the initial guess gets no derivative (as in JAX)
    _close(fgrad.grad(root, 1)(2.0, 1.0), 0.0)


def test_root_by_bisection_gets_exact_derivatives() -> None:
    def cube_root(a):
        return fl.custom_root(lambda x: x ** 3 - a, 1.0, _bisect, lambda g, y: y / g(1.0))
    a = 8.0
    _close(cube_root(a), 2.0, 1e-12)
    _close(fgrad.grad(cube_root)(a), a ** (-2 / 3) / 3)
    _close(fgrad.grad(fgrad.grad(cube_root))(a), -2 / 9 * a ** (-5 / 3))
    _close(fgrad.jacfwd(fgrad.jacrev(cube_root))(a), -2 / 9 * a ** (-5 / 3))
    _close(fgrad.jit(fgrad.grad(cube_root))(a), a ** (-2 / 3) / 3)


@pytest.mark.slow
@needs_jax
def test_root_vector_with_pytree_and_aux_matches_jax() -> None:
    # f(x) = A x + x**3 - c, elementwise cubic; solved by Newton with the full Jacobian
    A = np.array([[3.0, 0.5], [0.2, 2.0]])

    def make(np_, lax, jacobian, linalg_solve):
        def newton(f, x0):
            def body(c):
                x, k = c
                flat = lambda v: f({"u": v[:1], "w": v[1:]})  # noqa: E731
                vec = np_.concatenate([x["u"], x["w"]])
                fx = np_.concatenate([flat(vec)["u"], flat(vec)["w"]])
                jac = jacobian(lambda v: np_.concatenate([flat(v)["u"], flat(v)["w"]]))(vec)
                step = linalg_solve(jac, fx)
                return {"u": x["u"] - step[:1], "w": x["w"] - step[1:]}, k + 1
            # a float count: JAX 0.10 refuses an integer aux under forward mode
            return lax.while_loop(lambda c: (c[1] < 30), body, (x0, 0.0))

        def tangent_solve(g, y):
            cols = [g({"u": np_.array([1.0]), "w": np_.array([0.0])}),
                    g({"u": np_.array([0.0]), "w": np_.array([1.0])})]
            jac = np_.stack([np_.concatenate([c["u"], c["w"]]) for c in cols], axis=1)
            sol = linalg_solve(jac, np_.concatenate([y["u"], y["w"]]))
            return {"u": sol[:1], "w": sol[1:]}

        def solve_for(c):
            def f(x):
                v = np_.concatenate([x["u"], x["w"]])
                r = np_.dot(A, v) + v ** 3 - c
                return {"u": r[:1], "w": r[1:]}
            x, k = lax.custom_root(f, {"u": np_.zeros(1), "w": np_.zeros(1)}, newton, tangent_solve, has_aux=True)
            return np_.concatenate([x["u"], x["w"]]) * 1.0 + 0 * k
        return solve_for
    F = make(fnp, fl, fgrad.jacfwd, fnp.linalg.solve)
    J = make(jnp, jax.lax, jax.jacfwd, jnp.linalg.solve)
    c = np.array([1.0, -2.0])
    _close(F(c), J(c))
    _close(fgrad.jacrev(F)(c), jax.jacrev(J)(c))
    _close(fgrad.jacfwd(fgrad.jacrev(F))(c), jax.jacfwd(jax.jacrev(J))(c))
    _close(fgrad.hessian(lambda v: fnp.sum(F(v) ** 2))(c), jax.hessian(lambda v: jnp.sum(J(v) ** 2))(c))


def test_root_vector_implicit_derivative() -> None:
    # x*(c) solves A x + x**3 = c (elementwise cube), so dx*/dc = (A + 3 diag(x*)**2)^-1
    A = np.array([[3.0, 0.5], [0.2, 2.0]])

    def newton(f, x0):
        return fl.fori_loop(0, 30, lambda i, x: x - fnp.linalg.solve(fgrad.jacfwd(f)(x), f(x)), x0)

    def solve_for(c):
        return fl.custom_root(lambda x: fnp.dot(A, x) + x ** 3 - c, fnp.zeros(2), newton,
                              lambda g, y: fnp.linalg.solve(fgrad.jacfwd(g)(y), y))
    c = np.array([1.0, -2.0])
    x = np.asarray(solve_for(c))
    _close(A @ x + x ** 3, c)
    want = np.linalg.inv(A + 3 * np.diag(x ** 2))
    _close(fgrad.jacrev(solve_for)(c), want)
    _close(fgrad.jacfwd(solve_for)(c), want)
    _close(fgrad.jit(fgrad.jacrev(solve_for))(c), want)
    check_grads(solve_for, (c,), order=2, modes=("fwd", "rev"))


def test_root_aux_is_returned_and_has_no_derivative() -> None:
    def newton_counting(f, x0):
        def body(c):
            x, k = c
            return x - f(x) / fgrad.grad(f)(x), k + 1
        return fl.while_loop(lambda c: fnp.abs(f(c[0])) > 1e-12, body, (x0, 0))

    def r(a):
        return fl.custom_root(lambda x: x ** 2 - a, 1.0, newton_counting, lambda g, y: y / g(1.0), has_aux=True)
    x, k = r(2.0)
    _close(x, np.sqrt(2.0))
    assert int(k) > 0
    _close(fgrad.grad(lambda a: r(a)[0])(2.0), 0.5 / np.sqrt(2.0))
    check_grads(lambda a: r(a)[0], (2.0,), order=2, modes=("fwd", "rev"))


# --- custom_linear_solve -----------------------------------------------------------------------

A0 = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = A0 @ A0.T
B0 = RNG.standard_normal(3)


def _dense(np_, lax, symmetric: bool):
    def f(a, b):
        return lax.custom_linear_solve(lambda x: np_.dot(a, x), b, lambda mv, x: np_.linalg.solve(a, x),
                                       None if symmetric else (lambda vm, x: np_.linalg.solve(a.T, x)),
                                       symmetric=symmetric)
    return f


@pytest.mark.parametrize("symmetric", [False, True])
def test_linear_solve_dense_derivatives_equal_those_through_linalg_solve(symmetric: bool) -> None:
    # fgrad.numpy.linalg.solve has its own derivative rules: the implicit ones must agree
    A = SPD if symmetric else A0
    F, G = _dense(fnp, fl, symmetric), fnp.linalg.solve
    if symmetric:  # derivatives along symmetric matrices only (what symmetric=True assumes)
        F = (lambda f: lambda a, b: f((a + fnp.transpose(a)) / 2, b))(F)
        G = (lambda f: lambda a, b: f((a + fnp.transpose(a)) / 2, b))(G)
    _close(F(A, B0), np.linalg.solve(A, B0))
    for argnum in (0, 1):
        def loss(h):
            return lambda a, b: fnp.sum(h(a, b) ** 3)
        _close(fgrad.grad(loss(F), argnum)(A, B0), fgrad.grad(loss(G), argnum)(A, B0))
        _close(fgrad.jacfwd(F, argnum)(A, B0), fgrad.jacfwd(G, argnum)(A, B0))
        _close(fgrad.hessian(loss(F), argnum)(A, B0), fgrad.hessian(loss(G), argnum)(A, B0), 1e-8)
        _close(fgrad.jacrev(fgrad.jacfwd(F, argnum), argnum)(A, B0),
               fgrad.jacrev(fgrad.jacfwd(G, argnum), argnum)(A, B0), 1e-8)
        _close(fgrad.jit(fgrad.hessian(loss(F), argnum))(A, B0), fgrad.hessian(loss(G), argnum)(A, B0), 1e-8)
    As = np.stack([A, A + 0.5 * np.eye(3)])
    Bs = RNG.standard_normal((4, 3))
    _close(fgrad.vmap(F, (None, 0))(A, Bs), np.linalg.solve(A, Bs.T).T)
    _close(fgrad.vmap(F, (0, 1))(As, Bs[:2].T), np.stack([np.linalg.solve(a, b) for a, b in zip(As, Bs[:2])]))
    _close(fgrad.vmap(fgrad.grad(lambda a, b: fnp.sum(F(a, b) ** 3)), (0, None))(As, B0),
           fgrad.vmap(fgrad.grad(lambda a, b: fnp.sum(G(a, b) ** 3)), (0, None))(As, B0))
    _close(fgrad.jit(fgrad.vmap(fgrad.jacfwd(F), (0, None)))(As, B0),
           fgrad.vmap(fgrad.jacfwd(G), (0, None))(As, B0))
    _close(fgrad.grad(lambda a: fnp.sum(fgrad.vmap(F, (0, None))(a, B0) ** 2))(As),
           fgrad.grad(lambda a: fnp.sum(fgrad.vmap(G, (0, None))(a, B0) ** 2))(As))
    check_grads(F, (A, B0), order=2, modes=("fwd", "rev"))


def test_linear_solve_complex_derivatives_equal_those_through_linalg_solve() -> None:
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal(3) + 1j * rng.standard_normal(3)

    def F(a, v):
        return fl.custom_linear_solve(lambda x: a @ x, v, lambda mv, x: fnp.linalg.solve(a, x),
                                      lambda vm, x: fnp.linalg.solve(fnp.transpose(a), x))
    G = fnp.linalg.solve
    for i in (0, 1):
        _close(fgrad.grad(lambda a, v: fnp.sum(fnp.abs(F(a, v)) ** 2), i)(A, b),
               fgrad.grad(lambda a, v: fnp.sum(fnp.abs(G(a, v)) ** 2), i)(A, b))
        _close(fgrad.jacfwd(F, i, holomorphic=True)(A, b), fgrad.jacfwd(G, i, holomorphic=True)(A, b))


@pytest.mark.slow
@needs_jax
@pytest.mark.parametrize("symmetric", [False, True])
def test_linear_solve_dense_values_and_derivatives_match_jax(symmetric: bool) -> None:
    A = SPD if symmetric else A0
    F, J = _dense(fnp, fl, symmetric), _dense(jnp, jax.lax, symmetric)
    _close(F(A, B0), np.linalg.solve(A, B0))
    for argnum in (0, 1):
        fl_ = lambda a, b: fnp.sum(F(a, b) ** 3)  # noqa: E731
        jl_ = lambda a, b: jnp.sum(J(a, b) ** 3)  # noqa: E731
        _close(fgrad.grad(fl_, argnum)(A, B0), jax.grad(jl_, argnum)(A, B0))
        _close(fgrad.jacfwd(F, argnum)(A, B0), jax.jacfwd(J, argnum)(A, B0))
        _close(fgrad.hessian(fl_, argnum)(A, B0), jax.hessian(jl_, argnum)(A, B0), 1e-8)
        _close(fgrad.jacfwd(fgrad.jacrev(F, argnum), argnum)(A, B0), jax.jacfwd(jax.jacrev(J, argnum), argnum)(A, B0))


@pytest.mark.slow
@needs_jax
def test_linear_solve_jvp_of_vjp_and_jit_match_jax() -> None:
    F, J = _dense(fnp, fl, False), _dense(jnp, jax.lax, False)
    ct, tA = RNG.standard_normal(3), RNG.standard_normal((3, 3))

    def fvjp(a):
        return fgrad.vjp(lambda m: F(m, B0), a)[1](ct)[0]

    def jvjp(a):
        return jax.vjp(lambda m: J(m, B0), a)[1](ct)[0]
    _close(fgrad.jvp(fvjp, (A0,), (tA,))[1], jax.jvp(jvjp, (A0,), (tA,))[1])
    _close(fgrad.jit(fgrad.hessian(lambda a, b: fnp.sum(F(a, b) ** 3)))(A0, B0),
           jax.hessian(lambda a, b: jnp.sum(J(a, b) ** 3))(A0, B0), 1e-8)


@pytest.mark.slow
@needs_jax
def test_linear_solve_under_vmap_matches_jax() -> None:
    F, J = _dense(fnp, fl, False), _dense(jnp, jax.lax, False)
    Bs = RNG.standard_normal((4, 3))
    As = np.stack([A0, A0 + 0.5 * np.eye(3)])
    _close(fgrad.vmap(F, (None, 0))(A0, Bs), jax.vmap(J, (None, 0))(A0, Bs))
    _close(fgrad.vmap(F, (0, None))(As, B0), jax.vmap(J, (0, None))(As, B0))
    _close(fgrad.vmap(F, (0, 1))(As, Bs[:2].T), jax.vmap(J, (0, 1))(As, Bs[:2].T))
    fl_ = lambda a, b: fnp.sum(F(a, b) ** 3)  # noqa: E731
    jl_ = lambda a, b: jnp.sum(J(a, b) ** 3)  # noqa: E731
    _close(fgrad.vmap(fgrad.grad(fl_), (0, None))(As, B0), jax.vmap(jax.grad(jl_), (0, None))(As, B0))
    _close(fgrad.grad(lambda a: fnp.sum(fgrad.vmap(F, (0, None))(a, B0) ** 2))(As),
           jax.grad(lambda a: jnp.sum(jax.vmap(J, (0, None))(a, B0) ** 2))(As))
    _close(fgrad.jit(fgrad.vmap(F, (0, None)))(As, B0), jax.vmap(J, (0, None))(As, B0))


def _cg(np_, lax):
    def cg(mv, b):  # conjugate gradients in a while_loop, with its iteration count as aux
        def body(c):
            x, r, p, k = c
            ap = mv(p)
            alpha = np_.dot(r, r) / np_.dot(p, ap)
            rn = r - alpha * ap
            return x + alpha * p, rn, rn + np_.dot(rn, rn) / np_.dot(r, r) * p, k + 1
        x, _, _, k = lax.while_loop(lambda c: np_.linalg.norm(c[1]) > 1e-13, body, (b * 0, b, b, 0))
        return x, k
    return cg


def _cg_solve(np_, lax):
    def f(a, b):
        return lax.custom_linear_solve(lambda v: np_.dot(a, v), b, _cg(np_, lax), symmetric=True, has_aux=True)
    return f


@pytest.mark.slow
@needs_jax
def test_linear_solve_conjugate_gradients_with_aux_matches_jax() -> None:
    F, J = _cg_solve(fnp, fl), _cg_solve(jnp, jax.lax)
    assert int(F(SPD, B0)[1]) == int(J(SPD, B0)[1])
    fx = lambda a, b: F(a, b)[0]  # noqa: E731
    jx = lambda a, b: J(a, b)[0]  # noqa: E731
    for k in (0, 1):
        _close(fgrad.jacrev(fx, (0, 1))(SPD, B0)[k], jax.jacrev(jx, (0, 1))(SPD, B0)[k], 1e-8)
        _close(fgrad.jacfwd(fx, (0, 1))(SPD, B0)[k], jax.jacfwd(jx, (0, 1))(SPD, B0)[k], 1e-8)


def test_linear_solve_conjugate_gradients_with_aux() -> None:
    F = _cg_solve(fnp, fl)
    x, k = F(SPD, B0)
    _close(x, np.linalg.solve(SPD, B0))
    assert 1 <= int(k) <= 3
    fx = lambda b: F(SPD, b)[0]  # noqa: E731
    _close(fgrad.jacrev(fx)(B0), np.linalg.inv(SPD), 1e-8)
    _close(fgrad.jit(fgrad.jacfwd(fx))(B0), np.linalg.inv(SPD), 1e-8)
    _close(fgrad.vmap(fx)(np.eye(3)), np.linalg.inv(SPD), 1e-8)
    check_grads(fx, (B0,), order=2, modes=("fwd", "rev"))
    # the solver's Python runs once, when it is staged, with or without grad (symmetric: the
    # one staged solver also solves the transposed system)
    calls = []

    def counting_solve(mv, b):
        calls.append(1)
        return _cg(fnp, fl)(mv, b)[0]

    def loss(b):
        return fnp.sum(fl.custom_linear_solve(lambda v: fnp.dot(SPD, v), b, counting_solve, symmetric=True) ** 2)
    loss(B0)
    assert len(calls) == 1
    _close(fgrad.hessian(loss)(B0), 2 * np.linalg.inv(SPD) @ np.linalg.inv(SPD), 1e-8)
    assert len(calls) == 2


def _pytree_solve(lax):
    # a non-symmetric 2x2 system on a dict: matvec [[2 s, 1], [0.5, 3]], solved in closed form
    def f(d, e, s):
        mv = lambda x: {"u": s * 2 * x["u"] + x["v"], "v": 0.5 * x["u"] + 3 * x["v"]}  # noqa: E731

        def solve(m, b):
            det = s * 6 - 0.5
            return {"u": (3 * b["u"] - b["v"]) / det, "v": (s * 2 * b["v"] - 0.5 * b["u"]) / det}

        def transpose_solve(vm, b):
            det = s * 6 - 0.5
            return {"u": (3 * b["u"] - 0.5 * b["v"]) / det, "v": (s * 2 * b["v"] - b["u"]) / det}
        x = lax.custom_linear_solve(mv, {"u": d, "v": e}, solve, transpose_solve)
        return x["u"] * x["v"] + x["u"]
    return f


PYTREE_ARGS = (1.0, 2.0, 1.5)


def test_linear_solve_pytree_with_transpose_solve() -> None:
    F = _pytree_solve(fl)
    x_u, x_v = np.linalg.solve(np.array([[3.0, 1.0], [0.5, 3.0]]), np.array([1.0, 2.0]))
    _close(F(*PYTREE_ARGS), x_u * x_v + x_u)
    for i in range(3):
        _close(fgrad.grad(F, i)(*PYTREE_ARGS), fgrad.jacfwd(F, i)(*PYTREE_ARGS))
    check_grads(F, PYTREE_ARGS, order=2, modes=("fwd", "rev"))


@pytest.mark.slow
@needs_jax
def test_linear_solve_pytree_with_transpose_solve_matches_jax() -> None:
    F, J = _pytree_solve(fl), _pytree_solve(jax.lax)
    _close(F(*PYTREE_ARGS), J(*PYTREE_ARGS))
    # JAX 0.10 fails on the other first derivatives here (the right-hand side's tangent is
    # zero on one of its two leaves): see docs/jax-differences.md
    _close(fgrad.jacfwd(F, 2)(*PYTREE_ARGS), jax.jacfwd(J, 2)(*PYTREE_ARGS))
    _close(fgrad.hessian(F, (0, 1))(*PYTREE_ARGS), jax.hessian(J, (0, 1))(*PYTREE_ARGS))


def test_linear_solve_vecmat_is_the_transpose_of_matvec() -> None:
    z = np.array([1.0, -2.0, 0.5])

    def transpose_solve(vm, x):
        # exact only when vm is A0's transpose (A0 is not symmetric)
        return fnp.linalg.solve(A0.T, x) + (vm(z) - A0.T @ z)
    f = lambda b: fl.custom_linear_solve(lambda x: fnp.dot(A0, x), b,  # noqa: E731
                                         lambda mv, x: fnp.linalg.solve(A0, x), transpose_solve)
    _close(f(B0), np.linalg.solve(A0, B0))
    _close(fgrad.jacrev(f)(B0), np.linalg.inv(A0))


def test_make_jaxpr_names_each_variable_of_a_repeated_body_once() -> None:
    # symmetric=True: matvec serves as vecmat and solve as transpose_solve, one body printed twice
    def f(b):
        return fl.custom_linear_solve(lambda x: SPD @ x, b, lambda mv, x: fnp.linalg.solve(SPD, x), symmetric=True)
    text = str(fgrad.make_jaxpr(fgrad.grad(lambda b: fnp.sum(f(b) ** 2)))(B0))
    declared = [tok.split(":")[0] for line in text.splitlines() for tok in line.replace(".", " ").split()
                if ":f64" in tok]
    assert text.count("custom_linear_solve[") == 2
    assert len(declared) == len(set(declared)), text


# --- errors ------------------------------------------------------------------------------------

def test_linear_solve_reverse_mode_without_transpose_solve_is_refused_forward_works() -> None:
    def f(b):
        return fl.custom_linear_solve(lambda x: fnp.dot(A0, x), b, lambda mv, x: fnp.linalg.solve(A0, x))
    _close(fgrad.jacfwd(f)(B0), np.linalg.inv(A0))
    with pytest.raises(FgradTypeError, match="transpose_solve"):
        fgrad.grad(lambda b: fnp.sum(f(b)))(B0)


@pytest.mark.parametrize("call,match", [
    (lambda: fl.custom_linear_solve(lambda x: x[:2], np.ones(3), lambda m, x: x),
     r"matvec returned leaf 0 with shape \(2,\) where b has shape \(3,\)"),
    (lambda: fl.custom_linear_solve(lambda x: x, np.ones(3), lambda m, x: x[:2]),
     r"solve returned leaf 0 with shape \(2,\) where b has shape \(3,\)"),
    (lambda: fl.custom_linear_solve(lambda x: (x, x), np.ones(3), lambda m, x: x),
     "matvec must return the structure of b"),
    (lambda: fl.custom_linear_solve(lambda x: x, np.ones(3), lambda m, x: x, has_aux=True),
     r"must return a pair \(solution, aux\), got f64\[3\]"),
    (lambda: fl.custom_linear_solve(lambda x: x, np.ones(3), lambda m, x: x.astype(np.float32)),
     "solve returned leaf 0 as float32 where b is float64"),
    (lambda: fl.custom_linear_solve(lambda x: x, np.ones(3), lambda m, x: m(x[:2])),
     r"the argument given to matvec.*shape \(2,\)"),
    (lambda: fl.custom_root(lambda x: x, np.ones(3), lambda f, x: x, lambda g, y: y[0]),
     r"tangent_solve returned leaf 0 with shape \(\) where initial_guess has shape \(3,\)"),
    (lambda: fl.custom_root(lambda x: x.sum(), np.ones(3), lambda f, x: x, lambda g, y: y),
     r"f returned leaf 0 with shape \(\) where initial_guess has shape \(3,\)"),
    (lambda: fl.custom_root(lambda x: x, (1.0, 2.0), lambda f, x: x[0], lambda g, y: y),
     "solve must return the structure of initial_guess"),
    (lambda: fl.custom_root(lambda x: x, 1.0, "newton", lambda g, y: y), "solve must be callable"),
])
def test_mismatches_are_clear_errors(call, match: str) -> None:
    with pytest.raises(FgradTypeError, match=match):
        call()
