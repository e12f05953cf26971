"""PyTorch's out= on torch.* functions and factories, against torch 2.13: the result lands in the
given tensor (resized, cast within its kind), which is returned; out= calls needing gradients
and lossy casts are refused."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")
LIBS = pytest.mark.parametrize("lib", [ftorch, torch], ids=["fgrad", "torch"])


def _np(t):
    return np.asarray(t.detach().numpy())


@LIBS
def test_binary_ops_and_matmul_write_into_out(lib):
    a = lib.arange(6.0).reshape(2, 3)
    for fn, args in ((lib.add, (a, a)), (lib.mul, (a, 2.0)), (lib.matmul, (a, a.T)), (lib.sin, (a,))):
        expected = fn(*args)
        out = lib.empty(tuple(expected.shape))
        version = out._version
        assert fn(*args, out=out) is out
        np.testing.assert_array_equal(_np(out), _np(expected))
        assert out._version > version


def test_same_values_as_torch():
    data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    results = []
    for lib in (ftorch, torch):
        a = lib.tensor(data)
        out = lib.empty(2, 2)
        lib.matmul(a, a.T, out=out)
        results.append(_np(out))
    np.testing.assert_array_equal(*results)


@LIBS
def test_resize_warns_only_when_out_has_elements(lib):
    a = lib.ones(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = lib.add(a, a, out=lib.empty(0))
    assert tuple(out.shape) == (2, 3)
    with pytest.warns(UserWarning, match="was resized"):
        out = lib.add(a, a, out=lib.empty(4))
    assert tuple(out.shape) == (2, 3)


@LIBS
def test_cast_within_kind_and_refusals(lib):
    a = lib.ones(3, dtype=lib.int32)
    out = lib.empty(3, dtype=lib.float64)
    lib.add(a, a, out=out)
    assert out.dtype == lib.float64 and _np(out).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        lib.add(lib.ones(3), 1.5, out=lib.empty(3, dtype=lib.int64))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        lib.mul(lib.ones(3, requires_grad=True), 2.0, out=lib.empty(3))
    with lib.no_grad():
        lib.mul(lib.ones(3, requires_grad=True), 2.0, out=out)
    assert _np(out).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError):
        lib.add(lib.ones(3), 1.0, out=[1.0, 2.0, 3.0])


@LIBS
def test_tuple_results(lib):
    x = lib.tensor([[1.0, 3.0], [2.0, 0.0]])
    values, indices = lib.empty(2), lib.empty(2, dtype=lib.long)
    result = lib.max(x, 1, out=(values, indices))
    assert result.values is values and result.indices is indices
    assert _np(values).tolist() == [3.0, 2.0] and _np(indices).tolist() == [1, 0]


def test_factories_fill_out_with_torchs_draws():
    draws = []
    for lib in (ftorch, torch):
        lib.manual_seed(3)
        out = lib.empty(2, 3, dtype=lib.float64)
        assert lib.rand(2, 3, out=out) is out
        zeros = lib.zeros(4, out=lib.ones(4))
        draws.append((_np(out), _np(zeros), str(out.dtype)))
    np.testing.assert_array_equal(draws[0][0], draws[1][0])
    np.testing.assert_array_equal(draws[0][1], draws[1][1])
    assert draws[0][2] == draws[1][2] == "torch.float64"


def test_every_table_and_breadth_function_takes_out():
    """Class test: the torch.* functions of _tensor's list and of _ops_breadth all take out=
    through the one generated wrapper (the breadth functions had none at first)."""
    import inspect

    import fgrad.torch as ft
    from fgrad.torch import _tensor
    from fgrad.torch._tensor import _ops_breadth
    names = set(_tensor.FUNCTIONS) | set(_ops_breadth.__all__)
    missing = sorted(n for n in names if "out" not in inspect.signature(getattr(ft, n)).parameters)
    assert not missing, missing
