"""torch.backends.cudnn.flags: the switches take the given values inside the block and their old
ones after it (an error included), as torch 2.13's; fgrad has no cuDNN, so they change nothing else."""
from __future__ import annotations

import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")
NAMES = ("enabled", "benchmark", "deterministic", "allow_tf32")


@pytest.mark.parametrize("lib", [ftorch, torch], ids=["fgrad", "torch"])
def test_flags_set_and_restore(lib):
    cudnn = lib.backends.cudnn
    before = {n: getattr(cudnn, n) for n in NAMES}
    with cudnn.flags(enabled=True, deterministic=True, allow_tf32=False):
        inside = {n: getattr(cudnn, n) for n in NAMES}
    assert inside == {"enabled": True, "benchmark": False, "deterministic": True, "allow_tf32": False}
    assert {n: getattr(cudnn, n) for n in NAMES} == before
    with pytest.raises(ValueError):
        with cudnn.flags(benchmark=True):
            assert cudnn.benchmark
            raise ValueError("inside")
    assert {n: getattr(cudnn, n) for n in NAMES} == before


def test_same_defaults_as_torch():
    for lib_value, torch_value in ((getattr(ftorch.backends.cudnn, n), getattr(torch.backends.cudnn, n))
                                   for n in NAMES):
        assert lib_value == torch_value
