"""End-to-end training: the seed's loop on real digits reaches high test accuracy, the
example scripts run, and the facade and the functional API train identically."""
import importlib.util
import os
import time

import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F
from fgrad.torch.utils.data import DataLoader, datasets
from fgrad.torch.func import functional_call

pytest.importorskip("sklearn")

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples")


def _load_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_small_cnn_reaches_93_percent_on_digits():
    fgrad.torch.manual_seed(0)
    train, test = datasets.digits()
    net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(8 * 4 * 4, 10))
    opt = fgrad.torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    crit = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(8):
        net.train()
        for data, target in DataLoader(train, batch_size=32, shuffle=True):
            opt.zero_grad()
            loss = crit(net(data), target)
            loss.backward()
            opt.step()
    net.eval()
    with fgrad.torch.no_grad():
        x, y = test.tensors
        acc = (net(x).argmax(1) == y).float().mean().item()
    assert acc >= 0.93, acc
    assert time.perf_counter() - start < 60


@pytest.mark.slow
def test_train_digits_example(tmp_path):
    mod = _load_example("train_digits")
    out = tmp_path / "curves.png"
    start = time.perf_counter()
    record = mod.main(["--no-progress", "--out", str(out)])
    assert time.perf_counter() - start < 120
    assert record[-1][3] >= 0.95, record[-1]
    assert out.exists() and out.stat().st_size > 10_000


def test_train_digits_example_on_mnist_files(tmp_path):
    """--mnist DIR goes through the IDX reader and the 28x28 seed network."""
    import gzip
    import struct
    rng = np.random.default_rng(0)
    for prefix, n in (("train", 64), ("t10k", 32)):
        imgs = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        for kind, arr in (("images-idx3-ubyte", imgs), ("labels-idx1-ubyte", labels)):
            head = struct.pack(">BBBB", 0, 0, 8, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
            (tmp_path / f"{prefix}-{kind}.gz").write_bytes(gzip.compress(head + arr.tobytes()))
    mod = _load_example("train_digits")
    record = mod.main(["--mnist", str(tmp_path), "--epochs", "1", "--no-progress",
                       "--out", str(tmp_path / "m.png")])
    assert len(record) == 1 and 0.0 <= record[0][3] <= 1.0


def test_functional_training_example():
    acc = _load_example("functional_training").main(epochs=8)
    assert acc >= 0.9


def test_facade_and_functional_steps_agree():
    """Three SGD steps with loss.backward() and with torch.func.grad over a parameter dict."""
    fgrad.torch.manual_seed(1)
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(64, 10))
    params = {k: v.detach().clone() for k, v in net.named_parameters()}
    opt = fgrad.torch.optim.SGD(net.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = fgrad.torch.tensor(rng.random((16, 1, 8, 8), dtype=np.float32))
        y = fgrad.torch.tensor(rng.integers(0, 10, 16))
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
        g = fgrad.torch.func.grad(lambda p: F.cross_entropy(functional_call(net, p, (x,)), y))(params)
        params = {k: params[k] - 0.1 * g[k] for k in params}
    for k, p in net.named_parameters():
        np.testing.assert_allclose(p.detach().numpy(), params[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
