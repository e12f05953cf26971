"""Registry cases (format: tests/ops/test_primitives.py) for fgrad.scipy.special's gamma, error-
function, Bessel and x-log-y families and the primitives of fgrad/ops/special_*.py, against
scipy.special. Arguments that have no derivative (betainc's a and b, Bessel orders, the df of
stdtr) are constants of the case's function, or integer inputs, so check_grads differentiates
only the rest; "[all_args]" cases map every argument (values, vmap, jit) without derivatives.
The hard points (poles, the ends of the domains, large arguments) are in
tests/scipy/test_special.py."""
import numpy as np
import scipy.special as ss

import fgrad.numpy as fnp
import fgrad.scipy.special as fs
from fgrad.ops import special_bessel as sb
from fgrad.ops import special_gamma as sg
from fgrad.ops import special_hyper as sh

S = (2, 3)
F32 = {"f32": True}
NODIFF = {"grad": False}
# parameters that are constants of a case (shape S: the vmap test maps only the traced input)
A = np.array([[0.7, 1.0, 2.5], [3.0, 1.5, 0.9]])
B = np.array([[1.3, 0.6, 2.0], [1.0, 4.0, 2.2]])
V = np.array([[0.0, 0.5, 1.0], [1.5, 2.0, 3.0]])
DF = np.array([[1.0, 2.5, 4.0], [7.0, 30.0, 0.8]])


def U(*specs):
    """args factory: one uniform array per (low, high[, shape])."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, rest[0] if rest else S).astype(dt) for lo, hi, *rest in specs)


def _ints(lo, hi):
    """args factory piece: an int64 array of shape S in [lo, hi]."""
    return lambda rng: rng.integers(lo, hi + 1, S)


_UNARY = [  # name, low, high, float32 check
    ("gamma", 0.3, 4.0, True), ("gammaln", 0.3, 6.0, True), ("rgamma", 0.3, 4.0, True),
    ("digamma", 0.3, 4.0, True), ("psi", 0.3, 4.0, False), ("erfc", -3.0, 3.0, True),
    ("erfcx", -2.0, 4.0, True), ("erfinv", -0.95, 0.95, True), ("erfcinv", 0.05, 1.95, True),
    ("ndtr", -4.0, 4.0, True), ("log_ndtr", -8.0, 4.0, True), ("ndtri", 0.02, 0.98, True),
    ("i0", -4.0, 4.0, True), ("i1", -4.0, 4.0, True), ("i0e", 0.2, 5.0, True), ("i1e", 0.2, 5.0, True),
    ("j0", -8.0, 8.0, True), ("j1", -8.0, 8.0, True), ("y0", 0.3, 8.0, True), ("y1", 0.3, 8.0, True),
    ("entr", 0.1, 3.0, True), ("log_expit", -6.0, 6.0, True),
]
CASES = [(f"special.{n}", getattr(fs, n), getattr(ss, n), U((lo, hi)), F32 if f32 else {})
         for n, lo, hi, f32 in _UNARY]

CASES += [
    # the gamma family off the positive axis, between poles (and rgamma across them)
    ("special.gamma[negative]", fs.gamma, ss.gamma, U((-2.9, -2.1)), {"grad_tol": 1e-4}),
    ("special.gammaln[negative]", fs.gammaln, ss.gammaln, U((-1.9, -1.1))),
    ("special.digamma[negative]", fs.digamma, ss.digamma, U((-0.9, -0.1)), {"grad_tol": 1e-4}),
    ("special.rgamma[negative]", fs.rgamma, ss.rgamma, U((-3.5, 0.4))),
    ("special.gammasgn", fs.gammasgn, ss.gammasgn, U((-3.5, 3.0)), NODIFF),
    ("special.polygamma", lambda x: fs.polygamma(2, x), lambda x: ss.polygamma(2, x), U((0.5, 4.0))),
    ("special.polygamma[int_orders]", fs.polygamma, ss.polygamma,
     lambda rng, dt: (_ints(0, 3)(rng), rng.uniform(0.5, 4.0, S).astype(dt))),
    ("special.multigammaln", lambda a: fs.multigammaln(a, 3), lambda a: ss.multigammaln(a, 3),
     U((1.2, 5.0, (4,)))),
    ("special.beta", fs.beta, ss.beta, U((0.5, 3.0), (0.5, 3.0)), F32),
    ("special.beta[broadcast]", fs.beta, ss.beta, U((0.5, 3.0, (2, 1)), (0.5, 3.0, (1, 3)))),
    ("special.betaln", fs.betaln, ss.betaln, U((0.5, 30.0), (0.5, 30.0)), F32),
    ("special.betainc", lambda x: fs.betainc(A, B, x), lambda x: ss.betainc(A, B, x), U((0.05, 0.95)),
     {"grad_tol": 1e-4}),
    ("special.betainc[all_args]", fs.betainc, ss.betainc, U((0.5, 3.0), (0.5, 3.0), (0.05, 0.95)),
     {**NODIFF, "f32": True}),
    ("special.gammainc", lambda x: fs.gammainc(A, x), lambda x: ss.gammainc(A, x), U((0.1, 5.0))),
    ("special.gammainc[all_args]", fs.gammainc, ss.gammainc, U((0.5, 3.0), (0.1, 5.0)),
     {**NODIFF, "f32": True}),
    ("special.gammaincc", lambda x: fs.gammaincc(A, x), lambda x: ss.gammaincc(A, x), U((0.1, 5.0))),
    ("special.gammaincc[all_args]", fs.gammaincc, ss.gammaincc, U((0.5, 3.0), (0.1, 5.0)), NODIFF),
    ("special.stdtr", lambda t: fs.stdtr(DF, t), lambda t: ss.stdtr(DF, t), U((-4.0, 4.0))),
    ("special.stdtr[all_args]", fs.stdtr, ss.stdtr, U((0.5, 9.0), (-4.0, 4.0)), NODIFF),
    ("special.stdtrit", lambda p: fs.stdtrit(DF, p), lambda p: ss.stdtrit(DF, p), U((0.1, 0.9)),
     {"grad_tol": 1e-4}),
    ("special.stdtrit[all_args]", fs.stdtrit, ss.stdtrit, U((0.5, 9.0), (0.05, 0.95)), NODIFF),
    # Bessel functions of real and integer order (the orders are constants or integers)
    ("special.iv", lambda x: fs.iv(V, x), lambda x: ss.iv(V, x), U((0.2, 4.0))),
    ("special.iv[negative_x]", lambda x: fs.iv(2.0, x), lambda x: ss.iv(2.0, x), U((-4.0, -0.2))),
    ("special.iv[all_args]", fs.iv, ss.iv, U((0.0, 3.0), (0.2, 4.0)), {**NODIFF, "f32": True}),
    ("special.ive", lambda x: fs.ive(V, x), lambda x: ss.ive(V, x), U((0.2, 6.0))),
    ("special.ive[negative_x]", lambda x: fs.ive(1.0, x), lambda x: ss.ive(1.0, x), U((-6.0, -0.2))),
    ("special.ive[all_args]", fs.ive, ss.ive, U((0.0, 3.0), (0.2, 6.0)), NODIFF),
    ("special.i0e[negative]", fs.i0e, ss.i0e, U((-5.0, -0.2))),
    ("special.i1e[negative]", fs.i1e, ss.i1e, U((-5.0, -0.2))),
    ("special.jv", lambda x: fs.jv(V, x), lambda x: ss.jv(V, x), U((0.2, 8.0))),
    ("special.jv[all_args]", fs.jv, ss.jv, U((0.0, 3.0), (0.2, 8.0)), {**NODIFF, "f32": True}),
    ("special.jn", lambda n, x: fs.jn(n, x), lambda n, x: ss.jn(n, x),
     lambda rng, dt: (_ints(-2, 4)(rng), rng.uniform(-8.0, 8.0, S).astype(dt))),
    ("special.yv", lambda x: fs.yv(V, x), lambda x: ss.yv(V, x), U((0.5, 8.0))),
    ("special.yv[all_args]", fs.yv, ss.yv, U((0.0, 3.0), (0.5, 8.0)), NODIFF),
    ("special.yn", lambda n, x: fs.yn(n, x), lambda n, x: ss.yn(n, x),
     lambda rng, dt: (_ints(-2, 4)(rng), rng.uniform(0.5, 8.0, S).astype(dt))),
    ("special.yn[float_orders]", lambda x: fs.yn(2.0, x), lambda x: ss.yn(2.0, x), U((0.5, 8.0)), F32),
    # x log y
    ("special.xlogy", fs.xlogy, ss.xlogy, U((-2.0, 2.0), (0.2, 3.0)), F32),
    ("special.xlogy[broadcast]", fs.xlogy, ss.xlogy, U((-2.0, 2.0, (2, 1)), (0.2, 3.0, (3,)))),
    ("special.xlog1py", fs.xlog1py, ss.xlog1py, U((-2.0, 2.0), (-0.8, 3.0)), F32),
    ("special.rel_entr", fs.rel_entr, ss.rel_entr, U((0.1, 3.0), (0.1, 3.0)), F32),
    ("special.kl_div", fs.kl_div, ss.kl_div, U((0.1, 3.0), (0.1, 3.0)), F32),
    # primitives bound directly (the integer-order Bessel functions' derivatives reach these too)
    ("ops.lgamma", sg.lgamma, ss.gammaln, U((0.3, 6.0))),
    ("ops.bessel_yn", lambda x: sb.yn(np.float64(3.0), x), lambda x: ss.yn(3, x), U((0.5, 8.0))),
]

# --- exponential and trigonometric integrals (fgrad/ops/special_expint.py) --------------------
_NORD = np.array([[0, 1, 2], [3, 1, 4]])  # expn's orders: integers, no derivative


def _sici_si(x):
    return fs.sici(x)[0]


def _sici_ci(x):
    return fs.sici(x)[1]


CASES += [
    ("special.exp1", fs.exp1, ss.exp1, U((0.2, 4.0)), F32),
    ("special.expi", fs.expi, ss.expi, U((0.2, 4.0)), F32),
    ("special.expi[negative]", fs.expi, ss.expi, U((-4.0, -0.2))),
    # the order n is an integer input (not differentiated); its derivative reaches expn(n - 1),
    # expn(n - 2): the primitive's recurrence below n = 0
    ("special.expn", fs.expn, ss.expn, lambda rng, dt: (_ints(0, 4)(rng), rng.uniform(0.3, 4.0, S).astype(dt))),
    ("special.expn[const_order]", lambda x: fs.expn(_NORD, x), lambda x: ss.expn(_NORD, x), U((0.3, 4.0)), F32),
    ("special.sici[si]", _sici_si, lambda x: ss.sici(x)[0], U((-6.0, 6.0)), F32),
    ("special.sici[ci]", _sici_ci, lambda x: ss.sici(x)[1], U((0.3, 6.0)), F32),
    ("special.sici[ci_negative]", _sici_ci, lambda x: ss.sici(x)[1], U((-6.0, -0.3))),
    ("special.fresnel[s]", lambda x: fs.fresnel(x)[0], lambda x: ss.fresnel(x)[0], U((-2.5, 2.5)), F32),
    ("special.fresnel[c]", lambda x: fs.fresnel(x)[1], lambda x: ss.fresnel(x)[1], U((-2.5, 2.5)), F32),
    ("special.dawsn", fs.dawsn, ss.dawsn, U((-4.0, 4.0)), F32),
    ("special.spence", fs.spence, ss.spence, U((0.1, 3.0)), F32),
    ("special.spence[near_one]", fs.spence, ss.spence, U((0.85, 1.15))),
]

# --- hypergeometric and related functions (fgrad/ops/special_hyper.py) -----------------------
# parameters without a derivative (a, b, c, zeta's exponent, Legendre degree and order) are
# constants of the case's function, or "[all_args]" values-only cases
HA = np.array([[0.5, 1.0, 1.5], [2.0, -0.5, 0.8]])
HB = np.array([[1.5, 2.0, 0.7], [3.0, 1.2, 2.5]])
HC = np.array([[2.5, 3.0, 1.8], [4.5, 2.2, 3.5]])
ZS = np.array([[1.5, 2.0, 3.0], [2.5, 4.0, 1.8]])
NDEG = np.array([[1, 2, 3], [2, 4, 3]])
MORD = np.array([[0, 1, -2], [2, -3, 1]])


def _sph_harm_re(theta, phi):
    return fnp.real(fs.sph_harm_y(NDEG, MORD, theta, phi))


def _sph_harm_im(theta, phi):
    return fnp.imag(fs.sph_harm_y(NDEG, MORD, theta, phi))


def quad_exprel(n, z):
    """integral_0^1 t^n e^{z t} dt by quadrature (the reference for the exprel_n primitive)."""
    from scipy.integrate import quad
    return quad(lambda t: t ** n * np.exp(z * t), 0.0, 1.0, epsabs=0.0, epsrel=1e-13)[0]


def _complex_args(rng, dt):
    cdt = np.complex64 if np.dtype(dt) == np.float32 else np.complex128
    return ((rng.uniform(-2.0, 2.0, S) + 1j * rng.uniform(-2.0, 2.0, S)).astype(cdt),)


CASES += [
    ("special.hyp1f1", lambda x: fs.hyp1f1(HA, HB, x), lambda x: ss.hyp1f1(HA, HB, x), U((-2.0, 2.0)), F32),
    ("special.hyp1f1[all_args]", fs.hyp1f1, ss.hyp1f1, U((0.2, 2.0), (0.5, 3.0), (-2.0, 2.0)), NODIFF),
    ("special.hyp2f1", lambda x: fs.hyp2f1(HA, HB, HC, x), lambda x: ss.hyp2f1(HA, HB, HC, x), U((-0.9, 0.9)),
     {"f32": True, "grad_tol": 1e-4}),
    ("special.hyp2f1[all_args]", fs.hyp2f1, ss.hyp2f1, U((0.2, 2.0), (0.2, 2.0), (2.5, 4.0), (-0.9, 0.9)), NODIFF),
    ("special.zeta", lambda q: fs.zeta(ZS, q), lambda q: ss.zeta(ZS, q), U((0.5, 3.0)), F32),
    ("special.zeta[all_args]", fs.zeta, ss.zeta, U((1.5, 4.0), (0.5, 3.0)), NODIFF),
    ("special.zeta[riemann]", fs.zeta, ss.zeta, U((-3.0, 0.9)), {**NODIFF, "f32": True}),
    ("special.owens_t", fs.owens_t, ss.owens_t, U((-2.0, 2.0), (-2.0, 2.0)), F32),
    ("special.comb", fs.comb, ss.comb, U((4.0, 8.0), (0.5, 3.5)), F32),
    ("special.factorial", fs.factorial, ss.factorial, U((0.2, 5.0))),
    ("special.poch", fs.poch, ss.poch, U((0.5, 3.0), (-0.4, 2.0)), F32),
    ("special.loggamma", fs.loggamma, ss.loggamma, U((0.3, 6.0)), F32),
    # boxcox's derivative in lmbda binds exprel_n (and exprel_n's derivative exprel_{n+1})
    ("special.boxcox", fs.boxcox, ss.boxcox, U((0.3, 3.0), (-1.5, 1.5)), F32),
    ("special.boxcox[lmbda_near_zero]", fs.boxcox, ss.boxcox, U((0.3, 3.0), (-1e-3, 1e-3)), {"rtol": 1e-9}),
    ("special.boxcox1p", fs.boxcox1p, ss.boxcox1p, U((-0.5, 2.0), (-1.5, 1.5)), F32),
    # complex values: fgrad's transforms do not differentiate through complex values (see fft.py)
    ("special.wofz", fs.wofz, ss.wofz, _complex_args, {**NODIFF, "f32": True}),
    ("special.wofz[real_part]", lambda x: fnp.real(fs.wofz(x)), lambda x: ss.wofz(x).real, U((-3.0, 3.0)), NODIFF),
    # theta away from the poles (the second derivative has cot(theta)); n, m integer constants
    ("special.sph_harm_y[real]", _sph_harm_re, lambda t, p: ss.sph_harm_y(NDEG, MORD, t, p).real,
     U((0.3, 2.8), (0.0, 6.0))),
    ("special.sph_harm_y[imag]", _sph_harm_im, lambda t, p: ss.sph_harm_y(NDEG, MORD, t, p).imag,
     U((0.3, 2.8), (0.0, 6.0))),
    ("ops.exprel_n", lambda z: sh.exprel_n(np.float64(2.0), z),
     lambda z: np.array([[quad_exprel(2, v) for v in row] for row in z]), U((-3.0, 3.0))),
    ("ops.sph_legendre_dp", lambda t: sh.sph_legendre_dp(NDEG.astype(float), MORD.astype(float), t),
     lambda t: ss.sph_legendre_p(NDEG, MORD, t, diff_n=1)[1], U((0.3, 2.8))),
]
