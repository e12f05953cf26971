"""torch.utils.checkpoint's helpers on fgrad.torch (CheckpointError, noop_context_fn,
detach_variable, check_backward_validity), against PyTorch's."""
from __future__ import annotations

import contextlib
import warnings

import pytest

import fgrad.torch as ftorch
import fgrad.torch.utils.checkpoint

torch = pytest.importorskip("torch")
import torch.utils.checkpoint  # noqa: E402


@pytest.mark.parametrize("lib", [ftorch, torch])
def test_helpers(lib):
    cp = lib.utils.checkpoint
    assert issubclass(cp.CheckpointError, RuntimeError)
    forward, recompute = cp.noop_context_fn()
    assert isinstance(forward, contextlib.nullcontext) and isinstance(recompute, contextlib.nullcontext)
    a = lib.ones(2, requires_grad=True) * 2
    b = lib.zeros(1)
    x, y, z = cp.detach_variable((a, b, 3))
    assert x.requires_grad and x.is_leaf and x.grad_fn is None and x.tolist() == [2.0, 2.0]
    assert not y.requires_grad and z == 3
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got Unsupported input type: list"):
        cp.detach_variable([a])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cp.check_backward_validity((b, 1))
        cp.check_backward_validity((a, b))
    assert [str(w.message) for w in caught] == ["None of the inputs have requires_grad=True. Gradients will be None"]
