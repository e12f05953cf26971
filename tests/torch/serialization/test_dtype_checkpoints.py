"""Checkpoints of the ml_dtypes and wide unsigned dtypes both ways with torch 2.13: bfloat16
(BFloat16Storage), and uint16/32/64, float8_*, complex32 (an UntypedStorage named by
_rebuild_tensor_v3's dtype, as torch writes them), views and Parameters included."""
from __future__ import annotations

import io

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

NAMES = ("bfloat16", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
         "float8_e5m2fnuz", "float8_e8m0fnu", "complex32")
VALUES = [1.0, 2.0, 4.0, 0.5]


def _wide(lib, name, t):
    return t.to(lib.complex64 if name == "complex32" else lib.float64).numpy()


@pytest.mark.parametrize("name", NAMES)
def test_fgrad_to_torch(name):
    if name in ("uint16", "uint32", "uint64"):
        values = [1.0, 2.0, 4.0, 8.0]
    else:
        values = VALUES
    src = ftorch.tensor(values).to(getattr(ftorch, name))
    buf = io.BytesIO()
    ftorch.save({"a": src, "view": src[1:3], "p": ftorch.nn.Parameter(src.clone(), requires_grad=False)}, buf)
    out = torch.load(io.BytesIO(buf.getvalue()))  # weights_only=True, torch's default
    assert out["a"].dtype is getattr(torch, name) and isinstance(out["p"], torch.nn.Parameter)
    np.testing.assert_array_equal(_wide(torch, name, out["a"]), _wide(ftorch, name, src))
    np.testing.assert_array_equal(_wide(torch, name, out["view"]), _wide(ftorch, name, src[1:3]))
    np.testing.assert_array_equal(_wide(torch, name, out["p"]), _wide(ftorch, name, src))


@pytest.mark.parametrize("name", NAMES)
def test_torch_to_fgrad(name):
    src = torch.tensor([[1.0, 2.0], [4.0, 8.0]]).to(getattr(torch, name))
    buf = io.BytesIO()
    torch.save({"a": src, "t": src.t()}, buf)
    out = ftorch.load(io.BytesIO(buf.getvalue()))
    assert out["a"].dtype is getattr(ftorch, name)
    np.testing.assert_array_equal(_wide(ftorch, name, out["a"]), _wide(torch, name, src))
    np.testing.assert_array_equal(_wide(ftorch, name, out["t"]), _wide(torch, name, src.t()))
