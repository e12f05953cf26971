"""The Tensor facade: dtypes, factories, autograd semantics, in-place ops, errors, memory.
(PyTorch parity is checked in test_tensor_torch.py; the seed articles in test_seeds.py.)"""
import gc
import re
import sys
import threading
import tracemalloc
import warnings

import numpy as np
import pytest

import fgrad
import fgrad.torch as torch
import fgrad.numpy as fnp
from fgrad.interpreters.backward import FREED_MESSAGE
from fgrad.torch._tensor.tensor import Node, Tensor


def close(t, expected, rtol=1e-6, atol=1e-6):
    got = t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


# --- dtypes and creation ------------------------------------------------------------------------

@pytest.mark.parametrize("data, dtype", [
    (1.5, torch.float32), (2, torch.int64), (True, torch.bool), ([1.0, 2.0], torch.float32),
    ([1, 2], torch.int64), ([True, 1], torch.int64), ([1, 2.5], torch.float32), ([[1], [2]], torch.int64),
    ([], torch.float32), (np.array([1.0, 2.0]), torch.float64), (np.float64(2.0), torch.float64),
    (np.array([1, 2], np.int32), torch.int32), (np.array(3, np.uint8), torch.uint8), (1 + 2j, torch.complex64),
])
def test_tensor_infers_dtypes_like_pytorch(data, dtype):
    t = torch.tensor(data)
    assert t.dtype == dtype and t.dtype is dtype
    assert t.is_leaf and not t.requires_grad and t.grad_fn is None


def test_dtype_objects():
    assert repr(torch.float32) == "torch.float32" and str(torch.int64) == "torch.int64"
    assert torch.float32 == np.float32 and torch.float32 == np.dtype("float32") and torch.float32 != torch.float64
    assert torch.float is torch.float32 and torch.double is torch.float64 and torch.long is torch.int64
    assert torch.int is torch.int32 and torch.bool == np.bool_ and torch.half is torch.float16
    assert np.zeros(2, dtype=torch.float16).dtype == np.float16  # NumPy accepts them
    assert torch.float32.is_floating_point and not torch.int64.is_floating_point
    assert {torch.float32: 1}[torch.float32] == 1
    assert torch.tensor([1, 2], dtype=torch.float64).dtype == torch.float64
    assert torch.tensor([1, 2], dtype=float).dtype == torch.float64  # Python float means double
    assert torch.tensor([1.5], dtype=torch.int32).tolist() == [1]


def test_default_dtype_can_be_changed():
    assert torch.get_default_dtype() == torch.float32
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.tensor(1.5).dtype == torch.float64 and torch.ones(2).dtype == torch.float64
        assert repr(torch.tensor([1.0])) == "tensor([1.])"
    finally:
        torch.set_default_dtype(torch.float32)
    with pytest.raises(TypeError, match="floating-point"):
        torch.set_default_dtype(torch.int64)


def test_tensor_copies_and_from_numpy_shares():
    a = np.array([1.0, 2.0])
    t = torch.tensor(a)
    a[0] = 10
    assert t.tolist() == [1.0, 2.0]
    s = torch.from_numpy(a)
    a[1] = 20
    assert s.tolist() == [10.0, 20.0] and s.dtype == torch.float64
    s.add_(1)
    assert a.tolist() == [11.0, 21.0]
    assert torch.is_tensor(s) and not torch.is_tensor(a)
    with pytest.raises(TypeError, match="np.ndarray"):
        torch.from_numpy([1, 2])


def test_legacy_constructor():
    assert torch.Tensor([1, 2]).dtype == torch.float32
    assert torch.Tensor(2, 3).shape == (2, 3)
    assert isinstance(torch.tensor(1.0), torch.Tensor)


def test_factories():
    assert torch.zeros(2, 3).shape == (2, 3) and torch.zeros((2, 3)).dtype == torch.float32
    assert torch.ones([4]).tolist() == [1.0] * 4
    assert torch.full((2,), 7).dtype == torch.int64 and torch.full((2,), 7.0).dtype == torch.float32
    assert torch.full((2,), True).dtype == torch.bool
    assert torch.empty(3, dtype=torch.float64).dtype == torch.float64
    assert torch.arange(5).tolist() == [0, 1, 2, 3, 4] and torch.arange(5).dtype == torch.int64
    assert torch.arange(0, 1, 0.25).dtype == torch.float32
    close(torch.arange(0, 1, 0.25), [0, 0.25, 0.5, 0.75])
    close(torch.linspace(0, 1, 5), [0, 0.25, 0.5, 0.75, 1.0])
    close(torch.eye(2, 3), np.eye(2, 3))
    assert torch.zeros(2, requires_grad=True).requires_grad
    x = torch.ones(2, 3, dtype=torch.float64)
    for like in (torch.zeros_like, torch.ones_like, torch.rand_like, torch.randn_like, torch.empty_like):
        y = like(x)
        assert y.shape == (2, 3) and y.dtype == torch.float64
    assert torch.full_like(x, 3.0).tolist() == [[3.0] * 3] * 2
    assert torch.randint(0, 10, (50,)).dtype == torch.int64
    assert 0 <= int(torch.randint(3, (20,)).min()) and int(torch.randint(3, (20,)).max()) < 3
    assert sorted(torch.randperm(5).tolist()) == [0, 1, 2, 3, 4]
    r = torch.rand(1000)
    assert r.dtype == torch.float32 and 0 <= float(r.min()) and float(r.max()) < 1
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.zeros(-1)


def test_manual_seed_reproducible():
    torch.manual_seed(123)
    a = torch.randn(5)
    b = torch.rand(3)
    torch.manual_seed(123)
    assert torch.equal(a, torch.randn(5)) and torch.equal(b, torch.rand(3))
    g = torch.Generator().manual_seed(7)
    assert torch.equal(torch.randn(4, generator=g), torch.randn(4, generator=torch.Generator().manual_seed(7)))


# --- attributes ------------------------------------------------------------------------------------

def test_attributes():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x.shape == (2, 3) and repr(x.shape) == "torch.Size([2, 3])" and x.size() == x.shape
    assert x.size(1) == 3 and x.size(-1) == 3 and x.dim() == 2 and x.ndim == 2 and x.numel() == 6
    assert len(x) == 2 and x.is_leaf and x.requires_grad and x.grad is None and x.grad_fn is None
    assert repr(x.device) == "device(type='cpu')" and x.device == "cpu" and x.device == torch.device("cpu")
    assert not x.is_cuda and x.is_floating_point() and x.element_size() == 4
    y = x * 2
    assert not y.is_leaf and y.requires_grad and y.grad_fn.name() == "MulBackward0"
    (acc, k), (const, k2) = y.grad_fn.next_functions
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x and k == 0
    assert const is None
    assert re.fullmatch(r"<AccumulateGrad object at 0x[0-9a-f]+>", repr(acc))
    assert y.grad_fn.next_functions[0][0] is (x + 1).grad_fn.next_functions[0][0]  # one node per leaf
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(2)
    assert torch.device("cuda:1").index == 1 and str(torch.device("cuda", 0)) == "cuda:0"
    assert repr(torch.device("cuda:1")) == "device(type='cuda', index=1)"


def test_item_tolist_numpy():
    x = torch.tensor([1.5, 2.5], requires_grad=True)
    assert x[0].item() == 1.5 and x.tolist() == [1.5, 2.5] and float(x.sum()) == 4.0
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    n = x.detach().numpy()
    n[0] = 9  # shares memory, as in PyTorch
    assert x.tolist() == [9.0, 2.5]
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        x.item()
    assert int(torch.tensor(3)) == 3 and [10, 20, 30][torch.tensor(1)] == 20
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(torch.tensor([1.0, 2.0]))
    assert bool(torch.tensor([0.5]))
    assert np.asarray(torch.tensor([1, 2])).tolist() == [1, 2]


def test_data_detach_clone():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.is_leaf
    d.mul_(3)  # shares storage: the SGD idiom p.data -= lr * grad
    assert w.tolist() == [3.0, 6.0]
    v = w._version
    det = w.detach()
    assert not det.requires_grad
    with torch.no_grad():
        w.add_(1)
    assert det.tolist() == [4.0, 7.0] and det._version == w._version == v + 1  # shared version counter
    c = w.clone()
    assert c.requires_grad and not c.is_leaf
    c.sum().backward()
    close(w.grad, [1, 1])
    c2 = w.detach().clone()
    c2.add_(1)
    assert w.tolist() == [4.0, 7.0]
    y = (w * 2).detach_()
    assert y.is_leaf and not y.requires_grad


def test_type_conversions():
    x = torch.tensor([1.7, -2.2], requires_grad=True)
    assert x.float() is x and x.to(torch.float32) is x
    d = x.double()
    assert d.dtype == torch.float64 and d.grad_fn.name() == "ToCopyBackward0"
    d.sum().backward()
    assert x.grad.dtype == torch.float32 and x.grad.tolist() == [1.0, 1.0]
    assert x.long().tolist() == [1, -2] and x.int().dtype == torch.int32 and x.bool().tolist() == [True, True]
    assert x.type_as(torch.tensor([1])).dtype == torch.int64
    assert x.type() == "torch.FloatTensor" and x.type(torch.float64).dtype == torch.float64
    assert x.to("cpu") is x and x.cpu() is x


# --- grad modes ---------------------------------------------------------------------------------------

def test_grad_modes():
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        y = x * 2
        with torch.enable_grad():
            z = x * 2
    assert torch.is_grad_enabled() and not y.requires_grad and z.requires_grad

    @torch.no_grad()
    def f(a):
        return a * 2

    @torch.no_grad
    def g(a):
        return a * 2
    assert not f(x).requires_grad and not g(x).requires_grad

    torch.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad

    @torch.set_grad_enabled(False)
    def h(a):
        return a * 2
    assert torch.is_grad_enabled() and not h(x).requires_grad

    @torch.no_grad()
    def gen():
        yield (x * 2).requires_grad
        yield (x * 2).requires_grad
    assert list(gen()) == [False, False] and torch.is_grad_enabled()
    with torch.inference_mode():
        assert not (x * 2).requires_grad


def test_grad_mode_is_per_thread():
    x = torch.tensor([1.0], requires_grad=True)
    seen = []
    with torch.no_grad():
        t = threading.Thread(target=lambda: seen.append((x * 2).requires_grad))
        t.start()
        t.join()
    assert seen == [True]


# --- backward semantics --------------------------------------------------------------------------

def test_backward_accumulates_and_create_graph():
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    y = (x ** 3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    close(g, [12, 27])
    assert g.requires_grad and g.grad_fn is not None
    g.sum().backward()
    close(x.grad, [12, 18])  # d/dx sum(3 x^2) = 6x
    (x ** 2).sum().backward(create_graph=True)
    close(x.grad, [16, 24])
    assert x.grad.requires_grad  # create_graph: the accumulated grad has history
    x.grad = None
    y = (x.exp() * x.sin()).sum()
    y.backward(create_graph=True)
    gx = x.grad
    (h,) = torch.autograd.grad(gx.sum(), x)
    xv = np.array([2.0, 3.0])
    close(h, np.exp(xv) * (2 * np.cos(xv)), rtol=1e-5)  # (e^x sin x)'' = 2 e^x cos x


def test_backward_inputs_and_leaf_backward():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    (a * b).sum().backward(inputs=[a])
    close(a.grad, [3, 4])
    assert b.grad is None
    c = torch.tensor(2.0, requires_grad=True)
    c.backward()
    assert c.grad.item() == 1.0
    h = a * 2
    (h * h).sum().backward(inputs=[h])
    close(h.grad, [4, 8])
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (a * 2).sum().backward(inputs=[])


def test_autograd_backward_function_and_grad_outputs():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y1, y2 = x * 2, x ** 2
    torch.autograd.backward([y1, y2], [torch.ones(2), torch.tensor([1.0, 0.5])])
    close(x.grad, [2 + 2, 2 + 2])
    (g,) = torch.autograd.grad(x * 3, x, grad_outputs=torch.tensor([1.0, 2.0]))
    close(g, [3, 6])
    assert torch.autograd.grad((x * 2).sum(), [x, torch.ones(1, requires_grad=True)], allow_unused=True)[1] is None
    gz = torch.autograd.grad((x * 2).sum(), [x, torch.ones(1, requires_grad=True)], materialize_grads=True)[1]
    assert gz.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="at index 1 appears to not have been used in the graph"):
        torch.autograd.grad((x * 2).sum(), [x, torch.ones(1, requires_grad=True)])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(torch.ones(3))
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        torch.ones(2).sum().backward()
    # grad of a non-leaf input, and the graph is still usable with retain_graph
    h = x * x
    out = (h * 3).sum()
    (gh,) = torch.autograd.grad(out, h, retain_graph=True)
    close(gh, [3, 3])
    (gx,) = torch.autograd.grad(out, x)
    close(gx, [6, 12])


def test_retain_grad_and_hooks():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    close(y.grad, [4, 8])
    z.backward()
    close(y.grad, [8, 16])  # retained grads accumulate too
    x.grad = None
    h = x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    close(x.grad, [30, 30])
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    close(x.grad, [3, 3])
    seen = []
    y = x * 2
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.register_hook(lambda g: g + 1)
    y.retain_grad()
    y.sum().backward()
    assert seen == [[1.0, 1.0]]
    close(y.grad, [2, 2])  # the retained gradient is the hooked one
    close(x.grad, [3 + 4, 3 + 4])
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        torch.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        torch.ones(2).retain_grad()


def test_requires_grad_flags():
    x = torch.ones(2)
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad
    y = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    assert (torch.ones(2) * torch.ones(2, requires_grad=True)).requires_grad
    assert not (torch.ones(2, requires_grad=True) > 0).requires_grad  # bool results have no grad
    assert not torch.ones(2, requires_grad=True).argmax().requires_grad


# --- errors: type and message, then a correct computation right after --------------------------------

def test_error_integer_requires_grad():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        torch.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        torch.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        torch.zeros(2, dtype=torch.int64, requires_grad=True)
    x = torch.tensor([1, 2]).float().requires_grad_()
    (x * x).sum().backward()
    close(x.grad, [2, 4])


def test_error_nonscalar_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs") as e:
        y.backward()
    assert "(2,)" in str(e.value)
    y.backward(torch.ones(2))
    close(x.grad, [2, 2])


def test_error_second_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as e:
        y.backward()
    # PyTorch's text exactly, then fgrad's "at <your line>" and docs link (core/errors.py)
    assert e.value.args[0] == FREED_MESSAGE and str(e.value).startswith(FREED_MESSAGE + "\n  at ")
    with pytest.raises(RuntimeError, match="second time"):
        torch.autograd.grad(y, x)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    close(x.grad, [2 + 4, 4 + 8])


class _FakeGpuArray:
    """Looks like a CuPy array to the device check (no GPU needed to test the message)."""

    __module__ = "cupy._core.core"

    class device:
        id = 0

    def __init__(self, shape):
        self.shape, self.dtype, self.ndim = shape, np.dtype(np.float32), len(shape)


def test_error_mixing_devices():
    from fgrad.torch._tensor.tensor import _make
    gpu = _make(_FakeGpuArray((3,)))
    cpu = torch.ones(3)
    with pytest.raises(RuntimeError) as e:
        cpu + gpu
    msg = str(e.value)
    assert "Expected all tensors to be on the same device" in msg and "cuda:0" in msg and "cpu" in msg
    close(cpu + cpu, [2, 2, 2])


def test_error_cuda_unavailable(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_cupy)
    with pytest.raises(RuntimeError, match=r"CuPy is not installed: pip install fgrad\[cuda\]"):
        torch.ones(2).cuda()
    with pytest.raises(RuntimeError, match="CuPy is not installed"):
        torch.zeros(2, device="cuda")
    assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
    monkeypatch.setattr(builtins, "__import__", real_import)

    class FakeRuntime:
        @staticmethod
        def getDeviceCount():
            raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    fake = type(sys)("cupy")
    fake.cuda = type(sys)("cupy.cuda")
    fake.cuda.runtime = FakeRuntime
    monkeypatch.setitem(sys.modules, "cupy", fake)
    with pytest.raises(RuntimeError, match="no GPU visible"):
        torch.ones(2).to("cuda")
    close(torch.ones(2).to("cpu"), [1, 1])


def test_error_inplace_on_saved_tensor():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0])
    y = (w * x).sum()
    x.mul_(2)  # x was saved by mul for w's gradient
    with pytest.raises(RuntimeError) as e:
        y.backward()
    msg = str(e.value)
    assert msg.startswith("one of the variables needed for gradient computation has been modified by an "
                          "inplace operation: [torch.FloatTensor [3]] is at version 1; expected version 0 instead.")
    # an optimizer step between forward and backward: the leaf was saved
    loss = (w * w).sum()
    with torch.no_grad():
        w.sub_(0.5)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        loss.backward()
    # a saved output: exp's derivative is its output
    a = w.exp()
    with torch.no_grad():
        a.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\], which is output 0 of ExpBackward0, "
                                           r"is at version 1; expected version 0"):
        a.sum().backward()
    # values whose derivative does not need them may change (as in PyTorch)
    y = (w + x).sum()
    x.add_(1)
    y.backward()
    close(w.grad, [1, 1, 1])
    # and a correct computation right after
    w.grad = None
    (w * x).sum().backward()
    close(w.grad, x.tolist())


def test_error_inplace_on_leaf():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError,
                       match="a leaf Variable that requires grad is being used in an in-place operation."):
        w.add_(1)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w += 1
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w[0] = 5
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        w.view(2).mul_(2)
    assert w.tolist() == [1.0, 2.0] and w._version == 0
    with torch.no_grad():
        w -= 0.5
        w[1] = 7.0
    assert w.tolist() == [0.5, 7.0] and w._version == 2 and w.is_leaf


def test_error_shape_mismatch_names_both_shapes():
    a, b = torch.ones(2, 3), torch.ones(4, 3)
    with pytest.raises(RuntimeError) as e:
        a + b
    assert "(2, 3)" in str(e.value) and "(4, 3)" in str(e.value)
    assert "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0" in str(e.value)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x3\)"):
        a @ b
    with pytest.raises(RuntimeError, match=r"Sizes of tensors must match except in dimension 0.*\(2, 3\) and \(4, 2\)"):
        torch.cat([a, torch.ones(4, 2)])
    with pytest.raises(RuntimeError, match=r"shape '\[4\]' is invalid for input of size 6"):
        a.view(4)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack([a, b])
    # the functional namespace raises the same (ShapeError is both ValueError and RuntimeError)
    with pytest.raises(RuntimeError, match=r"\(2, 3\) and \(4, 3\)"):
        fnp.add(np.ones((2, 3)), np.ones((4, 3)))
    close(a + b[:2], np.full((2, 3), 2.0))


# --- in-place operations ---------------------------------------------------------------------------

def test_inplace_on_plain_tensors_and_versions():
    x = torch.zeros(3)
    assert x._version == 0
    x.add_(1).mul_(3)
    x += 1
    x[0] = 10
    assert x.tolist() == [10.0, 4.0, 4.0] and x._version == 4
    x.zero_()
    assert x.tolist() == [0.0, 0.0, 0.0]
    x.fill_(2.5)
    x.copy_(torch.tensor([1.0, 2.0, 3.0]))
    x.clamp_(min=1.5)
    assert x.tolist() == [1.5, 2.0, 3.0]
    m = torch.tensor([True, False, True])
    x.masked_fill_(m, 0.0)
    assert x.tolist() == [0.0, 2.0, 0.0]
    i = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.zeros(3).add_(torch.ones(2, 3))
    row = torch.zeros(2, 3)
    row[0].fill_(1)  # a view: writes through to its base
    assert row.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


def test_inplace_on_graph_tensor_rebases_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0" and y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    y.mul_(x)  # needs y's old value: kept intact by the rebinding
    y.sum().backward()
    close(x.grad, 6 * np.array([1.0, 2.0]) + 1)  # d/dx (3x + 1) x
    x.grad = None
    y = x * 2
    y[0] = x[1] * 5
    y.sum().backward()
    close(x.grad, [0, 2 + 5])
    x.grad = None
    y = x * 2.0
    y.zero_()  # a constant over a graph tensor: zero gradient to its history
    assert y.requires_grad
    (y + x).sum().backward()
    close(x.grad, [1, 1])
    x.grad = None
    y = x.exp()  # exp saves its output, so overwriting it breaks backward, as in PyTorch
    y.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (y + x).sum().backward()
    y = x * 1.0
    y.retain_grad()
    y.add_(1)
    (y * y).sum().backward()
    close(y.grad, 2 * (x.detach() + 1).numpy())  # retain_grad follows the rebased tensor


def test_sgd_style_update_under_no_grad():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    target = torch.tensor([1.0, -2.0, 0.5])
    for _ in range(200):
        loss = ((w - target) ** 2).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        w.grad.zero_()
    close(w, target.numpy(), atol=1e-4)
    assert w.is_leaf and w.requires_grad


# --- the functional API on Tensors equals .backward() ------------------------------------------------

FUNCTIONS = [
    lambda x: (x ** 2).sum(),
    lambda x: (x.sin() * x.exp()).sum(),
    lambda x: torch.tanh(x).mean(),
    lambda x: (x / (1 + x * x)).sum(),
    lambda x: torch.sigmoid(x).prod(),
    lambda x: x.softmax(0)[0],
    lambda x: x.log_softmax(0).sum() + x.max(),
    lambda x: (x.reshape(2, 2) @ x.reshape(2, 2).t()).sum(),
    lambda x: torch.cat([x, x * 2]).std(),
    lambda x: torch.stack([x, x.cos()], 1).var(0).sum(),
    lambda x: torch.where(x > 0, x, -2 * x).sum(),
    lambda x: x.clamp(-0.5, 0.5).pow(3).sum(),
    lambda x: x.norm(),
    lambda x: (x.unsqueeze(0).expand(3, 4) * torch.arange(3.0).unsqueeze(1)).sum(),
    lambda x: x[1:3].abs().sum() + x[[0, 3]].sum() * 2,
    lambda x: torch.logsumexp(x, 0) + torch.relu(x).sum(),
    lambda x: x.repeat(2).sqrt().sum() if bool((x > 0).all()) else (x * x).repeat(2).sum(),
    lambda x: (x.double() ** 3).sum().float(),
]


@pytest.mark.parametrize("k", range(len(FUNCTIONS)))
def test_backward_equals_functional_grad(k):
    f = FUNCTIONS[k]
    x = torch.tensor([0.3, -1.2, 0.8, 2.0], dtype=torch.float64, requires_grad=True)
    f(x).backward()
    g = fgrad.torch.func.grad(f)(x.detach())  # (fgrad.grad takes arrays; Tensors take torch.func)
    assert isinstance(g, Tensor) and not g.requires_grad
    close(x.grad, g.numpy(), rtol=1e-12, atol=1e-12)
    # second order too: Hessian-vector product through create_graph vs fgrad.grad of fgrad.grad
    v = torch.tensor([1.0, -0.5, 0.25, 2.0], dtype=torch.float64)
    x.grad = None
    (gx,) = torch.autograd.grad(f(x), x, create_graph=True)
    # (a piecewise-linear f has a constant gradient: no graph, a zero Hessian)
    hv = torch.autograd.grad((gx * v).sum(), x, allow_unused=True)[0] if gx.requires_grad else None
    tf = fgrad.torch.func
    hv_fn = tf.grad(lambda y: (tf.grad(f)(y) * v).sum())(x.detach())
    close(hv if hv is not None else np.zeros(4), hv_fn.numpy(), rtol=1e-10, atol=1e-10)


def test_torch_func_transforms_take_tensors_and_fgrads_refuse_them():
    x = torch.tensor([1.0, 2.0])
    tf = fgrad.torch.func  # the facade's door: fgrad's transforms on the Tensors' values
    assert isinstance(tf.grad(lambda t: (t * t).sum())(x), Tensor)
    out, vjp_fn = tf.vjp(lambda t: t.sin(), x)
    assert isinstance(out, Tensor)
    close(vjp_fn(torch.ones(2))[0], np.cos([1.0, 2.0]))
    _, t_out = tf.jvp(lambda t: t.exp(), (x,), (torch.ones(2),))
    close(t_out, np.exp([1.0, 2.0]), rtol=1e-6)
    j = tf.jacrev(lambda t: t * t)(x)
    close(j, np.diag([2.0, 4.0]))
    with pytest.raises(TypeError, match=r"fgrad\.make_jaxpr got a fgrad\.torch\.Tensor"):
        fgrad.make_jaxpr(lambda t: (t * 2).sum())(x)
    jaxpr = str(fgrad.make_jaxpr(lambda t: (t * 2).sum())(x.numpy()))
    assert "mul" in jaxpr and "reduce_sum" in jaxpr


# --- autograd.Function -------------------------------------------------------------------------

class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class ScaleClip(torch.autograd.Function):
    """Two inputs, a non-Tensor argument, a custom (clipped) gradient."""

    @staticmethod
    def forward(ctx, x, w, limit):
        ctx.save_for_backward(x, w)
        ctx.limit = limit
        assert ctx.needs_input_grad == (True, False, False)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return (g * w).clamp(-ctx.limit, ctx.limit), None, None


class SplitSigns(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clamp(min=0), x.clamp(max=0), (x > 0).sum()

    @staticmethod
    def backward(ctx, gpos, gneg, gcount):
        return gpos * 2 + gneg * 3


def test_autograd_function():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Exp.apply(x)
    assert repr(y.grad_fn).startswith("<ExpBackward object")
    assert y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    close(x.grad, np.exp([1.0, 2.0]), rtol=1e-6)
    (g,) = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    close(h, np.exp([1.0, 2.0]), rtol=1e-6)
    close(fgrad.torch.func.grad(lambda t: Exp.apply(t).sum())(torch.tensor([0.5])), [np.exp(0.5)], rtol=1e-6)
    w = torch.tensor([10.0, -10.0])
    x.grad = None
    ScaleClip.apply(x, w, 3.0).sum().backward()
    close(x.grad, [3.0, -3.0])
    with torch.no_grad():
        assert not Exp.apply(x).requires_grad
    x.grad = None
    pos, neg, count = SplitSigns.apply(torch.tensor([-1.0, 2.0]).requires_grad_())
    assert count.item() == 1 and not count.requires_grad
    z = torch.tensor([-1.0, 2.0], requires_grad=True)
    pos, neg, _ = SplitSigns.apply(z)
    (pos.sum() + neg.sum()).backward()
    close(z.grad, [5.0, 5.0])


def test_autograd_function_saved_tensor_version_check():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Exp.apply(x)
    with torch.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# --- printing ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, text", [
    (lambda: torch.tensor(8.0), "tensor(8.)"),
    (lambda: torch.tensor([1.5, 2.0]), "tensor([1.5000, 2.0000])"),
    (lambda: torch.tensor([1, 2]), "tensor([1, 2])"),
    (lambda: torch.tensor([1, 10, -100]), "tensor([   1,   10, -100])"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: torch.tensor([1.0, 2.0], dtype=torch.float64), "tensor([1., 2.], dtype=torch.float64)"),
    (lambda: torch.tensor([1, 2], dtype=torch.int32), "tensor([1, 2], dtype=torch.int32)"),
    (lambda: torch.tensor([]), "tensor([])"),
    (lambda: torch.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: torch.tensor([4.0], requires_grad=True), "tensor([4.], requires_grad=True)"),
    (lambda: torch.tensor([3.0], requires_grad=True) * 2, "tensor([6.], grad_fn=<MulBackward0>)"),
    (lambda: torch.tensor([[1.5, float("nan")], [float("inf"), -2]]),
     "tensor([[ 1.5000,     nan],\n        [    inf, -2.0000]])"),
    (lambda: torch.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
])
def test_repr(make, text):
    assert repr(make()) == text


# --- NumPy interop ------------------------------------------------------------------------------------

def test_numpy_interop():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = np.array([2.0, 3.0], np.float32) * x
    assert isinstance(y, Tensor) and y.requires_grad and y.grad_fn.name() == "MulBackward0"
    assert np.float32(2.0) * x is not None
    assert isinstance(np.sqrt(torch.tensor([4.0])), Tensor)
    assert np.array(torch.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(x)
    # fgrad.numpy (the functional door) computes on arrays: a Tensor is refused, naming the
    # torch function of that name and the way to pass the values
    with pytest.raises(TypeError, match=r"fgrad\.numpy\.sum got a fgrad\.torch\.Tensor: use fgrad\.torch\.sum"):
        fnp.sum(torch.tensor([1.0, 2.0]))
    assert fnp.sum(torch.tensor([1.0, 2.0]).numpy()) == 3.0


# --- devices ---------------------------------------------------------------------------------------------

@pytest.mark.skipif(not fgrad.torch.cuda.is_available(), reason="needs CuPy and a GPU")
def test_cuda_roundtrip_and_gradients():
    x = torch.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    assert x.device == torch.device("cuda:0") and x.is_cuda
    assert repr(x) == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    y = (x.sin() * x.exp() + 2.0 * x).sum()
    y.backward()
    close(x.grad.cpu(), np.cos([1, 2]) * np.exp([1, 2]) + np.sin([1, 2]) * np.exp([1, 2]) + 2, rtol=1e-5)
    c = torch.tensor([1.0, 2.0], requires_grad=True)
    (c.cuda() * 3).sum().backward()
    assert c.grad.device == torch.device("cpu") and c.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="same device"):
        x + torch.ones(2)


# --- memory ------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_training_steps_leak_nothing_and_make_no_cycles():
    """10,000 forward/backward/update steps with the cycle collector off: memory stays flat
    (graphs are freed by reference counting) and gc finds no fgrad object to collect."""
    torch.manual_seed(0)
    w = torch.randn(8, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    x = torch.randn(8)
    target = torch.tensor(0.5)

    def step():
        h = torch.tanh(w * x + b)
        loss = ((h.sum() - target) ** 2) + (w * w).mean() * 0.01
        loss.backward()
        with torch.no_grad():
            w.sub_(0.01 * w.grad)
            b.sub_(0.01 * b.grad)
        w.grad = None
        b.grad.zero_()

    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        # warm-up: the first ~2500 steps still fill bounded pools (CPython's free lists and
        # obmalloc arenas, NumPy's caches), more of them since broadcasting ops record one
        # node through the boundary; afterwards the count stays flat
        for _ in range(3000):
            step()
        blocks = sys.getallocatedblocks()  # every Python object allocated, cheap to read
        for _ in range(7000):
            step()
        grown_blocks = sys.getallocatedblocks() - blocks
        tracemalloc.start()  # bytes, over a shorter window (tracing slows every allocation)
        for _ in range(100):
            step()
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(900):
            step()
        second, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        gc.set_debug(gc.DEBUG_SAVEALL)  # keep what the collector finds, to look at it
        gc.collect()
        cyclic = [o for o in gc.garbage if type(o).__module__.startswith("fgrad")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    assert grown_blocks < 200, f"{grown_blocks} more memory blocks after 7000 steps"
    assert second - first < 16 * 1024, f"memory grew by {second - first} bytes over 900 steps"
    assert not cyclic, f"fgrad objects in reference cycles: {cyclic[:5]}"
    assert float(((torch.tanh(w * x + b).sum() - target) ** 2)) < 0.01  # and it trained


def test_graph_is_freed_when_output_dies():
    import weakref
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).exp()
    node = weakref.ref(y.grad_fn)
    acc = weakref.ref(y.grad_fn.next_functions[0][0].next_functions[0][0])
    del y
    assert node() is None and acc() is None  # no cycle keeps them: refcounting frees them
    assert x._acc() is None


def test_pickle_deepcopy_contains():
    import copy
    import pickle
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    for u in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert u.tolist() == [1.0, 2.0] and u.requires_grad and u.is_leaf and u is not t
        assert u._value is not t._value
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(t * 2)
    assert 2.0 in t and 3.0 not in t


def test_empty_is_zeros_never_stale_memory():
    # freed buffers of the same size, full of 7s, are what an uninitialised allocation reuses
    for _ in range(20):
        np.full(64, 7.0).sum()
        t = torch.empty(64)
        assert t.tolist() == [0.0] * 64
        assert torch.empty_like(torch.ones(8, 8)).tolist() == [[0.0] * 8] * 8
