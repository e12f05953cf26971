"""The accuracy of vmath's table-driven exp (and tanh and the logistic function built on it)
and of its sine and cosine (compile/vmath.py): the maximum error in ulps over a random sweep plus the edge cases of each function (signed zeros,
subnormal arguments and results, infinities, NaN, the overflow and underflow thresholds, the
ends of the table's and the polynomials' intervals), in float64 against a long-double
reference and in float32 against NumPy's float64 functions; the exp table against the
decimal module; and the kernel cache keyed by vmath's source, so that a changed function
never runs an old kernel."""
from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import pytest

pytest.importorskip("llvmlite")

from fgrad.core.avals import ShapedArray  # noqa: E402
from fgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var  # noqa: E402
from fgrad.core.primitive import ALL_PRIMITIVES  # noqa: E402
from fgrad.interpreters.compile import Program, kernels, llvm_kernels, vmath  # noqa: E402

_PRIMS = {p.name: p for p in ALL_PRIMITIVES}
_LN2 = float(np.log(2.0))
_PIO2 = np.pi / 2
# the bounds vmath's docstring states, in ulps of the result's dtype
BOUND64 = {"exp": 1.0, "tanh": 3.0, "logistic": 3.0, "sin": 1.0, "cos": 1.0}
BOUND32 = 1.0
# each function's sweep: magnitudes log-uniform up to this, both signs
_TOP = {"exp": 709.0, "tanh": 25.0, "logistic": 745.0, "sin": vmath.TRIG_MAX, "cos": vmath.TRIG_MAX}
_TOP32 = {"exp": 88.0, "tanh": 12.0, "logistic": 104.0}


def _edges64(name: str) -> list[float]:
    """The float64 arguments where `name` changes regime, with their neighbours."""
    common = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, -2.2250738585072014e-308, 1e-300, np.nan]
    if name == "exp":
        # the largest finite result, the first overflow, the subnormal range's edge, the last
        # nonzero result and the first zero; the ends of the table's steps (j ln2/128 +- ln2/256)
        steps = [(k + 0.5) * _LN2 / 128 for k in (-300, -129, -128, -1, 0, 1, 127, 128, 5000)]
        pts = [709.782712893384, 709.7827128933841, -708.3964185322641, -708.39641853226, -745.1332191019411,
               -745.1332191019412, -746.0, 710.0, 1e-20, -1e-20] + steps
        return common + [np.inf, -np.inf] + _around(pts)
    if name == "tanh":
        # small arguments, the first steps of expm1's table (2|x| = k ln2/128), saturation to +-1
        return common + [np.inf, -np.inf] + _around([0.0078125, -0.0078125, _LN2 / 256, -_LN2 / 256, _LN2 / 128, 3 * _LN2 / 256, 0.35,
                                                      19.061547465398498, 19.1, 30.0, -19.1, 1e-8])
    if name == "logistic":
        return common + [np.inf, -np.inf] + _around([36.7, -36.7, 709.8, -709.8, 745.2, -745.2, 1e-17, -1e-17])
    # sine and cosine: near multiples of pi/2 (results near 0), the kernels' pi/4 boundaries,
    # the end of the reduction's range
    mults = [k * _PIO2 for k in (1, 2, 3, 4, 7, 100, 1000, 355, 636618)]
    return common + _around(mults + [-m for m in mults] + [np.pi / 4, 3 * np.pi / 4, vmath.TRIG_MAX,
                                                          -vmath.TRIG_MAX, 22.0, 1e-8])


def _around(points: list[float], k: int = 3) -> list[float]:
    """Each point and its k float64 neighbours on both sides."""
    out = []
    for p in points:
        v = np.float64(p)
        lo = hi = v
        out.append(float(v))
        for _ in range(k):
            lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
            out += [float(lo), float(hi)]
    return out


def _sweep64(name: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(2028)
    mag = np.exp(rng.uniform(np.log(1e-310), np.log(_TOP[name]), n))
    near = rng.uniform(-4.0, 4.0, n // 2)
    x = np.concatenate([mag * rng.choice([-1.0, 1.0], n), near, _edges64(name)])
    return x[np.abs(x) <= vmath.TRIG_MAX] if name in ("sin", "cos") else x  # (NaN: kept by the kernel)


def _kernel(name: str, x: np.ndarray) -> np.ndarray:
    """`name` over x by a one-equation kernel (vmath's function: x has >= vmath.LARGE values)."""
    var = Var(ShapedArray(x.shape, x.dtype))
    out = Var(_PRIMS[name].abstract_eval(var.aval))
    program = Program(ClosedJaxpr(Jaxpr([], [var], [Eqn(_PRIMS[name], [var], [out], {})], [out]), []),
                      min_kernel_eqns=1)
    assert "fg_v" in program.as_text()
    (got,) = program(x)
    return np.asarray(got)


_REF = {"exp": np.exp, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
        "logistic": lambda v: 1 / (1 + np.exp(-v))}


def _ulps64(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in float64 ulps at the long-double reference (0 where they agree, NaN with NaN)."""
    with np.errstate(invalid="ignore", over="ignore"):
        r64 = ref.astype(np.float64)
        err = np.abs(got.astype(np.longdouble) - ref) / np.spacing(np.abs(r64)).astype(np.longdouble)
    same = (got == r64) | (np.isnan(got) & np.isnan(r64))
    return np.where(same, 0.0, err.astype(np.float64))


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs an 80-bit long double reference")
@pytest.mark.parametrize("name", sorted(BOUND64))
def test_float64_max_ulp_error(name):
    """Within the documented bound on 2 x 10^5 random arguments and every edge case; the
    signed zeros, infinities and NaN bit for bit where the exact result is representable."""
    x = _sweep64(name, 200_000)
    got = _kernel(name, x)
    with np.errstate(all="ignore"):
        ref = _REF[name](x.astype(np.longdouble))
    err = _ulps64(got, ref)
    worst = int(np.nanargmax(err))
    assert err[worst] <= BOUND64[name], f"{name}({x[worst]!r}) = {got[worst]!r}: {err[worst]:.3f} ulps"
    exact = {0.0, -0.0, np.inf, -np.inf}
    for k, v in enumerate(x):
        if v in exact or np.isnan(v):
            with np.errstate(all="ignore"):
                want = np.float64(_REF[name](np.float64(v)))
            if name in ("tanh", "sin") and v == 0.0:
                want = np.float64(v)  # (odd functions keep the zero's sign)
            assert np.array_equal(got[k:k + 1], np.array([want]), equal_nan=True), (name, v, got[k], want)
            assert np.isnan(want) or np.signbit(got[k]) == np.signbit(want), (name, v, got[k])


def _edges32(name: str) -> list[float]:
    pts = {"exp": [88.72283, 88.72284, -87.33655, -103.27893, -103.97208, -104.0, 0.0027, -0.0027],
           "tanh": [0.0078125, -0.0078125, 0.0027, 9.01, 9.02, -9.02, 0.35],
           "logistic": [16.6, -16.6, 88.7, -88.7, 103.9, -103.9]}[name]
    out = [0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, np.inf, -np.inf, np.nan]
    for p in pts:
        v = np.float32(p)
        out += [float(np.nextafter(v, np.float32(-np.inf))), float(v), float(np.nextafter(v, np.float32(np.inf)))]
    return out


@pytest.mark.parametrize("name", sorted(_TOP32))
def test_float32_max_ulp_error(name):
    """The float32 exp, tanh (table-driven) and logistic function within 1
    float32 ulp of the exact value (NumPy's float64 function, rounded) on a sweep from the
    smallest subnormal to saturation and the edge cases."""
    rng = np.random.default_rng(32)
    n = 100_000
    mag = np.exp(rng.uniform(np.log(1e-45), np.log(_TOP32[name]), n))
    x = np.concatenate([mag * rng.choice([-1.0, 1.0], n), rng.uniform(-3.0, 3.0, n // 2),
                        _edges32(name)]).astype(np.float32)
    got = _kernel(name, x).astype(np.float64)
    with np.errstate(all="ignore"):
        exact = _REF[name](x.astype(np.float64))
        rounded = exact.astype(np.float32)
        mag32 = np.abs(rounded)
        ulp = np.where(mag32 < np.float32(2.0 ** -126), 2.0 ** -149, np.spacing(mag32).astype(np.float64))
        err = np.abs(got - exact) / ulp
    same = (got == rounded) | (np.isnan(got) & np.isnan(exact))
    err = np.where(same, 0.0, err)
    worst = int(np.argmax(err))
    assert err[worst] <= BOUND32, f"{name}({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}: {err[worst]:.3f}"


def test_exp_table_is_two_to_the_j_over_128():
    """_EXP_HI[j] is the double nearest 2^(j/128) and _EXP_LO[j] the double nearest the rest,
    recomputed with 60 decimal digits."""
    assert len(vmath._EXP_HI) == len(vmath._EXP_LO) == 128
    with localcontext() as ctx:
        ctx.prec = 60
        ln2 = Decimal(2).ln()
        for j in range(128):
            exact = (ln2 * j / 128).exp()
            assert vmath._EXP_HI[j] == float(exact), j
            assert vmath._EXP_LO[j] == float(exact - Decimal(vmath._EXP_HI[j])), j
    assert vmath.TABLES == {"_EXP_HI": vmath._EXP_HI, "_EXP_LO": vmath._EXP_LO}


def test_reduction_constants():
    """exp's reduction by ln2/128: the high part's product with any k the clamped arguments
    give is exact (it has 32 significant bits), and the parts sum to ln2/128."""
    hi, lo = vmath._LN2_128_HI, vmath._LN2_128_LO
    mant = int(np.frexp(hi)[0] * 2 ** 53)
    assert mant % (1 << 21) == 0  # at most 32 significant bits: k < 2^21 keeps k * hi exact
    assert abs(746 * vmath._INV_LN2_128) < 2 ** 21
    with localcontext() as ctx:
        ctx.prec = 60
        assert abs(Decimal(hi) + Decimal(lo) - Decimal(2).ln() / 128) < Decimal(2) ** -90
        assert abs(Decimal(vmath._INV_LN2_128) - 128 / Decimal(2).ln()) < Decimal(2) ** -44


def test_kernels_python_and_numba_module_read_the_same_tables():
    """vmath's functions run as plain Python give the kernel's bits on the table's every step,
    and the generated module for Numba's loops (kernels._vmath_module) defines the tables."""
    x = np.concatenate([(np.arange(-700, 700) + 0.37) * _LN2 / 128, np.linspace(-30.0, 30.0, 301)])
    for name, fn in (("exp", vmath.fg_vexp), ("tanh", vmath.fg_vtanh), ("logistic", vmath.fg_vlogistic)):
        got = _kernel(name, x)
        with np.errstate(all="ignore"):
            want = np.array([fn(np.float64(v)) for v in x])
        assert got.tobytes() == want.tobytes(), name
    source = kernels._vmath_module()[1]
    for table in vmath.TABLES:
        assert f"\n{table} = (" in source


def test_kernel_names_cover_vmaths_source(tmp_path, monkeypatch):
    """A kernel's name (its key in the on-disk cache) hashes vmath's source: a changed vmath
    gives every kernel that uses it a new name, so an old kernel's object code is never
    linked for the new functions."""
    args = ([("array", "x", np.dtype(np.float64))], [], ["fg_vexp(x)"], [("t0", np.dtype(np.float64))])
    before = llvm_kernels.kernel_name(*args, vexprs=["fg_vexp(x)"])
    changed = tmp_path / "vmath.py"
    changed.write_bytes(open(vmath.__file__, "rb").read().replace(b"0.041666666666666664", b"0.041666666666666667"))
    monkeypatch.setattr(vmath, "__file__", str(changed))
    monkeypatch.setattr(llvm_kernels, "_SOURCE_HASH", [])
    assert llvm_kernels.kernel_name(*args, vexprs=["fg_vexp(x)"]) != before
