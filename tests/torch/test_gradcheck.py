"""fgrad.torch.autograd.gradcheck / gradgradcheck on inputs that are views with their own strides
(transposed, sliced with a step, an offset window into a larger storage), as PyTorch's
gradcheck accepts them: the finite differences must perturb the input func reads, so correct
derivatives pass and wrong ones fail, with the same verdicts and numerical Jacobians as
torch.autograd.gradcheck. Inputs with a stride-0 dimension are refused, as PyTorch does."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad

torch = pytest.importorskip("torch")

BASE = np.random.default_rng(0).normal(size=(4, 6))

# name: how the input is cut from BASE (a numpy-style view; the same on either library)
VIEWS = {
    "transposed": lambda t: t.t(),
    "step_slice": lambda t: t[:, ::2],
    "window": lambda t: t[1:3, 2:5],
    "transposed_slice": lambda t: t.t()[1::2],
}


def _input(lib, view):
    x = view(lib.tensor(BASE, dtype=lib.float64)).detach().requires_grad_()
    assert not x.is_contiguous()
    return x


def wrong_backward(lib):
    """x * x whose backward forgets the factor 2 (gradcheck must reject it)."""
    class WrongBackward(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * a  # missing the factor 2
    return WrongBackward.apply


@pytest.mark.parametrize("view", VIEWS.values(), ids=list(VIEWS))
def test_non_contiguous_inputs(view):
    for lib in (fgrad.torch, torch):
        x = _input(lib, view)
        # element-wise and mixing functions: every Jacobian entry needs the right element moved
        assert lib.autograd.gradcheck(lambda a: (a.sin() * a).cumsum(0), (x,))
        assert lib.autograd.gradcheck(lambda a: a @ a.t(), (x,))
        assert lib.autograd.gradgradcheck(lambda a: (a.exp() * a).sum(1), (x,))
        assert lib.autograd.gradcheck(wrong_backward(lib), (x,), raise_exception=False) is False


@pytest.mark.parametrize("view", VIEWS.values(), ids=list(VIEWS))
def test_numerical_jacobian_matches_torch(view):
    """The Jacobian gradcheck estimates is torch's exact one (torch.autograd.functional.jacobian
    of the same function): columns in the input's row-major order, whatever its strides."""
    from fgrad.torch.gradcheck import _numerical

    x = _input(fgrad.torch, view)
    num = _numerical(lambda a: (a.sin() * a).cumsum(0), (x,), 0, 0, 1e-6)
    t = _input(torch, view)
    want = torch.autograd.functional.jacobian(lambda a: (a.sin() * a).cumsum(0), t)
    np.testing.assert_allclose(num, want.reshape(num.shape).numpy(), rtol=1e-7, atol=1e-8)


def test_the_input_is_restored():
    x = _input(fgrad.torch, VIEWS["transposed"])
    before = x.detach().numpy().copy()
    fgrad.torch.autograd.gradcheck(lambda a: a * a, (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)


def test_stride_zero_input_is_refused_as_by_torch():
    msgs = []
    for lib in (fgrad.torch, torch):
        z = lib.tensor([1.0, 2.0], dtype=lib.float64).expand(3, 2).detach().requires_grad_()
        with pytest.raises(RuntimeError, match="stride 0") as info:
            lib.autograd.gradcheck(lambda a: a.exp(), (z,))
        msgs.append(str(info.value).split("\n")[0])
    assert msgs[0].startswith(msgs[1])
