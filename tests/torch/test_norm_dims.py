"""torch.norm over more than two dims against PyTorch 2.13: a number p is the vector norm of
the elements (values and gradients), 'fro' and 'nuc' (matrix norms) are refused."""
import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("p", [2, 1, 3.0, float("inf"), -1])
@pytest.mark.parametrize("dim", [[1, 2, 3], (0, 2, 3), [0, 1, 2, 3]])
def test_vector_norm_over_dims(p, dim):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    out = []
    for lib in (ft, torch):
        t = lib.tensor(x, requires_grad=True)
        n = t.norm(p=p, dim=dim, keepdim=True)
        n.sum().backward()
        out.append((n.detach().numpy(), t.grad.numpy(), type(n.grad_fn).__name__))
    (fv, fg, fn), (tv, tg, tn) = out
    np.testing.assert_allclose(fv, tv, rtol=1e-5)
    np.testing.assert_allclose(fg, tg, rtol=1e-4, atol=1e-6)
    assert fn == tn


@pytest.mark.parametrize("p", ["fro", "nuc"])
def test_matrix_norms_need_two_dims(p):
    for lib in (ft, torch):
        with pytest.raises(RuntimeError, match=r"dim must be a 2-tuple|two dims"):
            lib.ones(2, 3, 4, 5).norm(p=p, dim=[1, 2, 3])
