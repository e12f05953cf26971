"""functorch (torch.func's pre-2.0 package) on fgrad.torch (fgrad/torch/_functorch.py): the
deprecated transforms warn and give torch.func's results; make_functional(_with_buffers) and
combine_state_for_ensemble against PyTorch's functorch; `import functorch` under the alias."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import fgrad.torch as ft
from fgrad.torch import _functorch as F

torch = pytest.importorskip("torch")
functorch = pytest.importorskip("functorch")


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.Tanh(), lib.nn.Linear(3, 2))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return fn(*args, **kwargs)


def test_transforms_warn_and_equal_torch_func():
    x = np.linspace(-1, 1, 5)
    with pytest.warns(FutureWarning, match="torch.func.jvp"):
        out, tangent = F.jvp(lambda a: (a ** 2).sin(), (ft.tensor(x),), (ft.ones(5, dtype=ft.float64),))
    tout, ttangent = _quiet(functorch.jvp, lambda a: (a ** 2).sin(), (torch.tensor(x),), (torch.ones(5, dtype=torch.float64),))
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-15)
    np.testing.assert_allclose(tangent.numpy(), ttangent.numpy(), rtol=1e-15)
    for name in F.__all__[:9]:
        assert getattr(F, name).__wrapped__ is getattr(ft.func, name), name


def test_make_functional_with_buffers_jvp_as_the_tutorial():
    outs = []
    for lib, mod in ((ft, F), (torch, functorch)):
        model = _model(lib).eval()  # (training mode would update running statistics in place)
        func, params, buffers = _quiet(mod.make_functional_with_buffers, model)
        assert [tuple(p.shape) for p in params] == [tuple(p.shape) for p in model.parameters()]
        assert len(buffers) == 3  # running mean, var, batches tracked
        x = lib.tensor(np.linspace(-1, 1, 8).reshape(2, 4), dtype=lib.float32)
        tangents = tuple(lib.ones_like(p) for p in params)
        out, jvp_out = _quiet(mod.jvp, lambda *p: func(p, buffers, x), params, tangents)
        outs.append((out.detach().numpy(), jvp_out.detach().numpy()))
        # the model itself is untouched: its parameters are still real tensors
        assert all(not getattr(p, "is_meta", False) for p in model.parameters())
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-6)


def test_make_functional_grads_and_errors():
    grads = []
    for lib, mod in ((ft, F), (torch, functorch)):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        func, params = _quiet(mod.make_functional, model)
        x = lib.ones(4, 3)
        g = _quiet(mod.grad, lambda p: func(p, x).pow(2).sum())(params)
        grads.append([t.detach().numpy() for t in g])
        _, frozen = _quiet(mod.make_functional, model, disable_autograd_tracking=True)
        assert not any(p.requires_grad for p in frozen)
        with pytest.raises(RuntimeError, match="make_functional_with_buffers"):
            _quiet(mod.make_functional, _model(lib))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_combine_state_for_ensemble_and_vmap():
    results = []
    for lib, mod in ((ft, F), (torch, functorch)):
        lib.manual_seed(1)
        models = [lib.nn.Linear(3, 2) for _ in range(4)]
        func, params, buffers = _quiet(mod.combine_state_for_ensemble, models)
        assert [tuple(p.shape) for p in params] == [(4, 2, 3), (4, 2)] and buffers == ()
        assert not any(p.requires_grad for p in params)
        x = lib.ones(5, 3)
        results.append(_quiet(mod.vmap, func, in_dims=(0, 0, None))(params, buffers, x).numpy())
        with pytest.raises(RuntimeError, match="at least one model"):
            _quiet(mod.combine_state_for_ensemble, [])
        with pytest.raises(RuntimeError, match="same class"):
            _quiet(mod.combine_state_for_ensemble, [lib.nn.Linear(3, 2), lib.nn.Tanh()])
        with pytest.raises(RuntimeError, match="training/eval"):
            _quiet(mod.combine_state_for_ensemble, [lib.nn.Linear(3, 2), lib.nn.Linear(3, 2).eval()])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_import_functorch_under_the_alias():
    code = textwrap.dedent("""
        import fgrad
        fgrad.install_as_torch()
        import functorch as ft, torch
        import fgrad.torch._functorch as mine
        assert ft is mine and torch is fgrad.torch
        func, params = ft.make_functional(torch.nn.Linear(2, 2))
        print(type(func).__name__, len(params))
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["FunctionalModule", "2"]
