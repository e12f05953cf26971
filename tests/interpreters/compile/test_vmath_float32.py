"""vmath's float32 functions (compile/vmath.py: fg_vsinf, fg_vcosf, fg_vtanhf, fg_vexpf, fg_vlogf,
fg_vlogisticf), as the kernels over vmath.LARGE float32 elements compute them: within
ULPS32 float32 ulps of the exact value (NumPy's float64 function, whose own error is
negligible at float32's precision) over a dense sweep with signed zeros, subnormals,
infinities, NaN and large sine and cosine arguments; and the same bits as the functions run
as plain Python (IEEE float64 operations, no contraction into fused multiply-adds), so the
results do not depend on the instruction set a kernel is compiled for."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from fgrad.core.avals import ShapedArray  # noqa: E402
from fgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var  # noqa: E402
from fgrad.core.primitive import ALL_PRIMITIVES  # noqa: E402
from fgrad.interpreters.compile import Program, vmath  # noqa: E402

# the documented bound (vmath's docstring): float32 ulps of the exact value
ULPS32 = 1.0
# primitive -> (its vmath float32 function, NumPy's float64 reference)
FUNCS = {"sin": ("fg_vsinf", np.sin), "cos": ("fg_vcosf", np.cos), "tanh": ("fg_vtanhf", np.tanh),
         "exp": ("fg_vexpf", np.exp), "log": ("fg_vlogf", np.log),
         "logistic": ("fg_vlogisticf", lambda v: 1.0 / (1.0 + np.exp(-v)))}
_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38,
                      1.17549435e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0, 88.72, 88.73, -87.33, -103.9,
                      -104.0, 9.0, -9.0, 9.02, 1e-20, -1e-20, 0.5, 2.0], dtype=np.float32)


def _kernel(name: str, x: np.ndarray) -> Program:
    """A program of one `name` equation on `x`, compiled as a kernel (even a single one)."""
    prim = next(p for p in ALL_PRIMITIVES if p.name == name)
    var = Var(ShapedArray(x.shape, x.dtype))
    out = Var(prim.abstract_eval(var.aval))
    jaxpr = ClosedJaxpr(Jaxpr([], [var], [Eqn(prim, [var], [out], {})], [out]), [])
    return Program(jaxpr, min_kernel_eqns=1)


def _ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in float32 ulps at `exact` (float64), 0 where got is exact's rounding
    (infinities and NaN included)."""
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = exact.astype(np.float32)
        mag = np.abs(rounded)
        ulp = np.where(mag < np.float32(2.0 ** -126), 2.0 ** -149,
                       np.spacing(mag).astype(np.float64))
        err = np.abs(got.astype(np.float64) - exact) / ulp
    same = (got == rounded) & (np.signbit(got) == np.signbit(rounded)) | (np.isnan(got) & np.isnan(exact))
    return np.where(same, 0.0, err)


def _sweep(name: str, n: int, seed: int = 0) -> np.ndarray:
    """`n` float32 values of both signs, log-uniform from the smallest subnormal to where
    `name` saturates (sine and cosine: vmath.TRIG_MAX), a uniform stretch around 0 and the
    special values (log: magnitudes only; sine and cosine: finite ones)."""
    rng = np.random.default_rng(seed)
    top = {"sin": vmath.TRIG_MAX, "cos": vmath.TRIG_MAX, "log": 3.4e38}.get(name, 120.0)
    mag = np.exp(rng.uniform(np.log(1e-45), np.log(top), n))
    x = np.concatenate([mag * rng.choice([-1.0, 1.0], n), np.linspace(-10.0, 10.0, n // 4)]).astype(np.float32)
    x = np.concatenate([x, _SPECIALS])
    if name == "log":
        x = np.concatenate([np.abs(x), _SPECIALS])
    if name in ("sin", "cos"):
        x = x[np.isfinite(x) & (np.abs(x) <= vmath.TRIG_MAX)]
    return x


def _check(name: str, x: np.ndarray) -> None:
    fn, ref = FUNCS[name]
    program = _kernel(name, x)
    assert fn + "(" in program.as_text(), program.as_text()[-1500:]
    (got,) = program(x)
    got = np.asarray(got)
    assert got.dtype == np.float32
    with np.errstate(all="ignore"):
        exact = ref(x.astype(np.float64))
    err = _ulps(got, exact)
    worst = int(np.argmax(err))
    assert err[worst] <= ULPS32, (f"{name}({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}: "
                                  f"{err[worst]:.3f} float32 ulps > {ULPS32}")


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_float32_functions_within_their_bound(name):
    """Kernels over float32 arrays of vmath.LARGE or more elements take the float32 versions,
    and stay within ULPS32 of the exact value on every value of the sweep."""
    _check(name, _sweep(name, 60_000))


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_float32_functions_keep_special_values(name):
    """Signed zeros (sine and tanh keep -0.0), infinities, NaN and the limits of exp's and
    tanh's ranges, bit for bit what rounding the exact value gives."""
    x = np.resize(_SPECIALS, vmath.LARGE)
    if name in ("sin", "cos"):
        x = np.resize(x[np.isfinite(x) & (np.abs(x) <= vmath.TRIG_MAX)], vmath.LARGE)
    (got,) = _kernel(name, x)(x)
    got = np.asarray(got)
    with np.errstate(all="ignore"):
        exact = FUNCS[name][1](x.astype(np.float64))
    exact32 = exact.astype(np.float32)
    for v, g, e in zip(x[:len(_SPECIALS)], got, exact32):
        if not np.isfinite(e) or e == 0.0 or abs(e) == 1.0:  # results a rounding makes exact
            assert (np.isnan(g) and np.isnan(e)) or (g == e and np.signbit(g) == np.signbit(e)), (name, v, g, e)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_trig_beyond_its_range_takes_the_c_library(name):
    """An argument above TRIG_MAX, up to float32's largest, or an infinity: the kernel's
    C-library pass computes every output, still within the bound."""
    x = np.linspace(-3.0, 3.0, vmath.LARGE).astype(np.float32)
    for big in (np.float32(vmath.TRIG_MAX * 2), np.float32(1e30), np.float32(3.4028235e38)):
        y = x.copy()
        y[7] = big
        (got,) = _kernel(name, y)(y)
        err = _ulps(np.asarray(got), FUNCS[name][1](y.astype(np.float64)))
        assert err.max() <= ULPS32, (name, big, err.max())
    y = x.copy()
    y[3] = np.inf
    with np.errstate(invalid="ignore"):
        (got,) = _kernel(name, y)(y)
    assert np.isnan(np.asarray(got)[3])


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_float32_kernels_compute_the_python_functions_bits(name):
    """The compiled kernel gives exactly the bits of the same function run as plain Python,
    whose float64 operations are IEEE's: no fused multiply-add or other choice of the CPU's
    (the kernels are vectorised for whatever SIMD width the machine has)."""
    fn = getattr(vmath, FUNCS[name][0])
    x = _sweep(name, 1500, seed=1)
    x = np.resize(x, max(len(x), vmath.LARGE))
    (got,) = _kernel(name, x)(x)
    with np.errstate(all="ignore"):
        want = np.array([np.float32(fn(np.float32(v))) for v in x], dtype=np.float32)
    assert np.array_equal(np.asarray(got).view(np.uint32), want.view(np.uint32)), name


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_float32_functions_over_a_stride_of_every_float32(name):
    """Every 97th float32 bit pattern (both signs, subnormals to the largest, about 44 million
    values) within the bound."""
    bits = np.arange(0, 2 ** 32, 97, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[~np.isnan(x)]
    if name in ("sin", "cos"):
        x = x[np.abs(x) <= vmath.TRIG_MAX]
    for part in np.array_split(x, 8):
        _check(name, part)
