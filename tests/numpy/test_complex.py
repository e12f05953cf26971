"""Complex differentiation (issue 12): JAX's convention, everywhere.

jvp is the complex-linear pushforward; vjp(f, z)(ct) is ct times the transpose of the Jacobian
(no conjugation); so for a real-valued f of z = x + iy, grad f(z) = df/dx - i df/dy
(grad(abs)(1+2j) == (1-2j)/sqrt(5)), and a complex-valued f needs holomorphic=True.

The element-wise functions are enumerated, not listed: every public fgrad.numpy function whose
NumPy counterpart is a ufunc with a complex loop is tested here (values against NumPy,
check_grads at orders 1-2 in both modes on complex inputs, grad/jvp/vjp against JAX, the
holomorphic Jacobians against JAX, and grad under jit and vmap), unless it is listed below
with the reason it has no derivative to compare. A new ufunc-backed function is covered (or
fails here) without anyone editing this file. The reductions and linear algebra are listed
(they have no registry that says which take complex input).
"""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.test_util import check_grads
from tests import sampled

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(12)


def _c(*shape):
    """Complex values away from every branch cut and pole of the functions tested (real
    and imaginary parts in [0.2, 0.9])."""
    return RNG.uniform(0.2, 0.9, shape) + 1j * RNG.uniform(0.2, 0.9, shape)


def _ufunc_names() -> list[str]:
    return sorted(n for n in dir(fnp) if not n.startswith("_") and callable(getattr(fnp, n))
                  and isinstance(getattr(np, n, None), np.ufunc))


def _takes_complex(name: str) -> bool:
    return any("D" in t.split("->")[0] for t in getattr(np, name).types)


# ufuncs with a complex loop whose result carries no derivative (booleans, or piecewise
# constant): only their values on complex input are compared
NO_DERIVATIVE = {n: "boolean result" for n in (
    "equal not_equal greater greater_equal less less_equal isfinite isinf isnan logical_and "
    "logical_not logical_or logical_xor").split()}
NO_DERIVATIVE.update(rint="piecewise constant (zero derivative, as JAX's)",
                     sign="z / |z| for complex z, with a zero derivative in JAX and fgrad")
# ufuncs with a complex loop that are not element-wise (tested with linear algebra below)
NOT_ELEMENTWISE = {n: "a contraction: LINALG below" for n in ("matmul", "vecdot", "matvec", "vecmat")}
# functions on complex values that are not NumPy ufuncs but are element-wise
EXTRA_UNARY = ["real", "imag", "angle"]
# not holomorphic: jacfwd/jacrev(holomorphic=True) do not apply
NON_HOLOMORPHIC = {"abs", "absolute", "conj", "conjugate", "real", "imag", "angle", "maximum", "minimum",
                   "fmax", "fmin"}

ELEMENTWISE = sorted({n for n in _ufunc_names() if _takes_complex(n)} - set(NO_DERIVATIVE)
                     - set(NOT_ELEMENTWISE)) + EXTRA_UNARY


def _arity(name: str) -> int:
    u = getattr(np, name, None)
    return u.nin if isinstance(u, np.ufunc) else 1


def _args(name: str) -> tuple:
    return tuple(_c(2, 3) for _ in range(_arity(name)))


def test_the_enumeration_sees_the_complex_ufuncs():
    # the list is computed; this pins that it is not empty by accident and that every ufunc
    # that refuses complex in NumPy is real-only in fgrad too (no complex loop to follow)
    assert {"exp", "log", "sqrt", "abs", "multiply", "divide", "power", "tanh", "arccosh"} <= set(ELEMENTWISE)
    for name in _ufunc_names():
        if not _takes_complex(name):
            continue
        assert name in ELEMENTWISE or name in NO_DERIVATIVE or name in NOT_ELEMENTWISE, name


@pytest.mark.parametrize("name", sorted(NO_DERIVATIVE))
def test_functions_without_derivative_take_complex_values(name):
    args = _args(name)
    np.testing.assert_array_equal(getattr(fnp, name)(*args), getattr(np, name)(*args))


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_values_and_dtypes_follow_numpy(name):
    args = _args(name)
    got, want = getattr(fnp, name)(*args), getattr(np, name)(*args)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    args64 = tuple(a.astype(np.complex64) for a in args)
    assert np.asarray(getattr(fnp, name)(*args64)).dtype == getattr(np, name)(*args64).dtype


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_check_grads_on_complex_inputs(name):
    check_grads(getattr(fnp, name), _args(name), order=2, modes=("fwd", "rev"))


def _real_loss(m, name, w):
    """A real scalar of f's output, so that grad applies to any f."""
    def loss(*args):
        out = getattr(m, name)(*args)
        return m.sum(m.real(out * w))
    return loss


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_grad_jvp_vjp_match_jax(name):
    args = _args(name)
    out = np.asarray(getattr(np, name)(*args))
    w = _c(*out.shape) if out.dtype.kind == "c" else RNG.standard_normal(out.shape)
    nums = tuple(range(len(args)))
    want = jax.grad(_real_loss(jnp, name, w), argnums=nums)(*args)
    got = fgrad.grad(_real_loss(fnp, name, w), argnums=nums)(*args)
    for g, j in zip(got, want):
        assert np.asarray(g).dtype == np.complex128
        np.testing.assert_allclose(g, j, rtol=1e-10, atol=1e-12)
    ts = tuple(_c(*a.shape) for a in args)
    f, fj = getattr(fnp, name), getattr(jnp, name)
    t_out, tj_out = fgrad.jvp(f, args, ts)[1], jax.jvp(fj, args, ts)[1]
    assert np.asarray(t_out).dtype == tj_out.dtype
    np.testing.assert_allclose(t_out, tj_out, rtol=1e-10, atol=1e-12)
    ct = w.astype(out.dtype)
    for g, j in zip(fgrad.vjp(f, *args)[1](ct), jax.vjp(fj, *args)[1](ct)):
        np.testing.assert_allclose(g, j, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sampled(ELEMENTWISE, 4))
def test_grad_under_jit_and_vmap_matches_jax(name):
    args = _args(name)
    out = np.asarray(getattr(np, name)(*args))
    w = _c(*out.shape) if out.dtype.kind == "c" else RNG.standard_normal(out.shape)
    want = jax.grad(_real_loss(jnp, name, w))(*args)
    np.testing.assert_allclose(fgrad.jit(fgrad.grad(_real_loss(fnp, name, w)))(*args), want,
                               rtol=1e-10, atol=1e-12)
    # vmap over a batch of first arguments, the rest shared
    xs = np.stack([args[0], args[0] * (0.9 + 0.1j)])
    in_axes = (0,) + (None,) * (len(args) - 1)
    got = fgrad.vmap(fgrad.grad(_real_loss(fnp, name, w)), in_axes=in_axes)(xs, *args[1:])
    wantv = jax.vmap(jax.grad(_real_loss(jnp, name, w)), in_axes=in_axes)(xs, *args[1:])
    np.testing.assert_allclose(got, wantv, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n not in NON_HOLOMORPHIC])
def test_holomorphic_jacobians_match_jax(name):
    args = tuple(_c(3) for _ in range(_arity(name)))
    nums = tuple(range(len(args)))
    for jac in ("jacfwd", "jacrev"):
        got = getattr(fgrad, jac)(getattr(fnp, name), argnums=nums, holomorphic=True)(*args)
        want = getattr(jax, jac)(getattr(jnp, name), argnums=nums, holomorphic=True)(*args)
        for g, j in zip(got, want):
            np.testing.assert_allclose(g, j, rtol=1e-10, atol=1e-12)
    z = args[0][0]
    unary = (lambda z: getattr(fnp, name)(z, *(a[0] for a in args[1:]))), \
            (lambda z: getattr(jnp, name)(z, *(a[0] for a in args[1:])))
    np.testing.assert_allclose(fgrad.grad(unary[0], holomorphic=True)(z),
                               jax.grad(unary[1], holomorphic=True)(z), rtol=1e-10)


# --- the convention's anchor points -----------------------------------------------------------------

def test_the_issues_example_and_the_non_holomorphic_parts():
    z = 1 + 2j
    assert fgrad.grad(fnp.abs)(z) == pytest.approx((1 - 2j) / np.sqrt(5))
    assert fgrad.vjp(fnp.abs, z)[1](1.0)[0] == pytest.approx((1 - 2j) / np.sqrt(5))
    assert fgrad.grad(fnp.real)(z) == 1
    assert fgrad.grad(fnp.imag)(z) == -1j
    assert fgrad.grad(lambda z: fnp.abs(z) ** 2)(z) == pytest.approx(2 * np.conj(z))
    assert fgrad.grad(fnp.abs)(0j) == 0  # as JAX's
    assert fgrad.jvp(fnp.abs, (z,), (1j,))[1] == pytest.approx(2 / np.sqrt(5))
    assert np.asarray(fgrad.jvp(fnp.abs, (z,), (1j,))[1]).dtype == np.float64
    # HIPS autograd agrees on a real-valued function of complex input
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    f = lambda m: (lambda z: m.abs(m.sin(z) * z) + m.real(m.exp(z)))  # noqa: E731
    assert fgrad.grad(f(fnp))(z) == pytest.approx(autograd.grad(f(anp))(z))


def test_casts_between_real_and_complex():
    x = RNG.standard_normal(3)
    z = _c(3)
    w = _c(3)
    f = lambda m: (lambda x: m.sum(m.abs(x.astype(complex) * w)))  # noqa: E731
    np.testing.assert_allclose(fgrad.grad(f(fnp))(x), jax.grad(f(jnp))(x), rtol=1e-12)
    g = lambda m: (lambda z: m.sum(m.asarray(z).real.astype(np.float64) * 3.0))  # noqa: E731
    np.testing.assert_allclose(fgrad.grad(g(fnp))(z), jax.grad(g(jnp))(z), rtol=1e-12)
    # mixed real/complex promotion: a real input meeting a complex constant
    h = lambda m: (lambda x, z: m.sum(m.abs(x * z + x ** 2)))  # noqa: E731
    for a, b in zip(fgrad.grad(h(fnp), argnums=(0, 1))(x, z), jax.grad(h(jnp), argnums=(0, 1))(x, z)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    check_grads(h(fnp), (x, z), order=2)
    # where/select between complex branches
    s = lambda m: (lambda z: m.sum(m.abs(m.where(m.real(z) > 0.5, z * z, m.exp(z)))))  # noqa: E731
    np.testing.assert_allclose(fgrad.grad(s(fnp))(z), jax.grad(s(jnp))(z), rtol=1e-12)


def test_complex64_stays_single_precision():
    z = _c(3).astype(np.complex64)
    g = fgrad.grad(lambda z: fnp.sum(fnp.abs(fnp.exp(z))))(z)
    assert g.dtype == np.complex64
    check_grads(lambda z: fnp.exp(z) * z, (z,), order=2)


def test_check_grads_catches_a_conjugated_rule():
    """A VJP rule in PyTorch's convention (conj(f'(z)) ct) is wrong in JAX's: check_grads must
    see it in reverse mode on complex input (forward mode refuses a custom_vjp, as in JAX)."""
    @fgrad.custom_vjp
    def square(z):
        return z * z

    square.defvjp(lambda z: (z * z, z), lambda z, ct: (ct * fnp.conj(2 * z),))
    z = _c(3)
    with pytest.raises(TypeError, match="forward-mode"):
        check_grads(square, (z,), order=1, modes=("fwd",))
    with pytest.raises(AssertionError, match="rev"):
        check_grads(square, (z,), order=1, modes=("rev",))


# --- reductions and linear algebra ------------------------------------------------------------------

A = _c(3, 3) + 2 * np.eye(3)
B = _c(3, 3)
V = _c(3)
LINALG = {
    "sum": (lambda m, a: m.sum(a, axis=0), (A,)),
    "prod": (lambda m, a: m.prod(a, axis=1), (A,)),
    "mean": (lambda m, a: m.mean(a), (A,)),
    "var": (lambda m, a: m.var(a, axis=0), (A,)),
    "std": (lambda m, a: m.std(a), (A,)),
    "cumsum": (lambda m, a: m.cumsum(a, axis=1), (A,)),
    "cumprod": (lambda m, a: m.cumprod(a), (A,)),
    "dot": (lambda m, a, b: m.dot(a, b), (A, B)),
    "matmul": (lambda m, a, b: m.matmul(a, b), (A, B)),
    "einsum": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), (A, B)),
    "vdot": (lambda m, a, b: m.vdot(a, b), (A, B)),
    "vecdot": (lambda m, a, b: m.vecdot(a, b), (A, B)),
    "matvec": (lambda m, a, v: m.matvec(a, v), (A, V)),
    "vecmat": (lambda m, v, a: m.vecmat(v, a), (V, A)),
    "inner": (lambda m, a, b: m.inner(a, b), (A, B)),
    "outer": (lambda m, a, b: m.outer(a, b), (V, V)),
    "trace": (lambda m, a: m.trace(a), (A,)),
    "cov": (lambda m, a: m.cov(a), (A,)),
    "corrcoef": (lambda m, a: m.corrcoef(a), (A,)),
    "linalg.det": (lambda m, a: m.linalg.det(a), (A,)),
    "linalg.slogdet": (lambda m, a: m.linalg.slogdet(a)[0] * (0.3 - 0.2j) + m.linalg.slogdet(a)[1], (A,)),
    "linalg.inv": (lambda m, a: m.linalg.inv(a), (A,)),
    "linalg.solve": (lambda m, a, b: m.linalg.solve(a, b), (A, B)),
    "linalg.norm": (lambda m, a: m.linalg.norm(a), (A,)),
    "linalg.norm-1": (lambda m, a: m.linalg.norm(a, 1, axis=0), (A,)),
    "linalg.eigvals": (lambda m, a: m.linalg.eigvals(a), (A,)),
    "linalg.matrix_power": (lambda m, a: m.linalg.matrix_power(a, 3), (A,)),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_reductions_and_linear_algebra_match_numpy_and_jax(name):
    f, args = LINALG[name]
    out = np.asarray(f(np, *args))
    got = np.asarray(f(fnp, *args))
    assert got.dtype == out.dtype
    if name != "linalg.eigvals":  # (LAPACK's order is the same; compare sorted to be safe)
        np.testing.assert_allclose(got, out, rtol=1e-12, atol=1e-12)
    check_grads(lambda *a: f(fnp, *a), args, order=2 if name != "linalg.eigvals" else 1)
    w = _c(*out.shape) if out.dtype.kind == "c" else RNG.standard_normal(out.shape)
    nums = tuple(range(len(args)))
    got = fgrad.grad(lambda *a: fnp.sum(fnp.real(f(fnp, *a) * w)), argnums=nums)(*args)
    want = jax.grad(lambda *a: jnp.sum(jnp.real(f(jnp, *a) * w)), argnums=nums)(*args)
    for g, j in zip(got, want):
        np.testing.assert_allclose(g, j, rtol=1e-9, atol=1e-10)
    ts = tuple(_c(*a.shape) for a in args)
    np.testing.assert_allclose(fgrad.jvp(lambda *a: f(fnp, *a), args, ts)[1],
                               jax.jvp(lambda *a: f(jnp, *a), args, ts)[1], rtol=1e-9, atol=1e-10)


# --- the transforms' complex rules (JAX's checks) -----------------------------------------------------

def test_transform_dtype_rules_follow_jax():
    z = 1 + 2j
    with pytest.raises(TypeError, match="holomorphic=True"):
        fgrad.grad(lambda z: z * z)(z)
    with pytest.raises(TypeError, match="holomorphic=True requires complex inputs"):
        fgrad.jacrev(lambda z: z * z, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="holomorphic=True requires complex outputs"):
        fgrad.jacfwd(lambda z: fnp.abs(z), holomorphic=True)(z)
    with pytest.raises(TypeError, match="without holomorphic=True"):
        fgrad.hessian(lambda z: fnp.abs(z))(z)
    # jacrev of a real function of complex input, jacfwd of a complex function of real input
    np.testing.assert_allclose(fgrad.jacrev(fnp.abs)(np.array([z, 1j])), jax.jacrev(jnp.abs)(np.array([z, 1j])))
    np.testing.assert_allclose(fgrad.jacfwd(lambda x: x * z)(np.ones(2)), jax.jacfwd(lambda x: x * z)(np.ones(2)))
    np.testing.assert_allclose(fgrad.hessian(lambda z: z ** 3, holomorphic=True)(z),
                               jax.hessian(lambda z: z ** 3, holomorphic=True)(z))
    v, g = fgrad.value_and_grad(lambda z: z ** 2, holomorphic=True)(z)
    assert (v, g) == (z ** 2, 2 * z)
    # a Python number adapts to a complex output's cotangent
    assert fgrad.vjp(lambda z: z * z, z)[1](1.0)[0] == 2 * z
    # linearize and second-order mixed modes
    np.testing.assert_allclose(fgrad.linearize(fnp.exp, z)[1](1j), jax.linearize(jnp.exp, z)[1](1j))
    f = lambda m: (lambda z: m.abs(m.sin(z)) ** 3)  # noqa: E731
    np.testing.assert_allclose(fgrad.grad(lambda z: fnp.real(fgrad.grad(f(fnp))(z)))(z),
                               jax.grad(lambda z: jnp.real(jax.grad(f(jnp))(z)))(z), rtol=1e-12)


# --- the Tensor facade: PyTorch's convention (z.grad is the conjugate of JAX's gradient) --------------

TORCH_CASES = {
    "abs": lambda z, w: z.abs().sum(),
    "mul_abs": lambda z, w: (z * w).abs().sum(),
    "exp_mul_abs": lambda z, w: (z.exp() * w).abs().sum(),
    "square_abs2": lambda z, w: ((z * z).abs() ** 2).sum(),
    "sin_abs": lambda z, w: z.sin().abs().sum(),
}


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_facade_matches_torch_on_complex_tensors(name):
    torch = pytest.importorskip("torch")
    z0, w0 = _c(4).astype(np.complex64), _c(4).astype(np.complex64)
    grads = []
    for lib in (torch, fgrad.torch):
        z = lib.tensor(z0, requires_grad=True)
        TORCH_CASES[name](z, lib.tensor(w0)).backward()
        grads.append(np.asarray(z.grad.detach().numpy() if lib is torch else z.grad.numpy()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)
    # and it is the conjugate of fgrad.grad's (JAX's convention)
    loss = lambda z: fnp.sum(fnp.abs(z)) if name == "abs" else None  # noqa: E731
    if loss(z0) is not None:
        np.testing.assert_allclose(grads[1], np.conj(fgrad.grad(loss)(z0)), rtol=1e-5)


def test_facade_complex_gradient_argument_and_autograd_grad_match_torch():
    torch = pytest.importorskip("torch")
    z0, g0 = _c(3), _c(3)
    res = []
    for lib in (torch, fgrad.torch):
        z = lib.tensor(z0, requires_grad=True)
        y = z * z * lib.tensor(g0)
        (gz,) = lib.autograd.grad(y, z, grad_outputs=lib.tensor(g0))
        res.append(np.asarray(gz.detach().numpy() if lib is torch else gz.numpy()))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)


# --- the facade's complex functions, hooks and custom Functions: PyTorch's convention -----------------

_R0 = np.array([0.4, -1.2, 2.0])
_W0 = np.array([0.3 - 0.2j, 1.1 + 0.4j, -0.6 + 0.9j])
FACADE_COMPLEX = {
    "real-property": lambda L, z: (z.real * L.tensor(_R0)).sum(),
    "imag-property": lambda L, z: (z.imag * L.tensor(_R0)).sum(),
    "real": lambda L, z: (L.real(z) ** 2).sum(),
    "imag": lambda L, z: (L.imag(z) ** 3).sum(),
    "conj-method": lambda L, z: (z.conj() * L.tensor(_W0)).abs().sum(),
    "conj": lambda L, z: (L.conj(z) * z * L.tensor(_W0)).real.sum(),
    "conj_physical": lambda L, z: (L.conj_physical(z) * L.tensor(_W0)).imag.sum(),
    "angle-method": lambda L, z: (z.angle() * L.tensor(_R0)).sum(),
    "angle": lambda L, z: (L.angle(z) ** 2).sum(),
    "abs": lambda L, z: (z.abs() ** 3).sum(),
    "view_as_real": lambda L, z: (L.view_as_real(z) ** 3).sum(),
    "view_as_complex": lambda L, z: (L.view_as_complex(L.view_as_real(z) * 2) * L.tensor(_W0)).abs().sum(),
    "complex": lambda L, z: (L.complex(z.real * 2, z.imag ** 2) * L.tensor(_W0)).abs().sum(),
    "polar": lambda L, z: (L.polar(z.abs(), z.real) * L.tensor(_W0)).abs().sum(),
    "H": lambda L, z: (L.outer(z, z).H * L.tensor(np.outer(_W0, _R0))).real.sum(),
    "mH": lambda L, z: (L.outer(z, z).mH @ L.tensor(_W0)).abs().sum(),
}


def _torch_numpy(t):
    return t.detach().resolve_conj().numpy()


@pytest.mark.parametrize("name", sorted(FACADE_COMPLEX))
def test_facade_complex_functions_match_torch(name):
    torch = pytest.importorskip("torch")
    z0 = np.array([1 + 2j, -0.5 + 0.3j, 0.7 - 1.1j])
    res = []
    for lib in (torch, fgrad.torch):
        z = lib.tensor(z0, requires_grad=True)
        out = FACADE_COMPLEX[name](lib, z)
        out.backward()
        res.append((_torch_numpy(out) if lib is torch else out.detach().numpy(),
                    _torch_numpy(z.grad) if lib is torch else z.grad.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12, atol=1e-14)


def test_facade_complex_function_values_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    z0 = _c(2, 3)
    for name in ("real", "imag", "conj", "angle", "view_as_real"):
        np.testing.assert_allclose(getattr(fgrad.torch, name)(fgrad.torch.tensor(z0)).numpy(),
                                   _torch_numpy(getattr(torch, name)(torch.tensor(z0))))
    x = RNG.standard_normal((2, 2))
    assert fgrad.torch.real(fgrad.torch.tensor(x)).dtype == fgrad.torch.float64
    np.testing.assert_array_equal(fgrad.torch.angle(fgrad.torch.tensor(x)).numpy(), torch.angle(torch.tensor(x)).numpy())
    np.testing.assert_allclose(fgrad.torch.view_as_complex(fgrad.torch.tensor(x)).numpy(),
                               torch.view_as_complex(torch.tensor(x)).numpy())
    for fn in (lambda L: L.tensor(x).imag, lambda L: L.view_as_real(L.tensor(x)),
               lambda L: L.view_as_complex(L.tensor(np.ones((2, 3)))),
               lambda L: L.complex(L.tensor(x), L.tensor(x.astype(np.float32)))):
        with pytest.raises(RuntimeError):
            fn(torch)
        with pytest.raises(RuntimeError):
            fn(fgrad.torch)


def _hooked_graph(lib, z0, w0, log):
    z = lib.tensor(z0, requires_grad=True)
    y = z * z * lib.tensor(w0)
    y.retain_grad()

    def hook(g):
        log.append(_torch_numpy(g) if lib is torch_module() else g.numpy())
        return g * (1 + 2j)

    y.register_hook(hook)
    u = y.exp()
    u.register_hook(lambda g: log.append(_torch_numpy(g) if lib is torch_module() else g.numpy()))
    u.abs().sum().backward()
    return z, y


def torch_module():
    return pytest.importorskip("torch")


def test_hooks_on_non_leaf_complex_tensors_see_torch_gradients():
    torch = torch_module()
    z0, w0 = _c(3), _c(3)
    logs, results = [], []
    for lib in (torch, fgrad.torch):
        log = []
        z, y = _hooked_graph(lib, z0, w0, log)
        logs.append(log)
        results.append([_torch_numpy(t) if lib is torch else t.numpy() for t in (z.grad, y.grad)])
    for a, b in zip(logs[1], logs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for a, b in zip(results[1], results[0]):   # the replaced gradient flows on; retain_grad keeps it
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_custom_function_backward_gets_torch_gradients():
    torch = torch_module()
    z0, w0 = _c(3), _c(3)

    def make(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * z

            @staticmethod
            def backward(ctx, g):
                (z,) = ctx.saved_tensors
                seen.append(_torch_numpy(g) if lib is torch else g.numpy())
                return g * (2 * z).conj()   # PyTorch's convention: grad * conj(f'(z))
        return Square

    grads, seen_all = [], []
    for lib in (torch, fgrad.torch):
        seen = []
        z = lib.tensor(z0, requires_grad=True)
        (make(lib).apply(z) * lib.tensor(w0)).abs().sum().backward()
        grads.append(_torch_numpy(z.grad) if lib is torch else z.grad.numpy())
        seen_all.append(seen)
    np.testing.assert_allclose(seen_all[1][0], seen_all[0][0], rtol=1e-12)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
