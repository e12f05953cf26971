"""The device logic, on a machine without a GPU: what fgrad says without CuPy, device moves and
their round trips, devices through the transforms and the facade, state_dicts across devices,
fgrad.torch.cuda, DLPack with NumPy and PyTorch on the CPU, that nothing imports CuPy before a GPU
is asked for, and bench/gpu_check.sh's handling of a machine without a GPU.

Where the logic needs "a GPU", tests/gpu/fake_cupy.py stands in for CuPy (installed per test
through monkeypatch): host memory that refuses what CuPy refuses. Arithmetic on a real GPU is
tests/gpu's business (this file is not there: bench/gpu_check.sh runs that folder, and a test
here runs bench/gpu_check.sh)."""
from __future__ import annotations

import importlib.util
import io
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.torch import nn
from fgrad.test_util import check_grads
from fgrad.torch.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack
from tests.gpu import fake_cupy

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_cupy(monkeypatch):
    """A machine without CuPy: `import cupy` raises ImportError."""
    for name in ("cupy", "cupyx"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.fixture
def cp(monkeypatch):
    """The CuPy stand-in with one "GPU"."""
    return fake_cupy.install(monkeypatch)


def _is_gpu(x) -> bool:
    return type(getattr(x, "_value", x)).__module__.startswith("cupy")


# --- without CuPy, or without a GPU ----------------------------------------------------------

def test_without_cupy_cuda_requests_say_what_to_install(no_cupy):
    for make in (lambda: fgrad.torch.zeros(2, device="cuda"), lambda: fgrad.torch.ones(2).cuda(),
                 lambda: fgrad.torch.ones(2).to("cuda:0"), lambda: nn.Linear(2, 2).cuda(),
                 lambda: fgrad.torch.cuda.synchronize(), lambda: fgrad.torch.cuda.get_device_name()):
        with pytest.raises(RuntimeError, match=r"CuPy is not installed: pip install fgrad\[cuda\].*cupy-cuda12x"):
            make()
    assert fgrad.torch.cuda.is_available() is False
    assert fgrad.torch.cuda.device_count() == 0
    assert fgrad.torch.cuda.memory_allocated() == 0 and fgrad.torch.cuda.memory_reserved() == 0
    fgrad.torch.cuda.empty_cache()  # nothing to free: no error
    t = fgrad.torch.ones(3)
    assert t.to("cpu") is not None and t.cpu().device == fgrad.torch.device("cpu")


def test_cupy_without_a_usable_gpu_is_a_clear_error(monkeypatch):
    fake_cupy.install(monkeypatch, broken=True)
    with pytest.raises(RuntimeError, match=r"no GPU visible.*no usable device \(CUDARuntimeError"):
        fgrad.torch.zeros(1, device="cuda")
    assert not fgrad.torch.cuda.is_available() and fgrad.torch.cuda.device_count() == 0
    fake_cupy.install(monkeypatch, device_count=0)
    with pytest.raises(RuntimeError, match="reports 0 devices"):
        fgrad.torch.ones(1).cuda()


def test_device_strings_parse_as_in_pytorch():
    assert str(fgrad.torch.device("cuda:1")) == "cuda:1" and repr(fgrad.torch.device("cuda", 1)) == "device(type='cuda', index=1)"
    assert fgrad.torch.device(0) == fgrad.torch.device("cuda:0") and fgrad.torch.device("cpu") == "cpu"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        fgrad.torch.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        fgrad.torch.device("cuda:x")


# --- moves and round trips -----------------------------------------------------------------------

def test_to_round_trips_keep_values_dtype_and_storage_semantics(cp):
    a = fgrad.torch.arange(6, dtype=fgrad.torch.float32).reshape(2, 3)
    g = a.to("cuda")
    assert _is_gpu(g) and g.device == fgrad.torch.device("cuda:0") and g.is_cuda and g.dtype == fgrad.torch.float32
    assert g.to("cuda") is not None and g.cuda()._value is g._value  # already there: no copy
    back = g.cpu()
    np.testing.assert_array_equal(back.numpy(), a.numpy())
    g.add_(1.0)  # the GPU copy is its own storage (CuPy's asarray copies host data)
    np.testing.assert_array_equal(a.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    h = a.to("cuda", fgrad.torch.float64)
    assert h.is_cuda and h.dtype == fgrad.torch.float64
    assert a.to(h).is_cuda and a.to(h).dtype == fgrad.torch.float64  # to(other): its device and dtype
    with pytest.raises(TypeError, match="Tensor.cpu"):
        g.numpy()  # PyTorch's refusal


def test_invalid_ordinal_and_several_gpus(monkeypatch):
    cp = fake_cupy.install(monkeypatch, device_count=2)
    with pytest.raises(RuntimeError, match="invalid device ordinal: cuda:2"):
        fgrad.torch.ones(1).to("cuda:2")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):  # (CuPy's own words here)
        fgrad.torch.zeros(1, device="cuda:2")
    a, b = fgrad.torch.ones(2, device="cuda:0"), fgrad.torch.ones(2, device="cuda:1")
    assert a.device == fgrad.torch.device("cuda:0") and b.device == fgrad.torch.device("cuda:1")
    with pytest.raises(RuntimeError, match="same device.*cuda:0 and cuda:1"):
        a + b
    moved = a.to("cuda:1")  # a copy onto the other GPU
    assert moved.device == fgrad.torch.device("cuda:1") and (moved + b).tolist() == [2.0, 2.0]
    fgrad.torch.cuda.set_device(1)
    try:
        assert fgrad.torch.cuda.current_device() == 1
        assert fgrad.torch.ones(1).cuda().device == fgrad.torch.device("cuda:1")  # a bare "cuda": the current GPU
        assert fgrad.torch.cuda.get_device_name() == fgrad.torch.cuda.get_device_name(1)
    finally:
        cp.cuda.Device(0).use()


def test_to_the_device_a_tensor_is_on_returns_the_tensor_itself(cp):
    """PyTorch's .to(): no move is needed, so the tensor itself comes back (not a copy, not a
    new Tensor around the same storage), with or without grad, for every spelling of the device."""
    g = fgrad.torch.ones(2, device="cuda")
    w = fgrad.torch.ones(2, device="cuda", requires_grad=True)
    for t in (g, w):
        for dev in ("cuda", "cuda:0", fgrad.torch.device("cuda"), 0):
            assert t.to(dev) is t and t.cuda() is t
    assert w.to("cuda:0", fgrad.torch.float32) is w
    assert w.to("cuda", copy=True) is not w  # copy=True still copies


def test_factories_on_a_bare_cuda_use_the_current_gpu(monkeypatch):
    cp = fake_cupy.install(monkeypatch, device_count=2)
    cp.cuda.Device(1).use()
    try:
        for t in (fgrad.torch.zeros(2, device="cuda"), fgrad.torch.ones(2, device="cuda"), fgrad.torch.full((2,), 3.0, device="cuda"),
                  fgrad.torch.eye(2, device="cuda"), fgrad.torch.empty(2, device=fgrad.torch.device("cuda"))):
            assert t.device == fgrad.torch.device("cuda:1")
        assert fgrad.torch.zeros(2, device="cuda:0").device == fgrad.torch.device("cuda:0")
    finally:
        cp.cuda.Device(0).use()


def test_copy_into_a_gpu_tensor_in_a_graph(cp):
    """copy_ of a constant into a GPU tensor that is part of a graph: the copy stays on the GPU
    (no NumPy conversion of a CuPy array), and the gradient of what was overwritten is 0."""
    a = fgrad.torch.ones(3, device="cuda", requires_grad=True)
    b = a * 2.0
    b.copy_(fgrad.torch.tensor([1.0, 2.0, 3.0]).cuda())
    assert _is_gpu(b) and b.cpu().tolist() == [1.0, 2.0, 3.0]
    (b * a).sum().backward()
    assert _is_gpu(a.grad) and a.grad.cpu().tolist() == [1.0, 2.0, 3.0]
    c = a * 2.0
    c.copy_(fgrad.torch.tensor([5.0, 6.0, 7.0]))  # from the host: moved to c's GPU
    assert _is_gpu(c) and c.cpu().tolist() == [5.0, 6.0, 7.0]


def test_mixing_cpu_and_gpu_tensors_is_pytorchs_error(cp):
    a, b = fgrad.torch.ones(3), fgrad.torch.ones(3, device="cuda")
    for op in (lambda: a + b, lambda: b @ a, lambda: fgrad.torch.stack([b, a])):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at "
                                               "least two devices, cuda:0 and cpu"):
            op()
    assert (b * fgrad.torch.tensor(2.0)).is_cuda  # a CPU 0-d tensor is a scalar, as in PyTorch


def test_gradients_come_back_to_the_device_of_each_leaf(cp):
    x = fgrad.torch.ones(3, requires_grad=True)
    w = fgrad.torch.full((3,), 2.0, device="cuda", requires_grad=True)
    loss = (x.cuda() * w).sum()
    loss.backward()
    assert not _is_gpu(x.grad) and _is_gpu(w.grad)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(w.grad.cpu().numpy(), [1.0, 1.0, 1.0])


# --- the functional transforms keep values on their device -------------------------------------

def test_transforms_keep_gpu_values_on_the_gpu(cp):
    f = lambda a: fnp.sum(fnp.tanh(a) ** 2)  # noqa: E731
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    gx = cp.asarray(x)
    results = {
        "grad": fgrad.grad(f)(gx),
        "jvp": fgrad.jvp(f, (gx,), (cp.asarray(np.ones_like(x)),))[1],
        "vjp": fgrad.vjp(f, gx)[1](cp.asarray(1.0))[0],
        "vmap": fgrad.vmap(fgrad.grad(f))(gx),
        "jit": fgrad.jit(fgrad.grad(f))(gx),
        "hessian": fgrad.hessian(f)(gx),
        "unused input": fgrad.grad(lambda a, b: f(a), argnums=1)(gx, cp.asarray(np.ones(2))),
        "linear": fgrad.grad(lambda a: fnp.sum(a * 2.0))(gx),
    }
    for name, r in results.items():
        assert _is_gpu(r), f"{name}: {type(r)}"
    want = fgrad.grad(f)(x)
    np.testing.assert_allclose(results["grad"].get(), want, rtol=1e-12)
    np.testing.assert_allclose(results["jit"].get(), want, rtol=1e-12)
    np.testing.assert_allclose(results["vmap"].get(), fgrad.vmap(fgrad.grad(f))(x), rtol=1e-12)


def test_check_grads_runs_on_the_gpu_and_catches_a_wrong_rule(cp):
    x = cp.asarray(np.linspace(0.2, 1.0, 4))
    check_grads(lambda a: fnp.sin(a) * fnp.exp(a), (x,), order=2)

    @fgrad.custom_jvp
    def wrong(a):
        return fnp.sin(a)

    @wrong.defjvp
    def wrong_jvp(primals, tangents):
        return fnp.sin(primals[0]), tangents[0] * 2.0  # not cos: check_grads must notice

    with pytest.raises(AssertionError, match="check_grads"):
        check_grads(wrong, (x,), order=1, modes=("fwd",))


# --- modules, optimisers, data, state_dicts ------------------------------------------------------

def _model():
    fgrad.torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.BatchNorm1d(8), nn.Linear(8, 2))


def test_module_to_and_an_optimiser_step_on_the_gpu(cp):
    x, y = fgrad.torch.randn(16, 4), fgrad.torch.randint(0, 2, (16,))
    params = {}
    for dev in ("cpu", "cuda"):
        model = _model().to(dev)
        assert all(_is_gpu(t) == (dev == "cuda") for t in [*model.parameters(), *model.buffers()])
        opt = fgrad.torch.optim.Adam(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x.to(dev)), y.to(dev)).backward()
            opt.step()
        assert all(_is_gpu(v) == (dev == "cuda") for s in opt.state.values() for v in s.values()
                   if isinstance(v, fgrad.torch.Tensor) and v.dim() > 0)
        params[dev] = [p.detach().cpu().numpy() for p in model.parameters()]
    for c, g in zip(params["cpu"], params["cuda"]):
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-6)


def test_dataloader_batches_to_device(cp):
    from fgrad.torch.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(fgrad.torch.arange(10.0).reshape(5, 2), fgrad.torch.arange(5))
    for xb, yb in DataLoader(ds, batch_size=2):
        xb, yb = xb.to("cuda"), yb.to("cuda")
        assert _is_gpu(xb) and _is_gpu(yb)
    gpu_ds = TensorDataset(fgrad.torch.arange(10.0).reshape(5, 2).cuda(), fgrad.torch.arange(5).cuda())
    batches = list(DataLoader(gpu_ds, batch_size=2, shuffle=True))
    assert all(_is_gpu(b) for pair in batches for b in pair)


def test_state_dict_across_devices(cp):
    gpu = _model().cuda()
    sd = gpu.state_dict()
    assert all(_is_gpu(v) for v in sd.values())
    buf = io.BytesIO()
    fgrad.torch.save(sd, buf)
    buf.seek(0)
    assert all(not _is_gpu(v) for v in fgrad.torch.load(buf, map_location="cpu").values())
    buf.seek(0)
    assert all(_is_gpu(v) for v in fgrad.torch.load(buf).values())  # where it was saved from
    cpu = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.BatchNorm1d(8), nn.Linear(8, 2))
    cpu.load_state_dict(sd)
    assert all(not _is_gpu(p) for p in cpu.parameters())
    gpu.eval(), cpu.eval()
    x = fgrad.torch.randn(3, 4)
    np.testing.assert_allclose(gpu(x.cuda()).detach().cpu().numpy(), cpu(x).detach().numpy(), rtol=1e-6)
    again = _model().cuda()
    again.load_state_dict(cpu.state_dict())
    assert all(_is_gpu(p) for p in again.parameters())


# --- fgrad.torch.cuda ----------------------------------------------------------------------------------

def test_fgrad_cuda_functions_on_the_stand_in(cp):
    assert fgrad.torch.cuda.is_available() and fgrad.torch.cuda.device_count() == 1 and fgrad.torch.cuda.current_device() == 0
    assert fgrad.torch.cuda.get_device_name() == "Fake CuPy GPU" and fgrad.torch.cuda.get_device_capability() == (9, 0)
    fgrad.torch.cuda.synchronize()
    fgrad.torch.cuda.synchronize(0)
    with pytest.raises(ValueError, match="cuda device"):
        fgrad.torch.cuda.synchronize("cpu")
    base = fgrad.torch.cuda.memory_allocated()
    t = fgrad.torch.zeros(256, 1024, device="cuda")  # 1 MiB of float32
    assert fgrad.torch.cuda.memory_allocated() - base >= 2 ** 20
    assert fgrad.torch.cuda.memory_reserved() >= fgrad.torch.cuda.memory_allocated()
    del t
    assert fgrad.torch.cuda.memory_allocated() < base + 2 ** 20
    fgrad.torch.cuda.empty_cache()
    assert fgrad.torch.cuda.memory_reserved() == fgrad.torch.cuda.memory_allocated()
    free, total = fgrad.torch.cuda.mem_get_info()
    assert 0 < free <= total
    fgrad.torch.cuda.manual_seed(7)
    a = fgrad.torch.randn(4, device="cuda").cpu().numpy()
    fgrad.torch.cuda.manual_seed_all(7)
    np.testing.assert_array_equal(fgrad.torch.randn(4, device="cuda").cpu().numpy(), a)


# --- CuPy stays unimported until a GPU is asked for -------------------------------------------------

_NO_CUPY_SCRIPT = textwrap.dedent("""
    import sys
    tried = []

    class Watch:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("cupy", "cupyx", "cupy_backends"):
                tried.append(name)
            return None

    sys.meta_path.insert(0, Watch())
    import numpy as np
    import fgrad, fgrad.numpy as fnp
    from fgrad.torch import nn
    # a CPU workload: functional transforms, the facade, a training step, DLPack, fgrad.torch.cuda's memory queries
    f = lambda a: fnp.sum(fnp.tanh(a) ** 2)
    fgrad.grad(f)(np.ones(3)); fgrad.jit(f)(np.ones(3)); fgrad.vmap(fgrad.grad(f))(np.ones((2, 3)))
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to("cpu")
    opt = fgrad.torch.optim.Adam(model.parameters())
    loss = nn.functional.cross_entropy(model(fgrad.torch.randn(5, 4)), fgrad.torch.tensor([0, 1, 0, 1, 1]))
    loss.backward(); opt.step()
    fgrad.torch.from_dlpack(np.ones(2)); np.from_dlpack(fgrad.torch.ones(2))
    assert fgrad.torch.cuda.memory_allocated() == 0
    fgrad.torch.ones(2).to(fgrad.torch.device("cpu"))
    assert not tried, f"CuPy imported by a CPU workload: {tried}"
    assert not [m for m in sys.modules if m.startswith("cupy")]
    print("no cupy")
""")


def test_import_and_a_cpu_workload_do_not_import_cupy():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("FGRAD_FAKE_CUPY", None)
    run = subprocess.run([sys.executable, "-c", _NO_CUPY_SCRIPT], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "no cupy" in run.stdout, run.stdout[-2000:] + run.stderr[-4000:]


# --- DLPack on the CPU: NumPy and PyTorch ------------------------------------------------------

def test_dlpack_with_numpy_is_zero_copy_both_ways():
    a = np.arange(4.0)
    t = fgrad.torch.from_dlpack(a)
    assert t.dtype == fgrad.torch.float64 and t.device == fgrad.torch.device("cpu")
    a[0] = 10.0
    assert t[0].item() == 10.0
    t.mul_(2.0)  # in place: into NumPy's memory
    np.testing.assert_array_equal(a, [20.0, 2.0, 4.0, 6.0])
    b = np.from_dlpack(t)
    b[1] = -1.0
    assert t[1].item() == -1.0
    assert tuple(t.__dlpack_device__()) == (DLDeviceType.kDLCPU, 0)
    c = fgrad.torch.utils.dlpack.from_dlpack(to_dlpack(t))  # a bare capsule: writable, shared
    c[2] = 5.0
    assert a[2] == 5.0
    assert fgrad.torch.from_dlpack(fgrad.torch.tensor(3.0)).item() == 3.0  # 0-d


def test_dlpack_with_pytorch_cpu_is_zero_copy_both_ways():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = fgrad.torch.from_dlpack(x)
    assert t.shape == (2, 3) and t.dtype == fgrad.torch.float32
    x[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t.add_(1.0)
    assert x[1, 2].item() == 6.0
    y = torch.from_dlpack(t)
    y[1, 1] = -7.0
    assert t[1, 1].item() == -7.0
    cap = to_dlpack(t)
    z = torch.utils.dlpack.from_dlpack(cap)
    z[0, 1] = 42.0
    assert t[0, 1].item() == 42.0
    u = from_dlpack(torch.utils.dlpack.to_dlpack(x))
    u[0, 2] = 9.0
    assert x[0, 2].item() == 9.0
    for dtype in (torch.bool, torch.int8, torch.int64, torch.float16, torch.complex64):
        v = fgrad.torch.from_dlpack(torch.zeros(2, dtype=dtype))
        assert v.dtype == getattr(fgrad.torch, str(dtype).split(".")[1])


def test_dlpack_errors_are_clear():
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient, use tensor.detach"):
        np.from_dlpack(fgrad.torch.ones(2, requires_grad=True))
    cap = to_dlpack(fgrad.torch.ones(2))
    fgrad.torch.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="consumed only once"):
        fgrad.torch.from_dlpack(cap)
    with pytest.raises(TypeError, match="__dlpack__"):
        fgrad.torch.from_dlpack([1.0, 2.0])
    with pytest.raises(TypeError, match="to_dlpack: expected a Tensor"):
        to_dlpack(np.ones(2))
    with pytest.raises(BufferError, match="clone"):
        to_dlpack(fgrad.torch.ones(1).expand(3))  # a read-only broadcast view
    with pytest.raises(RuntimeError, match="traced tensor"):
        fgrad.torch.func.grad(lambda a: np.from_dlpack(a).sum())(fgrad.torch.ones(2))


def test_from_dlpack_device_and_copy_on_the_cpu(cp):
    a = np.ones(3)
    with pytest.raises(ValueError, match="copy=False"):
        fgrad.torch.from_dlpack(a, device="cuda", copy=False)
    g = fgrad.torch.from_dlpack(a, device="cuda")
    assert _is_gpu(g)
    c = fgrad.torch.from_dlpack(a, copy=True)
    c.zero_()
    assert a[0] == 1.0
    same = fgrad.torch.from_dlpack(a, device="cpu", copy=False)
    same[0] = 4.0
    assert a[0] == 4.0


def test_dlpack_between_fgrad_and_the_cupy_stand_in(cp):
    c = cp.arange(3.0)
    t = fgrad.torch.from_dlpack(c)
    assert _is_gpu(t) and t.device == fgrad.torch.device("cuda:0")
    c[0] = 8.0
    assert t[0].item() == 8.0
    back = cp.from_dlpack(t)
    back[1] = -2.0
    assert t[1].item() == -2.0
    assert tuple(t.__dlpack_device__()) == (DLDeviceType.kDLCUDA, 0)
    with pytest.raises(TypeError, match="CPU arrays cannot be directly imported to CuPy"):
        cp.from_dlpack(fgrad.torch.ones(2))  # as CuPy: host memory is not imported


# --- the stand-in refuses what CuPy refuses (so that the tests above mean something) ------------

def test_the_cupy_stand_in_is_strict(cp):
    a = cp.asarray(np.ones(3))
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
        np.asarray(a)
    with pytest.raises(TypeError, match="Unsupported type"):
        a + np.ones(3)
    with pytest.raises(TypeError, match="Unsupported type"):
        np.ones(3) * a
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.concatenate([a, np.ones(2)])
    host = np.ones(3)
    d = cp.asarray(host)
    d[0] = 5.0
    assert host[0] == 1.0  # asarray copies host memory
    assert type(np.sin(a)).__module__ == "cupy" and type(a.sum()).__module__ == "cupy"


# --- bench/gpu_check.sh on a machine without a GPU -----------------------------------------------

@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash and timeout")
@pytest.mark.slow
def test_gpu_check_script_without_a_gpu_skips_and_prints_the_table(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path), PYTHON=sys.executable, GPU_TEST_TIMEOUT="200",
               GPU_BENCH_TIMEOUT="100", GPU_BENCH_ARGS="--quick", PATH=os.environ.get("PATH", ""))
    env.pop("FGRAD_FAKE_CUPY", None)
    # (sys.modules first: under FGRAD_FAKE_CUPY=1 tests/gpu installs the stand-in, which has no
    # __spec__, so find_spec would raise; the stand-in counts as CuPy here)
    if shutil.which("nvidia-smi") or sys.modules.get("cupy") is not None or importlib.util.find_spec("cupy"):
        pytest.skip("this machine has a GPU driver or CuPy: the no-GPU behaviour cannot be shown")
    run = subprocess.run(["bash", str(ROOT / "bench" / "gpu_check.sh")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=400)
    out = run.stdout
    assert run.returncode == 0, out[-3000:] + run.stderr[-3000:]
    assert "SKIPPED" in out and "the GPU tests need CuPy" in out  # pytest's skip summary
    assert "| tests/gpu | skipped: no usable GPU" in out
    assert "| W2 MLP step 784-512-512-10, b=256 (facade) | - | - | - | skipped: no GPU" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu_bench.md", "gpu_check.md", "gpu_tests.log"]
    assert "## GPU check summary" in (tmp_path / "gpu_check.md").read_text()


# --- tests/gpu itself stays runnable (it meets a real GPU rarely) ----------------------------------

# Registry cases tests/ops/test_primitives.py requires to exist (REQUIRED_NUMPY), for a sample
_SAMPLE_CASES = ("sin", "sum", "cumsum", "where", "logaddexp", "concatenate", "take", "getitem[int_array]",
                 "getitem[bool_mask]")


@pytest.mark.slow
def test_gpu_suite_runs_on_the_cupy_stand_in():
    """tests/gpu's facade, DLPack and transform tests, and every registry test of a sample of
    cases, on the stand-in (FGRAD_FAKE_CUPY=1): an API drift, or a NumPy-only call on a GPU
    array in those paths, fails here and not first on the GPU machine. (The whole suite on
    the stand-in: FGRAD_FAKE_CUPY=1 python -m pytest tests/gpu, about a minute.)"""
    env = dict(os.environ, PYTHONPATH=str(ROOT), FGRAD_FAKE_CUPY="1")
    kinds = {"test_gpu_primitives.py": ("test_forward_float64_matches_cpu", "test_jvp_and_vjp_match_cpu",
                                        "test_check_grads_on_gpu"),
             "test_gpu_transforms.py": ("test_jit_matches_cpu", "test_vmap_matches_cpu")}
    sample = [f"tests/gpu/{f}::{k}[{c}]" for f, ks in kinds.items() for k in ks for c in _SAMPLE_CASES]
    registry_kinds = " and ".join(f"not {k}" for ks in kinds.values() for k in ks)
    for targets in (["tests/gpu/test_gpu_facade.py", "tests/gpu/test_gpu_dlpack.py",
                     "tests/gpu/test_gpu_transforms.py", "-k", registry_kinds], sample):
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *targets],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        tail = run.stdout[-3000:] + run.stderr[-2000:]
        assert run.returncode == 0 and " passed" in tail and "failed" not in tail, tail
