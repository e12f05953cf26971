"""ATen's Tensor-and-Scalar overloads (fgrad.torch._tensor._scalar_ops), the one copy that the
facade's composites (cov, trapezoid) and nn.functional's (losses, rms_norm) share: values,
dtypes and nodes equal torch.ops.aten.<op>.Scalar's."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch
from fgrad.torch._tensor import _scalar_ops as S

from .graphs import graph_of

torch = pytest.importorskip("torch")

OPS = ["add", "sub", "mul", "div"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_values_and_dtype_match_aten_scalar_overload(op, dtype):
    v = np.array([0, 1, 2, 7], dtype=dtype)
    ours = getattr(S, f"{op}_scalar")(ftorch.tensor(v), 0.3)
    ref = getattr(torch.ops.aten, op).Scalar(torch.tensor(v), 0.3)
    assert str(ours.dtype) == str(ref.dtype)  # (an integer Tensor with 0.3 promotes to float32)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", OPS)
def test_node_has_the_tensor_edge_only(op):
    v = np.array([0.5, 1.0, 2.0], np.float32)
    ours = getattr(S, f"{op}_scalar")(ftorch.tensor(v, requires_grad=True), 2.0)
    ref = getattr(torch.ops.aten, op).Scalar(torch.tensor(v, requires_grad=True), 2.0)
    assert graph_of(ours, 2) == graph_of(ref, 2)


def test_scalar_sub_lists_the_filled_tensor_first():
    v = np.array([0.5, 1.0, 2.0], np.float32)
    x = ftorch.tensor(v, requires_grad=True)
    out = S.scalar_sub(1.0, x)
    assert type(out.grad_fn).__name__ == "SubBackward0"
    assert [n is None if n is None else type(n).__name__ for n, _ in out.grad_fn.next_functions] == \
        [True, "AccumulateGrad"]
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), -np.ones(3, np.float32))
    np.testing.assert_array_equal(out.detach().numpy(), 1.0 - v)
