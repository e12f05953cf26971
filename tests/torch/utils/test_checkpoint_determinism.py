"""checkpoint(use_reentrant=False)'s determinism check and set_checkpoint_debug_enabled, against
torch 2.13: a recomputation whose results differ in shape from the forward pass's raises
CheckpointError (with the ops of both runs in debug mode), determinism_check="none" and the
reentrant scheme skip the check, and a bad determinism_check is refused."""
from __future__ import annotations

import pytest

import fgrad.torch as ftorch
from fgrad.torch.utils import checkpoint as fcp

torch = pytest.importorskip("torch")
from torch.utils import checkpoint as tcp  # noqa: E402

LIBS = pytest.mark.parametrize("lib,cp", [(ftorch, fcp), (torch, tcp)], ids=["fgrad", "torch"])


def _changing(lib, cp, **kw):
    """A region whose output shape follows global state that changes before backward."""
    state = {"n": 3}

    def f(x):
        return x[:state["n"]].sin() * 2
    x = lib.ones(5, requires_grad=True)
    out = cp.checkpoint(f, x, use_reentrant=False, **kw)
    state["n"] = 2
    return out


@LIBS
def test_changed_recomputation_raises(lib, cp):
    out = _changing(lib, cp)
    with pytest.raises(cp.CheckpointError, match="Recomputed values for the following tensors have different "
                                                 "metadata") as info:
        out.sum().backward()
    assert "set_checkpoint_debug_enabled(True)" in str(info.value)


@LIBS
def test_debug_mode_lists_the_ops(lib, cp):
    for make in (lambda: _changing(lib, cp, debug=True),
                 lambda: _changing(lib, cp)):
        with cp.set_checkpoint_debug_enabled(True):
            out = make()
        with pytest.raises(cp.CheckpointError) as info:
            out.sum().backward()
        text = str(info.value)
        assert "Operations executed during the original forward" in text
        assert "Operations executed during recomputation" in text and "sin" in text


@LIBS
def test_debug_setting_restored_and_bad_check(lib, cp):
    with cp.set_checkpoint_debug_enabled(False):
        out = _changing(lib, cp, debug=True)  # the global setting wins over debug=True
    with pytest.raises(cp.CheckpointError) as info:
        out.sum().backward()
    assert "Operations executed" not in str(info.value)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        cp.checkpoint(lambda x: x * 2, lib.ones(2, requires_grad=True), use_reentrant=False, determinism_check="x")


def test_unchanged_region_and_check_off():
    x = ftorch.ones(5, requires_grad=True)
    out = fcp.checkpoint(lambda a: a.sin() * 2, x, use_reentrant=False)
    out.sum().backward()
    assert x.grad.shape == (5,)
    state = {"n": 3}
    y = ftorch.ones(5, requires_grad=True)
    out = fcp.checkpoint(lambda a: a[:state["n"]].sin(), y, use_reentrant=False, determinism_check="none")
    state["n"] = 3
    out.sum().backward()  # unchanged: no check needed, none made
    assert y.grad.tolist()[3:] == [0.0, 0.0]
