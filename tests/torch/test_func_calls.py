"""torch.func's module helpers on fgrad.torch (fgrad/torch/func.py) against real PyTorch:
functional_call with several dicts, tied weights and strict checking; functionalize;
replace_all_batch_norm_modules_."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

W = np.array([[0.5, -1.0], [2.0, 0.25]])


def _tied(L):
    class Tied(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(2, 2).double()
            self.b = L.nn.Linear(2, 2).double()
            self.b.weight = self.a.weight
            with L.no_grad():  # (fixed values: the two libraries' random initial weights differ)
                self.a.weight.copy_(L.tensor([[1.0, 0.5], [-0.5, 1.5]]))
                self.a.bias.fill_(0.25)
                self.b.bias.fill_(-0.5)

        def forward(self, x):
            return self.b(self.a(x))
    return Tied()


def _calls(L):
    m = _tied(L)
    x = L.tensor([[1.0, -2.0]], dtype=L.float64)
    w = L.tensor(W)
    zeros = {"a.bias": L.zeros(2, dtype=L.float64), "b.bias": L.zeros(2, dtype=L.float64)}
    out = [L.func.functional_call(m, ({"a.weight": w}, zeros), (x,)),
           L.func.functional_call(m, ({"a.weight": w}, zeros), (x,), tie_weights=False)
           - L.func.functional_call(m, zeros, (x,), tie_weights=False),
           L.func.functional_call(m, {"a.weight": w, "b.weight": w, **zeros}, (x,), strict=True)]
    errors = []
    for bad in (lambda: L.func.functional_call(m, {"a.weight": w}, (x,), strict=True),
                lambda: L.func.functional_call(m, {"a.weight": w, "a.zz": w, **zeros}, (x,), strict=True),
                lambda: L.func.functional_call(m, ({"a.weight": w}, {"a.weight": w}), (x,)),
                lambda: L.func.functional_call(m, {"a.weight": w, "b.weight": 2 * w}, (x,))):
        with pytest.raises(Exception) as info:
            bad()
        # (fgrad adds the caller's line, and for strict a last line with the fix)
        errors.append((info.type.__name__, [line for line in str(info.value).splitlines()[:2]
                                            if not line.startswith("  at ")]))
    return [o.detach().numpy() for o in out], errors


def test_functional_call_dicts_ties_and_strict_match_torch():
    ours, theirs = _calls(ftorch), _calls(torch)
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(ours[0][0], [[1.0, -2.0]] @ W.T @ W.T, rtol=1e-12)
    for (ot, om), (tt, tm) in zip(ours[1], theirs[1]):
        assert ot == tt
        assert om == tm


def _functionalized(L):
    def f(x):
        y = x.clone()
        y.add_(1)
        y.mul_(x)
        return y.sin()

    def g(a):
        a.mul_(2)
        return a.sum()
    x = L.tensor([1.0, 2.0, 3.0], dtype=L.float64)
    f2 = L.func.functionalize(f)
    a = L.ones(3, dtype=L.float64)
    L.func.functionalize(g, remove="mutations_and_views")(a)
    with pytest.raises(RuntimeError, match="invalid argument for remove"):
        L.func.functionalize(f, remove="views")
    return [f2(x), L.func.grad(lambda v: f2(v).sum())(x), L.func.vmap(f2)(L.stack([x, 2 * x])), a]


def test_functionalize_matches_torch():
    for a, b in zip(_functionalized(ftorch), _functionalized(torch)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_replace_all_batch_norm_modules_():
    res = {}
    for L in (torch, ftorch):
        m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.Sequential(L.nn.BatchNorm1d(4)))
        assert L.func.replace_all_batch_norm_modules_(m) is m
        res[L] = [(bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.track_running_stats)
                  for bn in (m[1], m[2][0])] + [sorted(dict(m.named_buffers()))]
    assert res[ftorch] == res[torch] == [(None, None, None, False)] * 2 + [[]]


X48 = np.arange(48.0).reshape(2, 6, 4)


@pytest.mark.parametrize("pattern, lengths", [
    ("b (h w) c -> b h w c", {"h": 2}), ("b ... -> ... b", {}), ("b s c -> b s 1 c", {}), ("b s c -> (b s c)", {}),
    ("b s c -> c (s b)", {}), ("b (h w) c -> (b w) h c", {"w": 3}), ("... c -> c ...", {}), ("b s c -> b s c ()", {}),
])
def test_rearrange_matches_torch(pattern, lengths):
    ours = ftorch.func.rearrange(ftorch.tensor(X48), pattern, **lengths).numpy()
    np.testing.assert_array_equal(ours, torch.func.rearrange(torch.tensor(X48), pattern, **lengths).numpy())
    stacked = [L.func.rearrange([L.tensor(X48), L.tensor(X48 + 1)], "n b s c -> b (n s) c").numpy()
               for L in (torch, ftorch)]
    np.testing.assert_array_equal(*stacked)


@pytest.mark.parametrize("pattern, lengths", [("b (h w) c -> b h w c", {}), ("b s c -> b s", {}),
                                              ("b s -> b s", {}), ("b (h w) c -> b h w c", {"h": 5})])
def test_rearrange_errors_match_torch(pattern, lengths):
    msgs = []
    for L in (torch, ftorch):
        with pytest.raises(Exception) as info:
            L.func.rearrange(L.tensor(X48), pattern, **lengths)
        msgs.append(str(info.value).splitlines()[0])
    # (torch names the unknown axes d1, d2; fgrad names them and says how to give one)
    assert msgs[1].startswith(msgs[0].split(" d1 ")[0])


def test_debug_unwrap_inside_transforms():
    shapes = {}
    for L in (torch, ftorch):
        seen = []

        def f(v):
            seen.append((tuple(L.func.debug_unwrap(v).shape), tuple(L.func.debug_unwrap(v, recurse=False).shape)))
            return v.sum()
        L.func.vmap(f)(L.ones(5, 3))
        L.func.vmap(L.func.grad(f))(L.ones(5, 3))
        plain = L.ones(2)
        assert L.func.debug_unwrap(plain) is plain
        shapes[L] = seen
    assert shapes[ftorch] == shapes[torch] == [((5, 3), (5, 3)), ((5, 3), (3,))]
