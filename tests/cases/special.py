"""Registry cases (format: tests/test_primitives.py) for fgrad.scipy.special's gamma, error-
function, Bessel and x-log-y families and the primitives of fgrad/ops/special_*.py, against
scipy.special. Arguments that have no derivative (betainc's a and b, Bessel orders, the df of
stdtr) are constants of the case's function, or integer inputs, so check_grads differentiates
only the rest; "[all_args]" cases map every argument (values, vmap, jit) without derivatives.
The hard points (poles, the ends of the domains, large arguments) are in
tests/test_scipy_special.py."""
import numpy as np
import scipy.special as ss

import fgrad.scipy.special as fs
from fgrad.ops import special_bessel as sb
from fgrad.ops import special_gamma as sg

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
