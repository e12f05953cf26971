"""Kernels' machine code compiled, cached and linked with llvmlite alone (compile/native.py),
and the generated loops' vectorised math and in-place carry (compile/loops.py)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad import lax
from fgrad.interpreters.compile import kernels, loops

_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as onp
    import fgrad, fgrad.numpy as np
    from fgrad.interpreters.compile import STATS
    x = onp.linspace(-3.0, 3.0, 3000)
    f = fgrad.jit(lambda x: np.tanh(np.sin(x) * 1.5 + 0.25) * x - np.exp(np.cos(x)))
    g = fgrad.jit(lambda x, i, b, s: np.where(b, x * s, x) + np.astype(i, onp.float32) * s)
    out = [f(x), f(x[:7]), g(x.astype(onp.float32), onp.arange(3000) % 7, x > 0.5, onp.float32(1.5))]
    print(json.dumps([o.tolist() for o in out]))
    print(STATS["kernels_built"], STATS["disk_cache_hits"], "numba" in sys.modules)
""")


def _run(cache) -> list[str]:
    env = {**os.environ, "FGRAD_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True,
                          check=True).stdout.splitlines()


def test_cached_kernels_load_as_native_code_without_importing_numba(tmp_path):
    first, second = _run(tmp_path), _run(tmp_path)
    built = int(first[1].split()[0])
    assert built >= 3 and first[1].split()[1:] == ["0", "False"]  # compiled by llvmlite, no Numba
    assert second[1].split() == [str(built), str(built), "False"]  # all loaded
    assert second[0] == first[0]  # the same machine code: the same values, bit for bit
    values = json.loads(first[0])
    x = onp.linspace(-3.0, 3.0, 3000)
    onp.testing.assert_allclose(values[0], onp.tanh(onp.sin(x) * 1.5 + 0.25) * x - onp.exp(onp.cos(x)),
                                rtol=1e-13, atol=1e-14)
    folder = tmp_path / "kernels"
    assert len(list(folder.glob("k_*.o"))) == len(list(folder.glob("k_*.json"))) == built
    assert not list(folder.glob("*.py"))  # no Numba source: kernels are LLVM IR
    # the C library functions the code calls are checked before linking, those LLVM's code
    # generator introduced included (sin and cos as sincos; the IR lists only llvm.sin)
    externals = set().union(*(json.loads(m.read_text())["externals"] for m in folder.glob("k_*.json")))
    assert "tanh" in externals and externals & {"sin", "sincos"}


def test_native_code_built_for_another_cpu_is_not_loaded(tmp_path):
    first = _run(tmp_path)
    for meta in (tmp_path / "kernels").glob("k_*.json"):
        data = json.loads(meta.read_text())
        data["build"]["cpu"] = "another-cpu"
        meta.write_text(json.dumps(data))
    second = _run(tmp_path)
    assert second[0] == first[0]
    built, hits, numba = second[1].split()
    assert hits == "0" and numba == "False"  # compiled again by llvmlite
    for meta in (tmp_path / "kernels").glob("k_*.json"):  # and rewritten for this CPU
        assert json.loads(meta.read_text())["build"]["cpu"] != "another-cpu"


_LOOPS = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as onp
    import fgrad, fgrad.numpy as np
    from fgrad import lax
    from fgrad.interpreters.compile import loops
    loops.JIT_MIN_WORK = 0  # compiled on jit's first call
    rng = onp.random.default_rng(3)
    W = rng.normal(size=(16, 16)) * 0.3
    c0, xs = rng.normal(size=16), rng.normal(size=(300, 16))

    def rnn(c, x):  # dot products, vmath's tanh
        h = np.tanh(W @ c + x)
        return h, np.dot(h, c)

    def f32(c, x):  # float32, the C library's sine
        c = c * np.float32(0.9) + np.exp(np.sin(x)) * np.float32(0.1)
        return c, np.sum(c * c)

    def ints(c, x):  # integer carries, a 0-d float carry
        i, s = c
        return (i + 3, s + np.astype(i % 7, onp.float64) * np.log1p(np.abs(x[0]))), i * 2
    cases = [
        lambda c0, xs: lax.scan(rnn, c0, xs),
        lambda c0, xs: lax.scan(f32, c0.astype(onp.float32), xs.astype(onp.float32)),
        lambda c0, xs: lax.scan(ints, (onp.int64(1), 0.0), xs),
        lambda c0, xs: lax.scan(lambda c, x: (c * 0.5 + x, W.T @ c), c0, xs, reverse=True, unroll=3),
        lambda c0, xs: lax.while_loop(lambda c: c[0] < 500, lambda c: (
            c[0] + 1, np.cos(c[1]) * 1.01 + W @ c[1] * 0.01, c[2] * 0.5 + 1), (0, c0, onp.float32(2.0))),
        lambda c0, xs: lax.fori_loop(0, 400, lambda i, c: c * 0.99 + np.sqrt(np.abs(c)) * np.astype(
            i, onp.float64) * 1e-3 + np.tanh(np.outer(c, c)).sum(0) * 1e-4, c0),
        lambda c0, xs: lax.fori_loop(0, 300, lambda i, c: (
            c[0] + i, c[1] ^ (c[0] & 255), c[2] * np.float32(1.001)), (onp.int32(0), onp.int64(7), onp.float32(1.0))),
        # max and min reductions (NaN wins), comparisons, selects, a bool carry
        lambda c0, xs: lax.scan(lambda c, x: ((np.where(x > c[0], x, c[0] * 0.5), np.max(x) > 1.0,
                                               c[2] + np.min(x.reshape(4, 4), axis=1).astype(onp.float32)),
                                              np.max(x.reshape(4, 4), axis=0)),
                                (c0, False, c0[:4].astype(onp.float32)), xs),
        # vmath's log, exp, tanh and logistic function, float64 and float32
        lambda c0, xs: lax.scan(lambda c, x: ((np.log(np.abs(c[0] * x) + 1.0) + 1.0 / (1.0 + np.exp(-x)),
                                               np.tanh(c[1] + x[:4].astype(onp.float32))), np.exp(c[0] * 0.1)),
                                (c0, c0[:4].astype(onp.float32)), xs),
        lambda c0, xs: lax.while_loop(lambda s: np.max(np.abs(s[0] * s[0] - 2.0 - c0 * c0)) > 1e-12,
                                      lambda s: (0.5 * (s[0] + (2.0 + c0 * c0) / s[0]), s[1] + 1), (c0 * c0 + 3.0, 0)),
    ]
    digests = []
    for case in cases:
        out = fgrad.jit(case)(c0, xs)
        leaves = out if isinstance(out, (tuple, list)) else [out]
        flat = [onp.asarray(v) for leaf in leaves for v in (leaf if isinstance(leaf, (tuple, list)) else [leaf])]
        digests.append([(a.dtype.str, a.shape, hashlib.sha256(a.tobytes()).hexdigest()) for a in flat])
    print(json.dumps(digests))
    print(loops.STATS["compiled_runs"], "numba" in sys.modules)
""")


def _loops_run(cache, backend: str) -> list[str]:
    env = {**os.environ, "FGRAD_CACHE_DIR": str(cache), "FGRAD_LOOPS": backend}
    return subprocess.run([sys.executable, "-c", _LOOPS], env=env, capture_output=True, text=True,
                          check=True).stdout.splitlines()[-2:]


@pytest.mark.slow
def test_kept_loops_run_without_numba_bit_for_bit(tmp_path):
    """A compiled loop's object code, kept by the process that had Numba compile it, is
    linked by a later process without importing Numba: the same machine code, so the same
    bits (scans, while and fori loops; dot products, vmath's and the C library's functions,
    integer carries, float32 and float64)."""
    first, second = _loops_run(tmp_path, "numba"), _loops_run(tmp_path, "numba")
    runs = int(first[1].split()[0])
    assert runs >= 9 and first[1].split()[1] == "True"  # compiled by Numba
    assert second[1].split() == [str(runs), "False"]  # the same loops compiled, Numba not imported
    assert second[0] == first[0]
    folder = tmp_path / "kernels"
    kept = list(folder.glob("l_*.o"))
    assert len(kept) == runs
    for obj in kept:  # the C library only: no Numba runtime, no Python
        externals = json.loads(obj.with_suffix(".json").read_text())["externals"]
        assert not [s for s in externals if s.startswith(("NRT_", "numba_", "Py", "_Py"))], externals


@pytest.mark.slow
def test_loops_from_llvm_ir_equal_numbas_bit_for_bit(tmp_path):
    """The same loops (scans with sums, max and min, while and fori loops, dot products,
    vmath's and the C library's functions, integer and bool carries, float32 and float64)
    compiled from llvm_loops' IR by llvmlite, in a process that never imports Numba, compute
    the bytes Numba's compilation of their source computes; a later process links the kept
    object code."""
    numba = _loops_run(tmp_path / "numba", "numba")
    first, second = _loops_run(tmp_path / "llvm", "auto"), _loops_run(tmp_path / "llvm", "auto")
    runs = int(numba[1].split()[0])
    assert first[1].split() == second[1].split() == [str(runs), "False"]  # Numba never imported
    assert first[0] == second[0] == numba[0]
    folder = tmp_path / "llvm" / "kernels"
    assert len(list(folder.glob("m_*.o"))) == runs and not list(folder.glob("*.py"))  # no Numba source


def _retyped_loop(second: str):
    """A loop function (loops._function) whose local `s` takes an int64 and then `second`."""
    f64 = onp.dtype(onp.float64)
    return loops._function([("car0", f64, (4,))], [], [
        "s = 0", "for _e in range(4):", f"    s = {second}", "    car0[_e] = s"], {})


def test_a_loop_llvm_loops_does_not_translate_is_compiled_by_numba(monkeypatch):
    """A local assigned an int64 and then a float64 (Numba unifies the two types: llvm_loops
    gives each name one type) is not translated: Numba compiles that loop, with Python's
    values; the same loop with one type is translated."""
    monkeypatch.setattr(kernels, "_LOADED", {})
    car = onp.arange(4.0)
    spec = _retyped_loop("s + car0[_e] * 0.5")
    assert kernels._load_llvm_loop(spec) is None
    kernels.load_kernel(spec)(car)
    assert car.tolist() == [0.0, 0.5, 1.5, 3.0]
    same = _retyped_loop("s + 1")
    assert kernels._load_llvm_loop(same) is not None


def test_an_unknown_loop_backend_is_an_error(monkeypatch):
    from fgrad.interpreters.compile import llvm_loops
    monkeypatch.setattr(llvm_loops, "BACKEND", "llvm")
    with pytest.raises(ValueError, match="FGRAD_LOOPS"):
        kernels._load_llvm_loop(_retyped_loop("s + 1"))


def test_numba_available_does_not_import_numba():
    script = ("import sys; from fgrad.interpreters.compile import kernels; "
              "print(kernels.numba_available(), 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]


def test_array_layout_is_the_one_kernels_read():
    assert kernels._array_layout_ok()


# --- loops -----------------------------------------------------------------------------------

def _loop_source(f, *args) -> str:
    eqn = next(e for e in fgrad.make_jaxpr(f)(*args).eqns if e.primitive.name in ("scan", "while"))
    p = eqn.params
    if eqn.primitive.name == "scan":
        loop = loops.scan_loop(p["jaxpr"], p["num_consts"], p["num_carry"], p["length"], p["reverse"], p["unroll"])
    else:
        loop = loops.while_loop(p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"], p["body_nconsts"])
    assert loop is not None
    return loop.as_text()


def _scan_py(step, init, xs):
    carry, ys = init, []
    for x in xs:
        carry, y = step(carry, x)
        ys.append(y)
    return carry, onp.stack(ys)


RNG = onp.random.default_rng(7)
XS = RNG.normal(size=(30, 64))
C0 = RNG.normal(size=64)


# a copy into a carry (an element-wise region writing the carry in place writes a local)
_COPY_INTO_CARRY = re.compile(r"\bcar\d+\[_e\] = \w+\[_e\]")


@pytest.mark.parametrize("case", ["carry only", "old carry stacked", "carries swapped", "old carry read later"])
def test_loop_carry_in_place_keeps_the_values(case):
    """A carry written in place by the region that computes it, and the cases where it must
    not be (its old value read after that region): compiled loops equal the Python loop."""
    def body(np_, carry, x):
        a, b = carry
        if case == "carry only":
            return (a * 0.5 + x, b + a), x.sum()
        if case == "old carry stacked":
            return (a * 0.5 + x, b + 1.0), a
        if case == "carries swapped":
            return (b, a + b * 0.5 + x), b - a
        return (a * 0.5 + x, b + 1.0), np_.tanh(a) * 2.0  # a's old value, read after its update

    def f(c, xs):
        return lax.scan(lambda carry, x: body(np, carry, x), (c, c * 2.0), xs)

    (a, b), ys = fgrad.jit(f)(C0, XS)
    (ra, rb), rys = _scan_py(lambda carry, x: body(onp, carry, x), (C0, C0 * 2.0), XS)
    for got, want in ((a, ra), (b, rb), (ys, rys)):
        onp.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    src = _loop_source(f, C0, XS)
    if case == "carry only":
        assert not _COPY_INTO_CARRY.search(src), src


def test_while_loop_carry_in_place():
    def f(x):
        return lax.while_loop(lambda c: c[1] < 50.0, lambda c: (c[0] * 0.9 + 0.1, c[1] + 1.0), (x, 0.0))
    got, n = fgrad.jit(f)(C0)
    want = C0.copy()
    for _ in range(50):
        want = want * 0.9 + 0.1
    onp.testing.assert_allclose(got, want, rtol=1e-13)
    assert float(n) == 50.0
    assert not _COPY_INTO_CARRY.search(_loop_source(f, C0))


def test_loop_regions_compute_with_vmath():
    """exp, log, tanh and the logistic function in a loop's regions are vmath's (within the
    documented ulps: the values agree with NumPy's to 1e-13 relative); sine and cosine, whose
    arguments a loop does not check, stay the C library's."""
    def step(np_, c, x):
        logistic = 1.0 / (1.0 + np_.exp(-c))
        new = np_.tanh(c * 0.5 + x) + np_.log(np_.abs(x) + 1.0) * 0.1 + logistic * 0.01 + np_.sin(c) * 0.01
        return new, np_.exp(new * 0.5)

    def f(c, xs):
        return lax.scan(lambda c, x: step(np, c, x), c, xs)

    src = _loop_source(f, C0, XS)
    assert "fg_vtanh(" in src and "fg_vexp(" in src and "fg_vlog(" in src
    assert "math.sin(" in src and "fg_vsin" not in src
    c, ys = fgrad.jit(f)(C0, XS)
    rc, rys = _scan_py(lambda c, x: step(onp, c, x), C0, XS)
    onp.testing.assert_allclose(c, rc, rtol=1e-13, atol=1e-14)
    onp.testing.assert_allclose(ys, rys, rtol=1e-13, atol=1e-14)


@pytest.mark.slow  # (Numba compiles a 150-array signature: ~10 s)
@pytest.mark.parametrize("backend", ["numba", "auto"])
def test_a_loop_with_more_buffers_than_a_ctypes_call_takes_runs(monkeypatch, backend):
    """A scan body with ~150 outputs passes more array fields than ctypes calls a C function
    with (1024) by Numba's calling convention: Numba's loop is called through its dispatcher
    instead, with eager's values; a small loop keeps the C call. llvm_loops' loop takes one
    argument per array: both are its C calls."""
    from fgrad.interpreters.compile import llvm_loops, loops
    monkeypatch.setattr(loops, "JIT_MIN_WORK", 0)
    monkeypatch.setattr(llvm_loops, "BACKEND", backend)
    monkeypatch.setattr(kernels, "_LOADED", {})
    built = []
    scan_loop = loops.scan_loop
    monkeypatch.setattr(loops, "scan_loop", lambda *a: built.append(scan_loop(*a)) or built[-1])

    def f(xs, n):
        def body(c, x):
            return c + 1.0, tuple(x * float(k) for k in range(n))
        return fgrad.lax.scan(body, 0.0, xs)
    xs = onp.linspace(0.0, 1.0, 12).reshape(3, 4)
    for n, bare in [(3, True), (150, False)]:
        built.clear()
        got = fgrad.jit(lambda xs: f(xs, n))(xs)
        assert built and built[0] is not None and built[0].spec.bare is bare
        assert (type(built[0].function()).__module__ == "ctypes") is (backend == "auto")  # (llvm_loops')
        want = f(xs, n)
        for g, w in zip(fgrad.tree_util.tree_leaves(got), fgrad.tree_util.tree_leaves(want)):
            assert onp.asarray(g).tobytes() == onp.asarray(w).tobytes()


def _wide_loop(arrays: int):
    """A loop function over `arrays` one-element float64 arrays that adds 1 to each."""
    f64 = onp.dtype(onp.float64)
    return loops._function([(f"car{k}", f64, (1,)) for k in range(arrays)], [],
                           [f"car{k}[0] = car{k}[0] + 1.0" for k in range(arrays)], {})


def test_llvm_loops_takes_a_loop_only_while_its_arrays_fit_a_call(monkeypatch):
    """llvm_loops' loop takes one C argument per array, and ctypes passes at most
    native.MAX_CALL_ARGS: a loop over that many arrays is translated and runs; one more goes
    to Numba (whose dispatcher calls it through Python) instead of failing in ctypes."""
    from fgrad.interpreters.compile import native
    monkeypatch.setattr(kernels, "_LOADED", {})
    fits = _wide_loop(native.MAX_CALL_ARGS)
    arrays = [onp.full(1, float(k)) for k in range(native.MAX_CALL_ARGS)]
    kernels._load_llvm_loop(fits)(*arrays)
    assert [a[0] for a in arrays] == [k + 1.0 for k in range(native.MAX_CALL_ARGS)]
    assert kernels._load_llvm_loop(_wide_loop(native.MAX_CALL_ARGS + 1)) is None
