"""What the GPU tests share: the module-level skip without CuPy or a GPU, and moving test data
between the host and the device.

Every module of tests/gpu starts with `cp = require_gpu()`: without CuPy, or with CuPy but no
usable GPU, the whole module is skipped (one line in pytest's summary says why). With
FGRAD_FAKE_CUPY=1 in the environment the modules run on tests/gpu/fake_cupy.py instead, a
strict CuPy stand-in on host memory: that exercises the tests' and fgrad's device logic on a
machine without a GPU (run tests/gpu alone then: the stand-in replaces sys.modules["cupy"]
for the whole session)."""
from __future__ import annotations

import os
import traceback
from pathlib import PurePath

import numpy as np
import pytest

import fgrad


def require_gpu():
    """The cupy module, or skip the calling test module (call it at module level)."""
    if os.environ.get("FGRAD_FAKE_CUPY") == "1":
        from . import fake_cupy
        return fake_cupy.cupy if fake_cupy.is_installed() else fake_cupy.install()
    try:
        import cupy
    except ImportError:
        pytest.skip("CuPy is not installed: the GPU tests need CuPy and an NVIDIA GPU "
                    "(pip install fgrad[cuda])", allow_module_level=True)
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CuPy present, CUDA driver absent or broken
        pytest.skip(f"CuPy is installed but CUDA reports no usable GPU ({type(e).__name__}: {e})",
                    allow_module_level=True)
    if n == 0:
        pytest.skip("CuPy is installed but CUDA reports 0 GPUs", allow_module_level=True)
    return cupy


def require_torch_cuda():
    """torch, when it is installed and sees a GPU; else skip the calling test."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch does not see a GPU")
    return torch


def is_gpu(x) -> bool:
    """True for a CuPy array, or a Tensor holding one."""
    return type(getattr(x, "_value", x)).__module__.startswith("cupy")


def to_gpu(cp, args) -> tuple:
    """NumPy arrays among `args` copied to the GPU; other arguments as they are."""
    return tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


def host(x) -> np.ndarray:
    """A NumPy copy of an array, a Tensor's value or a number, wherever it lives."""
    v = getattr(x, "_value", x)
    return v.get() if type(v).__module__.startswith("cupy") else np.asarray(v)


def leaves(x) -> list:
    """The arrays of a (nested) tuple/list/dict result, in order."""
    if isinstance(x, (tuple, list)):
        return [y for e in x for y in leaves(e)]
    if isinstance(x, dict):
        return [y for k in sorted(x) for y in leaves(x[k])]
    return [x]


def assert_on_gpu(x, what: str) -> None:
    """Every array leaf of `x` is a CuPy array: a result computed on the GPU must stay there."""
    bad = [type(getattr(v, "_value", v)).__name__ for v in leaves(x)
           if hasattr(getattr(v, "_value", v), "shape") and not is_gpu(v)]
    assert not bad, f"{what}: results left the GPU (got {bad})"


def assert_close(got, want, rtol: float, what: str) -> None:
    """Leaves of `got` (on the GPU) equal those of `want` (from the CPU): shape, dtype, values."""
    g, w = leaves(got), leaves(want)
    assert len(g) == len(w), f"{what}: {len(g)} results on the GPU, {len(w)} on the CPU"
    for a, b in zip(g, w):
        a, b = host(a), host(b)
        assert a.shape == b.shape, f"{what}: shape {a.shape} on the GPU, {b.shape} on the CPU"
        assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} on the GPU, {b.dtype} on the CPU"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


# CuPy's refusals of host data: a NumPy operand in a kernel, an implicit conversion to NumPy
_REFUSALS = ("Unsupported type", "Implicit conversion to a NumPy array")
_LIBRARY_PARTS = {"cupy", "cupyx", "cupy_backends", "site-packages", "dist-packages"}


def _refused_in_case_code(exc: BaseException) -> bool:
    """True when `exc` is CuPy refusing host data and the refused operation is written in the
    case itself (tests/cases/), not in fgrad: the case combines host constants (NumPy arrays,
    fgrad.numpy creations) with its GPU inputs through Python operators, which CuPy refuses
    as it refuses any NumPy operand. fgrad's primitives accept such constants (they move
    them to the GPU), so traced, the same case runs."""
    if not isinstance(exc, TypeError) or not any(r in str(exc) for r in _REFUSALS):
        return False
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        parts = PurePath(frame.filename).parts
        if _LIBRARY_PARTS & set(parts) or parts[-1] in ("fake_cupy.py", "<__array_function__ internals>"):
            continue  # inside CuPy (or its stand-in): look for the caller
        return len(parts) >= 2 and parts[-2] == "cases" and "tests" in parts
    return False


_TRACED: dict = {}  # case name -> whether gpu_callable traces it


def gpu_callable(case, cp):
    """The case's function as the GPU tests call it: itself, or, when the case's own code
    mixes host constants with GPU arrays through operators (see _refused_in_case_code),
    fgrad.jit of it, which traces those operators into primitives that move the constants.
    A refusal inside fgrad is never excused: it propagates."""
    if case.name not in _TRACED:
        try:
            case.fn(*to_gpu(cp, case.make_args()))
            _TRACED[case.name] = False
        except TypeError as e:
            if not _refused_in_case_code(e):
                raise
            _TRACED[case.name] = True
    if not _TRACED[case.name]:
        return case.fn
    if not case.opt["jit"]:
        pytest.fail(f"{case.name}: the case mixes host constants with GPU arrays through Python operators "
                    "and cannot be traced (jit=False); write it with fgrad.numpy functions")
    return fgrad.jit(case.fn)


# Known GPU bugs outside the device layer, found by this suite (on the CuPy stand-in, whose
# refusals are CuPy's own): (case name, test kind or "*") -> why. They run as strict xfails,
# so that the suite stays a signal for new failures and a fix shows up as XPASS (a failure:
# remove the entry then).
KNOWN_ISSUES: dict = {}  # none known today


def case_params(cases, kind: str) -> list:
    """`cases` for pytest.mark.parametrize, the known issues of test kind `kind` as strict xfails,
    the cases marked "gpu": False (host-only by design) as skips."""
    out = []
    for c in cases:
        why = KNOWN_ISSUES.get((c.name, kind)) or KNOWN_ISSUES.get((c.name, "*"))
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        if not c.opt["gpu"]:
            marks = [pytest.mark.skip(reason=f"{c.name}: host-only by design (options['gpu'] is False: "
                                             "it refuses CuPy arrays)")]
        out.append(pytest.param(c, marks=marks, id=c.name))
    return out
