"""PyTorch's gradient layout contract and torch.autograd.enforce_grad_layout_policy, against torch
2.13: a dense parameter's first gradient takes its strides (channels-last conv weights, transposed
matrices), a non-dense one's is row-major, and with the policy off the incoming layout stays."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def _strides(lib, make):
    p = make(lib).detach().requires_grad_()
    (p * 2).sum().backward()
    return p.stride(), p.grad.stride()


MAKERS = {
    "transposed": lambda lib: lib.ones(3, 4).t(),
    "permuted": lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),
    "sliced (not dense)": lambda lib: lib.ones(4, 6)[:, ::2],
    "contiguous": lambda lib: lib.ones(3, 4),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_first_gradient_layout(name):
    assert _strides(ftorch, MAKERS[name]) == _strides(torch, MAKERS[name])


def test_channels_last_conv_weight_gradient():
    strides = []
    for lib in (ftorch, torch):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(3, 4, 3)
        lib.nn.utils.convert_conv2d_weight_memory_format(conv, lib.channels_last)
        conv(lib.ones(1, 3, 5, 5)).sum().backward()
        strides.append((conv.weight.stride(), conv.weight.grad.stride()))
    assert strides[0] == strides[1]


def test_policy_off_and_restored():
    for lib in (ftorch, torch):
        with lib.autograd.enforce_grad_layout_policy(False):
            assert _strides(lib, MAKERS["transposed"]) == ((1, 4), (3, 1))
        assert _strides(lib, MAKERS["transposed"]) == ((1, 4), (1, 4))

        @lib.autograd.enforce_grad_layout_policy(False)
        def relaxed():
            return _strides(lib, MAKERS["transposed"])
        assert relaxed() == ((1, 4), (3, 1))
        assert _strides(lib, MAKERS["transposed"]) == ((1, 4), (1, 4))
    p = ftorch.ones(3, 4).t().requires_grad_()
    (p * ftorch.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), np.arange(12.0).reshape(4, 3))  # values unchanged
