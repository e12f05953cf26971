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
