"""torch.nn.utils.prune against PyTorch 2.13: the reparametrisation (weight_orig, weight_mask,
the forward pre-hook), the masks every method chooses (the random ones from torch's stream),
containers of several methods, global pruning, removal, and the errors."""
import numpy as np
import pytest

import fgrad.torch as ft
import fgrad.torch.nn.utils.prune as fprune

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tprune  # noqa: E402


def _np(t):
    return t.detach().numpy()


def _both(build):
    """build(lib, prune) under fgrad.torch and torch from the same seed."""
    out = []
    for lib, prune in ((ft, fprune), (torch, tprune)):
        lib.manual_seed(0)
        out.append(build(lib, prune))
    return out


def _state(m):
    return ([n for n, _ in m.named_parameters()], {n: _np(b) for n, b in m.named_buffers()},
            [type(h).__name__ for h in m._forward_pre_hooks.values()])


@pytest.mark.parametrize("how", [
    lambda p, m: p.random_unstructured(m, "weight", amount=0.3),
    lambda p, m: p.random_unstructured(m, "weight", amount=7),
    lambda p, m: p.l1_unstructured(m, "weight", amount=0.5),
    lambda p, m: p.l1_unstructured(m, "bias", amount=2),
    lambda p, m: p.random_structured(m, "weight", amount=0.5, dim=0),
    lambda p, m: p.random_structured(m, "weight", amount=1, dim=1),
    lambda p, m: p.ln_structured(m, "weight", amount=0.5, n=2, dim=0),
    lambda p, m: p.ln_structured(m, "weight", amount=2, n=1, dim=-1),
    lambda p, m: p.ln_structured(m, "weight", amount=1, n=float("inf"), dim=1),
    lambda p, m: p.identity(m, "weight"),
], ids=["random", "random-int", "l1", "l1-bias", "rand-struct", "rand-struct-dim1", "ln2", "ln1-last", "lninf",
        "identity"])
def test_methods_mask_as_torch(how):
    def build(lib, prune):
        m = lib.nn.Conv2d(3, 4, 3)
        how(prune, m)
        out = m(lib.ones(1, 3, 5, 5))
        out.sum().backward()
        name = "weight" if hasattr(m, "weight_orig") else "bias"
        return _state(m), _np(getattr(m, name)), _np(getattr(m, name + "_orig").grad), type(
            getattr(m, name).grad_fn).__name__ if getattr(m, name).grad_fn is not None else None
    (fs, fw, fg, fn), (ts, tw, tg, tn) = _both(build)
    assert fs[0] == ts[0] and fs[2] == ts[2]
    assert fs[1].keys() == ts[1].keys()
    for k in fs[1]:
        np.testing.assert_array_equal(fs[1][k], ts[1][k])
    np.testing.assert_array_equal(fw, tw)
    np.testing.assert_allclose(fg, tg, rtol=1e-6)
    assert fn == tn == "MulBackward0"


def test_container_combines_and_remove_makes_permanent():
    def build(lib, prune):
        m = lib.nn.Linear(6, 5)
        prune.random_unstructured(m, "weight", amount=0.3)
        prune.ln_structured(m, "weight", amount=0.4, n=2, dim=0)
        prune.l1_unstructured(m, "weight", amount=3)
        hook = next(iter(m._forward_pre_hooks.values()))
        kinds = [type(h).__name__ for h in hook]
        mask = _np(m.weight_mask).copy()
        with lib.no_grad():
            m.weight_orig.mul_(2)
        m(lib.ones(2, 6))  # the pre-hook recomputes weight from the changed original
        recomputed = _np(m.weight).copy()
        pruned = prune.is_pruned(m)
        prune.remove(m, "weight")
        return (kinds, mask, recomputed, pruned, prune.is_pruned(m), [n for n, _ in m.named_parameters()],
                type(m.weight).__name__, _np(m.weight), list(dict(m.named_buffers())))
    f, t = _both(build)
    assert f[0] == t[0] == ["RandomUnstructured", "LnStructured", "L1Unstructured"]
    np.testing.assert_array_equal(f[1], t[1])
    np.testing.assert_allclose(f[2], t[2], rtol=1e-6)
    assert f[3:6] == t[3:6] == (True, False, ["bias", "weight"])
    assert f[6] == t[6] == "Parameter"
    np.testing.assert_allclose(f[7], t[7], rtol=1e-6)
    assert f[8] == t[8] == []


def test_global_unstructured_and_importance_scores():
    def build(lib, prune):
        a, b = lib.nn.Linear(4, 3), lib.nn.Linear(3, 2)
        prune.global_unstructured([(a, "weight"), (b, "weight"), (a, "bias")], pruning_method=prune.L1Unstructured,
                                  amount=0.4)
        c = lib.nn.Linear(4, 3)
        scores = lib.arange(12.0).reshape(3, 4)
        prune.l1_unstructured(c, "weight", amount=5, importance_scores=scores)
        d = lib.nn.Linear(2, 2)
        prune.custom_from_mask(d, "weight", mask=lib.tensor([[1.0, 0.0], [0.0, 1.0]]))
        return [_np(x) for x in (a.weight_mask, b.weight_mask, a.bias_mask, c.weight_mask, d.weight, d.weight_mask)]
    for x, y in zip(*_both(build)):
        np.testing.assert_array_equal(x, y)


def test_custom_method_and_prune_without_module():
    def build(lib, prune):
        class EveryOther(prune.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask
        m = lib.nn.Linear(3, 4)
        EveryOther.apply(m, "bias")
        t = lib.arange(1.0, 7.0).reshape(2, 3)
        return _np(m.bias_mask), _np(prune.L1Unstructured(amount=2).prune(t)), _np(
            prune.RandomStructured(amount=1, dim=0).prune(t))
    for x, y in zip(*_both(build)):
        np.testing.assert_array_equal(x, y)


def test_errors_match_torch():
    def errors(lib, prune):
        got = []
        for call in (lambda: prune.random_unstructured(lib.nn.Linear(2, 2), "weight", amount=1.5),
                     lambda: prune.random_unstructured(lib.nn.Linear(2, 2), "weight", amount=-1),
                     lambda: prune.random_unstructured(lib.nn.Linear(2, 2), "weight", amount="a"),
                     lambda: prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=5),
                     lambda: prune.ln_structured(lib.nn.Linear(2, 2), "bias", amount=1, n=2, dim=0),
                     lambda: prune.random_structured(lib.nn.Linear(2, 2), "weight", amount=1, dim=2),
                     lambda: prune.remove(lib.nn.Linear(2, 2), "weight"),
                     lambda: prune.global_unstructured([(lib.nn.Linear(2, 2), "weight")],
                                                       pruning_method=prune.RandomStructured, amount=1)):
            with pytest.raises(Exception) as e:
                call()
            got.append(type(e.value).__mro__)
        return got
    f, t = _both(errors)
    for fm, tm in zip(f, t):
        expected = next(c for c in tm if c in (ValueError, TypeError, IndexError, RuntimeError))
        assert issubclass(fm[0], expected), (fm[0], expected)


def test_failed_pruning_puts_the_parameter_back():
    def build(lib, prune):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(ValueError, match="amount=9"):
            prune.l1_unstructured(m, "weight", amount=9)
        return [n for n, _ in m.named_parameters()], list(dict(m.named_buffers())), prune.is_pruned(m)
    f, t = _both(build)
    assert f == t == (["bias", "weight"], [], False)


def test_classes_print_under_torch_path():
    assert fprune.RandomUnstructured.__module__ == "fgrad.torch.nn.utils.prune"
    import pickle
    m = ft.nn.Linear(2, 2)
    fprune.l1_unstructured(m, "weight", amount=1)
    hook = next(iter(m._forward_pre_hooks.values()))
    assert type(pickle.loads(pickle.dumps(hook))) is fprune.L1Unstructured
