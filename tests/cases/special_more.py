"""Registry cases (format: tests/ops/test_primitives.py) for the modified Bessel functions of
the second kind, the Airy functions (fgrad/ops/special_kairy.py) and the orthogonal polynomials
(fgrad/ops/special_orthopoly.py), against scipy.special: values in float64 and float32, and
check_grads in x at orders 1-2 (the degrees and orders are integers or constants)."""
import numpy as np
import scipy.special as ss

import fgrad.scipy.special as fs

S = (2, 3)
F32 = {"f32": True}
NODIFF = {"grad": False}
V = np.array([[0.0, 0.5, 1.0], [1.5, 2.0, 3.0]])
DEG = np.array([[0, 1, 2], [3, 4, 6]])
ALPHA = np.array([[0.5, 1.0, 1.5], [2.0, 0.3, 3.0]])


def U(*specs):
    """args factory: one uniform array per (low, high[, shape])."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, rest[0] if rest else S).astype(dt) for lo, hi, *rest in specs)


def _airy(k):
    return lambda x: fs.airy(x)[k], lambda x: ss.airy(x)[k]


CASES = [(f"special.{n}", getattr(fs, n), getattr(ss, n), U((0.2, 6.0)), F32) for n in ("k0", "k1", "k0e", "k1e")]
CASES += [
    ("special.kv", lambda x: fs.kv(V, x), lambda x: ss.kv(V, x), U((0.3, 5.0))),
    ("special.kv[all_args]", fs.kv, ss.kv, U((0.0, 3.0), (0.3, 5.0)), {**NODIFF, "f32": True}),
    ("special.kn", lambda x: fs.kn(DEG, x), lambda x: ss.kn(DEG, x), U((0.3, 5.0))),
    ("special.kve", lambda x: fs.kve(V, x), lambda x: ss.kve(V, x), U((0.3, 8.0))),
    *[(f"special.airy[{k}]", *_airy(k), U((-4.0, 3.0)), F32) for k in range(4)],
]
_POLY = ["eval_chebyt", "eval_chebyu", "eval_sh_chebyt", "eval_sh_chebyu", "eval_legendre", "eval_hermite",
         "eval_hermitenorm", "eval_laguerre"]


def _poly(name):
    return (lambda x: getattr(fs, name)(DEG, x)), (lambda x: getattr(ss, name)(DEG, x))


CASES += [(f"special.{n}", *_poly(n), U((-0.95, 0.95)), F32) for n in _POLY]
CASES += [
    ("special.eval_hermite[wide]", *_poly("eval_hermite"), U((-3.0, 3.0))),
    ("special.eval_laguerre[wide]", *_poly("eval_laguerre"), U((0.0, 8.0))),
    ("special.eval_gegenbauer", lambda x: fs.eval_gegenbauer(DEG, ALPHA, x),
     lambda x: ss.eval_gegenbauer(DEG, ALPHA, x), U((-0.95, 0.95)), F32),
    ("special.eval_genlaguerre", lambda x: fs.eval_genlaguerre(DEG, ALPHA, x),
     lambda x: ss.eval_genlaguerre(DEG, ALPHA, x), U((0.0, 5.0)), F32),
]
