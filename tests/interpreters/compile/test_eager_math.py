"""Eager float64 sine and cosine run jit's vectorised kernels from eager_math.EAGER_MIN elements up
(fgrad/interpreters/compile/eager_math.py): the same bits as a jit kernel, NumPy's layout,
NumPy's own function below the size and for other dtypes."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.interpreters.compile import eager_math

FUNCS = [(fnp.sin, onp.sin), (fnp.cos, onp.cos)]


def _ulps(a, b):
    return onp.max(onp.abs(a - b) / onp.spacing(onp.maximum(onp.abs(b), 1e-300)))


@pytest.mark.parametrize("f, np_f", FUNCS, ids=["sin", "cos"])
@pytest.mark.parametrize("n", [5, eager_math.EAGER_MIN - 1, eager_math.EAGER_MIN, 1000, 10_001])
def test_eager_equals_a_jit_kernel_bit_for_bit(f, np_f, n):
    """At every size, eager, a jit kernel and a jitted lone call compute one sine (the C
    library's below EAGER_MIN = vmath.LARGE elements, vmath's from it)."""
    # values across the reduction's ranges, signed zeros, and arguments beyond TRIG_MAX and
    # infinities (the kernel's C-library rerun)
    x = onp.random.default_rng(n).uniform(-50, 50, n)
    x[:4] = [0.0, -0.0, 3e6, onp.inf]
    eager = onp.asarray(f(x))
    # f and two exact products (by powers of two) make a region of three equations: a jit kernel
    kernel = onp.asarray(fgrad.jit(lambda v: f(v) * 2.0 * 0.5)(x))
    assert "kernel" in fgrad.jit(lambda v: f(v) * 2.0 * 0.5).lower(x).as_text()
    assert onp.array_equal(kernel, eager, equal_nan=True)
    assert onp.array_equal(onp.asarray(fgrad.jit(f)(x)), eager, equal_nan=True)
    finite = onp.isfinite(x)
    assert _ulps(eager[finite], np_f(x[finite])) <= 1
    assert onp.isnan(eager[3])


@pytest.mark.parametrize("f, np_f", FUNCS, ids=["sin", "cos"])
def test_numpy_below_the_size_and_for_float32(f, np_f):
    x = onp.random.default_rng(0).uniform(-3, 3, eager_math.EAGER_MIN - 1)
    assert onp.array_equal(onp.asarray(f(x)), np_f(x))
    x32 = onp.random.default_rng(1).uniform(-3, 3, 5000).astype(onp.float32)
    assert onp.array_equal(onp.asarray(f(x32)), np_f(x32))


@pytest.mark.parametrize("f, np_f", FUNCS, ids=["sin", "cos"])
def test_layouts_and_values_do_not_depend_on_strides(f, np_f):
    base = onp.random.default_rng(2).uniform(-3, 3, (512, 48))
    expected = onp.asarray(f(onp.ascontiguousarray(base)))
    for view, pick in [(base.T, lambda e: e.T), (onp.asfortranarray(base), lambda e: e),
                       (base[::2], lambda e: e[::2]), (base[:, ::3], lambda e: e[:, ::3])]:
        out = onp.asarray(f(view))
        assert onp.array_equal(out, pick(expected))
        ref = np_f(view)
        assert (out.flags.c_contiguous, out.flags.f_contiguous) == (ref.flags.c_contiguous, ref.flags.f_contiguous)


def test_gradients_take_the_kernels_too():
    x = onp.random.default_rng(3).uniform(-3, 3, eager_math.EAGER_MIN)
    g = onp.asarray(fgrad.grad(lambda v: fnp.sum(fnp.sin(v)))(x))
    assert onp.array_equal(g, onp.asarray(fnp.cos(x)))
    assert _ulps(g, onp.cos(x)) <= 1


def test_the_eager_kernels_do_not_import_numba():
    code = ("import sys, numpy as np, fgrad.numpy as fnp\n"
            "x = np.linspace(-3, 3, 10000)\n"
            "y = np.asarray(fnp.sin(x)) + np.asarray(fnp.cos(x))\n"
            "assert 'numba' not in sys.modules, 'numba imported'\n"
            "print(float(y.sum()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("dtype", [onp.float32, onp.float64])
@pytest.mark.parametrize("name", ["tanh_grad", "logistic_grad"])
def test_fused_output_gradients_take_a_kernel_with_numpys_bits(name, dtype):
    """tanh's and the logistic function's fused gradients (ct (1 + y)(1 - y), ct y (1 - y)) run
    one kernel pass from SAME_BITS_AT_ONCE elements, with NumPy's arithmetic in NumPy's order: the bits
    of the plain NumPy expression at every size and layout, a strided or broadcast cotangent
    included (the primitive's own impl)."""
    from fgrad.interpreters.compile import native
    from fgrad.ops import elementwise as E
    prim = getattr(E, f"{name}_p")
    native._engine()  # (the kernels run once a process has LLVM loaded: the next test)
    rng = onp.random.default_rng(0)
    one = dtype(1)

    def ref(ct, y):
        return ct * ((one + y) * (one - y)) if name == "tanh_grad" else ct * (y * (one - y))
    for shape in [(eager_math.SAME_BITS_AT_ONCE - 1,), (eager_math.SAME_BITS_AT_ONCE,), (300, 101)]:
        y = onp.tanh(rng.standard_normal(shape)).astype(dtype)
        ct = rng.standard_normal(shape).astype(dtype)
        for c, v in [(ct, y), (onp.asfortranarray(ct), onp.asfortranarray(y)), (ct.T, y.T),
                     (onp.broadcast_to(dtype(0.5), shape), y)]:
            out = onp.asarray(prim.impl(c, v, xp=onp))
            want = ref(c, v)
            assert out.dtype == want.dtype and out.shape == want.shape
            assert onp.array_equal(out, want) and onp.array_equal(onp.signbit(out), onp.signbit(want)), shape
    assert (prim, onp.dtype(dtype)) in eager_math._KERNELS


def test_an_eager_only_process_keeps_numpys_code_for_the_gradients():
    """A process that never loaded LLVM runs tanh's fused gradient with NumPy (the same bits),
    rather than mapping LLVM's code for it; float64 sines, whose kernels are vmath's, load it."""
    code = textwrap.dedent("""
        import numpy as onp
        import fgrad, fgrad.numpy as fnp
        from fgrad.interpreters.compile import eager_math, native
        x = onp.linspace(-2, 2, 4 * eager_math.SAME_BITS_AT_ONCE).astype(onp.float32)
        g = fgrad.grad(lambda x: fnp.sum(fnp.tanh(x)))(x)
        y = onp.tanh(x)
        assert onp.array_equal(onp.asarray(g), onp.float32(1) * ((1 + y) * (1 - y)))
        assert not native.started()
        fnp.sin(x.astype(onp.float64))
        assert native.started()
        print("ok")""")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]


class _NeverKept(dict):
    """A kernel table whose lookups miss: every run then fetches its kernel through _kernel."""

    def get(self, key, default=None):
        return default


def _kernel_calls(monkeypatch) -> list:
    """The (primitive, dtype) of each eager kernel the next calls run."""
    calls = []
    kernel = eager_math._kernel

    def counted(prim, dtype, arity):
        calls.append((prim.name, dtype))
        return kernel(prim, dtype, arity)
    monkeypatch.setattr(eager_math, "_kernel", counted)
    monkeypatch.setattr(eager_math, "_KERNELS", _NeverKept())
    return calls


@pytest.mark.parametrize("name", ["tanh_grad", "logistic_grad"])
def test_fused_output_gradients_take_the_kernel_by_size_and_calls(name, monkeypatch):
    """With LLVM loaded, NumPy's bits cost one kernel call from SAME_BITS_AT_ONCE elements; from
    SAME_BITS_MIN elements only after SAME_BITS_CALLS calls on such arrays (a program that
    calls it a few times never builds it); below SAME_BITS_MIN never. The same bits in all."""
    from fgrad.interpreters.compile import native
    from fgrad.ops import elementwise as E
    prim = getattr(E, f"{name}_p")
    native._engine()
    monkeypatch.setitem(eager_math.SMALL_CALLS, prim, 0)
    calls = _kernel_calls(monkeypatch)
    lo, k = eager_math.SAME_BITS_MIN, eager_math.SAME_BITS_CALLS
    mid = (lo + eager_math.SAME_BITS_AT_ONCE) // 2
    cases = [(lo - 1, False)] * (k + 1) + [(mid, False)] * (k - 1) + [(lo, False), (mid, True),
                                                                          (eager_math.SAME_BITS_AT_ONCE, True)]
    for i, (n, runs) in enumerate(cases):
        y = onp.tanh(onp.linspace(-2, 2, n))
        ct = onp.random.default_rng(n).standard_normal(n)
        calls.clear()
        out = onp.asarray(prim.impl(ct, y, xp=onp))
        assert calls == ([(name, onp.dtype(onp.float64))] if runs else []), (i, n)
        want = ct * ((1.0 + y) * (1.0 - y)) if name == "tanh_grad" else ct * (y * (1.0 - y))
        assert out.tobytes() == want.tobytes(), n


def test_a_small_jitted_program_builds_no_eager_kernel(monkeypatch):
    """A jitted MLP's value and gradient on small arrays (its lone tanh gradient
    runs as a call of the primitive's impl) builds no eager_math kernel: a first call with an
    empty cache would wait for it (tens of milliseconds) to save microseconds."""
    calls = _kernel_calls(monkeypatch)
    rng = onp.random.default_rng(0)
    params = (rng.standard_normal((32, 64)) * 0.1, onp.zeros(64), rng.standard_normal((64, 10)) * 0.1)
    x, y = rng.standard_normal((16, 32)), rng.standard_normal((16, 10))

    def loss(p, x, y):
        w1, b1, w2 = p
        h = fnp.tanh(x @ w1 + b1)
        return fnp.mean((h @ w2 - y) ** 2) + fnp.sum(fnp.sin(b1) * 0.0)
    fgrad.jit(fgrad.value_and_grad(loss))(params, x, y)
    assert calls == []


@pytest.mark.parametrize("name", ["sin_grad", "cos_grad"])
def test_trig_gradients_take_one_kernel_pass_from_eager_min(name, monkeypatch):
    """ct cos(x) and ct (-sin(x)) on float64 from EAGER_MIN elements: one kernel, vmath's
    function then the product, the bits of cos's kernel and NumPy's product (remainders of
    the vector width included); below it and in float32, NumPy's functions."""
    from fgrad.ops import elementwise as E
    prim = getattr(E, f"{name}_p")
    calls = _kernel_calls(monkeypatch)
    for n in [eager_math.EAGER_MIN - 1, eager_math.EAGER_MIN, eager_math.EAGER_MIN + 1, eager_math.EAGER_MIN + 7]:
        rng = onp.random.default_rng(n)
        x, ct = rng.uniform(-50, 50, n), rng.standard_normal(n)
        x[:3] = [-0.0, 3e6, 1e-300]
        calls.clear()
        got = onp.asarray(prim.impl(ct, x, xp=onp))
        trig = onp.asarray(fnp.cos(x) if name == "sin_grad" else -onp.asarray(fnp.sin(x)))
        assert got.tobytes() == (ct * trig).tobytes(), n
        assert ((name, onp.dtype(onp.float64)) in calls) == (n >= eager_math.EAGER_MIN), n
    x32 = onp.linspace(-3, 3, 2 * eager_math.EAGER_MIN, dtype=onp.float32)
    calls.clear()
    got = onp.asarray(prim.impl(x32, x32, xp=onp))
    assert calls == [] and got.tobytes() == (x32 * (onp.cos(x32) if name == "sin_grad" else -onp.sin(x32))).tobytes()


def _operands(prim, n: int, dtype) -> tuple:
    """Operands of `prim` (one or two arrays of n elements, by what its own impl accepts)."""
    rng = onp.random.default_rng(n)
    for arity in (1, 2):
        xs = tuple(rng.uniform(-50, 50, n).astype(dtype) for _ in range(arity))
        try:
            prim.raw_impl(*xs, xp=onp)
        except TypeError:
            continue
        return xs
    raise AssertionError(f"{prim.name}: takes neither one nor two operands")


@pytest.mark.parametrize("prim", list(eager_math.INSTALLED), ids=lambda p: p.name)
def test_results_do_not_depend_on_the_calls_before_them(prim, monkeypatch):
    """The class: every primitive `install` gave an eager kernel computes, at each size and
    dtype, the bits it computes on its first call in the process, however many calls came
    before (a count may pick a kernel only where that kernel has the impl's bits), and a
    same-bits primitive's bits are its own impl's at every size."""
    from fgrad.interpreters.compile import native
    native._engine()  # (LLVM loaded: every kernel may run)
    same_bits = eager_math.INSTALLED[prim]
    sizes = sorted({eager_math.EAGER_MIN - 1, eager_math.EAGER_MIN, eager_math.SAME_BITS_MIN - 1,
                    eager_math.SAME_BITS_MIN, 1000, eager_math.SAME_BITS_AT_ONCE - 1, eager_math.SAME_BITS_AT_ONCE})
    for dtype in (onp.float32, onp.float64):
        operands = {n: _operands(prim, n, dtype) for n in sizes}
        monkeypatch.setattr(eager_math, "SMALL_CALLS", {})  # (no calls counted: a fresh process)
        first = {n: onp.asarray(prim.impl(*operands[n], xp=onp)).tobytes() for n in sizes}
        for _ in range(eager_math.SAME_BITS_CALLS + 1):
            for n in sizes:
                assert onp.asarray(prim.impl(*operands[n], xp=onp)).tobytes() == first[n], (dtype, n)
        if same_bits:
            for n in sizes:
                assert onp.asarray(prim.raw_impl(*operands[n], xp=onp)).tobytes() == first[n], (dtype, n)
