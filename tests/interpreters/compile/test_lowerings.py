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
import fgrad.torch.nn.functional as F
import fgrad.numpy as fnp
from fgrad.core.avals import ShapedArray
from fgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var, eval_jaxpr
from fgrad.core.primitive import ALL_PRIMITIVES
from fgrad.interpreters.compile import Program
from fgrad.interpreters.compile.scalar import KERNEL_DTYPES, SCALAR_DTYPES, Operand
from fgrad.scipy import special

from tests.oracle.programs import ArrayLib, inputs, programs, run
from tests.ops.test_primitives import JIT_CASES, _staged

# Largest difference allowed where the libraries may compute differently (ulps of the result)
ULPS = 4
# Lowerings whose Numba/Python spelling is not NumPy's own operation (libm vs NumPy's SIMD)
INEXACT = {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
           "atanh", "exp", "expm1", "log", "log1p", "cbrt", "logistic", "erf", "logaddexp",
           "atan2", "pow", "integer_pow", "softplus", "softplus_grad", "sin_grad", "cos_grad"}
_ARITY = {"select": 3, **{n: 2 for n in (
    "add", "sub", "mul", "div", "pow", "max", "min", "atan2", "logaddexp", "lt", "le", "gt", "ge",
    "eq", "ne", "and", "or", "xor", "floordiv", "bitwise_and", "bitwise_or", "bitwise_xor", "fmod",
    "mod", "relu_grad", "tanh_grad", "logistic_grad", "sin_grad", "cos_grad")}}
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


# Control flow whose bodies jit compiles into generated loops (compile/loops.py): a loop sums
# its body's dot products in its own order, so it is exact only to rounding, like libm.
LOOPS = {"scan", "while"}


def _applies_inexact(jaxpr) -> bool:
    """Whether `jaxpr` or any jaxpr nested in its equations' params applies an INEXACT function
    or a compiled loop (an iterative walk)."""
    stack = [jaxpr]
    while stack:
        j = stack.pop()
        for e in j.eqns:
            if e.primitive.name in INEXACT or e.primitive.name in LOOPS:
                return True
            for v in e.params.values():
                for sub in (v if isinstance(v, (tuple, list)) else (v,)):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        stack.append(inner)
    return False


def _check_program(closed, args, what: str, inexact: bool | None = None) -> None:
    """The compiled program equals eval_jaxpr: bit for bit, or (`inexact`, by default when
    the jaxpr applies an INEXACT function) relative to the outputs' largest values."""
    vals = [np.asarray(getattr(a, "_value", a)) for a in args]
    with np.errstate(all="ignore"):
        want = eval_jaxpr(closed.jaxpr, closed.consts, *vals)
        got = Program(closed)(*vals)
    if inexact is None:
        inexact = _applies_inexact(closed.jaxpr)
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
    check_generated_program(dtype, data, _check_program)


def check_generated_program(dtype, data, check) -> None:
    """A generated program and its gradient, each checked by `check(closed, args, what)`."""
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
    check(closed, (x, y), f"{program}")
    check(grad_closed, (x, y), f"grad of {program}")


# --- vectorised math (vmath) in kernels over vmath.LARGE elements or more -------------------

_VECTOR_PRIMS = ["sin", "cos", "exp", "log", "tanh", "logistic"]
# documented maximum errors (vmath's docstring), in float64 ulps
_VMATH_ULPS = {"sin": 1, "cos": 1, "exp": 1, "log": 1, "tanh": 3, "logistic": 3}


def _wide(dtype, n: int, lo: float, hi: float) -> np.ndarray:
    """`n` values of both signs spread log-uniformly over [lo, hi], then the special values."""
    rng = np.random.default_rng(7)
    mag = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    vals = np.concatenate([mag * rng.choice([-1.0, 1.0], n), [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
                                                             1e-300, np.nan, np.inf, -np.inf]])
    with np.errstate(over="ignore"):
        return vals.astype(dtype)


def _vector_program(name: str, x: np.ndarray):
    prim = next(p for p in LOWERED if p.name == name)
    invars = {id(x): Var(_aval(x))}
    return Program(_program([(prim, {}, (x,), None)], invars), min_kernel_eqns=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=str)
@pytest.mark.parametrize("name", _VECTOR_PRIMS)
def test_vector_kernels_match_impls(name, dtype):
    """A kernel over LARGE elements computes with vmath: within ULPS of NumPy's impl on values
    from 1e-310 to 1e6 of both signs, signed zeros, subnormals, infinities and NaN."""
    from fgrad.interpreters.compile.vmath import LARGE
    x = _wide(dtype, max(LARGE, 20000), 1e-310 if dtype == np.float64 else 1e-44, 1e6 if name in ("sin", "cos") else 800.0)
    if name in ("sin", "cos"):
        x = x[np.isfinite(x)]  # an infinite argument takes the C library's loop (tested below)
    program = _vector_program(name, x)
    assert "fg_v" in program.as_text(), program.as_text()[-1500:]
    (got,) = program(x)
    with np.errstate(all="ignore"):
        want = next(p for p in LOWERED if p.name == name).impl(x, xp=np)
    assert_same(got, want, True, f"{name} on {np.dtype(dtype)}")


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_vector_trig_takes_the_c_library_beyond_its_range(name):
    """An argument above TRIG_MAX (or infinite) anywhere in the array: the kernel's C-library
    loop computes all of it, so huge arguments are reduced exactly."""
    from fgrad.interpreters.compile import vmath
    from fgrad.interpreters.compile.vmath import LARGE
    x = np.linspace(-3.0, 3.0, LARGE)
    for big in (vmath.TRIG_MAX * 1.5, 1e22, 1e300, np.inf):
        y = x.copy()
        y[LARGE // 2] = big
        (got,) = _vector_program(name, y)(y)
        with np.errstate(invalid="ignore"):
            want = getattr(np, name)(y)
        assert_same(got, want, True, f"{name} with {big}")


def test_vector_trig_fallback_rereads_inputs_it_did_not_overwrite():
    """The C-library pass runs after the vectorised one has written the outputs and reads the
    inputs again, so such a kernel must not write into a dying input's buffer: here the second
    kernel's input y (the first kernel's output, dead after it) reaches sin beyond TRIG_MAX."""
    from fgrad.interpreters.compile.vmath import LARGE

    def f(x):
        y = ((x * 2.0 + 0.5) * 1.5 - 0.25) * 0.5 + 1.0
        return fnp.sin(y * fnp.sum(x) * 1e3)

    x = np.linspace(0.5, 3.0, 2 * LARGE)
    jitted = fgrad.jit(f)
    assert "in place" not in jitted.lower(x).as_text()
    np.testing.assert_array_equal(np.asarray(jitted(x)), np.asarray(f(x)))


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in float64 ulps of the long-double reference (0 where both agree exactly)."""
    r64 = ref.astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf where both overflow
        err = np.abs(got.astype(np.longdouble) - ref) / np.spacing(np.abs(r64)).astype(np.longdouble)
    return np.where((got == r64) | (np.isnan(got) & np.isnan(r64)), 0.0, err.astype(np.float64))


_REFERENCE = {"sin": np.sin, "cos": np.cos, "exp": np.exp, "log": np.log, "tanh": np.tanh,
              "logistic": lambda v: 1 / (1 + np.exp(-v))}


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs an 80-bit long double reference")
@pytest.mark.parametrize("name", _VECTOR_PRIMS)
def test_vmath_max_ulp_error(name):
    """vmath's documented maximum errors hold against a long-double reference on 10^6 values
    (float64: every binade from subnormals up to where the function saturates)."""
    hi = {"sin": 1e6, "cos": 1e6, "exp": 709.0, "log": 1e308, "tanh": 25.0, "logistic": 40.0}[name]
    x = _wide(np.float64, 10 ** 6, 1e-310, hi)
    x = x[np.isfinite(x)]
    if name == "log":
        x = np.abs(x)
    (got,) = _vector_program(name, x)(x)
    with np.errstate(all="ignore"):
        ref = _REFERENCE[name](x.astype(np.longdouble))
    worst = float(np.nanmax(_ulps(got, ref)))
    assert worst <= _VMATH_ULPS[name], f"{name}: {worst:.3f} ulps"


def test_vmath_in_python_gives_the_kernels_bits():
    """vmath's functions run as plain Python too (_f2i/_i2f through struct), with the same
    results as in a compiled kernel: one algorithm, two runtimes."""
    from fgrad.interpreters.compile import vmath
    from fgrad.interpreters.compile.vmath import LARGE
    x = _wide(np.float64, LARGE, 1e-5, 300.0)
    x = x[np.isfinite(x)]
    fns = {"sin": vmath.fg_vsin, "cos": vmath.fg_vcos, "exp": vmath.fg_vexp, "log": vmath.fg_vlog,
           "tanh": vmath.fg_vtanh, "logistic": vmath.fg_vlogistic}
    for name, fn in fns.items():
        (got,) = _vector_program(name, x)(x)
        with np.errstate(all="ignore"):
            py = np.array([fn(np.float64(v)) for v in x[::37]])
        assert_same(got[::37], py, False, f"{name} in Python")


# --- compiled programs keep every dtype's precision ------------------------------------------

_CHAIN_DTYPES = [np.dtype(d) for d in ("float32", "float64", "int32", "int64", "uint8", "bool")]


def _mixed_chain(d: np.dtype, x, i, p):
    """A program over x (dtype d), i (int32) and p (bool) that converts each to every dtype of
    _CHAIN_DTYPES, applies every lowered primitive that takes it there, converts the result
    back to d and combines it with x in d's arithmetic: one output per application."""
    from fgrad.ops.elementwise import add_p, convert_element_type_p, mul_p
    xs, iv, pv = Var(_aval(x)), Var(_aval(i)), Var(_aval(p))
    eqns, outs = [], []

    def bind(prim, atoms, **params):
        out = Var(prim.abstract_eval(*[a.aval for a in atoms], **params))
        eqns.append(Eqn(prim, atoms, [out], params))
        return out

    def convert(v, dt):
        return v if v.aval.dtype == dt else bind(convert_element_type_p, [v], new_dtype=np.dtype(dt))
    for e in _CHAIN_DTYPES:
        a, b, c = convert(xs, e), convert(iv, e), convert(pv, np.bool_)
        sample = [np.zeros(2, e), np.zeros(2, e), np.zeros(2, bool)]
        for prim in LOWERED:
            if prim.name == "convert_element_type":
                continue  # applied above, between every pair of dtypes
            arity = _ARITY.get(prim.name, 1)
            atoms = [(a,), (a, b), (c, a, b)][arity - 1]
            for params in _PARAMS.get(prim.name, [{}]):
                ops = [Operand(f"o{k}", v.aval.dtype) for k, v in enumerate(atoms)]
                if prim.lowering(*ops, **params) is None:
                    continue
                try:
                    with np.errstate(all="ignore"):
                        want = prim.impl(*[sample[k if arity < 3 else [2, 0, 1][k]] for k in range(arity)], xp=np, **params)
                    aval = prim.abstract_eval(*[v.aval for v in atoms], **params)
                except (TypeError, ValueError):
                    continue
                if want.dtype != aval.dtype or aval.dtype not in KERNEL_DTYPES:
                    continue
                r = convert(bind(prim, list(atoms), **params), d)
                outs.append((f"{prim.name}{params or ''} in {e}", bind(add_p, [bind(mul_p, [r, xs]), convert(iv, d)])))
    closed = ClosedJaxpr(Jaxpr([], [xs, iv, pv], eqns, [v for _, v in outs]), [])
    return closed, [w for w, _ in outs]


@pytest.mark.parametrize("n", [16, 2048], ids=["libm", "vmath"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_compiled_programs_keep_dtypes_and_values(dtype, n):
    """Class test: a program mixing conversions (float32 <-> float64, integer and bool <-> float)
    with every primitive that has a lowering, in every dtype it takes, compiled into kernels,
    gives eval_jaxpr's dtypes and values (within ULPS where a library function is involved):
    compiling never computes in another precision. A new lowering is covered automatically."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(3)
    x = (rng.uniform(-3.0, 3.0, n) * np.where(np.arange(n) % 5 == 0, 40.0, 1.0)).astype(dtype)
    x[:6] = [0.0, -0.0, 0.5, -2.5, 1e-30, 7.0]
    i = rng.integers(-300, 300, n).astype(np.int32)
    p = np.arange(n) % 3 == 0
    closed, what = _mixed_chain(dtype, x, i, p)
    program = Program(closed)
    assert any(s.kind == "kernel" for s in program.steps)
    assert ("fg_v" in program.as_text()) == (n >= 1024)
    with np.errstate(all="ignore"):
        want = eval_jaxpr(closed.jaxpr, closed.consts, x, i, p)
        got = program(x, i, p)
    covered = {w.split("{")[0].split(" in ")[0] for w in what}
    assert {q.name for q in LOWERED} - {"convert_element_type"} <= covered
    for g, w, label in zip(got, want, what):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"{label}: {g.dtype} vs {w.dtype}"
        inexact = any(name in label.split("{")[0].split(" in ")[0] for name in INEXACT)
        if not inexact:
            assert_same(g, w, False, label)
        else:
            # ULPS of the narrower dtype the function ran in, grown by x * r + i (cancelling)
            tol = 1e-5 if dtype == np.float32 or label.endswith("float32") else 1e-12
            finite = np.isfinite(w)
            scale = 1.0 + (np.max(np.abs(w[finite])) if np.any(finite) else 0.0)
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, equal_nan=True, err_msg=label)
