"""jit's compiler computes what the primitives' impls compute: every lowering rule in every
dtype the kernels take (on special values: signed zeros, infinities, NaN, integer extremes,
division by zero), in the Numba kernels and in the scalar tier (0-d float64/bool as plain
Python); then whole programs, compiled and run by eval_jaxpr, over the registry's cases
(function, jvp and vjp) and over generated programs.

Equal means bit for bit (NaN to NaN, -0.0 to -0.0) for arithmetic, comparisons, rounding,
select and conversions; transcendental functions may differ by a few ulps, because Numba
calls the C library where NumPy may use its own SIMD code (tanh and exp on AVX-512)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fgrad
import fgrad.nn.functional as F
import fgrad.numpy as fnp
from fgrad.core.avals import ShapedArray
from fgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var, eval_jaxpr
from fgrad.core.primitive import ALL_PRIMITIVES
from fgrad.interpreters.compile import Program
from fgrad.interpreters.compile.scalar import KERNEL_DTYPES, SCALAR_DTYPES, Operand
from fgrad.scipy import special

from .oracle.programs import ArrayLib, inputs, programs, run
from .test_primitives import JIT_CASES, _staged

# Largest difference allowed where the libraries may compute differently (ulps of the result)
ULPS = 4
# Lowerings whose Numba/Python spelling is not NumPy's own operation (libm vs NumPy's SIMD)
INEXACT = {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
           "atanh", "exp", "expm1", "log", "log1p", "cbrt", "logistic", "erf", "logaddexp",
           "atan2", "pow", "integer_pow", "softplus", "softplus_grad"}
_ARITY = {"select": 3, **{n: 2 for n in (
    "add", "sub", "mul", "div", "pow", "max", "min", "atan2", "logaddexp", "lt", "le", "gt", "ge",
    "eq", "ne", "and", "or", "xor", "floordiv", "bitwise_and", "bitwise_or", "bitwise_xor", "fmod",
    "mod", "relu_grad")}}
_PARAMS = {"integer_pow": [{"y": k} for k in (-3, -2, -1, 0, 1, 2, 3, 5)],
           "convert_element_type": [{"new_dtype": d} for d in sorted(KERNEL_DTYPES, key=str)],
           "softplus": [{"beta": 1.0, "threshold": 20.0}, {"beta": 2.5, "threshold": 3.0}],
           "softplus_grad": [{"beta": 1.0, "threshold": 20.0}, {"beta": 2.5, "threshold": 3.0}]}
LOWERED = sorted((p for p in ALL_PRIMITIVES if p.lowering is not None), key=lambda p: p.name)

_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, -7.0, 0.1, 1e-8, 700.0, -745.0,
           1e300, -1e300, 5e-324, np.inf, -np.inf, np.nan]


def _specials(dtype) -> np.ndarray:
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return np.array(_FLOATS).astype(dtype)
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 7, 100, info.max, info.max - 1, info.min, info.min + 1]
    if dtype.kind == "i":
        vals += [-1, -2, -7, -100]
    return np.array(vals, dtype=dtype)


def _pairs(dtype):
    """x, y: every pair of special values; p: a predicate."""
    s = _specials(dtype)
    x, y = (np.array(v, dtype=dtype) for v in zip(*itertools.product(s, s)))
    return x, y, np.arange(x.size) % 3 == 0


def _applications(x, y, p):
    """(primitive, params, operands, impl's result) for each lowering that applies to the
    dtype of x and y and whose impl accepts them with the dtype abstract_eval promises."""
    out = []
    for prim in LOWERED:
        args = [(x,), (x, y), (p, x, y)][_ARITY.get(prim.name, 1) - 1]
        for params in _PARAMS.get(prim.name, [{}]):
            ops = [Operand(f"o{i}", a.dtype) for i, a in enumerate(args)]
            if prim.lowering(*ops, **params) is None:
                continue
            try:
                with np.errstate(all="ignore"):
                    want = prim.impl(*args, xp=np, **params)
                aval = prim.abstract_eval(*[_aval(a) for a in args], **params)
            except (TypeError, ValueError):  # NumPy refuses it (negative of bool, ...)
                continue
            if want.dtype == aval.dtype and want.dtype in KERNEL_DTYPES:
                out.append((prim, params, args, want))
    return out


def _aval(a):
    return ShapedArray(np.shape(a), np.asarray(a).dtype)


def _program(apps, invars):
    """A ClosedJaxpr applying each (primitive, params) of `apps` to its inputs among `invars`."""
    eqns, outs = [], []
    for prim, params, args, want in apps:
        atoms = [invars[id(a)] for a in args]
        out = Var(prim.abstract_eval(*[v.aval for v in atoms], **params))
        eqns.append(Eqn(prim, atoms, [out], params))
        outs.append(out)
    return ClosedJaxpr(Jaxpr([], list(invars.values()), eqns, outs), [])


def assert_same(got, want, inexact: bool, what: str) -> None:
    """Bit for bit (NaN == NaN, and the sign of zero), or within ULPS where `inexact`."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    if want.dtype.kind != "f":
        bad = got != want
    elif not inexact:
        bad = ~((got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want)))
    else:
        w, g = want.astype(np.float64), got.astype(np.float64)
        tol = ULPS * np.spacing(np.maximum(np.abs(w), np.abs(g)).astype(want.dtype)).astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~((g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= tol))
    if np.any(bad):
        idx = np.flatnonzero(np.ravel(bad))[:5]
        raise AssertionError(f"{what}: {int(np.sum(bad))} elements differ, e.g. at {idx.tolist()}: "
                             f"compiled {np.ravel(got)[idx].tolist()} vs impl {np.ravel(want)[idx].tolist()}")


@pytest.mark.parametrize("dtype", sorted(KERNEL_DTYPES, key=str), ids=str)
def test_kernel_lowerings_match_impls(dtype):
    """One Numba kernel per dtype computes every lowering's result for every pair of special
    values; each output equals the impl's."""
    x, y, p = _pairs(np.dtype(dtype))
    apps = _applications(x, y, p)
    assert apps, f"no lowering applies to {dtype}"
    invars = {id(x): Var(_aval(x)), id(y): Var(_aval(y)), id(p): Var(_aval(p))}
    program = Program(_program(apps, invars), min_kernel_eqns=1)
    assert sum(s.kind == "kernel" for s in program.steps) == 1, program.as_text()[:2000]
    got = program(x, y, p)
    for (prim, params, _, want), g in zip(apps, got):
        assert_same(g, want, prim.name in INEXACT, f"{prim.name}{params or ''} on {dtype}")


def test_every_lowering_is_covered():
    """Each lowered primitive is applied by the kernel test above, in some dtype."""
    seen = {prim.name for d in KERNEL_DTYPES for prim, *_ in _applications(*_pairs(np.dtype(d)))}
    assert {p.name for p in LOWERED} <= seen, sorted({p.name for p in LOWERED} - seen)


@pytest.mark.parametrize("dtype", sorted(SCALAR_DTYPES, key=str), ids=str)
def test_scalar_tier_matches_impls(dtype):
    """0-d float64/bool regions run as Python: each lowering, on each pair of special values,
    gives the impl's result (where math raises, the region reruns through the impls)."""
    dtype = np.dtype(dtype)
    x, y, p = _pairs(dtype)
    for prim, params, args, _ in _applications(x, y, p):
        if prim.abstract_eval(*[_aval(a) for a in args], **params).dtype not in SCALAR_DTYPES:
            continue
        scalars = [np.asarray(a[0]) for a in args]
        invars = {id(s): Var(_aval(s)) for s in scalars}
        program = Program(_program([(prim, params, scalars, None)], invars))
        assert program.steps[0].kind == "scalar", program.as_text()
        for k in range(x.size):
            vals = [np.asarray(a[k]) for a in args]
            if prim.name == "pow" and vals[0] == -np.inf:
                continue  # NumPy's own 0-d and array paths disagree here (NaN vs C99's inf)
            with np.errstate(all="ignore"):
                want = prim.impl(*vals, xp=np, **params)
            (got,) = program(*vals)
            assert_same(got, want, prim.name in INEXACT, f"{prim.name}{params or ''}{[v.item() for v in vals]}")


def _check_program(closed, args, what: str) -> None:
    vals = [np.asarray(getattr(a, "_value", a)) for a in args]
    with np.errstate(all="ignore"):
        want = eval_jaxpr(closed.jaxpr, closed.consts, *vals)
        got = Program(closed)(*vals)
    inexact = any(e.primitive.name in INEXACT for e in closed.jaxpr.eqns)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if not inexact or w.dtype.kind not in "fc":
            assert_same(g, w, False, f"{what}, output {k}")
            continue
        # an ulp of difference in one function grows through the rest of the program (most
        # where it cancels), so whole programs compare relative to their largest value
        assert (g.dtype, g.shape) == (w.dtype, w.shape), what
        tol = 1e-11 if w.dtype == np.float64 else 1e-4
        finite = np.isfinite(w)
        scale = 1.0 + (np.max(np.abs(w[finite])) if np.any(finite) else 0.0)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, equal_nan=True, err_msg=f"{what}, output {k}")


@pytest.mark.parametrize("case", JIT_CASES, ids=lambda c: c.name)
def test_registry_programs_compiled_equal_eval_jaxpr(case):
    """The registry's cases: the function, its jvp and its vjp, compiled and replayed."""
    args, staged = _staged(case.name)
    for kind, closed in staged.items():
        _check_program(closed, args, f"{case.name} ({kind})")


OURS = ArrayLib(fnp, F.relu, lambda v: F.log_softmax(v, dim=-1), special.erf, special.expit)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_programs_compiled_equal_eval_jaxpr(dtype, data):
    """Generated programs (tests/oracle/programs.py) and their gradients."""
    program = data.draw(programs())
    x, y = data.draw(inputs(dtype))

    def f(a, b):
        return run(program, fnp, OURS, a, b)
    try:
        with np.errstate(all="ignore"):
            closed = fgrad.make_jaxpr(f)(x, y)
            grad_closed = fgrad.make_jaxpr(fgrad.grad(f, argnums=(0, 1)))(x, y)
    except ValueError as e:  # max/min of an empty array
        assert "zero-size" in str(e)
        return
    _check_program(closed, (x, y), f"{program}")
    _check_program(grad_closed, (x, y), f"grad of {program}")
