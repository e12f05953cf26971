"""Every public callable of the functional door (fgrad, fgrad.numpy, fgrad.lax, fgrad.scipy,
fgrad.random, fgrad.nn, fgrad.tree_util and their submodules) and of the PyTorch door
(fgrad.torch, its submodules, Tensor's methods and properties) has a docstring.

Names generated from the op tables get their docstrings from the table
(fgrad/torch/_tensor/_adapt.py); a hand-written function or class needs its own."""
from __future__ import annotations

import fgrad.numpy
import fgrad.torch
from tests.packaging.docstring_walk import undocumented, undocumented_members


def torch_undocumented() -> list[str]:
    return undocumented(torch_door=True) + undocumented_members(fgrad.torch.Tensor, "Tensor")


def test_every_public_callable_of_the_functional_door_has_a_docstring():
    missing = undocumented(torch_door=False)
    assert not missing, f"public callables without a docstring (write one: Args/Returns): {missing}"


def test_every_public_callable_of_the_torch_door_has_a_docstring():
    missing = torch_undocumented()
    assert not missing, ("public fgrad.torch names without a docstring (write one; a table row gets "
                         f"its docstring from the table): {missing}")


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
