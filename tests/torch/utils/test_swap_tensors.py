"""torch.utils.swap_tensors against PyTorch 2.13: values, shapes, dtypes, classes, attributes
and autograd state change places; references elsewhere (a module, an optimizer) see the swap;
the refusals."""
import weakref

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")


def _both(build):
    return [build(lib) for lib in (ft, torch)]


def test_swaps_everything():
    def build(lib):
        a, b = lib.arange(2), lib.arange(3.0)
        lib.utils.swap_tensors(a, b)
        p = lib.nn.Parameter(lib.ones(2))
        q = lib.zeros(3)
        lib.utils.swap_tensors(p, q)

        class Sub(lib.Tensor):
            pass
        s1, s2 = Sub(lib.ones(1)), Sub(lib.zeros(2))
        s1.note = "s1's"
        lib.utils.swap_tensors(s1, s2)
        x = lib.ones(2, requires_grad=True)
        y = x * 2  # a non-leaf
        z = lib.zeros(1)
        lib.utils.swap_tensors(y, z)
        return (a.tolist(), b.tolist(), str(a.dtype), str(b.dtype), type(p).__name__, type(q).__name__,
                p.tolist(), q.tolist(), q.requires_grad, p.requires_grad, getattr(s2, "note", None),
                hasattr(s1, "note"), s1.tolist(), z.grad_fn is not None, y.grad_fn is None, y.tolist())
    f, t = _both(build)
    assert f == t


def test_module_and_optimizer_see_the_swap():
    def build(lib):
        lib.manual_seed(0)
        mod = lib.nn.Linear(1, 2, bias=False)
        opt = lib.optim.SGD(mod.parameters())
        new = lib.nn.Parameter(lib.full((2, 1), 3.0))
        lib.utils.swap_tensors(mod.weight, new)
        return mod.weight.tolist(), opt.param_groups[0]["params"][0] is mod.weight, new.tolist()
    f, t = _both(build)
    assert f == t


def test_refusals():
    for lib in (ft, torch):
        a, b = lib.ones(2), lib.zeros(2)
        ref = weakref.ref(a)
        with pytest.raises(RuntimeError, match="weakref"):
            lib.utils.swap_tensors(a, b)
        del ref
    leaf = ft.ones(2, requires_grad=True)
    out = (leaf * 2).sum()
    with pytest.raises(RuntimeError, match="AccumulateGrad|autograd graph"):
        ft.utils.swap_tensors(leaf, ft.zeros(2))
    out.backward()
    with pytest.raises(TypeError, match="must be a Tensor"):
        ft.utils.swap_tensors(ft.ones(1), np.ones(1))
