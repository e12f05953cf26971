"""The meta device on fgrad.torch against PyTorch 2.13: factories and `with torch.device("meta")`
make tensors with shapes and dtypes and no values; ops on them give the shapes, dtypes and
grad_fn names torch's do without computing (a 13-trillion-element input costs nothing); modules
move there and back (`to("meta")`, `to_empty`); nothing is drawn from the generator; values
cannot be read out, and meta and CPU tensors do not mix."""
from __future__ import annotations

import time

import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")


def _desc(t):
    return (str(t.device), tuple(t.shape), str(t.dtype), type(t.grad_fn).__name__ if t.grad_fn is not None else None,
            t.requires_grad, t.is_meta)


def _both(build):
    out = []
    for lib in (ft, torch):
        lib.manual_seed(0)
        out.append(build(lib))
    return out


def test_factories_and_repr():
    def build(lib):
        ts = [lib.empty(2, 3, device="meta"), lib.zeros(4, device="meta", dtype=lib.float64),
              lib.ones((2, 2), device=lib.device("meta")), lib.full((3,), 7, device="meta"),
              lib.rand(2, 3, device="meta", requires_grad=True), lib.randn(5, device="meta"),
              lib.eye(3, 2, device="meta"), lib.arange(6, device="meta"), lib.tensor([1.0, 2.0], device="meta"),
              lib.randint(0, 5, (2, 2), device="meta"), lib.empty_like(lib.ones(2), device="meta"),
              lib.rand_like(lib.ones(2, 2).to("meta"))]
        return [_desc(t) for t in ts] + [repr(t) for t in ts] + [lib.rand(1).item()]
    f, t = _both(build)
    assert f == t


@pytest.mark.parametrize("op", [
    lambda lib, x, w: x + 1, lambda lib, x, w: x * w[0, :4], lambda lib, x, w: (x @ w.T).relu(),
    lambda lib, x, w: x.sum(0), lambda lib, x, w: x.mean(dim=1, keepdim=True), lambda lib, x, w: x.max(dim=1)[0],
    lambda lib, x, w: x.reshape(-1), lambda lib, x, w: x[1:, ::2], lambda lib, x, w: x.unsqueeze(0).expand(2, 3, 4),
    lambda lib, x, w: lib.cat([x, x], 1), lambda lib, x, w: lib.stack([x, x]), lambda lib, x, w: x.to(lib.float64),
    lambda lib, x, w: lib.nn.functional.softmax(x, -1), lambda lib, x, w: lib.nn.functional.linear(x, w),
    lambda lib, x, w: x.view(2, 6) * 2.0, lambda lib, x, w: lib.where(x > 0, x, w[:3, :4]),
    lambda lib, x, w: x.argmax(1), lambda lib, x, w: x.exp().log_softmax(0), lambda lib, x, w: x.clone().t(),
], ids=lambda f: "")
def test_ops_shapes_dtypes_and_grad_fns(op):
    def build(lib):
        x = lib.empty(3, 4, device="meta", requires_grad=True)
        w = lib.empty(5, 4, device="meta")
        return _desc(op(lib, x, w))
    f, t = _both(build)
    assert f == t


def test_modules_on_meta_and_huge_inputs_cost_nothing():
    def build(lib):
        conv = lib.nn.Conv2d(3, 5, 2, device="meta")
        out = conv(lib.rand(2, 3, 10, 10, device="meta"))
        start = time.perf_counter()
        big = conv(lib.rand(2 ** 10, 3, 2 ** 16, 2 ** 16, device="meta"))
        took = time.perf_counter() - start
        with lib.device("meta"):
            net = lib.nn.Sequential(lib.nn.Conv2d(3, 6, 5), lib.nn.MaxPool2d(2), lib.nn.Flatten(),
                                    lib.nn.Linear(6 * 14 * 14, 10), lib.nn.LogSoftmax(1))
            inp = lib.randn((1024, 3, 32, 32))
            default = str(lib.get_default_device())
        y = net(inp)
        return (_desc(out), repr(out), _desc(big), took < 1.0, default, str(lib.get_default_device()),
                _desc(y), [_desc(p) for p in net.parameters()], lib.rand(1).item())
    f, t = _both(build)
    assert f == t


def test_set_default_device_meta_and_nesting():
    def build(lib):
        try:
            lib.set_default_device("meta")
            a = lib.ones(2)
            with lib.device("cpu"):
                b = lib.ones(2)
                with lib.device("meta"):
                    c = lib.ones(2)
                d = lib.ones(2)
            e = lib.ones(2)
        finally:
            lib.set_default_device(None)
        return [str(t.device) for t in (a, b, c, d, e, lib.ones(1))]
    f, t = _both(build)
    assert f == t == ["meta", "cpu", "meta", "cpu", "meta", "cpu"]


def test_module_to_meta_and_to_empty():
    def build(lib):
        m = lib.nn.Linear(2, 3)
        m.to("meta")
        on_meta = [_desc(p) for p in m.parameters()]
        x = lib.ones(3, requires_grad=True).to("meta")
        m.to_empty(device="cpu")
        back = [(str(p.device), tuple(p.shape), p.requires_grad) for p in m.parameters()]
        y = m(lib.ones(1, 2))
        return on_meta, _desc(x), back, tuple(y.shape)
    f, t = _both(build)
    assert f == t


def test_init_and_random_fills_draw_nothing():
    def build(lib):
        w = lib.empty(4, 3, device="meta")
        for fill in (lambda: lib.nn.init.kaiming_uniform_(w), lambda: lib.nn.init.normal_(w),
                     lambda: lib.nn.init.orthogonal_(w), lambda: lib.nn.init.constant_(w, 1.0),
                     lambda: w.uniform_(), lambda: w.normal_(), lambda: w.bernoulli_(0.5), lambda: w.zero_()):
            assert fill() is w
        with pytest.raises(ValueError, match="Fan in and fan out"):
            lib.nn.init.kaiming_uniform_(lib.empty(3, device="meta"))
        return lib.rand(2).tolist(), _desc(w)
    f, t = _both(build)
    assert f == t


def test_no_values_and_no_mixing():
    for lib in (ft, torch):
        x = lib.ones(2, 3, device="meta")
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            x.to("cpu")
        with pytest.raises((NotImplementedError, RuntimeError)):
            x.sum().item()
        with pytest.raises(RuntimeError, match="device"):
            x + lib.ones(2, 3)
        assert tuple((x + lib.tensor(2.0)).shape) == (2, 3)  # a CPU scalar is allowed
        assert x.new_zeros(2).is_meta and not lib.ones(1).is_meta
    with pytest.raises(NotImplementedError, match="no data"):
        ft.ones(2, device="meta").numpy()
    with pytest.raises(NotImplementedError, match="set_default_device|default device|pass device="):
        ft.set_default_device("cuda")


def test_backward_is_refused_with_a_reason():
    x = ft.ones(2, device="meta", requires_grad=True)
    with pytest.raises(NotImplementedError, match="meta tensors"):
        (x * 2).sum().backward()


def test_meta_models_load_weights_and_run():
    def build(lib):
        src = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Dropout(0.5), lib.nn.Linear(4, 2))
        with lib.device("meta"):
            m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Dropout(0.5),
                                  lib.nn.Linear(4, 2))
            skeleton = m(lib.randn(5, 3))
        m.load_state_dict(src.state_dict(), assign=True)
        on_cpu = [str(p.device) for p in m.parameters()]
        out = m.eval()(lib.ones(2, 3)).tolist()
        with lib.device("meta"):
            lone = lib.nn.Linear(3, 4)
        with pytest.warns(UserWarning, match="copying from a non-meta parameter"):
            lone.load_state_dict(lib.nn.Linear(3, 4).state_dict())
        tr = lib.nn.TransformerEncoderLayer(8, 2, 16, device="meta")(lib.randn(5, 2, 8, device="meta"))
        lstm = lib.nn.LSTM(3, 5, device="meta")(lib.randn(7, 2, 3, device="meta"))[0]
        # (the LSTM output's grad_fn is left out: torch's CPU build names its oneDNN kernel's node)
        return (_desc(skeleton), on_cpu, out, str(lone.weight.device), _desc(tr), _desc(lstm)[:3],
                lib.rand(1).item())
    f, t = _both(build)
    assert f[:2] == t[:2] and f[3:] == t[3:]
    assert sum(f[2], []) == pytest.approx(sum(t[2], []), rel=1e-5)
