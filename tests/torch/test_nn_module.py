"""fgrad.torch.nn.Module machinery, Parameter, fgrad.torch.func.functional_call and fgrad.torch.save/load."""
import copy
import io
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F
from fgrad.torch.func import functional_call


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 5), nn.ReLU(), nn.Linear(5, 4))
        self.register_buffer("scale", fgrad.torch.tensor(2.0))
        self.plain = 7

    def forward(self, x):
        return self.head(F.relu(self.bn(self.conv(x)))) * self.scale


def test_registration_and_traversal():
    fgrad.torch.manual_seed(0)
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["conv.weight", "conv.bias", "bn.weight", "bn.bias", "head.1.weight", "head.1.bias",
                     "head.3.weight", "head.3.bias"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf for p in net.parameters())
    assert [n for n, _ in net.named_buffers()] == ["scale", "bn.running_mean", "bn.running_var",
                                                   "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["conv", "bn", "head"]
    assert len(list(net.modules())) == 8
    assert net.plain == 7 and "plain" not in net._parameters
    assert net.get_parameter("head.3.bias") is net.head[3].bias
    assert net.get_submodule("head.1") is net.head[1]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        net.nope
    with pytest.raises(TypeError, match="cannot assign"):
        net.conv.weight = fgrad.torch.ones(3, 1, 3, 3)
    net.extra = nn.Parameter(fgrad.torch.zeros(2))
    assert "extra" in dict(net.named_parameters())
    del net.extra
    assert "extra" not in dict(net.named_parameters())


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(3, 3)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4


def test_train_eval_and_zero_grad():
    net = Net()
    assert net.training and net.head[2].training
    net.eval()
    assert not net.training and not net.bn.training and not net.head[1].training
    net.train()
    out = net(fgrad.torch.randn(2, 1, 4, 4))
    out.sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_state_dict_roundtrip_and_strict_errors(tmp_path):
    fgrad.torch.manual_seed(0)
    a, b = Net(), Net()
    a(fgrad.torch.randn(4, 1, 4, 4))  # moves BatchNorm running statistics
    sd = a.state_dict()
    assert list(sd) == ["scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean",
                        "bn.running_var", "bn.num_batches_tracked", "head.1.weight", "head.1.bias",
                        "head.3.weight", "head.3.bias"]
    assert all(t.grad_fn is None and not t.requires_grad for t in sd.values())
    fgrad.torch.save(sd, tmp_path / "net.pt")
    loaded = fgrad.torch.load(tmp_path / "net.pt")
    assert isinstance(loaded, OrderedDict) and list(loaded) == list(sd)
    w_before = b.conv.weight
    res = b.load_state_dict(loaded)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert b.conv.weight is w_before  # loaded in place
    for k, v in a.state_dict().items():
        np.testing.assert_array_equal(b.state_dict()[k].numpy(), v.numpy())
    x = fgrad.torch.randn(2, 1, 4, 4)
    a.eval(), b.eval()
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())

    bad = dict(sd)
    bad.pop("conv.bias")
    bad["extra.weight"] = fgrad.torch.zeros(1)
    bad["head.3.bias"] = fgrad.torch.zeros(7)
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(bad)
    msg = str(e.value)
    assert 'Missing key(s) in state_dict: "conv.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight"' in msg
    assert "size mismatch for head.3.bias" in msg
    bad.pop("head.3.bias")
    res = b.load_state_dict(bad, strict=False)
    assert res.missing_keys == ["conv.bias", "head.3.bias"] and res.unexpected_keys == ["extra.weight"]


def test_to_dtype_keeps_parameter_objects():
    net = nn.Linear(3, 2)
    w = net.weight
    net.to(fgrad.torch.float64)
    assert net.weight is w and w.dtype == fgrad.torch.float64 and net.bias.dtype == fgrad.torch.float64
    out = net(fgrad.torch.randn(4, 3, dtype=fgrad.torch.float64))
    assert out.dtype == fgrad.torch.float64
    net.float()
    assert w.dtype == fgrad.torch.float32
    net.to("cpu")
    assert w.device.type == "cpu"


def test_repr_like_pytorch():
    net = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(10, 2, bias=False))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Conv2d(1, 16, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2))\n"
        "  (1): ReLU()\n"
        "  (2): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
        "  (3): Flatten(start_dim=1, end_dim=-1)\n"
        "  (4): Linear(in_features=10, out_features=2, bias=False)\n"
        ")")
    assert repr(nn.Parameter(fgrad.torch.tensor([1.0]))).startswith("Parameter containing:\ntensor([1.]")


def test_parameter_semantics():
    t = fgrad.torch.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert p.requires_grad and p.is_leaf and isinstance(p, fgrad.torch.Tensor)
    with fgrad.torch.no_grad():
        t.add_(1.0)
    np.testing.assert_array_equal(p.detach().numpy(), [2.0, 3.0])  # shares storage
    q = nn.Parameter(fgrad.torch.tensor([1.0]), requires_grad=False)
    assert not q.requires_grad
    r = p * 2
    assert type(r) is fgrad.torch.Tensor and r.grad_fn is not None
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c.requires_grad and c._value is not p._value
    u = pickle.loads(pickle.dumps(p))
    assert isinstance(u, nn.Parameter) and np.array_equal(u.detach().numpy(), p.detach().numpy())
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(fgrad.torch.tensor([1, 2]))


def test_deepcopy_module_is_independent():
    net = Net()
    twin = copy.deepcopy(net)
    assert isinstance(twin.conv.weight, nn.Parameter)
    with fgrad.torch.no_grad():
        twin.conv.weight.zero_()
    assert not np.all(net.conv.weight.detach().numpy() == 0)


def test_hooks_and_containers():
    lin = nn.Linear(2, 2)
    seen = []
    h = lin.register_forward_hook(lambda m, inp, out: seen.append(tuple(out.shape)))
    lin(fgrad.torch.randn(3, 2))
    h.remove()
    lin(fgrad.torch.randn(3, 2))
    assert seen == [(3, 2)]
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(list(ml.parameters())) == 6 and len(ml) == 3
    md = nn.ModuleDict({"a": nn.Linear(2, 3), "b": nn.ReLU()})
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias"]
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert isinstance(seq[1], nn.Tanh) and isinstance(seq[:1], nn.Sequential) and seq.fc is seq[0]


# --- functional_call: fgrad.grad over a model's parameters ---------------------------------------

def _mlp():
    fgrad.torch.manual_seed(3)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))


def test_functional_call_grad_equals_backward():
    net = Net()
    x = fgrad.torch.randn(5, 1, 4, 4)
    y = fgrad.torch.tensor([0, 1, 2, 3, 1])
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    params = {k: v.detach() for k, v in net.named_parameters()}
    buffers = {k: v.detach().clone() for k, v in net.named_buffers()}

    def f(params):
        return F.cross_entropy(functional_call(net, (params, buffers), (x,)), y)
    grads, value = fgrad.torch.func.grad_and_value(f)(params)  # (Tensors: the facade's door)
    assert isinstance(value, fgrad.torch.Tensor)
    np.testing.assert_allclose(value.item(), loss.item(), rtol=1e-6)
    for name, p in net.named_parameters():
        assert isinstance(grads[name], fgrad.torch.Tensor)
        np.testing.assert_allclose(grads[name].numpy(), p.grad.numpy(), rtol=2e-5, atol=1e-6, err_msg=name)
    # the module is restored afterwards
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())


def test_functional_call_with_numpy_params_hessian_and_vmap():
    net = _mlp()
    x = np.random.default_rng(0).standard_normal((4, 6))
    params = {k: v.detach().numpy().astype(np.float64) for k, v in net.named_parameters()}

    def f(w0):
        p = dict(params, **{"0.weight": w0})
        return functional_call(net, p, x).sum()
    g = fgrad.grad(f)(params["0.weight"])
    assert isinstance(g, np.ndarray) and g.shape == (8, 6)
    h = fgrad.hessian(lambda b: functional_call(net, dict(params, **{"2.bias": b}), x).sum())(params["2.bias"])
    np.testing.assert_allclose(h, np.zeros((3, 3)), atol=1e-12)  # the output is linear in the last bias
    per_example = fgrad.vmap(lambda xi: functional_call(net, params, xi[None])[0])(x)
    np.testing.assert_allclose(per_example, functional_call(net, params, x), rtol=1e-12)


def test_functional_call_errors():
    net = _mlp()
    with pytest.raises(KeyError, match="not a parameter"):
        functional_call(net, {"0.wieght": np.zeros((8, 6))}, np.zeros((1, 6)))
    with pytest.raises(RuntimeError, match="strict"):
        functional_call(net, {"0.weight": np.zeros((8, 6))}, np.zeros((1, 6)), strict=True)


# --- save / load ------------------------------------------------------------------------------

def test_save_load_nested_structures(tmp_path):
    obj = {"model": {"w": fgrad.torch.tensor([[1.0, 2.0]]), "step": fgrad.torch.tensor(3)},
           "epoch": 4, "lr": 0.1, "name": "run", "none": None, "flags": [True, False],
           "pair": (1, fgrad.torch.tensor([1.5], dtype=fgrad.torch.float64)), 3: np.arange(3),
           "param": nn.Parameter(fgrad.torch.tensor([2.0]))}
    buf = io.BytesIO()
    fgrad.torch.save(obj, buf)
    buf.seek(0)
    # a NumPy array is an arbitrary object to PyTorch's weights_only unpickler, as here
    with pytest.raises(pickle.UnpicklingError, match="numpy"):
        fgrad.torch.load(buf)
    buf.seek(0)
    out = fgrad.torch.load(buf, weights_only=False)
    assert out["epoch"] == 4 and out["lr"] == 0.1 and out["name"] == "run" and out["none"] is None
    assert out["flags"] == [True, False] and isinstance(out["pair"], tuple)
    assert out["model"]["w"].dtype == fgrad.torch.float32 and out["model"]["step"].dtype == fgrad.torch.int64
    assert out["pair"][1].dtype == fgrad.torch.float64
    np.testing.assert_array_equal(out[3], np.arange(3))
    assert isinstance(out["param"], nn.Parameter) and out["param"].requires_grad
    # the file is PyTorch's zip checkpoint, named after the file
    path = tmp_path / "x.pt"
    fgrad.torch.save(obj, path)
    with zipfile.ZipFile(path) as z:
        assert "x/data.pkl" in z.namelist()


def test_save_rejects_arbitrary_objects_and_load_rejects_other_files(tmp_path):
    with pytest.raises(TypeError, match="cannot save an object of type"):
        fgrad.torch.save({"f": lambda: 0}, tmp_path / "bad.pt")
    (tmp_path / "junk.pt").write_bytes(b"not an archive")
    with pytest.raises(ValueError):
        fgrad.torch.load(tmp_path / "junk.pt")
    with pytest.raises(FileNotFoundError):
        fgrad.torch.load(tmp_path / "missing.pt")
    np.savez(tmp_path / "plain.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="not a file written by fgrad.torch.save"):
        fgrad.torch.load(tmp_path / "plain.npz")
