"""Tensor.copy_ of a tensor that requires grad into one that does not (a buffer of zeros, or a
view of one, as torch.stft's window padding does): the result joins the graph and the source
gets its gradient, as in torch 2.13 (fgrad wrote the values and dropped the source's history)."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def _grad(lib, write):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = write(lib, w)
    assert z.requires_grad
    (z * lib.arange(float(z.shape[0]))).sum().backward()
    return w.grad.numpy()


@pytest.mark.parametrize("write", [
    lambda lib, w: _into(lib.zeros(5), lambda z: z.narrow(0, 1, 3).copy_(w)),
    lambda lib, w: _into(lib.zeros(5), lambda z: z[2:].copy_(w)),
    lambda lib, w: _into(lib.zeros(3), lambda z: z.copy_(w)),
    lambda lib, w: _into(lib.zeros(2, 3), lambda z: z.copy_(w)),  # (broadcast)
], ids=["narrow", "slice", "whole", "broadcast"])
def test_copy_of_a_tensor_that_requires_grad_passes_its_gradient(write):
    np.testing.assert_array_equal(_grad(ftorch, write), _grad(torch, write))


def _into(z, write):
    write(z)
    return z.reshape(-1)
