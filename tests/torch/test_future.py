"""torch.__future__'s switches on fgrad.torch: their defaults and round trips as PyTorch's, and
parametrize's assignment exchanging tensors (swap_tensors) when the swap switch is on."""
import pytest

import fgrad.torch as ft
import fgrad.torch.nn.utils.parametrize as fP

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("which", ["overwrite", "swap"])
def test_switches(which):
    for lib in (ft, torch):
        get = getattr(lib.__future__, f"get_{which}_module_params_on_conversion")
        set_ = getattr(lib.__future__, f"set_{which}_module_params_on_conversion")
        assert get() is False
        set_(True)
        try:
            assert get() is True
        finally:
            set_(False)
        assert get() is False


def test_parametrize_assignment_swaps_under_the_switch():
    class Double(ft.nn.Module):
        def forward(self, x):
            return x * 2

        def right_inverse(self, y):
            return y / 2
    layer = ft.nn.Linear(2, 2)
    fP.register_parametrization(layer, "weight", Double())
    original = layer.parametrizations.weight.original
    ft.__future__.set_swap_module_params_on_conversion(True)
    try:
        layer.weight = ft.ones(2, 2)
    finally:
        ft.__future__.set_swap_module_params_on_conversion(False)
    assert layer.parametrizations.weight.original is original
    assert type(original).__name__ == "Tensor"  # it took the new tensor's class, as swap_tensors does
    assert original.tolist() == [[0.5, 0.5], [0.5, 0.5]]
