"""Tensor.copy_ and the in-place ops where source and destination share memory, against
torch 2.13 on the CPU: a partial overlap (x[1:].copy_(x[:-1]), x[1:].add_(x[:-1]), a tensor
and its transpose) and an expanded destination raise PyTorch's RuntimeError with its message;
the same elements in the same layout, disjoint parts and copies from flips (new tensors in
PyTorch) write as torch does."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

CASES = {
    "shift_right": lambda T, x: x[1:].copy_(x[:-1]),
    "shift_left": lambda T, x: x[:-1].copy_(x[1:]),
    "0d_src_inside": lambda T, x: x.copy_(x[0]),
    "0d_src_outside": lambda T, x: x[1:].copy_(x[0]),
    "1_elem_src_inside": lambda T, x: x[:-1].copy_(x[3:4]),
    "transpose": lambda T, x: x[:4].view(2, 2).copy_(x[:4].view(2, 2).t()),
    "same_layout_view": lambda T, x: x.copy_(x.view(2, 3).reshape(6)),
    "itself": lambda T, x: x.copy_(x),
    "expanded_itself": lambda T, x: x[:1].expand(3).copy_(x[:1].expand(3)),
    "disjoint": lambda T, x: x[:3].copy_(x[3:]),
    "flip": lambda T, x: x.copy_(x.flip(0)),
    "expanded_view_src": lambda T, x: x[1:4].copy_(x[:3].unsqueeze(0).expand(2, 3)[0]),
    "expanded_self": lambda T, x: T.zeros(1).expand(3).copy_(x[:3]),
    "expanded_self_2d": lambda T, x: T.zeros(2).expand(3, 2).copy_(T.ones(3, 2)),
    "interleaved": lambda T, x: x[::2].copy_(x[1::2]),
}


def _run(T, case):
    x = T.arange(6.0)
    try:
        CASES[case](T, x)
    except RuntimeError as e:
        return "error", str(e).splitlines()[0]
    return "ok", x.numpy().tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_copy_overlap_as_torch(case):
    assert _run(ftorch, case) == _run(torch, case)


def test_copy_of_an_expanded_tensor_into_itself_is_a_no_op_that_moves_the_version():
    for T in (torch, ftorch):
        x = T.zeros(1).expand(3)
        before = x._version
        assert x.copy_(x) is x and x._version == before + 1


def test_partial_overlap_refused_inside_a_graph_too():
    for T in (torch, ftorch):
        x = T.arange(5.0, requires_grad=True).clone()
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            x[1:].copy_(x[:-1])


def test_overlap_too_irregular_to_check_reads_the_source_first():
    # strided views (PyTorch does not check these and its result follows its loop order)
    x = ftorch.arange(8.0)
    x[2::2].copy_(x[:-2:2])
    np.testing.assert_array_equal(x.numpy(), [0, 1, 0, 3, 2, 5, 4, 7])


def _inplace_call(name, y, other):
    if name == "lerp_":
        return y.lerp_(other, 0.5)
    if name in ("addcmul_", "addcdiv_"):
        return getattr(y, name)(other, other)
    if name in ("clamp_", "clip_"):
        return getattr(y, name)(min=other)
    if name == "index_add_":
        return y.index_add_(0, _index(y), other[:2])
    return getattr(y, name)(other)


def _index(y):
    lib = ftorch if isinstance(y, ftorch.Tensor) else torch
    return lib.tensor([0, 1])


INPLACE = ["add_", "sub_", "mul_", "div_", "pow_", "remainder_", "fmod_", "floor_divide_", "atan2_", "copysign_",
           "hypot_", "xlogy_", "clamp_", "clamp_min_", "clamp_max_", "lerp_", "addcmul_", "addcdiv_", "index_add_",
           "bitwise_and_", "bitwise_or_", "gcd_", "__iadd__", "__imul__"]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_ops_refuse_partial_overlap_as_torch(name):
    integer = name in ("bitwise_and_", "bitwise_or_", "gcd_")
    for lib in (torch, ftorch):
        x = lib.arange(1, 7) if integer else lib.arange(1.0, 7.0)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            _inplace_call(name, x[1:], x[:-1])
    got, want = (lib.arange(1, 7) if integer else lib.arange(1.0, 7.0) for lib in (ftorch, torch))
    _inplace_call(name, got[3:], got[:3])  # (disjoint halves of one tensor: computed as torch computes)
    _inplace_call(name, want[3:], want[:3])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
