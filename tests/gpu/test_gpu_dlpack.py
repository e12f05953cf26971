"""DLPack on the GPU: fgrad tensors shared with CuPy and PyTorch without a copy, both ways;
a write on either side shows on the other."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gpu._support import host, is_gpu, require_gpu, require_torch_cuda

cp = require_gpu()

import fgrad  # noqa: E402
from fgrad.torch.utils.dlpack import from_dlpack, to_dlpack  # noqa: E402


def _same_memory(t, other_ptr: int) -> bool:
    return t._value.data.ptr == other_ptr


def test_a_gpu_tensor_reports_its_cuda_device():
    t = fgrad.torch.ones(3, device="cuda")
    assert tuple(t.__dlpack_device__()) == (2, 0)  # kDLCUDA, GPU 0


def test_cupy_to_fgrad_and_back_shares_memory():
    c = cp.arange(6, dtype=cp.float32)
    t = fgrad.torch.from_dlpack(c)
    assert t.is_cuda and is_gpu(t) and t.dtype == fgrad.torch.float32 and _same_memory(t, c.data.ptr)
    c[0] = 42.0
    assert t[0].item() == 42.0
    t.mul_(2.0)  # an in-place op on the tensor writes the shared buffer
    assert float(c[1]) == 2.0
    back = cp.from_dlpack(t)
    assert back.data.ptr == c.data.ptr
    back[5] = -1.0
    assert t[5].item() == -1.0


def test_capsules_round_trip_through_cupy():
    t = fgrad.torch.arange(4, dtype=fgrad.torch.float64, device="cuda")
    c = cp.from_dlpack(to_dlpack(t))  # CuPy takes a bare capsule too
    c += 1
    np.testing.assert_array_equal(host(t), [1.0, 2.0, 3.0, 4.0])
    u = from_dlpack(c.__dlpack__())  # a bare capsule: its device is read from the capsule
    assert u.is_cuda
    u[0] = 9.0
    assert float(c[0]) == 9.0


def test_fgrad_and_pytorch_cuda_share_memory_both_ways():
    torch = require_torch_cuda()
    a = torch.arange(5, dtype=torch.float32, device="cuda")
    t = fgrad.torch.from_dlpack(a)
    assert t.is_cuda and t.dtype == fgrad.torch.float32 and t._value.data.ptr == a.data_ptr()
    a[0] = 7.0
    torch.cuda.synchronize()
    assert t[0].item() == 7.0
    t.add_(1.0)
    fgrad.torch.cuda.synchronize()
    assert a[1].item() == 2.0
    b = torch.from_dlpack(fgrad.torch.ones(3, device="cuda"))
    assert b.is_cuda and b.dtype == torch.float32
    tt = fgrad.torch.zeros(3, device="cuda")
    tb = torch.from_dlpack(tt)
    assert tb.data_ptr() == tt._value.data.ptr
    tb.fill_(3.0)
    torch.cuda.synchronize()
    assert tt.tolist() == [3.0, 3.0, 3.0]
    via_capsule = torch.utils.dlpack.from_dlpack(to_dlpack(tt))
    assert via_capsule.data_ptr() == tt._value.data.ptr
    back = fgrad.torch.from_dlpack(torch.utils.dlpack.to_dlpack(a))
    assert back._value.data.ptr == a.data_ptr()


def test_gpu_tensor_requiring_grad_is_not_exported():
    t = fgrad.torch.ones(2, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="require gradient"):
        cp.from_dlpack(t)
    cp.from_dlpack(t.detach())  # detached: fine


def test_from_dlpack_device_and_copy_arguments():
    c = cp.ones(3, dtype=cp.float32)
    on_cpu = fgrad.torch.from_dlpack(c, device="cpu")
    assert not on_cpu.is_cuda and on_cpu.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="copy=False"):
        fgrad.torch.from_dlpack(c, device="cpu", copy=False)
    copied = fgrad.torch.from_dlpack(c, copy=True)
    copied.zero_()
    assert float(c[0]) == 1.0
