"""torch.func.stack_module_state on fgrad.torch: PyTorch's model-ensembling recipe (stacked
parameters, vmap over functional_call) gives torch's outputs."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def _models(lib, n=3, seed=0):
    rng = np.random.default_rng(seed)

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = lib.nn.Linear(4, 5), lib.nn.Linear(5, 2)
            self.bn = lib.nn.BatchNorm1d(5)

        def forward(self, x):
            return self.fc2(lib.relu(self.bn(self.fc1(x))))

    models = []
    for _ in range(n):
        m = Net()
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
        models.append(m.eval())
    return models


@pytest.mark.parametrize("lib", [ftorch, torch])
def test_stacked_leaves(lib):
    models = _models(lib)
    params, buffers = lib.func.stack_module_state(models)
    assert list(params) == [n for n, _ in models[0].named_parameters()]
    assert list(buffers) == [n for n, _ in models[0].named_buffers()]
    assert tuple(params["fc1.weight"].shape) == (3, 5, 4)
    assert params["fc1.weight"].is_leaf and params["fc1.weight"].requires_grad
    assert not buffers["bn.running_mean"].requires_grad
    assert params["fc2.bias"].tolist() == [m.fc2.bias.tolist() for m in models]


def test_ensemble_matches_torch():
    x = np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32)
    results = []
    for lib in (ftorch, torch):
        models = _models(lib)
        params, buffers = lib.func.stack_module_state(models)
        base = models[0]

        def run(p, b, inp):
            return lib.func.functional_call(base, (p, b), (inp,))

        out = lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, lib.tensor(x))
        assert tuple(out.shape) == (3, 6, 2)
        results.append(out.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lib", [ftorch, torch])
def test_errors(lib):
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0."):
        lib.func.stack_module_state([])
    a, b = _models(lib, 2)
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        lib.func.stack_module_state([a.train(), b.eval()])
    with pytest.raises(RuntimeError, match="same class"):
        lib.func.stack_module_state([lib.nn.Linear(1, 1), lib.nn.Identity()])
    c, d = lib.nn.Linear(1, 1), lib.nn.Linear(1, 1)
    d.bias.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected bias from each model to have the same .requires_grad"):
        lib.func.stack_module_state([c, d])
