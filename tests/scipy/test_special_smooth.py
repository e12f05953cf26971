"""fgrad.scipy.special's exponential integrals, hypergeometric, combinatorial and other smooth
functions (boxcox, boxcox1p, comb, dawsn, exp1, expi, expn, factorial, fresnel, hyp1f1,
hyp2f1, loggamma, owens_t, poch, sici, spence, sph_harm_y, wofz, zeta): values against SciPy
(ordinary points and edges) and JAX, derivatives of orders 1-2 in both modes (check_grads),
eager against jit and vmap, and the parameters without a derivative."""
from __future__ import annotations

import math

import numpy as onp
import pytest
import scipy.special as sc

import fgrad
import fgrad.numpy as fnp
import fgrad.scipy.special as fs
from fgrad.core.errors import DifferentiationError, FgradTypeError, FgradValueError
from fgrad.test_util import check_grads
from tests import sampled

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.special as jss
except ImportError:  # pragma: no cover
    jax = jss = None

X = onp.array([0.3, 1.2, 2.5])
# name: (fgrad call, SciPy call, JAX call or None, point): each a function of one float64 array
CASES = {
    "exp1": (lambda m, x: m.exp1(x), X, True),
    "expi": (lambda m, x: m.expi(x - 1.0), X, True),
    "expn": (lambda m, x: m.expn(2, x), X, True),
    "expn0": (lambda m, x: m.expn(0, x), X, True),
    "si": (lambda m, x: m.sici(x)[0], X, True),
    "ci": (lambda m, x: m.sici(x)[1], X, True),
    "si_neg": (lambda m, x: m.sici(-x)[0] + m.sici(-x)[1], X, False),
    "fresnel_s": (lambda m, x: m.fresnel(x)[0], X, True),
    "fresnel_c": (lambda m, x: m.fresnel(x)[1], X, True),
    "dawsn": (lambda m, x: m.dawsn(x), X - 1.0, True),
    "spence": (lambda m, x: m.spence(x), X, False),
    "spence_near_1": (lambda m, x: m.spence(0.1 * x + 0.9), X, False),
    "hyp1f1": (lambda m, x: m.hyp1f1(0.5, 1.5, x), X, True),
    "hyp2f1": (lambda m, x: m.hyp2f1(0.5, 1.5, 2.5, x / 3.0), X, True),
    "zeta": (lambda m, q: m.zeta(3.0, q), X, True),
    "owens_t_h": (lambda m, h: m.owens_t(h, 0.7), X - 1.0, True),
    "owens_t_a": (lambda m, a: m.owens_t(0.4, a), X - 1.0, True),
    "comb_n": (lambda m, n: m.comb(n + 5.0, 2.0), X, True),
    "comb_k": (lambda m, k: m.comb(5.5, k), X, True),
    "factorial": (lambda m, n: m.factorial(n), X, True),
    "poch_z": (lambda m, z: m.poch(z, 1.7), X, True),
    "poch_m": (lambda m, mm: m.poch(1.3, mm), X - 1.0, True),
    "loggamma": (lambda m, x: m.loggamma(x), X, True),
    "boxcox": (lambda m, x: m.boxcox(x, 0.5), X, True),
    "boxcox_lmbda": (lambda m, lm: m.boxcox(1.7, lm - 1.2), X, True),
    "boxcox1p": (lambda m, x: m.boxcox1p(x, -0.5), X, True),
    "boxcox1p_lmbda": (lambda m, lm: m.boxcox1p(0.7, lm - 1.2), X, True),
}


def _scipy(m):
    return sc if m is None else m


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_grads(name):
    f, x, in_jax = CASES[name]
    got = onp.asarray(f(fs, x))
    onp.testing.assert_allclose(got, f(sc, x), rtol=1e-12, atol=1e-14)
    if jss is not None and in_jax:
        onp.testing.assert_allclose(got, onp.asarray(f(jss, x)), rtol=1e-6, atol=1e-10)
    check_grads(lambda v: f(fs, v), (x,), order=2, modes=("fwd", "rev"))
    # eager, jit and vmap agree
    onp.testing.assert_allclose(onp.asarray(fgrad.jit(lambda v: f(fs, v))(x)), got, rtol=1e-14)
    onp.testing.assert_allclose(onp.asarray(fgrad.vmap(lambda v: f(fs, v))(x)), got, rtol=1e-14)
    g = fgrad.vmap(fgrad.grad(lambda v: f(fs, v)))(x)
    onp.testing.assert_allclose(onp.asarray(fgrad.jit(fgrad.vmap(fgrad.grad(lambda v: f(fs, v))))(x)), g, rtol=1e-13)


@pytest.mark.skipif(jss is None, reason="JAX is not installed")
@pytest.mark.parametrize("name", sampled(["exp1", "expi", "dawsn", "fresnel_s", "si", "hyp1f1", "zeta", "owens_t_h",
                                          "owens_t_a", "poch_z", "loggamma", "boxcox"], 2))
# (not boxcox in lmbda: its point lmbda = 0 is where JAX's where(lmbda == 0, log(x), ...) gives the
# derivative 0 in lmbda; fgrad's is log(x)^2 / 2, test_boxcox_is_smooth_through_lmbda_zero)
def test_first_derivative_matches_jax(name):
    f, x, _ = CASES[name]
    want = onp.asarray(jax.vmap(jax.grad(lambda v: f(jss, v)))(x))
    onp.testing.assert_allclose(onp.asarray(fgrad.vmap(fgrad.grad(lambda v: f(fs, v)))(x)), want, rtol=1e-6)


def test_edges_match_scipy():
    with onp.errstate(all="ignore"):
        z = onp.array([0.0, -1.0, onp.inf, onp.nan, 1e-300, 50.0])
        for name in ("exp1", "expi", "dawsn", "spence", "loggamma"):
            onp.testing.assert_allclose(onp.asarray(getattr(fs, name)(z)), getattr(sc, name)(z), rtol=1e-13)
        for a, b in zip(fs.sici(z), sc.sici(z)):
            onp.testing.assert_allclose(onp.asarray(a), b, rtol=1e-13)
        onp.testing.assert_allclose(onp.asarray(fs.expn(onp.array([-1.0, 0.0, 3.0]), 0.5)),
                                    sc.expn(onp.array([-1, 0, 3]), 0.5), rtol=1e-13)   # NaN for n < 0
        onp.testing.assert_allclose(onp.asarray(fs.comb(onp.array([3.0, 2.0, -1.0, 4.0]), onp.array([4.0, -1.0, 0.0, 2.0]))),
                                    sc.comb(onp.array([3.0, 2.0, -1.0, 4.0]), onp.array([4.0, -1.0, 0.0, 2.0])))
        onp.testing.assert_allclose(onp.asarray(fs.comb(4.0, 2.0, repetition=True)), sc.comb(4.0, 2.0, repetition=True))
        onp.testing.assert_allclose(onp.asarray(fs.factorial(onp.array([-2.0, 0.0, 4.0, 2.5]))),
                                    sc.factorial(onp.array([-2.0, 0.0, 4.0, 2.5])))
        onp.testing.assert_allclose(onp.asarray(fs.factorial(-0.5, extend="complex")), sc.gamma(0.5))
        onp.testing.assert_allclose(onp.asarray(fs.boxcox(onp.array([0.0, 2.0, -1.0]), onp.array([0.5, 0.0, 0.5]))),
                                    sc.boxcox(onp.array([0.0, 2.0, -1.0]), onp.array([0.5, 0.0, 0.5])))
        onp.testing.assert_allclose(onp.asarray(fs.zeta(onp.array([2.0, 0.5, 1.0]))), sc.zeta(onp.array([2.0, 0.5, 1.0])))
        onp.testing.assert_allclose(onp.asarray(fs.hyp2f1(1.0, 1.0, 2.0, onp.array([-0.5, 1.0]))),
                                    sc.hyp2f1(1.0, 1.0, 2.0, onp.array([-0.5, 1.0])))
    assert fs.comb(10, 3, exact=True) == 120 and fs.factorial(5, exact=True) == 120
    assert fs.exp1(onp.float32(1.0)).dtype == onp.float32 and fs.comb(5, 2).dtype == onp.float64


def test_spence_is_smooth_through_one():
    # log(z) / (1 - z) = -1 + u/2 - u^2/3 + ... about z = 1 + u: derivatives -1, 1/2, -2/3 there
    d = [fgrad.grad(fs.spence)(1.0), fgrad.grad(fgrad.grad(fs.spence))(1.0),
         fgrad.grad(fgrad.grad(fgrad.grad(fs.spence)))(1.0)]
    onp.testing.assert_allclose(d, [-1.0, 0.5, -2.0 / 3.0], rtol=1e-13)
    # and both forms agree at the switch |z - 1| = 1/4
    for z in (0.75, 1.25):
        onp.testing.assert_allclose(fgrad.grad(fs.spence)(z), math.log(z) / (1 - z), rtol=1e-14)


def test_boxcox_is_smooth_through_lmbda_zero():
    # d/dl (x^l - 1)/l at l = 0 is log(x)^2 / 2, d2 is log(x)^3 / 3
    lx = math.log(2.5)
    onp.testing.assert_allclose(fgrad.grad(lambda lm: fs.boxcox(2.5, lm))(0.0), lx ** 2 / 2, rtol=1e-14)
    onp.testing.assert_allclose(fgrad.grad(fgrad.grad(lambda lm: fs.boxcox(2.5, lm)))(0.0), lx ** 3 / 3, rtol=1e-13)
    onp.testing.assert_allclose(fgrad.grad(lambda lm: fs.boxcox1p(1.5, lm))(0.0), lx ** 2 / 2, rtol=1e-14)
    check_grads(lambda lm: fs.boxcox(onp.array([0.5, 2.0, 40.0]), lm), (onp.array([0.0, -1e-9, 2.0]),), order=2,
                modes=("fwd", "rev"))


def test_wofz():
    z = onp.array([0.3 + 0.5j, -1.2 + 0.1j, 2.0 - 0.7j])
    w = onp.asarray(fs.wofz(z))
    onp.testing.assert_allclose(w, sc.wofz(z), rtol=1e-14)
    onp.testing.assert_allclose(onp.asarray(fs.wofz(onp.array([0.5, -1.0]))), sc.wofz(onp.array([0.5, -1.0]) + 0j))
    if jss is not None:
        onp.testing.assert_allclose(w, onp.asarray(jss.wofz(z)), rtol=1e-6)
    # holomorphic: the tangent is w'(z) dz for a complex direction
    dz = onp.array([1.0 + 2.0j, -0.5j, 0.3 + 0.0j])
    _, t = fgrad.jvp(fs.wofz, (z,), (dz,))
    onp.testing.assert_allclose(onp.asarray(t), (-2 * z * w + 2j / math.sqrt(math.pi)) * dz, rtol=1e-13)
    # real-valued functions of it, of real arguments
    for part in (fnp.real, fnp.imag):
        check_grads(lambda x: part(fs.wofz(x * (1 + 0.5j))), (onp.array([0.3, 1.2, -0.8]),), order=2,
                    modes=("fwd", "rev"))


def test_sph_harm_y():
    n, m = onp.array([0, 1, 2, 3, 3, 2]), onp.array([0, -1, 1, 2, -3, 3])
    theta, phi = onp.array([0.3, 1.1, 2.0, 0.7, 2.9, 1.0]), onp.array([0.1, -2.0, 1.3, 0.4, 3.0, 0.5])
    got = onp.asarray(fs.sph_harm_y(n, m, theta, phi))
    onp.testing.assert_allclose(got, sc.sph_harm_y(n, m, theta, phi), rtol=1e-12, atol=1e-15)
    if jss is not None:
        onp.testing.assert_allclose(got, onp.asarray(jss.sph_harm_y(n, m, theta, phi, n_max=3)), rtol=1e-6, atol=1e-10)
    for part in (fnp.real, fnp.imag):
        check_grads(lambda t, p: part(fs.sph_harm_y(n, m, t, p)), (theta, phi), order=2, modes=("fwd", "rev"))
    # dY/dtheta against SciPy's own derivative (diff_n=1 gives [dY/dtheta, dY/dphi])
    d = onp.asarray(fgrad.jacfwd(lambda t: fnp.real(fs.sph_harm_y(2, 1, t, 0.4)))(0.9))
    onp.testing.assert_allclose(d, sc.sph_harm_y(2, 1, 0.9, 0.4, diff_n=1)[1][0].real, rtol=1e-12)
    with pytest.raises(FgradValueError, match="diff_n"):
        fs.sph_harm_y(1, 0, 0.3, 0.2, diff_n=1)


@pytest.mark.parametrize("call, arg", [
    (lambda v: fs.zeta(v, 1.5), "x"), (lambda v: fs.zeta(v), "x"), (lambda v: fs.expn(v, 1.0), "n"),
    (lambda v: fs.hyp1f1(v, 1.5, 0.3), "a"), (lambda v: fs.hyp1f1(0.5, v, 0.3), "b"),
    (lambda v: fs.hyp2f1(0.5, 1.0, v, 0.3), "c"), (lambda v: fs.sph_harm_y(v, 0.0, 0.3, 0.2).real, "n"),
])
def test_parameters_without_derivative_raise(call, arg):
    with pytest.raises(DifferentiationError, match=f"respect to {arg}"):
        fgrad.grad(lambda v: fnp.real(call(v)))(3.0)
    with pytest.raises(DifferentiationError, match=f"respect to {arg}"):
        fgrad.jvp(lambda v: fnp.real(call(v)), (3.0,), (1.0,))


def test_errors():
    with pytest.raises(FgradTypeError, match="complex"):
        fs.loggamma(onp.array([1.0 + 1.0j]))
    with pytest.raises(FgradValueError, match="extend"):
        fs.factorial(2.0, extend="nope")
    with pytest.raises(fgrad.core.errors.ConcretizationError):
        fgrad.jit(lambda n: fs.factorial(n, exact=True))(onp.array([3]))
