"""The PyTorch-style facade on the GPU: Tensor.cuda() / .to("cuda"), factories with
device="cuda", autograd, nn.Module.to("cuda"), optimisers, a DataLoader batch moved with
.to(device), fgrad.torch.cuda's functions, a training loop, state_dicts across devices, and
PyTorch's RuntimeError when one op mixes devices."""
from __future__ import annotations

import io

import numpy as np
import pytest

from tests.gpu._support import host, is_gpu, require_gpu

cp = require_gpu()

import fgrad  # noqa: E402
from fgrad.torch import nn  # noqa: E402
from fgrad.torch.utils.data import DataLoader, TensorDataset  # noqa: E402

CUDA = fgrad.torch.device("cuda", 0)


def _mlp():
    fgrad.torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))


def _batch(n=32, seed=0):
    rng = np.random.default_rng(seed)
    return (fgrad.torch.tensor(rng.standard_normal((n, 8)).astype(np.float32)),
            fgrad.torch.tensor(rng.integers(0, 3, n)))


# --- tensors -------------------------------------------------------------------------------

def test_cuda_and_to_round_trips_keep_values_and_dtype():
    a = fgrad.torch.arange(12, dtype=fgrad.torch.float32).reshape(3, 4)
    for moved in (a.cuda(), a.to("cuda"), a.to("cuda:0"), a.to(CUDA), a.to(0), a.cuda(0)):
        assert moved.device == CUDA and moved.is_cuda and str(moved.device) == "cuda:0"
        assert is_gpu(moved) and moved.dtype == fgrad.torch.float32
        back = moved.cpu()
        assert back.device == fgrad.torch.device("cpu") and not back.is_cuda
        np.testing.assert_array_equal(back.numpy(), a.numpy())
    h = a.to("cuda", fgrad.torch.float16)
    assert h.is_cuda and h.dtype == fgrad.torch.float16
    np.testing.assert_array_equal(h.to("cpu", fgrad.torch.float32).numpy(), a.numpy())
    assert a.cuda().to(a).device == a.device  # to(other): other's device and dtype


def test_gpu_tensor_conversions_follow_pytorch():
    t = fgrad.torch.tensor([1.5, 2.5]).cuda()
    with pytest.raises(TypeError, match="cpu"):
        t.numpy()  # PyTorch: can't convert cuda tensor to numpy; use .cpu() first
    assert t.tolist() == [1.5, 2.5] and t[1].item() == 2.5 and float(t.sum()) == 4.0
    assert "device='cuda:0'" in repr(t)


def test_factories_on_the_gpu():
    made = [fgrad.torch.zeros(2, 3, device="cuda"), fgrad.torch.ones(4, device=CUDA), fgrad.torch.empty(2, device="cuda"),
            fgrad.torch.full((2,), 7.0, device="cuda"), fgrad.torch.eye(3, device="cuda"), fgrad.torch.arange(5, device="cuda"),
            fgrad.torch.linspace(0, 1, 5, device="cuda"), fgrad.torch.randn(3, device="cuda"), fgrad.torch.rand(3, device="cuda"),
            fgrad.torch.randint(0, 5, (4,), device="cuda"), fgrad.torch.tensor([1, 2], device="cuda")]
    for t in made:
        assert t.is_cuda and is_gpu(t), t
    g = fgrad.torch.randn(2, 2, device="cuda")
    for like in (fgrad.torch.zeros_like(g), fgrad.torch.ones_like(g), fgrad.torch.randn_like(g), fgrad.torch.full_like(g, 2.0)):
        assert like.is_cuda
    np.testing.assert_array_equal(fgrad.torch.full((2,), 7.0, device="cuda").cpu().numpy(), [7.0, 7.0])


def test_manual_seed_reproduces_gpu_random_tensors():
    fgrad.torch.cuda.manual_seed(123)
    a = fgrad.torch.randn(5, device="cuda")
    fgrad.torch.cuda.manual_seed(123)
    b = fgrad.torch.randn(5, device="cuda")
    np.testing.assert_array_equal(host(a), host(b))
    fgrad.torch.cuda.manual_seed_all(123)
    np.testing.assert_array_equal(host(fgrad.torch.randn(5, device="cuda")), host(a))


def test_mixing_devices_in_one_op_is_pytorchs_runtime_error():
    a, b = fgrad.torch.ones(3), fgrad.torch.ones(3, device="cuda")
    for op in (lambda: a + b, lambda: b * a, lambda: fgrad.torch.matmul(a, b), lambda: fgrad.torch.cat([a, b]),
               lambda: fgrad.torch.where(b > 0, a, b)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            op()
    out = b + fgrad.torch.tensor(2.0)  # a CPU 0-d tensor is a scalar: allowed, as in PyTorch
    assert out.is_cuda and out.tolist() == [3.0, 3.0, 3.0]
    model = _mlp().cuda()
    with pytest.raises(RuntimeError, match="same device"):
        model(fgrad.torch.ones(1, 8))


def test_autograd_on_the_gpu_matches_the_cpu():
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    grads = []
    for dev in ("cpu", "cuda"):
        t = fgrad.torch.tensor(x, device=dev, requires_grad=True)
        y = (t.tanh() @ t.T).relu().sum() + t.pow(2).mean()
        y.backward()
        assert t.grad.device == t.device
        grads.append(host(t.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


def test_grad_flows_back_across_a_device_move():
    x = fgrad.torch.ones(3, requires_grad=True)  # on the CPU
    y = (x.cuda() * 2.0).sum()
    y.backward()
    assert not x.grad.is_cuda
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_in_place_ops_write_gpu_storage():
    t = fgrad.torch.zeros(4, device="cuda")
    t.add_(1.0).mul_(3.0)
    t[1] = -1.0
    t.clamp_(min=0.0)
    assert t.is_cuda and t.tolist() == [3.0, 0.0, 3.0, 3.0]
    t.zero_()
    assert t.tolist() == [0.0] * 4


# --- modules, optimisers, data ----------------------------------------------------------------

def test_module_to_cuda_moves_parameters_and_buffers_in_place():
    model = nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4))
    params = list(model.parameters())
    assert model.to("cuda") is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]  # same Parameter objects
    assert all(p.is_cuda for p in model.parameters()) and all(b.is_cuda for b in model.buffers())
    out = model(fgrad.torch.randn(5, 8, device="cuda"))
    assert out.is_cuda
    model.cpu()
    assert not any(p.is_cuda for p in model.parameters())


@pytest.mark.parametrize("make_opt", [
    lambda p: fgrad.torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    lambda p: fgrad.torch.optim.Adam(p, lr=1e-2),
    lambda p: fgrad.torch.optim.AdamW(p, lr=1e-2, amsgrad=True),
    lambda p: fgrad.torch.optim.RMSprop(p, lr=1e-2, momentum=0.5),
    lambda p: fgrad.torch.optim.Adagrad(p, lr=1e-1),
], ids=["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_optimiser_steps_on_the_gpu_match_the_cpu(make_opt):
    x, y = _batch()
    results = []
    for dev in ("cpu", "cuda"):
        model = _mlp().to(dev)
        opt = make_opt(model.parameters())
        for _ in range(3):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
            loss.backward()
            opt.step()
        assert all(p.is_cuda == (dev == "cuda") for p in model.parameters())
        for state in opt.state.values():
            for v in state.values():
                if isinstance(v, fgrad.torch.Tensor) and v.dim() > 0:
                    assert v.device == fgrad.torch.device(dev) or (dev == "cuda" and v.is_cuda)
        results.append([host(p.detach()) for p in model.parameters()])
    for c, g in zip(*results):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)


def test_dataloader_batches_move_with_to_device():
    x, y = _batch(20)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    seen = 0
    for xb, yb in loader:
        xb, yb = xb.to(CUDA), yb.to(CUDA, non_blocking=True)
        assert xb.is_cuda and yb.is_cuda and yb.dtype == fgrad.torch.int64
        seen += len(xb)
    assert seen == 20
    gpu_loader = DataLoader(TensorDataset(x.cuda(), y.cuda()), batch_size=8)
    batches = list(gpu_loader)
    assert all(b.is_cuda for pair in batches for b in pair)
    np.testing.assert_array_equal(host(fgrad.torch.cat([b[0] for b in batches])), x.numpy())


def test_a_training_loop_on_the_gpu_learns_and_matches_the_cpu():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    xs = rng.standard_normal((256, 8)).astype(np.float32)
    ys = (xs @ w).argmax(1)
    losses = {}
    for dev in ("cpu", "cuda"):
        model = _mlp().to(dev)
        opt = fgrad.torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
        crit = nn.CrossEntropyLoss()
        X, Y = fgrad.torch.tensor(xs, device=dev), fgrad.torch.tensor(ys, device=dev)
        hist = []
        for _ in range(40):
            opt.zero_grad()
            loss = crit(model(X), Y)
            loss.backward()
            opt.step()
            hist.append(loss.item())
        losses[dev] = hist
    assert losses["cuda"][-1] < 0.5 * losses["cuda"][0]
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=2e-3, atol=2e-4)


def test_dropout_and_train_eval_modes_on_the_gpu():
    drop = nn.Dropout(0.5).cuda()
    x = fgrad.torch.ones(1000, device="cuda")
    y = drop(x)
    assert y.is_cuda and 300 < int((y == 0).sum().item()) < 700
    drop.eval()
    np.testing.assert_array_equal(host(drop(x)), np.ones(1000, np.float32))


def test_state_dict_moves_between_devices():
    gpu_model = _mlp().cuda()
    sd = gpu_model.state_dict()
    assert all(v.is_cuda for v in sd.values())
    buf = io.BytesIO()
    fgrad.torch.save(sd, buf)
    buf.seek(0)
    on_cpu = fgrad.torch.load(buf, map_location="cpu")
    assert not any(v.is_cuda for v in on_cpu.values())
    buf.seek(0)
    on_gpu = fgrad.torch.load(buf)  # the saved device
    assert all(v.is_cuda for v in on_gpu.values())
    cpu_model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    cpu_model.load_state_dict(sd)  # GPU tensors into a CPU model: copied over, model stays on the CPU
    assert not any(p.is_cuda for p in cpu_model.parameters())
    x = fgrad.torch.randn(4, 8)
    np.testing.assert_allclose(host(gpu_model(x.cuda())), cpu_model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    gpu_model2 = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).cuda()
    gpu_model2.load_state_dict(cpu_model.state_dict())  # and back: parameters stay on the GPU
    assert all(p.is_cuda for p in gpu_model2.parameters())
    np.testing.assert_allclose(host(gpu_model2(x.cuda())), cpu_model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


# --- fgrad.torch.cuda --------------------------------------------------------------------------------

def test_fgrad_cuda_reports_the_device():
    assert fgrad.torch.cuda.is_available() is True
    assert fgrad.torch.cuda.device_count() >= 1
    assert fgrad.torch.cuda.current_device() == 0
    name = fgrad.torch.cuda.get_device_name()
    assert isinstance(name, str) and name == fgrad.torch.cuda.get_device_name(0) == fgrad.torch.cuda.get_device_name("cuda:0")
    major, minor = fgrad.torch.cuda.get_device_capability()
    assert major >= 1 and minor >= 0
    fgrad.torch.cuda.set_device(0)
    fgrad.torch.cuda.synchronize()
    fgrad.torch.cuda.synchronize("cuda:0")
    free, total = fgrad.torch.cuda.mem_get_info()
    assert 0 < free <= total
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        fgrad.torch.zeros(1, device=f"cuda:{fgrad.torch.cuda.device_count()}")


def test_memory_allocated_follows_gpu_tensors():
    fgrad.torch.cuda.synchronize()
    before = fgrad.torch.cuda.memory_allocated()
    t = fgrad.torch.zeros(4, 1024, 1024, device="cuda")  # 16 MiB of float32
    after = fgrad.torch.cuda.memory_allocated()
    assert after - before >= t.numel() * 4
    assert fgrad.torch.cuda.memory_reserved() >= after
    del t
    assert fgrad.torch.cuda.memory_allocated() <= after - 4 * 1024 * 1024 * 4
    fgrad.torch.cuda.empty_cache()
    assert fgrad.torch.cuda.memory_reserved() >= fgrad.torch.cuda.memory_allocated()
