"""Fused kernels over vmath.LARGE elements or more compute vmath's functions on vectors of
llvm_kernels.vmath_lanes() elements (VMATH_INTERLEAVE vectors of the CPU's width), whatever
their number of inputs and outputs: whole blocks loaded and stored as vectors, the last
partial block element by element; and an output written in place of a dying input reads
each element before writing it, so the results are those of a kernel with outputs of its
own."""
from __future__ import annotations

import re

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.interpreters.compile import llvm_kernels
from fgrad.interpreters.compile.vmath import INLINE, LARGE

pytest.importorskip("llvmlite")


def _kernel_ir(jitted, *args) -> str:
    """The LLVM IR of the last kernel of `jitted` at `args`."""
    program = jitted.lower(*args)
    return program.kernels[-1][0].llvm.text


def test_width_follows_the_cpu_features():
    """8 float64 lanes with AVX-512, 4 with AVX, else 2 (the CPU's features, never a timing),
    times the interleave."""
    import llvmlite.binding as llvm
    features = llvm.get_host_cpu_features()
    want = 8 if features.get("avx512f") else 4 if features.get("avx") else 2
    assert llvm_kernels.vector_width() == want
    assert llvm_kernels.vmath_lanes() == want * llvm_kernels.VMATH_INTERLEAVE


@pytest.mark.parametrize("n", [LARGE, INLINE + 5], ids=["outlined", "inlined"])
def test_kernel_with_many_outputs_is_vectorised(n):
    """Sixteen float32 outputs of one input: every output stored as one vector per block."""
    scales = [0.3 + 0.04 * k for k in range(16)]

    def f(x):
        return tuple(np.tanh(x * s) for s in scales)
    x = onp.linspace(-3.0, 3.0, n, dtype=onp.float32)
    ir = _kernel_ir(fgrad.jit(f), x)
    lanes = llvm_kernels.vmath_lanes()
    # (whole blocks: element-aligned vector accesses of the arrays; the partial last block's
    # go through 64-byte aligned stack buffers)
    assert len(re.findall(rf"store <{lanes} x float> .*, align 4\n", ir)) == 16, ir[:2000]
    assert len(re.findall(rf"load <{lanes} x float>, .*, align 4\n", ir)) == 1
    got = fgrad.jit(f)(x)
    for s, g in zip(scales, got):
        onp.testing.assert_allclose(g, onp.tanh(x * onp.float32(s)), rtol=2e-6, atol=1e-7)


def test_vmath_functions_outlined_below_inline_and_inlined_from_it():
    """Below vmath.INLINE each vmath function is one internal function of the module, called;
    from INLINE on its code sits in the loop."""
    f = fgrad.jit(lambda x: np.tanh(np.exp(x * 0.25) * 0.125) + np.tanh(x))
    small = _kernel_ir(f, onp.linspace(-3.0, 3.0, LARGE))
    big = _kernel_ir(f, onp.linspace(-3.0, 3.0, INLINE))
    assert re.search(r'define internal .*"fg_vtanh\.', small) and re.search(r'call .*"fg_vtanh\.', small)
    assert "fg_vtanh" not in big and "fg_vexp" not in big


def test_output_in_place_reads_its_input_before_writing():
    """`a` dies in the second kernel, whose output takes over its buffer: each block of `a` is
    loaded before the block's results are stored, the partial last block too, so the results
    equal NumPy's."""
    def f(x):
        a = np.tanh(x * 0.5) + 1.0
        s = np.sum(x)          # ends the first kernel: `a` is a kernel output, fresh
        return np.tanh(a * s) * a - 1.0
    for n in (LARGE + 3, INLINE + llvm_kernels.vmath_lanes() + 1):
        x = onp.linspace(-2.0, 2.0, n)
        jitted = fgrad.jit(f)
        assert "in place" in jitted.lower(x).as_text()
        a = onp.tanh(x * 0.5) + 1.0
        onp.testing.assert_allclose(jitted(x), onp.tanh(a * onp.sum(x)) * a - 1.0, rtol=1e-13, atol=1e-15)
        onp.testing.assert_allclose(jitted(x), onp.tanh(a * onp.sum(x)) * a - 1.0, rtol=1e-13, atol=1e-15)


def test_partial_last_block_of_bools_and_mixed_widths():
    """A bool input and a bool output, float32 and float64 values, through a vmath kernel
    whose last block is partial (every remainder of a block from 1 to its width - 1, and
    none): each element equals the same kernel's element in a whole block (the values
    repeated at whole-block sizes), and the bools are exact."""
    lanes = llvm_kernels.vmath_lanes()

    def f(x, m, y):
        t = np.tanh(x)
        return np.where(m, t, x) + y.astype(onp.float64), t > 0.25, np.exp(y)
    jitted = fgrad.jit(f)
    for extra in (0, 1, lanes - 1, lanes // 2):
        n = LARGE + extra
        x = onp.linspace(-2.0, 2.0, n)
        m = onp.arange(n) % 3 == 1
        y = onp.linspace(-1.0, 1.0, n).astype(onp.float32)
        assert "fg_v" in jitted.lower(x, m, y).as_text()
        got = jitted(x, m, y)
        # the same elements, each at the front of whole blocks: the fast path's bits
        reps = -(-n // lanes) * lanes
        whole = jitted(onp.resize(x, reps), onp.resize(m, reps), onp.resize(y, reps))
        for g, w in zip(got, whole):
            g, w = onp.asarray(g), onp.asarray(w)[:n]
            assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), (n, g.dtype)
        onp.testing.assert_array_equal(onp.asarray(got[1]), onp.tanh(x) > 0.25)


def test_outlined_function_translated_once_and_again_where_its_type_differs(monkeypatch):
    """An outlined vmath function is declared with _OUTLINED_RESULT as its result type and
    translated once; where the translation's type differs, that declaration leaves the
    module and the function is translated again with its own type (under a new name): one
    definition in the IR, and the same code as with the right type first."""
    f32 = onp.dtype(onp.float32)
    args = ([("array", "x0", f32)], [], ["np.float32(math.tanh(x0))", "t0 * 2.0"],
            [("t1", onp.dtype(onp.float64))], ["np.float32(fg_vtanhf(x0))", "t0 * 2.0"], (), True)
    right = llvm_kernels.build_kernel(*args).text
    monkeypatch.setattr(llvm_kernels, "_OUTLINED_RESULT", f32)
    wrong = llvm_kernels.build_kernel(*args).text
    width = llvm_kernels.vector_width()
    key = f"fg_vtanhf.v{width}.float32"
    assert len(re.findall(r"define internal fastcc", right)) == 1 and f'@"{key}"' in right
    assert len(re.findall(r"define internal fastcc", wrong)) == 1 and f'@"{key}"' not in wrong
    renamed = re.findall(rf'@"({re.escape(key)}[^"]+)"', wrong)
    def parts(text):  # the module's top-level entities, in any order
        return sorted(re.split(r"\n(?=define |declare |@)", text))
    assert renamed and parts(wrong.replace(renamed[0], key)) == parts(right)


def test_partial_block_code_does_not_grow_with_the_lanes(monkeypatch):
    """A vmath kernel's IR (what the code generator works through on the kernel's first
    call) grows with its vmath calls, not with its lanes times its inputs and outputs: the
    partial last block is copied through stack buffers by two loops, not loaded and stored
    lane by lane."""
    f64 = onp.dtype(onp.float64)
    inputs = [("array", f"x{k}", f64) for k in range(4)]
    exprs = ["math.tanh(x0)", "t0 * x1", "x2 + x3", "x3 - x1"]
    vexprs = ["fg_vtanh(x0)"] + exprs[1:]
    outputs = [(f"t{k}", f64) for k in range(4)]

    def kernel_lines(interleave: int) -> int:
        monkeypatch.setattr(llvm_kernels, "VMATH_INTERLEAVE", interleave)
        text = llvm_kernels.build_kernel(inputs, [], exprs, outputs, vexprs, (), True).text
        body = text[text.index("define void"):]
        return body[:body.index("\n}")].count("\n")
    narrow, wide = kernel_lines(1), kernel_lines(4)
    # (the outlined call is split into one call per register: a few lines per extra register)
    assert wide - narrow < 20, (narrow, wide)


def test_arithmetic_kernels_take_the_vector_loop_with_eagers_bits():
    """A kernel of arithmetic alone (no library function) from vmath.LARGE elements loads and
    stores whole vectors like a vmath kernel, and gives eager's bits at every remainder of a
    block: float32 and float64 values, integers, comparisons and selects; below LARGE it keeps
    the C library's loop. Class test over the kinds of arithmetic a kernel writes."""
    lanes = llvm_kernels.vmath_lanes()

    def f(p, g, m, k):
        v = 0.9 * m + g
        q = np.where(v > 0.5, p - 0.01 * v, p * 1.5) / (1.0 + np.abs(g))
        j = k * 3 - (k // 2) + np.maximum(k, 1)
        return q, v, j, (q > p) & (k % 2 == 0), np.sqrt(np.abs(v)) * np.float32(0.5)
    jitted = fgrad.jit(f)
    rng = onp.random.default_rng(0)
    for n in (LARGE - 1, LARGE, LARGE + 1, LARGE + lanes - 1, 4 * LARGE + lanes // 2):
        p, g = rng.standard_normal(n).astype(onp.float32), rng.standard_normal(n).astype(onp.float32)
        m, k = rng.standard_normal(n), rng.integers(-50, 50, n)
        kernels = [spec.llvm.text for spec, _ in jitted.lower(p, g, m, k).kernels]
        vector = [t for t in kernels if re.search(rf"load <{lanes} x (float|double)>", t)]
        assert bool(vector) == (n >= LARGE), n
        got, want = jitted(p, g, m, k), f(p, g, m, k)
        for a, b in zip(got, want):
            a, b = onp.asarray(a), onp.asarray(b)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (n, a.dtype)


def test_kernels_calling_the_c_library_keep_its_loop():
    """arctan (the C library's, one element at a time) in an otherwise arithmetic kernel: the
    C library's loop of LANES elements, not the wide vector loop."""
    x = onp.linspace(-2.0, 2.0, 4 * LARGE)
    jitted = fgrad.jit(lambda x: np.arctan(x * 0.5 + 1.0) * 2.0 - x)
    ir = _kernel_ir(jitted, x)
    assert "@\"atan\"" in ir and not re.search(rf"load <{llvm_kernels.vmath_lanes()} x double>", ir)
    assert jitted(x).tobytes() == (onp.arctan(x * 0.5 + 1.0) * 2.0 - x).tobytes()


_ARITHMETIC_OR_LIBRARY = {  # one operation each, inside otherwise arithmetic kernels
    "sqrt": lambda x, k: np.sqrt(np.abs(x)) + 1.0, "abs": lambda x, k: np.abs(x) * 2.0,
    "isinf": lambda x, k: np.where(np.isinf(x * 1e308), 0.0, x),
    "isfinite": lambda x, k: np.where(np.isfinite(x * 1e308), x, 0.0),
    "floor": lambda x, k: np.floor(x * 3.0), "ceil": lambda x, k: np.ceil(x * 3.0),
    "rint": lambda x, k: np.rint(x * 3.0), "sign": lambda x, k: np.sign(x - 0.1),
    "floordiv_int": lambda x, k: k // (k % 7 - 3), "fmod_int": lambda x, k: np.fmod(k, k % 5 - 2),
    "fmod": lambda x, k: np.fmod(x * 7.0, 1.5), "cbrt": lambda x, k: np.cbrt(x * 2.0),
    "arctan": lambda x, k: np.arctan(x * 2.0), "arcsinh": lambda x, k: np.arcsinh(x * 2.0),
}


@pytest.mark.parametrize("name", sorted(_ARITHMETIC_OR_LIBRARY))
def test_kernels_take_the_wide_loop_exactly_when_they_call_no_library(name):
    """llvm_kernels.vector_calls() decides which lowered calls count as arithmetic; its
    decision must match the IR: a kernel from LARGE elements loads whole vectors exactly when
    its IR declares no function but LLVM's vector intrinsics (a C library call would run
    element by element either way, and the wide loop only pays off without one). Its bits are
    eager's in both loops."""
    op = _ARITHMETIC_OR_LIBRARY[name]
    f = lambda x, k: op(x, k) * 3 - 1  # noqa: E731  (a fused kernel, never NumPy's own call)
    rng = onp.random.default_rng(1)
    x, k = rng.standard_normal(2 * LARGE + 3), rng.integers(-40, 40, 2 * LARGE + 3)
    jitted = fgrad.jit(f)
    ir = _kernel_ir(jitted, x, k)
    declared = re.findall(r'declare .*?@"?([\w.]+)"?\(', ir)
    # (LLVM lowers frem to a call of the C library's fmod)
    library = [d for d in declared if not d.startswith("llvm.")] + ["fmod"] * (" frem " in ir)
    lanes = llvm_kernels.vmath_lanes()
    wide = bool(re.search(rf"load <{lanes} x (double|i64)>", ir))
    assert wide == (not library), (name, declared)
    got, want = onp.asarray(jitted(x, k)), onp.asarray(f(x, k))
    if library:  # the C library's function; NumPy's may be another (SIMD) one
        onp.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    else:
        assert got.tobytes() == want.tobytes(), name
