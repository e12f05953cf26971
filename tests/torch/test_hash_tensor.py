"""torch.hash_tensor / Tensor.hash_tensor against torch 2.13: values over dtypes, dims and
keepdim, no gradient, and the errors (mode, empty input, dims, complex)."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

X = np.array([[1.0, -2.0, 0.1], [3.5, float("nan"), -0.0]], dtype=np.float32)


def _both(x):
    return ftorch.tensor(x), torch.tensor(x)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16", "int8", "int32", "int64",
                                   "uint8", "bool"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1), []])
def test_values(dtype, dim):
    # (PyTorch's bfloat16 NaN has another bit pattern than the float32 one rounded: not compared)
    f, t = _both(np.nan_to_num(X) if dtype == "bfloat16" else X)
    f, t = f.to(getattr(ftorch, dtype)), t.to(getattr(torch, dtype))
    for keepdim in (False, True):
        kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
        fh, th = ftorch.hash_tensor(f, **kw), torch.hash_tensor(t, **kw)
        assert fh.dtype is ftorch.uint64 and th.dtype is torch.uint64
        assert fh.tolist() == th.tolist(), (dtype, dim, keepdim)
    if dim is not None and dim != []:
        assert f.hash_tensor(dim).tolist() == t.hash_tensor(dim).tolist()


def test_scalar_and_no_gradient():
    f, t = _both(np.float32(2.5))
    assert ftorch.hash_tensor(f).item() == torch.hash_tensor(t).item()
    f, t = _both(X)
    f.requires_grad_(), t.requires_grad_()
    fh, th = ftorch.hash_tensor(f), torch.hash_tensor(t)
    assert fh.requires_grad is th.requires_grad is False and fh.grad_fn is None


def test_errors_as_torch():
    f, t = _both(X)
    cases = [
        (RuntimeError, lambda lib, x: lib.hash_tensor(x, mode=1)),
        (RuntimeError, lambda lib, x: lib.hash_tensor(lib.zeros(0))),
        (IndexError, lambda lib, x: lib.hash_tensor(x, dim=2)),
        (IndexError, lambda lib, x: lib.hash_tensor(lib.zeros(2, 0), dim=1)),
        (NotImplementedError, lambda lib, x: lib.hash_tensor(lib.tensor([1 + 2j]))),
    ]
    for exc, fn in cases:
        with pytest.raises(exc):
            fn(torch, t)
        with pytest.raises(exc):
            fn(ftorch, f)
    assert ftorch.hash_tensor(ftorch.zeros(2, 0), dim=0).tolist() == torch.hash_tensor(torch.zeros(2, 0), dim=0).tolist()
