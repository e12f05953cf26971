"""Kernels with vmath's functions (compile/vmath.py) are written as LLVM IR by llvm_kernels.py,
vmath's Python source translated like scalar_lib's helpers (`_f2i`/`_i2f` as bitcasts), with
their out-of-range sine and cosine check: they give exactly the bits of vmath's functions run
as plain Python (IEEE operations in the same order, no fused multiply-adds), in every
dtype, on every size around the vmath thresholds (functions inlined or called), on partial
vector blocks, special values, sine and cosine arguments beyond TRIG_MAX (the whole kernel
then takes the C library), and mixed float32/float64 expressions; and the same bits as
vmath's functions compiled by Numba, as loops.py's loops compute them (slow: Numba
compiles vmath's module)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llvmlite")

from fgrad.core.avals import ShapedArray  # noqa: E402
from fgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var  # noqa: E402
from fgrad.core.primitive import ALL_PRIMITIVES  # noqa: E402
from fgrad.interpreters.compile import Program, kernels, llvm_kernels, vmath  # noqa: E402

_PRIMS = {p.name: p for p in ALL_PRIMITIVES}
# primitive -> vmath's float64 and float32 functions (the float32 ones return a float64 that
# the kernel rounds once)
FUNCS = {"sin": (vmath.fg_vsin, vmath.fg_vsinf), "cos": (vmath.fg_vcos, vmath.fg_vcosf),
         "exp": (vmath.fg_vexp, vmath.fg_vexpf), "log": (vmath.fg_vlog, vmath.fg_vlogf),
         "tanh": (vmath.fg_vtanh, vmath.fg_vtanhf), "logistic": (vmath.fg_vlogistic, vmath.fg_vlogisticf)}
_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300,
             1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38, 88.72, -103.9, 709.7, -745.2, 710.0, -746.0,
             9.02, 19.1, -19.1, 1e6, -1e6, 0.5, 2.0]


def _values(dtype, n: int, seed: int = 0) -> np.ndarray:
    """`n` values: the special ones, then both signs log-uniform over 1e-6 .. 1e3 (cut to n)."""
    rng = np.random.default_rng(seed)
    mag = np.exp(rng.uniform(np.log(1e-6), np.log(1e3), n))
    with np.errstate(over="ignore"):
        return np.concatenate([_SPECIALS, mag * rng.choice([-1.0, 1.0], n)])[:n].astype(dtype)


def _program(eqns: list, inputs: list, outputs: list) -> Program:
    return Program(ClosedJaxpr(Jaxpr([], inputs, eqns, outputs), []), min_kernel_eqns=1)


def _unary(name: str, x: np.ndarray) -> Program:
    var = Var(ShapedArray(x.shape, x.dtype))
    out = Var(_PRIMS[name].abstract_eval(var.aval))
    return _program([Eqn(_PRIMS[name], [var], [out], {})], [var], [out])


def _python(name: str, x: np.ndarray) -> np.ndarray:
    """vmath's function run as plain Python on each element (rounded to float32 for float32)."""
    f64, f32 = FUNCS[name]
    with np.errstate(all="ignore"):
        if x.dtype == np.float32:
            return np.array([np.float32(f32(v)) for v in x], np.float32)
        return np.array([f64(v) for v in x], np.float64)


def _bits(a) -> bytes:
    return np.ascontiguousarray(np.asarray(a)).tobytes()


def _llvm_specs(program: Program) -> list:
    return [spec for spec, _ in program.kernels if spec.llvm is not None]


@pytest.fixture
def strict(monkeypatch):
    """Every kernel by llvm_kernels (no Numba fallback)."""
    monkeypatch.setattr(llvm_kernels, "BACKEND", "llvm")


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=str)
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_kernels_give_vmaths_python_bits(name, dtype, strict):
    """Sizes at the thresholds (outlined below vmath.INLINE, inlined from it) and off a whole
    vector block: the kernel's bits are vmath's functions' bits, element by element."""
    for n in (vmath.LARGE, vmath.INLINE - 1, vmath.INLINE + llvm_kernels.vmath_lanes() + 3):
        x = _values(dtype, n, seed=n)
        if name in ("sin", "cos"):  # (one beyond TRIG_MAX takes the C library: below)
            x = np.where(np.abs(x) > vmath.TRIG_MAX, 1.0, x).astype(dtype)
        program = _unary(name, x)
        assert _llvm_specs(program) and "fg_v" in program.as_text(), program.as_text()[:400]
        (got,) = program(x)
        assert _bits(got) == _bits(_python(name, x)), (name, np.dtype(dtype).name, n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=str)
def test_kernels_below_large_call_the_c_library(dtype, strict):
    """Below vmath.LARGE the kernel calls the C library's functions: no vmath in it, and
    NumPy's values within the C library's error."""
    x = _values(dtype, vmath.LARGE - 1)
    program = _unary("tanh", x)
    assert "fg_v" not in program.as_text()
    (got,) = program(x)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(np.asarray(got), np.tanh(x), rtol=2e-7 if dtype == np.float32 else 1e-15)


@pytest.mark.parametrize("n", [vmath.LARGE + 5, vmath.INLINE + 5], ids=["outlined", "inlined"])
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_beyond_its_range_reruns_with_the_c_library(name, n, strict):
    """One argument beyond TRIG_MAX (or infinite), anywhere, even in the last partial block:
    every output is the C library's, as the kernel's C-library pass computes it."""
    for dtype in (np.float64, np.float32):
        x = np.linspace(-3.0, 3.0, n).astype(dtype)
        clean = _unary(name, x)
        assert "fg_v" in clean.as_text()
        for big, where in ((vmath.TRIG_MAX * 1.5, n // 2), (1e22, n - 1), (np.inf, 0)):
            y = x.copy()
            y[where] = big
            (got,) = _unary(name, y)(y)
            with np.errstate(invalid="ignore"):
                if dtype == np.float32:  # the C library's float32 function
                    want = getattr(np, name)(y)
                    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=2 ** -23)
                    continue
                want = getattr(np, name)(y)
            assert _bits(got) == _bits(want), (name, big, where)
        (got,) = clean(x)
        assert _bits(got) == _bits(_python(name, x))


def test_mixed_dtype_chain_gives_python_bits(strict):
    """A fused chain over a float32 and a float64 input, with float32 and float64 calls of
    each function and a conversion between them: one kernel, vmath's bits."""
    from fgrad.ops.elementwise import add_p, convert_element_type_p, mul_p
    n = vmath.INLINE + 11
    a = _values(np.float32, n, seed=3)
    b = _values(np.float64, n, seed=4)
    a = np.where(np.isfinite(a) & (np.abs(a) < 1e5), a, 0.5).astype(np.float32)
    b = np.where(np.isfinite(b) & (np.abs(b) < 1e5), b, 0.25)
    va, vb = Var(ShapedArray(a.shape, a.dtype)), Var(ShapedArray(b.shape, b.dtype))
    eqns, outs = [], []

    def bind(prim, *atoms, **params):
        out = Var(prim.abstract_eval(*[t.aval for t in atoms], **params))
        eqns.append(Eqn(prim, list(atoms), [out], params))
        return out
    wide = bind(convert_element_type_p, va, new_dtype=np.dtype(np.float64))
    for name in sorted(FUNCS):
        fa = bind(_PRIMS[name], va)  # float32
        fb = bind(_PRIMS[name], vb)  # float64
        outs.append(bind(add_p, bind(mul_p, fb, wide), bind(convert_element_type_p, fa,
                                                            new_dtype=np.dtype(np.float64))))
    program = _program(eqns, [va, vb], outs)
    assert len(program.kernels) == 1 and _llvm_specs(program)
    got = program(a, b)
    with np.errstate(all="ignore"):
        for name, g in zip(sorted(FUNCS), got):
            want = _python(name, b) * a.astype(np.float64) + _python(name, a).astype(np.float64)
            assert _bits(g) == _bits(want), name


def test_vmath_kernels_never_need_numba(strict):
    """Every vmath kernel (each function, each dtype, inlined and outlined) translates: its
    IR is built without Unsupported, and vmath's functions appear in it as code (not calls of
    an external symbol)."""
    for name in sorted(FUNCS):
        for dtype in (np.float64, np.float32):
            for n in (vmath.LARGE, vmath.INLINE):
                (spec,) = _llvm_specs(_unary(name, np.ones(n, dtype)))
                text = spec.llvm.text
                declared = [line for line in text.splitlines() if line.startswith("declare")]
                assert not any("fg_v" in line or "_f2i" in line for line in declared), declared


def _numba_vmath(tmp_path_factory):
    """vmath's generated module for Numba (kernels._vmath_module, what loops.py's loops
    import), compiled by Numba."""
    import sys
    name, source = kernels._vmath_module()
    if name not in sys.modules:
        folder = tmp_path_factory.mktemp("vmath")
        kernels._import_file(kernels._write_source(folder, kernels.KernelSpec(source, name, [])), name)
    return sys.modules[name]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=str)
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_llvm_kernels_give_numbas_bits(name, dtype, strict, tmp_path_factory):
    """The llvm_kernels kernel and the same vmath function compiled by Numba (as loops.py's
    loops compute it, which is also how region kernels were built before): the same bits,
    on sizes around the thresholds and with values up to TRIG_MAX."""
    numba = pytest.importorskip("numba")
    module = _numba_vmath(tmp_path_factory)
    fn = getattr(module, FUNCS[name][dtype == np.float32].__name__)

    @numba.njit
    def apply(x, out):
        for i in range(x.size):
            out[i] = fn(x[i])
    for n in (vmath.LARGE + 1, vmath.INLINE + 5):
        x = _values(dtype, n, seed=11)
        if name in ("sin", "cos"):
            x = np.where(np.abs(x) > vmath.TRIG_MAX, 1.0, x).astype(dtype)
        want = np.empty_like(x)
        with np.errstate(all="ignore"):
            apply(x, want)
        (got,) = _unary(name, x)(x)
        assert _bits(got) == _bits(want), (name, np.dtype(dtype).name, n)
