"""AdaptiveLogSoftmaxWithLoss, linear_cross_entropy, LinearCrossEntropyLoss and
LinearCrossEntropyOptions against PyTorch 2.13: seeded parameters, state_dict keys, repr,
outputs, losses, gradients, log_prob/predict, errors."""
import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")
R = np.random.default_rng(0)
X = R.standard_normal((7, 16)).astype(np.float32)


def _asm(lib, target, x=X):
    lib.manual_seed(0)
    m = lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True)
    inp = lib.tensor(x, requires_grad=True)
    out, loss = m(inp, lib.tensor(target))
    (loss + out.sum() * 0.1).backward()
    xs = lib.tensor(x)
    return (repr(m), list(m.state_dict()), [v.numpy() for v in m.state_dict().values()], out.detach().numpy(),
            loss.detach().numpy(), inp.grad.numpy(), [None if p.grad is None else p.grad.numpy() for p in m.parameters()],
            m.log_prob(xs).detach().numpy(), m.predict(xs).numpy())


@pytest.mark.parametrize("target", [np.array([0, 3, 4, 9, 10, 19, 12]), np.array([1, 2, 3, 0, 1, 2, 3]),
                                    np.array([19, 18, 15, 16, 17, 15, 19])])
def test_adaptive_log_softmax_matches_torch(target):
    f, t = _asm(ft, target), _asm(torch, target)
    assert f[0] == t[0] and f[1] == t[1]
    assert [g is None for g in f[6]] == [g is None for g in t[6]]  # (unused clusters get no gradient)
    for i in (2, 6):
        for a, b in zip(f[i], t[i]):
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for i in (3, 4, 5, 7):
        np.testing.assert_allclose(f[i], t[i], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(f[8], t[8])


def test_adaptive_log_softmax_unbatched_and_errors():
    ft.manual_seed(0)
    m = ft.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10])
    out, loss = m(ft.tensor(X[0]), ft.tensor(12))
    assert out.shape == () and float(loss) == pytest.approx(-float(out))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        ft.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [10, 4])
    with pytest.raises(ValueError, match="length larger than 0"):
        ft.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 19\]"):
        m(ft.tensor(X[:2]), ft.tensor([0, 20]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(ft.tensor(X[:2]), ft.tensor([0, 1, 2]))


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum", label_smoothing=0.1), dict(reduction="none", ignore_index=2),
                                dict(bias=True, out_features=(3,))])
def test_linear_cross_entropy_loss_matches_torch(kw):
    def run(lib):
        lib.manual_seed(0)
        extra = {k: v for k, v in kw.items() if k in ("bias", "out_features")}
        m = lib.nn.LinearCrossEntropyLoss(16, 5, **extra, **{k: v for k, v in kw.items() if k not in extra})
        inp = lib.tensor(X, requires_grad=True)
        tgt = np.arange(7) % 5 if "out_features" not in kw else (np.arange(21) % 5).reshape(7, 3)
        loss = m(inp, lib.tensor(tgt))
        loss.sum().backward()
        return repr(m), list(m.state_dict()), loss.detach().numpy(), inp.grad.numpy(), m.linear.weight.grad.numpy()
    f, t = run(ft), run(torch)
    assert f[:2] == t[:2]
    for a, b in zip(f[2:], t[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_linear_cross_entropy_functional_and_options():
    w = R.standard_normal((5, 16)).astype(np.float32)
    tgt = np.arange(7) % 5
    # (PyTorch's reference path: its chunked one, which options select, costs seconds on first use)
    got = ft.nn.functional.linear_cross_entropy(ft.tensor(X), ft.tensor(w), ft.tensor(tgt),
                                                options=ft.nn.LinearCrossEntropyOptions(batch_chunk_size=3))
    want = torch.nn.functional.linear_cross_entropy(torch.tensor(X), torch.tensor(w), torch.tensor(tgt))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    assert repr(ft.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    with pytest.raises(ValueError, match="invalid acc_policy"):
        ft.nn.LinearCrossEntropyOptions(acc_policy="fast")
    with pytest.raises(ValueError, match="batch_chunk_size must be positive"):
        ft.nn.LinearCrossEntropyOptions(batch_chunk_size=0)
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last dimensions"):
        ft.nn.functional.linear_cross_entropy(ft.tensor(X), ft.tensor(w[:, :3]), ft.tensor(tgt))
    with pytest.raises(RuntimeError, match="expected label_smoothing to be in range"):
        ft.nn.LinearCrossEntropyLoss(16, 5, label_smoothing=2.0)
