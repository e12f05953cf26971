"""Cases for elementwise functions (format: see tests/ops/test_primitives.py)."""
import numpy as np
import scipy.special

import fgrad
import fgrad.numpy as fnp
from fgrad.ops import elementwise as ew


def U(*specs):
    """args factory: one uniform array per (low, high, shape)."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, shape).astype(dt) for lo, hi, shape in specs)


S = (2, 3)
NODIFF = {"grad": False}


def _quiet(fn):
    """A NumPy reference that is expected to produce inf/nan without warning."""
    def run(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return run

_UNARY = [  # name, low, high (a domain away from singularities)
    ("negative", -2, 2), ("square", -2, 2), ("sqrt", 0.5, 2), ("cbrt", 0.3, 2), ("exp", -2, 2),
    ("exp2", -2, 2), ("expm1", -2, 2), ("log", 0.5, 2), ("log2", 0.5, 2), ("log10", 0.5, 2),
    ("log1p", -0.5, 2), ("sin", -3, 3), ("cos", -3, 3), ("tan", -1, 1), ("arcsin", -0.8, 0.8),
    ("arccos", -0.8, 0.8), ("arctan", -2, 2), ("sinh", -2, 2), ("cosh", -2, 2), ("tanh", -2, 2),
    ("arcsinh", -2, 2), ("arccosh", 1.2, 3), ("arctanh", -0.8, 0.8), ("reciprocal", 0.5, 2),
    ("positive", -2, 2),
]

CASES = [(name, getattr(fnp, name), getattr(np, name), U((lo, hi, S)), {"f32": True})
         for name, lo, hi in _UNARY]

CASES += [
    ("abs", fnp.abs, np.abs, U((0.2, 2, S)), {"f32": True}),
    ("abs[negative]", fnp.abs, np.abs, U((-2, -0.2, S))),
    ("absolute", fnp.absolute, np.absolute, U((-2, -0.2, (4,)))),
    ("cbrt[negative]", fnp.cbrt, np.cbrt, U((-2, -0.3, S))),
    ("sign", fnp.sign, np.sign, U((-2, 2, S)), NODIFF),
    ("floor", fnp.floor, np.floor, U((-3, 3, S)), NODIFF),
    ("ceil", fnp.ceil, np.ceil, U((-3, 3, S)), NODIFF),
    ("round", fnp.round, np.round, U((-3, 3, S)), NODIFF),
    ("round[decimals]", lambda x: fnp.round(x, 1), lambda x: np.round(x, 1), U((-3, 3, S)), NODIFF),
    ("logistic", ew.logistic, scipy.special.expit, U((-4, 4, S)), {"f32": True}),
    ("erf", ew.erf, scipy.special.erf, U((-2, 2, S)), {"f32": True}),
    # binary, with NumPy broadcasting: (3,1) with (1,4), and scalars beside arrays
    ("add", fnp.add, np.add, U((-2, 2, (3, 1)), (-2, 2, (1, 4))), {"f32": True}),
    ("add[scalar]", fnp.add, np.add, U((-2, 2, ()), (-2, 2, S))),
    ("add[python_scalar]", lambda x: fnp.add(x, 2), lambda x: np.add(x, 2), U((-2, 2, S))),
    ("subtract", fnp.subtract, np.subtract, U((-2, 2, (3, 1)), (-2, 2, (1, 4))), {"f32": True}),
    ("subtract[scalar]", fnp.subtract, np.subtract, U((-2, 2, S), (-2, 2, ()))),
    ("multiply", fnp.multiply, np.multiply, U((-2, 2, (3, 1)), (-2, 2, (1, 4))), {"f32": True}),
    ("multiply[scalar]", fnp.multiply, np.multiply, U((-2, 2, ()), (-2, 2, S))),
    ("divide", fnp.divide, np.divide, U((-2, 2, (3, 1)), (0.5, 2, (1, 4))), {"f32": True}),
    ("divide[scalar]", fnp.divide, np.divide, U((0.5, 2, ()), (0.5, 2, S))),
    ("divide[int]", lambda x: fnp.divide(x, np.array([1, 2, 3])), lambda x: np.divide(x, np.array([1, 2, 3])),
     U((-2, 2, S))),
    ("true_divide", fnp.true_divide, np.true_divide, U((-2, 2, (3, 1)), (0.5, 2, (1, 4)))),
    ("power", fnp.power, np.power, U((0.5, 2, (3, 1)), (-2, 2, (1, 4))), {"f32": True}),
    ("power[scalar_exponent]", fnp.power, np.power, U((0.5, 2, S), (-2, 2, ()))),
    ("power[int]", lambda x: fnp.power(x, 3), lambda x: np.power(x, 3), U((-2, 2, S))),
    ("power[negative_int]", lambda x: fnp.power(x, -2), lambda x: np.power(x, -2.0), U((0.5, 2, S))),
    ("power[operator]", lambda x, y: x ** y, np.power, U((0.5, 2, S), (-1, 1, S))),
    ("arctan2", fnp.arctan2, np.arctan2, U((-2, 2, (3, 1)), (0.5, 2, (1, 4))), {"f32": True}),
    ("arctan2[scalar]", fnp.arctan2, np.arctan2, U((-2, 2, S), (-2, -0.5, ()))),
    ("maximum", fnp.maximum, np.maximum, U((-2, 2, (3, 1)), (-2, 2, (1, 4))), {"f32": True}),
    ("maximum[scalar]", fnp.maximum, np.maximum, U((-2, 2, S), (-0.1, 0.1, ()))),
    ("minimum", fnp.minimum, np.minimum, U((-2, 2, (3, 1)), (-2, 2, (1, 4))), {"f32": True}),
    ("minimum[scalar]", fnp.minimum, np.minimum, U((-0.1, 0.1, ()), (-2, 2, S))),
    ("logaddexp", fnp.logaddexp, np.logaddexp, U((-3, 3, (3, 1)), (-3, 3, (1, 4))), {"f32": True}),
    ("logaddexp[large]", fnp.logaddexp, np.logaddexp, U((700, 710, S), (690, 720, S))),
    ("logaddexp2", fnp.logaddexp2, np.logaddexp2, U((-3, 3, (3, 1)), (-3, 3, (1, 4))), {"f32": True}),
    ("clip", lambda x: fnp.clip(x, -1.0, 1.0), lambda x: np.clip(x, -1.0, 1.0),
     lambda rng, dt: (np.array([[-2.0, -0.5, 0.3], [0.9, 1.5, -1.3]], dt),), {"f32": True}),
    ("clip[arrays]", fnp.clip, np.clip,
     lambda rng, dt: (np.array([[-2.0, -0.5, 0.3], [0.9, 1.5, -1.3]], dt), np.array(-1.0, dt),
                      np.array([0.0, 1.0, 2.0], dt))),
    ("clip[lower_only]", lambda x: fnp.clip(x, 0.0, None), lambda x: np.clip(x, 0.0, None),
     lambda rng, dt: (np.array([-2.0, -0.5, 0.3, 1.5], dt),)),
    ("where", lambda x, y: fnp.where(np.array([[True], [False], [True]]), x, y),
     lambda x, y: np.where(np.array([[True], [False], [True]]), x, y),
     U((-2, 2, (1, 4)), (-2, 2, (3, 4))), {"f32": True}),
    ("where[traced_condition]", lambda x, y: fnp.where(x > y, x, y), lambda x, y: np.where(x > y, x, y),
     U((-2, 2, (3, 1)), (-2, 2, (1, 4)))),
    ("where[scalar]", lambda x: fnp.where(x > 0, x, 0.0), lambda x: np.where(x > 0, x, 0.0),
     U((-2, 2, S))),
    # remainders: differentiable (d/dx = 1, d/dy = -quotient), all sign combinations
    ("fmod", fnp.fmod, np.fmod, U((-5, 5, S), (1, 2, S)), {"f32": True}),
    ("fmod[negative_divisor]", fnp.fmod, np.fmod, U((-5, 5, S), (-2, -1, S))),
    ("fmod[scalar_divisor]", lambda x: fnp.fmod(x, 0.75), lambda x: np.fmod(x, 0.75), U((-3, 3, S))),
    ("remainder", fnp.remainder, np.remainder, U((-5, 5, S), (1, 2, S)), {"f32": True}),
    ("remainder[negative_divisor]", fnp.remainder, np.remainder, U((-5, 5, S), (-2, -1, S))),
    ("remainder[broadcast]", fnp.remainder, np.remainder, U((-5, 5, (3, 1)), (-2, -1, (1, 4)))),
    ("mod[operator]", lambda x, y: x % y, np.mod, U((-5, 5, S), (0.5, 2, S))),
    ("mod[roperator]", lambda y: 7.0 % y, lambda y: np.mod(7.0, y), U((-2, -0.5, S))),
    ("divmod[remainder]", lambda x, y: fnp.divmod(x, y)[1], lambda x, y: np.divmod(x, y)[1],
     U((-5, 5, S), (1, 2, S))),
    ("remainder[int]", fnp.remainder, np.remainder, lambda rng, dt: (rng.integers(-9, 9, S), rng.integers(1, 4, S)
                                                                    * rng.choice([-1, 1], S)), NODIFF),
    ("fmod[int]", fnp.fmod, np.fmod, lambda rng, dt: (rng.integers(-9, 9, S), rng.integers(1, 4, S)
                                                      * rng.choice([-1, 1], S)), NODIFF),
    ("floor_divide", fnp.floor_divide, np.floor_divide, U((-5, 5, S), (1, 2, S)), NODIFF),
    ("bitwise_and", fnp.bitwise_and, np.bitwise_and, lambda rng, dt: (rng.integers(-9, 9, S), rng.integers(0, 9, S)),
     NODIFF),
    ("bitwise_or", lambda x, y: x | y, np.bitwise_or, lambda rng, dt: (rng.integers(-9, 9, S), rng.integers(0, 9, S)),
     NODIFF),
    ("bitwise_xor[bool]", lambda x, y: (x > 0) ^ (y > 0), lambda x, y: (x > 0) ^ (y > 0), U((-2, 2, S), (-2, 2, S)),
     NODIFF),
    ("invert", lambda x: ~x, np.invert, lambda rng, dt: (rng.integers(-9, 9, S),), NODIFF),
    ("less", fnp.less, np.less, U((-2, 2, (3, 1)), (-2, 2, (1, 4))), NODIFF),
    ("less_equal", fnp.less_equal, np.less_equal, U((-2, 2, S), (-2, 2, S)), NODIFF),
    ("greater", fnp.greater, np.greater, U((-2, 2, S), (-2, 2, ())), NODIFF),
    ("greater_equal", fnp.greater_equal, np.greater_equal, U((-2, 2, S), (-2, 2, S)), NODIFF),
    ("equal", lambda x: fnp.equal(x, fnp.round(x)), lambda x: np.equal(x, np.round(x)),
     lambda rng, dt: (np.array([1.0, 1.5, -2.0, 0.25], dt),), NODIFF),
    ("not_equal", lambda x: fnp.not_equal(x, fnp.round(x)), lambda x: np.not_equal(x, np.round(x)),
     lambda rng, dt: (np.array([1.0, 1.5, -2.0, 0.25], dt),), NODIFF),
    ("logical_and", lambda x, y: fnp.logical_and(x > 0, y > 0), lambda x, y: np.logical_and(x > 0, y > 0),
     U((-2, 2, S), (-2, 2, S)), NODIFF),
    ("logical_or", lambda x, y: fnp.logical_or(x > 0, y > 0), lambda x, y: np.logical_or(x > 0, y > 0),
     U((-2, 2, S), (-2, 2, S)), NODIFF),
    ("logical_xor", lambda x, y: fnp.logical_xor(x > 0, y > 0), lambda x, y: np.logical_xor(x > 0, y > 0),
     U((-2, 2, S), (-2, 2, S)), NODIFF),
    ("logical_not", lambda x: fnp.logical_not(x > 0), lambda x: np.logical_not(x > 0), U((-2, 2, S)), NODIFF),
    ("isnan", lambda x: fnp.isnan(fnp.log(x)), _quiet(lambda x: np.isnan(np.log(x))),
     lambda rng, dt: (np.array([1.0, -1.0, 0.0, 2.0], dt),), {"grad": False, "rtol": 0}),
    ("isinf", lambda x: fnp.isinf(fnp.log(x)), _quiet(lambda x: np.isinf(np.log(x))),
     lambda rng, dt: (np.array([1.0, -1.0, 0.0, 2.0], dt),), NODIFF),
    ("isfinite", lambda x: fnp.isfinite(fnp.log(x)), _quiet(lambda x: np.isfinite(np.log(x))),
     lambda rng, dt: (np.array([1.0, -1.0, 0.0, 2.0], dt),), NODIFF),
    ("astype", lambda x: fnp.astype(x, np.float32), lambda x: x.astype(np.float32), U((-2, 2, S)),
     {"grad_tol": 1e-2, "rtol": 1e-6}),
    ("astype[int]", lambda x: fnp.astype(x, np.int32), lambda x: x.astype(np.int32), U((-5, 5, S)), NODIFF),
    ("astype[from_int]", lambda x, i: x * fnp.astype(i, np.float64), lambda x, i: x * i.astype(np.float64),
     lambda rng, dt: (rng.uniform(-2, 2, S).astype(dt), np.arange(6).reshape(S))),
    ("stop_gradient", fgrad.stop_gradient, lambda x: x, U((-2, 2, S)), NODIFF),
    ("stop_gradient[product]", lambda x: fgrad.stop_gradient(x) * x, lambda x: x * x, U((-2, 2, S)), NODIFF),
]
