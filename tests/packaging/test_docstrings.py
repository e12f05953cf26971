"""Every public callable of the functional door (fgrad, fgrad.numpy, fgrad.lax, fgrad.scipy,
fgrad.random, fgrad.nn, fgrad.tree_util and their submodules) has a docstring; on the PyTorch door
(fgrad.torch, its submodules and Tensor's methods) no name is added without one.

The PyTorch door's names that had none when this test was written (Tensor's core methods and
properties in fgrad/torch/_tensor/tensor.py, and torch.is_grad_enabled) are listed in
TORCH_UNDOCUMENTED: documenting one of them needs no change here (the list may then be
shortened), but a new undocumented name fails. Names generated from the op tables get their
docstrings from the table (fgrad/torch/_tensor/_adapt.py)."""
from __future__ import annotations

import fgrad.numpy
import fgrad.torch
from tests.packaging.docstring_walk import undocumented, undocumented_members

TORCH_UNDOCUMENTED = frozenset((
    "Tensor.detach_", "Tensor.device", "Tensor.dim", "Tensor.dtype", "Tensor.element_size",
    "Tensor.grad", "Tensor.grad_fn", "Tensor.is_complex", "Tensor.is_cuda",
    "Tensor.is_floating_point", "Tensor.is_leaf", "Tensor.item", "Tensor.ndim",
    "Tensor.ndimension", "Tensor.nelement", "Tensor.numel", "Tensor.numpy", "Tensor.requires_grad",
    "Tensor.requires_grad_", "Tensor.retain_grad", "Tensor.retains_grad", "Tensor.shape",
    "Tensor.size", "Tensor.tolist", "fgrad.torch.is_grad_enabled",
))


def torch_undocumented() -> list[str]:
    return undocumented(torch_door=True) + undocumented_members(fgrad.torch.Tensor, "Tensor")


def test_every_public_callable_of_the_functional_door_has_a_docstring():
    missing = undocumented(torch_door=False)
    assert not missing, f"public callables without a docstring (write one: Args/Returns): {missing}"


def test_no_new_undocumented_name_on_the_torch_door():
    new = sorted(set(torch_undocumented()) - TORCH_UNDOCUMENTED)
    assert not new, ("public fgrad.torch names without a docstring (write one; a table row gets "
                     f"its docstring from the table): {new}")


def test_a_planted_undocumented_function_and_method_are_found(monkeypatch):
    def planted(x):
        return x

    planted.__module__ = "fgrad.numpy"  # as if defined there
    monkeypatch.setattr(fgrad.numpy, "planted", planted, raising=False)
    monkeypatch.setattr(fgrad.torch.Tensor, "planted_method", planted, raising=False)
    assert undocumented(torch_door=False) == ["fgrad.numpy.planted"]
    assert "Tensor.planted_method" in torch_undocumented()
    planted.__doc__ = "Documented now."
    assert undocumented(torch_door=False) == []
