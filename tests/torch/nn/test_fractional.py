"""Fractional max pooling against PyTorch 2.13: from the same seed, the same windows (values and
indices, bit for bit), gradients and node names, and the generator left alike; given samples;
the modules; errors."""
import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")
F, TF = ft.nn.functional, torch.nn.functional
X4 = np.random.default_rng(0).standard_normal((2, 3, 11, 13)).astype(np.float32)
X5 = np.random.default_rng(1).standard_normal((2, 3, 7, 8, 9))


@pytest.mark.parametrize("name,x,kw", [
    ("fractional_max_pool2d_with_indices", X4, dict(kernel_size=3, output_size=(5, 6))),
    ("fractional_max_pool2d_with_indices", X4, dict(kernel_size=(2, 3), output_ratio=(0.5, 0.6))),
    ("fractional_max_pool2d", X4[0], dict(kernel_size=2, output_size=4, return_indices=True)),
    ("fractional_max_pool3d_with_indices", X5.astype(np.float32), dict(kernel_size=2, output_size=(3, 4, 5))),
    ("fractional_max_pool3d", X5, dict(kernel_size=(2, 3, 2), output_ratio=0.5, return_indices=True)),
])
def test_matches_torch_for_a_seed(name, x, kw):
    ft.manual_seed(4)
    torch.manual_seed(4)
    a, b = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ya, ia), (yb, ib) = getattr(F, name)(a, **kw), getattr(TF, name)(b, **kw)
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    np.testing.assert_array_equal(ya.detach().numpy(), yb.detach().numpy())
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    assert ya.grad_fn.name() == yb.grad_fn.name()
    np.testing.assert_array_equal(ft.rand(3).numpy(), torch.rand(3).numpy())


def test_given_samples_and_modules():
    s = np.random.default_rng(2).random((2, 3, 2)).astype(np.float32)
    ya = F.fractional_max_pool2d(ft.tensor(X4), 3, output_size=5, _random_samples=ft.tensor(s))
    yb = TF.fractional_max_pool2d(torch.tensor(X4), 3, output_size=5, _random_samples=torch.tensor(s))
    np.testing.assert_array_equal(ya.numpy(), yb.numpy())
    for lib in (ft, torch):
        lib.manual_seed(7)
    ma, mb = ft.nn.FractionalMaxPool3d(2, output_ratio=0.5), torch.nn.FractionalMaxPool3d(2, output_ratio=0.5)
    assert repr(ma) == repr(mb) and list(ma.state_dict()) == list(mb.state_dict()) == []
    np.testing.assert_array_equal(ma(ft.tensor(X5)).numpy(), mb(torch.tensor(X5)).numpy())
    ma2 = ft.nn.FractionalMaxPool2d(2, output_size=(4, 4), return_indices=True)
    mb2 = torch.nn.FractionalMaxPool2d(2, output_size=(4, 4), return_indices=True)
    for p, q in zip(ma2(ft.tensor(X4)), mb2(torch.tensor(X4))):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_errors():
    with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
        F.fractional_max_pool2d(ft.tensor(X4), 2)
    with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
        ft.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        ft.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        ft.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="too large relative to input size"):
        F.fractional_max_pool2d(ft.tensor(X4), 5, output_size=10)
    with pytest.raises(RuntimeError, match="_random_samples of shape"):
        F.fractional_max_pool2d(ft.tensor(X4), 2, output_size=4, _random_samples=ft.rand(2, 3, 3))
