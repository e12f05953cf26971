"""nn.functional's 3-D pooling (max with indices, average, power-average, adaptive max,
unpooling) against PyTorch 2.13: values, indices, gradients, node names and errors."""
import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")
F, TF = ft.nn.functional, torch.nn.functional
X = np.random.default_rng(0).standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
X[0, 0, 0, 0, :3] = 1.0  # a tie inside a window: the gradient goes to the first maximum


def _cmp(name, *args, x=X, **kw):
    a, b = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = getattr(F, name)(a, *args, **kw), getattr(TF, name)(b, *args, **kw)
    if isinstance(ya, tuple):
        np.testing.assert_array_equal(ya[1].numpy(), yb[1].numpy())
        ya, yb = ya[0], yb[0]
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert ya.grad_fn.name() == yb.grad_fn.name()


@pytest.mark.parametrize("args,kw", [((3, 2, 1), {}), (((2, 3, 2), (1, 2, 3), (1, 1, 0), (2, 1, 2), True), {}),
                                     ((2,), {"return_indices": True})])
def test_max_pool3d(args, kw):
    _cmp("max_pool3d_with_indices", *args)
    _cmp("max_pool3d", *args, **kw)
    _cmp("max_pool3d", *args, x=X[0], **kw)


@pytest.mark.parametrize("kw", [{}, {"count_include_pad": False}, {"ceil_mode": True},
                                {"ceil_mode": True, "count_include_pad": False}, {"divisor_override": 5}])
def test_avg_pool3d(kw):
    _cmp("avg_pool3d", 3, 2, 1, **kw)


def test_lp_and_adaptive_and_unpool():
    _cmp("lp_pool3d", 2.0, 2, x=np.abs(X))
    _cmp("lp_pool3d", 3.0, (2, 3, 2), (1, 2, 2), True, x=np.abs(X))
    _cmp("adaptive_max_pool3d", (3, 4, 5), True)
    _cmp("adaptive_max_pool3d", 2, x=X[1])
    _cmp("adaptive_max_pool3d_with_indices", (2, None, 3), x=X[0])
    _, ia = F.max_pool3d(ft.tensor(X), 2, return_indices=True)
    _, ib = TF.max_pool3d(torch.tensor(X), 2, return_indices=True)
    v = np.random.default_rng(1).standard_normal((2, 3, 2, 3, 3)).astype(np.float32)
    a, b = ft.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    za, zb = F.max_unpool3d(a, ia, 2, output_size=(5, 6, 7)), TF.max_unpool3d(b, ib, 2, output_size=(5, 6, 7))
    (za * za).sum().backward()
    (zb * zb).sum().backward()
    np.testing.assert_array_equal(za.detach().numpy(), zb.detach().numpy())
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_errors():
    with pytest.raises(RuntimeError, match="Expected 4D or 5D tensor"):
        F.avg_pool3d(ft.tensor(X[0, 0]), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool3d(ft.tensor(X), 2, 1, 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool3d(ft.tensor(X), 2, divisor_override=0)
    _, idx = F.max_pool3d(ft.tensor(X), 2, return_indices=True)
    with pytest.raises(RuntimeError, match="Found an invalid max index"):
        F.max_unpool3d(ft.zeros(2, 3, 2, 3, 3), idx, 2)
