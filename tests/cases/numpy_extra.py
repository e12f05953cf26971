"""Cases for fgrad.numpy's NaN-ignoring reductions, the floating-point helpers (sinc, ldexp,
frexp, copysign, ...), discrete calculus (gradient, trapezoid) and the manipulation functions,
and for the primitives of fgrad.ops.float_parts (format: see tests/ops/test_primitives.py).
Values away from ties and from the points where a piece switches (tests/numpy/test_nanreductions_calculus.py
checks those)."""
import numpy as np

import fgrad.numpy as fnp
from fgrad.ops import float_parts as fp

S = (2, 3)
NODIFF = {"grad": False}


def U(*specs):
    """args factory: one uniform array per (low, high, shape)."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, shape).astype(dt) for lo, hi, shape in specs)


def _with_nans(rng, dt, shape=(3, 4)):
    """A float array with a NaN in every row but the last (and none in the last column)."""
    x = rng.uniform(-2, 2, shape).astype(dt)
    for i in range(shape[0] - 1):
        x[i, i % (shape[1] - 1)] = np.nan
    return x


def NAN(rng, dt):
    return (_with_nans(rng, dt),)


def NAN_POS(rng, dt):
    """As NAN with the numbers in [0.5, 1.5] (products away from 0)."""
    x = _with_nans(rng, dt)
    return (np.where(np.isnan(x), x, np.abs(x) * 0.5 + 0.5).astype(dt),)


_COORDS = np.array([0.0, 0.4, 1.0, 1.7])  # uneven sample points

CASES = [
    # --- the primitives
    ("float_parts.ldexp", lambda x: fp.ldexp(x, np.array([[1, -2, 3], [0, 5, -1]])), lambda x: np.ldexp(
        x, np.array([[1, -2, 3], [0, 5, -1]])), U((-2, 2, S)), {"f32": True}),
    ("float_parts.ldexp[0d_x]", lambda x: fp.ldexp(x, np.array([1, -2, 3])), lambda x: np.ldexp(
        x, np.array([1, -2, 3])), U((-2, 2, ()))),
    ("float_parts.signbit", fp.signbit, np.signbit, U((-2, 2, S)), NODIFF),
    ("float_parts.frexp_exponent", fp.frexp_exponent, lambda x: np.frexp(x)[1], U((-40, 40, S)), NODIFF),
    # --- elementwise (sinc binds float_parts.sinc_maclaurin: its own "derivative" continues the
    # series at 0 and is not that of its constant value, so it is checked only inside sinc)
    ("sinc", fnp.sinc, np.sinc, U((-3, 3, S)), {"f32": True}),
    ("fmax", fnp.fmax, np.fmax, U((-2, 2, S), (-2, 2, S)), {"f32": True}),
    ("fmin[broadcast]", fnp.fmin, np.fmin, U((-2, 2, (2, 1)), (-2, 2, (3,)))),
    ("fmax[nan]", lambda x, y: fnp.fmax(fnp.where(x > 1.0, np.nan, x), y),
     lambda x, y: np.fmax(np.where(x > 1.0, np.nan, x), y), U((-2, 2, S), (-2, 2, S))),
    ("nan_to_num", lambda x: fnp.nan_to_num(fnp.where(x > 1.0, np.nan, x), nan=0.5),
     lambda x: np.nan_to_num(np.where(x > 1.0, np.nan, x), nan=0.5), U((-2, 2, S))),
    ("deg2rad", fnp.deg2rad, np.deg2rad, U((-200, 200, S)), {"f32": True}),
    ("rad2deg", fnp.rad2deg, np.rad2deg, U((-3, 3, S))),
    ("radians", fnp.radians, np.radians, U((-200, 200, S))),
    ("degrees", fnp.degrees, np.degrees, U((-3, 3, S))),
    ("fabs", fnp.fabs, np.fabs, U((0.2, 2, S))),
    ("copysign", fnp.copysign, np.copysign, U((0.2, 2, S), (-2, 2, S)), {"f32": True}),
    ("copysign[negative]", fnp.copysign, np.copysign, U((-2, -0.2, S), (-2, 2, (3,)))),
    ("heaviside", lambda x, y: fnp.heaviside(fnp.where(x > 0.5, 0.0, x), y),
     lambda x, y: np.heaviside(np.where(x > 0.5, 0.0, x), y), U((-2, 2, S), (-2, 2, S))),
    ("float_power", fnp.float_power, np.float_power, U((0.5, 2, S), (-2, 2, S))),
    ("ldexp", lambda x: fnp.ldexp(x, np.array([1, -3, 2])), lambda x: np.ldexp(x, np.array([1, -3, 2])),
     U((-2, 2, S)), {"f32": True}),
    ("frexp[mantissa]", lambda x: fnp.frexp(x)[0], lambda x: np.frexp(x)[0], U((-40, 40, S)), {"f32": True}),
    ("angle[real]", fnp.angle, np.angle, U((-2, 2, S)), NODIFF),
    ("trunc", fnp.trunc, np.trunc, U((-3, 3, S)), NODIFF),
    ("rint", fnp.rint, np.rint, U((-3, 3, S)), NODIFF),
    ("isclose", lambda x, y: fnp.isclose(x, x + 1e-9 * y), lambda x, y: np.isclose(x, x + 1e-9 * y),
     U((-2, 2, S), (-2, 2, S)), NODIFF),
    # --- NaN-ignoring reductions
    ("nansum", lambda x: fnp.nansum(x, axis=1), lambda x: np.nansum(x, axis=1), NAN, {"f32": True}),
    ("nanprod", lambda x: fnp.nanprod(x, axis=1), lambda x: np.nanprod(x, axis=1), NAN_POS),
    ("nanmean", lambda x: fnp.nanmean(x, axis=1), lambda x: np.nanmean(x, axis=1), NAN, {"f32": True}),
    ("nanmean[all]", fnp.nanmean, np.nanmean, NAN),
    ("nanvar", lambda x: fnp.nanvar(x, axis=1, ddof=1), lambda x: np.nanvar(x, axis=1, ddof=1), NAN),
    ("nanstd", lambda x: fnp.nanstd(x, axis=0, keepdims=True), lambda x: np.nanstd(x, axis=0, keepdims=True), NAN),
    ("nanmax", lambda x: fnp.nanmax(x, axis=1), lambda x: np.nanmax(x, axis=1), NAN),
    ("nanmin", lambda x: fnp.nanmin(x, axis=0), lambda x: np.nanmin(x, axis=0), NAN),
    ("nanargmax", lambda x: fnp.nanargmax(x, axis=1), lambda x: np.nanargmax(x, axis=1), NAN, NODIFF),
    ("nancumsum", lambda x: fnp.nancumsum(x, axis=1), lambda x: np.nancumsum(x, axis=1), NAN),
    ("nancumprod", lambda x: fnp.nancumprod(x, axis=1), lambda x: np.nancumprod(x, axis=1), NAN_POS),
    # --- discrete calculus and summaries
    ("gradient", lambda x: fnp.gradient(x, axis=1), lambda x: np.gradient(x, axis=1), U((-2, 2, (3, 5)))),
    ("gradient[edge_order2,spacing]", lambda x: fnp.gradient(x, 0.5, edge_order=2)[1],
     lambda x: np.gradient(x, 0.5, edge_order=2)[1], U((-2, 2, (3, 4)))),
    ("gradient[coordinates]", lambda x: fnp.gradient(x, _COORDS, edge_order=2),
     lambda x: np.gradient(x, _COORDS, edge_order=2), U((-2, 2, (4,)))),
    ("gradient[traced_coordinates]", lambda x, c: fnp.gradient(x, fnp.cumsum(c)),
     lambda x, c: np.gradient(x, np.cumsum(c)), U((-2, 2, (5,)), (0.5, 1.5, (5,)))),
    ("trapezoid", fnp.trapezoid, np.trapezoid, U((-2, 2, (3, 5)))),
    ("trapezoid[x]", lambda y, x: fnp.trapezoid(y, fnp.cumsum(x), axis=0), lambda y, x: np.trapezoid(
        y, np.cumsum(x), axis=0), U((-2, 2, (4, 3)), (0.5, 1.5, (4,)))),
    ("ediff1d", lambda x: fnp.ediff1d(x, to_begin=[0.5]), lambda x: np.ediff1d(x, to_begin=[0.5]), U((-2, 2, S))),
    ("cumulative_sum", lambda x: fnp.cumulative_sum(x, axis=1, include_initial=True),
     lambda x: np.cumulative_sum(x, axis=1, include_initial=True), U((-2, 2, S))),
    ("cumulative_prod", lambda x: fnp.cumulative_prod(x, axis=0), lambda x: np.cumulative_prod(x, axis=0),
     U((0.5, 1.5, S))),
    ("average", lambda x, w: fnp.average(x, axis=1, weights=w), lambda x, w: np.average(x, axis=1, weights=w),
     U((-2, 2, S), (0.5, 2, (3,)))),
    ("ptp", lambda x: fnp.ptp(x, axis=1), lambda x: np.ptp(x, axis=1), U((-2, 2, S))),
    # --- manipulation
    ("partition", lambda x: fnp.partition(x, 1), lambda x: np.sort(np.partition(x, 1)), U((-2, 2, S))),
    ("rollaxis", lambda x: fnp.rollaxis(x, 2), lambda x: np.rollaxis(x, 2), U((-2, 2, (2, 3, 4)))),
    ("append", fnp.append, np.append, U((-2, 2, S), (-2, 2, (4,)))),
    ("select", lambda x, y: fnp.select([x > 1.0, y < 0.0], [x, y], 0.5),
     lambda x, y: np.select([x > 1.0, y < 0.0], [x, y], 0.5), U((-2, 2, S), (-2, 2, S))),
    ("unstack", lambda x: fnp.unstack(x, axis=1)[2], lambda x: np.unstack(x, axis=1)[2], U((-2, 2, S))),
    # --- series and moments
    ("convolve", lambda a, v: fnp.convolve(a, v, "same"), lambda a, v: np.convolve(a, v, "same"),
     U((-2, 2, (5,)), (-2, 2, (3,)))),
    ("correlate", lambda a, v: fnp.correlate(a, v, "full"), lambda a, v: np.correlate(a, v, "full"),
     U((-2, 2, (5,)), (-2, 2, (3,)))),
    ("polyval", fnp.polyval, np.polyval, U((-2, 2, (4,)), (-2, 2, S))),
    ("vander", fnp.vander, np.vander, U((-2, 2, (4,)))),
    ("cov", fnp.cov, np.cov, U((-2, 2, (3, 5)))),
    ("cov[aweights]", lambda x, w: fnp.cov(x, aweights=w), lambda x, w: np.cov(x, aweights=w),
     U((-2, 2, (3, 5)), (0.5, 2, (5,)))),
    ("corrcoef", fnp.corrcoef, np.corrcoef, U((-2, 2, (3, 5)))),
    ("logspace", lambda a, b: fnp.logspace(a, b, 5), lambda a, b: np.logspace(a, b, 5), U((0, 1, ()), (1, 2, ()))),
    ("geomspace", lambda a, b: fnp.geomspace(a, b, 5), lambda a, b: np.geomspace(a, b, 5), U((0.5, 1, ()), (2, 3, ()))),
    ("i0", fnp.i0, np.i0, U((-2, 2, S))),
    ("modf[fraction]", lambda x: fnp.modf(x)[0], lambda x: np.modf(x)[0], U((-3, 3, S))),
]
