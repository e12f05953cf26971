"""PyTorch's import paths on fgrad.torch: torch.functional and torch.nn.modules.<file>, each an
alias of fgrad.torch's objects, checked against torch's own modules."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import fgrad.torch as ftorch
import fgrad.torch.functional as ffunctional
import fgrad.torch.nn.modules as fmodules

torch = pytest.importorskip("torch")
import torch.functional  # noqa: E402
import torch.nn.modules  # noqa: E402

at_2_13 = pytest.mark.skipif(not torch.__version__.startswith("2.13."),
                             reason="the aliases list torch 2.13's names")


@at_2_13
def test_functional_lists_torch_names():
    assert set(ffunctional._TORCH_NAMES) == set(torch.functional.__all__)


def test_functional_aliases_top_level():
    for name in ffunctional._TORCH_NAMES:
        assert hasattr(ffunctional, name) == hasattr(ftorch, name), name
        if hasattr(ftorch, name):
            assert getattr(ffunctional, name) is getattr(ftorch, name)
    assert ftorch.functional is ffunctional
    from fgrad.torch.functional import einsum, split
    a = np.arange(6.0).reshape(2, 3)
    assert einsum("ij->j", ftorch.tensor(a)).tolist() == \
        torch.functional.einsum("ij->j", torch.tensor(a)).tolist()
    assert [p.tolist() for p in split(ftorch.tensor(a), 1)] == \
        [p.tolist() for p in torch.functional.split(torch.tensor(a), 1)]


@at_2_13
def test_nn_modules_lists_torch_layout():
    for submodule, names in fmodules._TORCH_LAYOUT.items():
        assert set(names) == set(importlib.import_module(f"torch.nn.modules.{submodule}").__all__)


def test_nn_modules_alias_nn():
    made = 0
    for submodule, names in fmodules._TORCH_LAYOUT.items():
        have = [n for n in names if hasattr(ftorch.nn, n)]
        if not have:
            with pytest.raises(ImportError):
                importlib.import_module(f"fgrad.torch.nn.modules.{submodule}")
            continue
        module = importlib.import_module(f"fgrad.torch.nn.modules.{submodule}")
        assert getattr(ftorch.nn.modules, submodule) is module
        assert module.__all__ == have
        for name in have:
            assert getattr(module, name) is getattr(ftorch.nn, name) is getattr(fmodules, name)
        made += 1
    assert made >= 20
    from fgrad.torch.nn.modules.module import Module
    assert Module is ftorch.nn.Module


def test_linear_has_attention_out_proj_class():
    # pytorch/examples' word_language_model names it among the safe globals of a pickled model
    from fgrad.torch.nn.modules.linear import NonDynamicallyQuantizableLinear
    assert "NonDynamicallyQuantizableLinear" not in torch.nn.modules.linear.__all__
    assert type(ftorch.nn.MultiheadAttention(4, 2).out_proj) is NonDynamicallyQuantizableLinear
    assert issubclass(NonDynamicallyQuantizableLinear, ftorch.nn.Linear)


@pytest.mark.parametrize("submodule", sorted(fmodules._BASES))
def test_bases_have_torch_subclasses(submodule):
    # A base is where PyTorch has it, and every public class of that file deriving from it in
    # PyTorch derives from it here (isinstance checks on the base find them; fgrad's
    # BCEWithLogitsLoss is also a _WeightedLoss, which PyTorch's is not).
    fmod = importlib.import_module(f"fgrad.torch.nn.modules.{submodule}")
    tmod = importlib.import_module(f"torch.nn.modules.{submodule}")
    for base in fmodules._BASES[submodule]:
        if not hasattr(fmod, base):
            continue
        derived = 0
        for name in fmod.__all__:
            if issubclass(getattr(tmod, name), getattr(tmod, base)):
                assert issubclass(getattr(fmod, name), getattr(fmod, base)), (submodule, base, name)
                derived += 1
        assert derived, (submodule, base)


@pytest.mark.parametrize("lib", [ftorch, torch])
def test_custom_loss_on_loss_base(lib):
    loss_module = importlib.import_module(f"{lib.__name__}.nn.modules.loss")

    class Scaled(loss_module._Loss):
        def forward(self, x, y):
            d = (x - y) ** 2
            return d.mean() if self.reduction == "mean" else d.sum()

    x, y = lib.tensor([1.0, 2.0, 4.0]), lib.tensor([0.0, 2.0, 2.0])
    assert Scaled()(x, y).item() == pytest.approx(5 / 3)
    assert Scaled(reduction="sum")(x, y).item() == 5.0
