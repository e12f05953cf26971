"""PyTorch's argument check at the API boundary (_tensor/_out.py's argument_check, the one
check the generated torch.* wrapper runs): a torch function taking a Tensor `input` refuses
other data with a TypeError that names the function, the argument and the fix, as torch 2.13
refuses it with a TypeError."""
from __future__ import annotations

import pytest

import fgrad.torch as ft
from fgrad.torch import _tensor
from fgrad.torch._tensor import _ops_breadth

torch = pytest.importorskip("torch")

# one table row each of _tensor's list and of _ops_breadth's, and a two-tensor product
CALLS = [("log2", ([1.0, 2.0],)), ("sum", ([1.0, 2.0],)), ("deg2rad", ([1.0, 2.0],)),
         ("fmax", ([1.0, 2.0], "T")), ("mm", ("T2", [[1.0]])), ("cov", ([1.0, 2.0],))]


def _args(lib, args):
    made = {"T": lib.ones(2), "T2": lib.ones(1, 1)}
    return [made[a] if isinstance(a, str) else a for a in args]


@pytest.mark.parametrize("name,args", CALLS, ids=[c[0] for c in CALLS])
def test_non_tensor_input_is_refused_as_torch_refuses_it(name, args):
    with pytest.raises(TypeError):
        getattr(torch, name)(*_args(torch, args))
    with pytest.raises(TypeError, match=rf"torch\.{name}\(\): argument .*\(position \d\) must be Tensor, not list\. "
                                        r"Wrap data with fgrad\.torch\.tensor"):
        getattr(ft, name)(*_args(ft, args))


def test_every_breadth_table_row_is_checked_at_the_boundary():
    """Class test: the breadth table's rows carry no check of their own; the public function
    checks `input`, as _tensor's table rows do."""
    for name in _ops_breadth.TABLE_NAMES:
        with pytest.raises(TypeError, match=rf"torch\.{name}\(\): argument 'input'"):
            getattr(ft, name)([1.0], ft.ones(1)) if name in ("fmax", "fmin") else getattr(ft, name)([1.0])
    assert set(_ops_breadth.TABLE_NAMES) <= set(_ops_breadth.__all__)
    assert not set(_ops_breadth.TABLE_NAMES) & set(_tensor.FUNCTIONS)


def _number_first_names():
    return sorted(n for n in set(_tensor.FUNCTIONS) | set(_ops_breadth.TABLE_NAMES)
                  if n not in _tensor._NOT_INPUT_FIRST and hasattr(torch, n))


@pytest.mark.parametrize("first", [5, 2.5, True], ids=["int", "float", "bool"])
def test_a_number_first_is_accepted_exactly_where_torch_accepts_it(first):
    """Class test over every function whose first argument is checked: torch.f(number, Tensor)
    works in fgrad exactly when it works in torch (the Scalar-self overloads), with torch's
    values, dtype and gradient, for the first of a float, an int and a bool tensor that torch
    takes; where torch's argument parser refuses the number (TypeError), fgrad refuses it too."""
    accepted = []
    for name in _number_first_names():
        for data in ([1.0, 2.0, 3.0], [1, 2, 3], [True, False, True]):
            try:
                want = getattr(torch, name)(first, torch.tensor(data))
                break
            except TypeError:  # the argument parser refuses the number
                want = TypeError
            except Exception as e:  # noqa: BLE001 -- accepted, refused later (bool `-`, a dtype)
                want = e
        if want is TypeError:
            with pytest.raises(TypeError):
                getattr(ft, name)(first, ft.tensor([1.0, 2.0, 3.0]))
            continue
        if isinstance(want, Exception):
            with pytest.raises(Exception):  # noqa: B017 -- torch's refusal in its own words
                getattr(ft, name)(first, ft.tensor(data))
            continue
        accepted.append(name)
        x = ft.tensor(data, requires_grad=want.dtype.is_floating_point)
        got = getattr(ft, name)(first, x)
        assert got.dtype == getattr(ft, str(want.dtype).removeprefix("torch.")), name
        assert torch.equal(torch.from_numpy(got.detach().numpy()).isnan(), want.isnan()), name
        assert torch.allclose(torch.from_numpy(got.detach().numpy()), want, equal_nan=True), name
        if want.dtype.is_floating_point:
            tx = torch.tensor(data, requires_grad=True)
            try:
                getattr(torch, name)(first, tx).sum().backward()
            except RuntimeError as e:
                if "INTERNAL ASSERT" in str(e):  # torch's own bug (pow(True, t)): nothing to compare
                    continue
                with pytest.raises(RuntimeError):  # no derivative (floor_divide): fgrad refuses too
                    got.sum().backward()
                continue
            got.sum().backward()
            assert torch.allclose(torch.from_numpy(x.grad.numpy()), tx.grad, equal_nan=True), name
    assert {"add", "mul", "pow", "bitwise_and"} <= set(accepted) or first == 2.5
