"""The autocast state a script reads, against torch 2.13: per device type whether autocast is on
and its dtype, inside and outside autocast regions (nested, disabled, with a dtype), the setters,
the deprecated cpu/gpu spellings with their DeprecationWarning, and the type errors."""
from __future__ import annotations

import warnings

import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def _scenario(lib) -> list:
    """What a script sees of the autocast state through a sequence of regions and setters."""
    log = []

    def state(tag):
        log.append((tag, repr(lib.get_autocast_dtype("cpu")), repr(lib.get_autocast_dtype("cuda")),
                    lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled("cuda"), lib.is_autocast_enabled()))
    state("start")
    with lib.autocast("cpu"):
        state("cpu region")
        with lib.autocast("cpu", enabled=False):
            state("disabled inside")
        with lib.autocast("cpu", dtype=lib.float16):
            state("float16 inside")
        state("after inner")
    state("after")
    lib.set_autocast_dtype("cpu", lib.float16)
    lib.set_autocast_enabled("cpu", True)
    state("set cpu")
    lib.set_autocast_enabled("cpu", False)
    lib.set_autocast_dtype("cpu", lib.bfloat16)
    lib.set_autocast_enabled(True)  # the older form: cuda
    state("set cuda (old form)")
    lib.set_autocast_enabled(False)
    lib.set_autocast_dtype("cuda", lib.bfloat16)
    state("cuda dtype")
    lib.set_autocast_dtype("cuda", lib.float16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.set_autocast_cpu_dtype(lib.float16)
        log.append(("deprecated get", repr(lib.get_autocast_cpu_dtype()), repr(lib.get_autocast_gpu_dtype())))
        lib.set_autocast_cpu_dtype(lib.bfloat16)
        lib.set_autocast_gpu_dtype(lib.bfloat16)
        log.append(("gpu set", repr(lib.get_autocast_dtype("cuda"))))
        lib.set_autocast_gpu_dtype(lib.float16)
        lib.set_autocast_cpu_enabled(True)
        log.append(("cpu enabled", lib.is_autocast_cpu_enabled(), lib.is_autocast_enabled("cpu")))
        lib.set_autocast_cpu_enabled(False)
        log.append(("cpu disabled", lib.is_autocast_cpu_enabled()))
    log.append(("deprecations", sum(issubclass(w.category, DeprecationWarning) for w in caught)))
    state("end")
    return log


def test_state_as_torch():
    assert _scenario(ftorch) == _scenario(torch)


def test_bad_arguments():
    for lib in (ftorch, torch):
        with pytest.raises(TypeError):
            lib.get_autocast_dtype(3)
        with pytest.raises(RuntimeError):
            lib.get_autocast_dtype("foo")
        with pytest.raises(TypeError):
            lib.set_autocast_enabled("cpu", 1)
        with pytest.raises(TypeError):
            lib.set_autocast_dtype("cpu", "float16")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(TypeError):
                lib.set_autocast_cpu_enabled("yes")
            with pytest.raises(TypeError):
                lib.set_autocast_gpu_dtype("x")
        assert repr(lib.get_autocast_dtype("cpu")) == "torch.bfloat16" and not lib.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match="torch.dtype"):
        ftorch.set_autocast_dtype("cpu", "float16")
    with pytest.raises(RuntimeError, match="device type"):
        ftorch.is_autocast_enabled("tpu")
