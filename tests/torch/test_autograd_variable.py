"""torch.autograd.Variable on fgrad.torch, checked against PyTorch's deprecated alias."""
from __future__ import annotations

import warnings

import pytest

import fgrad.torch as ftorch
from fgrad.torch.autograd import Variable as FVariable

torch = pytest.importorskip("torch")
from torch.autograd import Variable as TVariable  # noqa: E402


@pytest.mark.parametrize("lib, Variable", [(ftorch, FVariable), (torch, TVariable)])
def test_variable_is_a_detached_leaf_sharing_values(lib, Variable):
    t = lib.ones(2)
    v = Variable(t)
    assert type(v) is lib.Tensor and v is not t
    assert not v.requires_grad and v.is_leaf
    v.add_(1)  # shares t's values
    assert t.tolist() == [2.0, 2.0]
    w = Variable(t, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    (w * w).sum().backward()
    assert w.grad.tolist() == [4.0, 4.0]
    assert Variable(t, True).requires_grad  # requires_grad is the second positional argument
    x = lib.ones(2, requires_grad=True) * 2
    y = Variable(x)
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert Variable().tolist() == [] and Variable().dtype == lib.float32


@pytest.mark.parametrize("lib, Variable", [(ftorch, FVariable), (torch, TVariable)])
def test_every_tensor_is_a_variable(lib, Variable):
    assert isinstance(lib.ones(1), Variable) and isinstance(lib.tensor([1]), Variable)
    assert not isinstance(1.0, Variable) and not isinstance([1.0], Variable)


@pytest.mark.parametrize("lib, Variable", [(ftorch, FVariable), (torch, TVariable)])
def test_errors_and_volatile(lib, Variable):
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1.0, 2.0])
    with pytest.raises(RuntimeError, match="floating point"):
        Variable(lib.tensor([1, 2]), requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = Variable(lib.ones(1), volatile=True)
    assert [str(w.message) for w in caught] == [
        "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."]
    assert not v.requires_grad


def test_module_path():
    from fgrad.torch.autograd.variable import Variable
    assert Variable is ftorch.autograd.Variable is FVariable


@pytest.mark.parametrize("lib", [ftorch, torch])
def test_removed_variable_function(lib):
    with pytest.raises(RuntimeError, match=r"torch.autograd.variable\(...\) is deprecated, use "
                                           r"torch.tensor\(...\) instead"):
        lib.autograd.variable([1.0])
