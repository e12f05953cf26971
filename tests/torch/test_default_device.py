"""torch.set_default_device / get_default_device on fgrad.torch, against PyTorch on the CPU."""
from __future__ import annotations

import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("lib", [ftorch, torch])
def test_cpu_default(lib):
    try:
        assert repr(lib.get_default_device()) == "device(type='cpu')"
        for d in ("cpu", lib.device("cpu"), None):
            lib.set_default_device(d)
            assert repr(lib.get_default_device()) == "device(type='cpu')"
            assert lib.ones(1).device == lib.device("cpu")
    finally:
        lib.set_default_device(None)


def test_other_devices_raise_and_leave_the_default():
    with pytest.raises(NotImplementedError, match=r"pass device='cuda' to them or move tensors"):
        ftorch.set_default_device("cuda")
    with pytest.raises(NotImplementedError, match="'cuda:1'"):
        ftorch.set_default_device(ftorch.device("cuda", 1))
    assert ftorch.get_default_device() == ftorch.device("cpu")
    for lib in (ftorch, torch):
        with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
            lib.set_default_device("foo")
