"""The kernel cache on disk (compile/native.py, compile/kernels.py) verifies what it loads: a
damaged, truncated, foreign or missing entry is rebuilt, never linked or imported, and
processes that compile the same kernels at once into one cache all get the right answer.

Each case damages one artefact of a cache that an earlier process filled, then runs a fresh
process on it (a damaged object file linked by the old cache crashed the process)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as onp
import pytest

pytest.importorskip("llvmlite")

# LLVM_ONLY: one kernel that llvm_kernels translates (no Numba in the process). NUMBA: a kernel
# with vmath's tanh, exp, sin (llvm_kernels' too), and a loop (compile/loops.py) that Numba
# compiles, with vmath's tanh (from vmath's generated module, which Numba compiles too).
_LLVM_ONLY = """
x = onp.linspace(-3.0, 3.0, 500)
out = [fgrad.jit(lambda x: (x * 1.5 + 0.25) * x - x / 3.0)(x)]
"""
_NUMBA = """
from fgrad.interpreters.compile import loops
loops.JIT_MIN_WORK = 0  # the loop compiled on jit's first call
x = onp.linspace(-3.0, 3.0, 3000)
out = [fgrad.jit(lambda x: np.tanh(np.sin(x) * 1.5 + 0.25) * x - np.exp(np.cos(x)))(x),
       fgrad.jit(lambda x: lax.fori_loop(0, 5, lambda i, c: c * 0.5 + np.tanh(c) * 0.25, x))(x[:40])]
"""
# LOOP: a loop that llvm_loops translates, compiled by llvmlite (no Numba in the process)
_LOOP = """
from fgrad.interpreters.compile import loops
loops.JIT_MIN_WORK = 0  # the loop compiled on jit's first call
x = onp.linspace(-3.0, 3.0, 40)
out = [fgrad.jit(lambda x: lax.fori_loop(0, 5, lambda i, c: c * 0.5 + np.tanh(c) * 0.25, x))(x)]
"""
_PRELUDE = """
import json, sys, warnings
import numpy as onp
import fgrad, fgrad.numpy as np
from fgrad import lax
from fgrad.interpreters.compile import STATS
warnings.simplefilter("ignore")
"""
_EPILOGUE = """
print(json.dumps([o.tolist() for o in out]))
print(json.dumps({**STATS, "numba": "numba" in sys.modules}))
"""


def _run(cache: Path, body: str) -> tuple[list, dict]:
    """The outputs and compile counters of `body` run by a fresh process on cache `cache`
    (which must exit 0: a crash is the failure this file guards against)."""
    env = {**os.environ, "FGRAD_CACHE_DIR": str(cache), "FGRAD_KERNELS": "auto",
           "FGRAD_LOOPS": "numba" if body is _NUMBA else "auto"}  # (_NUMBA's loop: Numba's)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_PRELUDE + body + _EPILOGUE)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    out, stats = proc.stdout.splitlines()[-2:]
    return json.loads(out), json.loads(stats)


def _expected(body: str) -> list:
    x = onp.linspace(-3.0, 3.0, 500 if body is _LLVM_ONLY else 3000)
    if body is _LLVM_ONLY:
        return [(x * 1.5 + 0.25) * x - x / 3.0]
    c = onp.linspace(-3.0, 3.0, 40) if body is _LOOP else x[:40]
    for _ in range(5):
        c = c * 0.5 + onp.tanh(c) * 0.25
    if body is _LOOP:
        return [c]
    return [onp.tanh(onp.sin(x) * 1.5 + 0.25) * x - onp.exp(onp.cos(x)), c]


def _check(got: list, body: str) -> None:
    for g, w in zip(got, _expected(body), strict=True):
        onp.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


@pytest.fixture(scope="module")
def filled_llvm(tmp_path_factory) -> Path:
    """A cache filled by one process running _LLVM_ONLY."""
    return _fill(tmp_path_factory, _LLVM_ONLY)


@pytest.fixture(scope="module")
def filled_numba(tmp_path_factory) -> Path:
    """A cache filled by one process running _NUMBA."""
    if not _numba_wanted():
        pytest.skip("Numba is not installed")
    return _fill(tmp_path_factory, _NUMBA)


@pytest.fixture(scope="module")
def filled_loop(tmp_path_factory) -> Path:
    """A cache filled by one process running _LOOP."""
    return _fill(tmp_path_factory, _LOOP)


def _fill(tmp_path_factory, body: str) -> Path:
    cache = tmp_path_factory.mktemp("filled")
    got, _ = _run(cache, body)
    _check(got, body)
    return cache


def _numba_wanted() -> bool:
    import importlib.util
    return importlib.util.find_spec("numba") is not None


def _copy(filled: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(filled, cache)
    return cache


def _damage(path: Path, how: str, other: Path | None = None) -> None:
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 3])
    elif how == "flip":  # bytes flipped in the middle (where the code or its data is)
        mid = len(data) // 2
        path.write_bytes(data[:mid] + bytes(b ^ 0x5A for b in data[mid:mid + 16]) + data[mid + 16:])
    elif how == "garbage":
        path.write_bytes(os.urandom(max(len(data), 64)))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "foreign":
        assert other is not None
        shutil.copyfile(other, path)
    else:
        raise AssertionError(how)


def _one(cache: Path, pattern: str) -> Path:
    found = sorted(cache.glob(pattern))
    assert found, f"no {pattern} in {cache}"
    return found[0]


def _foreign_meta(meta_path: Path, change) -> None:
    """Rewrite kernel metadata as another build of the library would have written it: its
    checksums valid, its build key changed by `change`."""
    meta = json.loads(meta_path.read_text())
    change(meta["build"])
    body = {k: v for k, v in meta.items() if k != "check"}
    meta["check"] = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    meta_path.write_text(json.dumps(meta))


# --- object code and metadata (native.py) ---------------------------------------------------

@pytest.mark.parametrize("how", ["truncate", pytest.param("flip", marks=pytest.mark.slow),
                                 pytest.param("garbage", marks=pytest.mark.slow),
                                 pytest.param("empty", marks=pytest.mark.slow)])
def test_damaged_object_code_is_rebuilt_not_linked(filled_llvm, tmp_path, how):
    cache = _copy(filled_llvm, tmp_path)
    obj = _one(cache, "kernels/k_*.o")
    _damage(obj, how)
    got, stats = _run(cache, _LLVM_ONLY)
    _check(got, _LLVM_ONLY)
    assert stats["llvm_compiled"] == 1 and not stats["numba"]  # rebuilt by llvmlite
    # and written back whole: the next process links it from the cache
    got, stats = _run(cache, _LLVM_ONLY)
    _check(got, _LLVM_ONLY)
    assert stats["llvm_compiled"] == 0 and stats["disk_cache_hits"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("how", ["truncate", "flip", "garbage"])
def test_damaged_metadata_is_rebuilt(filled_llvm, tmp_path, how):
    cache = _copy(filled_llvm, tmp_path)
    _damage(_one(cache, "kernels/k_*.json"), how)
    got, stats = _run(cache, _LLVM_ONLY)
    _check(got, _LLVM_ONLY)
    assert stats["llvm_compiled"] == 1


def test_object_code_its_metadata_does_not_describe_is_rebuilt(filled_llvm, tmp_path):
    # object code and metadata, each whole, but not of one write (as two processes writing
    # different code at once could leave them): one word of the code changed
    cache = _copy(filled_llvm, tmp_path)
    obj = _one(cache, "kernels/k_*.o")
    data = obj.read_bytes()
    obj.write_bytes(data.replace(b"\x00\x00\x00\x00", b"\x00\x00\x01\x00", 1))
    got, stats = _run(cache, _LLVM_ONLY)
    _check(got, _LLVM_ONLY)
    assert stats["llvm_compiled"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("change", [
    lambda b: b.update(format=b["format"] - 1),   # another version of fgrad's cache
    lambda b: b.update(features="-avx,-sse2"),    # another machine's CPU
    lambda b: b.update(python="2.7.18"),          # another Python
    lambda b: b.clear(),                          # an older cache's metadata
], ids=["format", "cpu", "python", "none"])
def test_object_code_of_another_build_is_rebuilt(filled_llvm, tmp_path, change):
    cache = _copy(filled_llvm, tmp_path)
    _foreign_meta(_one(cache, "kernels/k_*.json"), change)
    got, stats = _run(cache, _LLVM_ONLY)
    _check(got, _LLVM_ONLY)
    assert stats["llvm_compiled"] == 1
    assert _run(cache, _LLVM_ONLY)[1]["disk_cache_hits"] == 1  # rewritten for this build


@pytest.mark.slow
def test_metadata_without_checksums_is_rebuilt(filled_llvm, tmp_path):
    cache = _copy(filled_llvm, tmp_path)
    meta_path = _one(cache, "kernels/k_*.json")
    meta = json.loads(meta_path.read_text())
    for k in ("check", "sha256", "size"):
        del meta[k]
    meta_path.write_text(json.dumps(meta))  # as the cache wrote it before it kept checksums
    got, stats = _run(cache, _LLVM_ONLY)
    _check(got, _LLVM_ONLY)
    assert stats["llvm_compiled"] == 1


# --- Numba's side (loops): sources, Numba's cache; object code of vmath kernels -------------

@pytest.mark.slow
@pytest.mark.parametrize("how", ["garbage", "truncate", "flip"])
def test_damaged_kernel_source_is_rewritten(filled_numba, tmp_path, how):
    cache = _copy(filled_numba, tmp_path)
    for f in cache.glob("kernels/l_*.[oj]*"):  # (so that the loop's source is what runs)
        f.unlink()
    for source in cache.glob("kernels/*.py"):  # the loop, vmath's module
        _damage(source, how)
    got, _ = _run(cache, _NUMBA)
    _check(got, _NUMBA)


@pytest.mark.slow
def test_kernel_source_of_another_version_is_rewritten(filled_numba, tmp_path):
    # valid Python that computes something else: loaded, it would give a wrong answer
    cache = _copy(filled_numba, tmp_path)
    for source in cache.glob("kernels/[kl]_*.py"):
        source.write_text(source.read_text().replace("0.25", "0.5"))
    for f in cache.glob("kernels/[kl]_*.[oj]*"):  # (so that the source is what runs)
        f.unlink()
    got, _ = _run(cache, _NUMBA)
    _check(got, _NUMBA)


@pytest.mark.slow
@pytest.mark.parametrize("suffix", ["nbc", "nbi"])
@pytest.mark.parametrize("how", ["truncate", "flip", "garbage", "foreign"])
def test_damaged_numba_cache_is_recompiled(filled_numba, tmp_path, suffix, how):
    cache = _copy(filled_numba, tmp_path)
    for f in cache.glob("kernels/[kl]_*.[oj]*"):  # so that Numba's cache is what loads
        f.unlink()
    files = sorted(cache.glob(f"kernels/__pycache__/[kl]_*.{suffix}"))
    assert files
    other = _one(cache, f"kernels/__pycache__/fgrad_vmath_*.{suffix}")
    for f in files:
        _damage(f, how, other)
    got, _ = _run(cache, _NUMBA)
    _check(got, _NUMBA)


def test_kept_loop_links_without_numba(filled_numba, tmp_path):
    got, stats = _run(_copy(filled_numba, tmp_path), _NUMBA)
    _check(got, _NUMBA)
    assert not stats["numba"] and stats["disk_cache_hits"] == stats["kernels_built"]


# how a loop's kept object code is damaged: the code, its metadata, or another CPU's build
_LOOP_DAMAGE = ["truncate", *(pytest.param(how, marks=pytest.mark.slow)
                              for how in ("flip", "garbage", "empty", "metadata", "cpu"))]


def _damage_loop(cache: Path, prefix: str, how: str) -> None:
    """Damage the kept object code of loop `<prefix>_*` in `cache` as `how` says."""
    if how == "metadata":
        _damage(_one(cache, f"kernels/{prefix}_*.json"), "truncate")
    elif how == "cpu":
        _foreign_meta(_one(cache, f"kernels/{prefix}_*.json"), lambda b: b.update(cpu="another-cpu"))
    else:
        _damage(_one(cache, f"kernels/{prefix}_*.o"), how)


@pytest.mark.parametrize("how", _LOOP_DAMAGE)
def test_damaged_loop_object_code_is_rebuilt_not_linked(filled_numba, tmp_path, how):
    """A loop's object code (Numba's, kept by native.py) that is damaged, or whose metadata is,
    or that another CPU's build wrote: compiled again by Numba (not loaded from Numba's cache,
    which keeps no object code) and written whole, so the next process links it."""
    cache = _copy(filled_numba, tmp_path)
    _damage_loop(cache, "l", how)
    got, stats = _run(cache, _NUMBA)
    _check(got, _NUMBA)
    assert stats["numba"]
    got, stats = _run(cache, _NUMBA)
    _check(got, _NUMBA)
    assert not stats["numba"] and stats["disk_cache_hits"] == stats["kernels_built"]


@pytest.mark.parametrize("how", _LOOP_DAMAGE)
def test_damaged_object_code_of_an_llvm_loop_is_rebuilt_not_linked(filled_loop, tmp_path, how):
    """A loop's object code compiled from llvm_loops' IR that is damaged, or whose metadata
    is, or that another CPU's build wrote: compiled again by llvmlite (Numba is not imported)
    and written whole, so the next process links it."""
    cache = _copy(filled_loop, tmp_path)
    got, stats = _run(cache, _LOOP)  # (whole: linked)
    _check(got, _LOOP)
    assert not stats["numba"] and stats["llvm_compiled"] == 0
    _damage_loop(cache, "m", how)
    got, stats = _run(cache, _LOOP)
    _check(got, _LOOP)
    assert not stats["numba"] and stats["llvm_compiled"] == 1
    got, stats = _run(cache, _LOOP)
    _check(got, _LOOP)
    assert not stats["numba"] and stats["llvm_compiled"] == 0 and stats["disk_cache_hits"] == stats["kernels_built"]


@pytest.mark.slow
def test_damaged_object_code_of_a_vmath_kernel_is_rebuilt_and_saved(filled_numba, tmp_path):
    cache = _copy(filled_numba, tmp_path)
    for obj in cache.glob("kernels/k_*.o"):
        _damage(obj, "truncate")
    got, stats = _run(cache, _NUMBA)
    _check(got, _NUMBA)
    assert stats["llvm_compiled"] >= 1
    # llvmlite compiled it anew, so the object code is whole again and the next process
    # links it
    got, stats = _run(cache, _NUMBA)
    _check(got, _NUMBA)
    assert stats["llvm_compiled"] == 0
    assert len(list(cache.glob("kernels/k_*.o"))) >= 1
    for obj in cache.glob("kernels/k_*.o"):
        meta = json.loads(obj.with_suffix(".json").read_text())
        assert hashlib.sha256(obj.read_bytes()).hexdigest() == meta["sha256"]


@pytest.mark.slow
def test_processes_compiling_the_same_kernels_at_once_agree(tmp_path):
    if not _numba_wanted():
        pytest.skip("Numba is not installed")
    cache = tmp_path / "cache"
    env = {**os.environ, "FGRAD_CACHE_DIR": str(cache), "FGRAD_KERNELS": "auto", "FGRAD_LOOPS": "numba"}
    script = textwrap.dedent(_PRELUDE + _NUMBA + _LLVM_ONLY.replace("out = [", "out += [") + _EPILOGUE)
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err[-2000:]
    outs = [json.loads(out.splitlines()[-2]) for out, _ in results]
    for got in outs:
        _check(got[:2], _NUMBA)
        _check(got[2:], _LLVM_ONLY)
    assert not list(cache.rglob("*.tmp"))  # no temporary file left behind
    # what they left is whole: a fifth process loads it all
    _, stats = _run(cache, _NUMBA)
    assert stats["disk_cache_hits"] >= 1


@pytest.mark.slow
def test_metadata_of_the_older_format_is_rebuilt_without_a_warning(filled_llvm, tmp_path):
    cache = _copy(filled_llvm, tmp_path)
    meta_path = _one(cache, "kernels/k_*.json")
    meta = json.loads(meta_path.read_text())
    for k in ("check", "sha256", "size"):
        del meta[k]
    del meta["build"]["format"]
    meta_path.write_text(json.dumps(meta))  # as the cache wrote it before it kept checksums
    env = {**os.environ, "FGRAD_CACHE_DIR": str(cache), "FGRAD_KERNELS": "auto"}
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c",
                           textwrap.dedent(_PRELUDE.replace('warnings.simplefilter("ignore")', "")
                                           + _LLVM_ONLY + _EPILOGUE)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    _check(json.loads(proc.stdout.splitlines()[-2]), _LLVM_ONLY)
    assert json.loads(proc.stdout.splitlines()[-1])["llvm_compiled"] == 1
    assert "check" in json.loads(meta_path.read_text())  # rewritten in this format
