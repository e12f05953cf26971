"""The alias rows of fgrad/torch/_breadth.py (torch's top-level names of nn.functional's functions)
and of fgrad/torch/_functional_aliases.py (nn.functional's names of torch's): each row's
function is the target under another name, with its signature and docstring, and the
top-level ones refuse a first argument that is not a Tensor, as torch's."""
import inspect

import numpy as np
import pytest

import fgrad.torch as ft
from fgrad.torch import _breadth
from fgrad.torch import _functional_aliases

TOP = [pytest.param(row, id=row[0]) for row in _breadth._ALIASES]
NN = [pytest.param(row, id="F." + row[0]) for row in _functional_aliases._ALIASES]


@pytest.mark.parametrize("row", TOP + NN)
def test_alias_has_the_targets_signature_and_docstring(row):
    name, module, target_name, *rest = row
    fixed = rest[0] if rest else {}
    home = ft if row in _breadth._ALIASES else ft.nn.functional
    alias, target = getattr(home, name), getattr(module, target_name)
    assert alias is not target
    want = [p for p in inspect.signature(target).parameters.values() if p.name not in fixed]
    assert list(inspect.signature(alias).parameters.values()) == want
    assert inspect.cleandoc(target.__doc__) in alias.__doc__
    assert alias.__name__ == name


@pytest.mark.parametrize("row", [r for r in TOP if len(r.values[0]) > 3])
def test_alias_passes_its_fixed_keywords(row):
    name, module, target_name, fixed = row
    x = ft.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 4, 4)).astype(np.float32))
    x = x[0, :, 0] if "1d" in name or "pool" not in name else x[0] if "2d" in name else x
    args = (x,) + ((2,) if "pool" in name else (0.5, 2.0) if name == "threshold" else ())
    got, want = getattr(ft, name)(*args), getattr(module, target_name)(*args, **fixed)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    with pytest.raises(TypeError):
        getattr(ft, name)(*args, **fixed)


@pytest.mark.parametrize("row", TOP)
def test_top_level_alias_refuses_a_first_argument_that_is_no_tensor(row):
    name, module, target_name, *_ = row
    first = next(iter(inspect.signature(getattr(module, target_name)).parameters))
    with pytest.raises(TypeError, match=f"torch.{name}\\(\\): argument '{first}' \\(position 1\\) must be Tensor"):
        getattr(ft, name)([1.0, 2.0], None)
    with pytest.raises(TypeError, match=f"argument '{first}'"):
        getattr(ft, name)(**{first: np.ones(3)})


def test_alias_passes_its_arguments_through():
    x = ft.tensor(np.arange(24.0, dtype=np.float32).reshape(1, 4, 6), requires_grad=True)
    w = ft.tensor(np.ones((2, 4, 3), np.float32))
    got = ft.conv1d(x, w, stride=2, padding=1)
    want = ft.nn.functional.conv1d(x, w, None, 2, 1)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert type(got.grad_fn).__name__ == "ConvolutionBackward0"
