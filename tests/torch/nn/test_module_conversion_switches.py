"""Module conversions under torch.__future__'s switches, against torch 2.13 (5c1db65's feature,
whose own tests were lost): by default a parameter stays the same object; with
set_overwrite_module_params_on_conversion(True) a new Parameter replaces it; with
set_swap_module_params_on_conversion(True) the object stays and its gradient is converted too."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def _convert(lib, switch):
    fut = lib.__future__
    before = (fut.get_overwrite_module_params_on_conversion(), fut.get_swap_module_params_on_conversion())
    try:
        if switch == "overwrite":
            fut.set_overwrite_module_params_on_conversion(True)
        elif switch == "swap":
            fut.set_swap_module_params_on_conversion(True)
        m = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        w = m.weight
        m.weight.grad = lib.ones(2, 2)
        m.double()
        return (m.weight is w, repr(m.weight.dtype), isinstance(m.weight, lib.nn.Parameter),
                m.weight.requires_grad, m.weight.grad is not None and repr(m.weight.grad.dtype),
                m.weight.grad_fn is None, m.weight.detach().numpy().tolist())
    finally:
        fut.set_overwrite_module_params_on_conversion(before[0])
        fut.set_swap_module_params_on_conversion(before[1])


@pytest.mark.parametrize("switch", ["default", "overwrite", "swap"])
def test_conversion_as_torch(switch):
    assert _convert(ftorch, switch) == _convert(torch, switch)


def test_switches_restored():
    for lib in (ftorch, torch):
        assert not lib.__future__.get_overwrite_module_params_on_conversion()
        assert not lib.__future__.get_swap_module_params_on_conversion()
    np.testing.assert_array_equal(ftorch.nn.Linear(2, 2).double().weight.dtype == ftorch.float64, True)
