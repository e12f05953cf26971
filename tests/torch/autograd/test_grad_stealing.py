"""A leaf's first gradient keeps the engine's cotangent uncopied when nothing else refers to it
(PyTorch's AccumulateGrad steals such a gradient), and only then: a cotangent that is also the
user's grad_tensors, another leaf's gradient, a hook's stored tensor, a saved value, a view of
other memory, or a cached constant must be copied, or a later in-place update of .grad (the
next backward's accumulation, an optimizer, the user) would change it too. Each case checks
that writing into every .grad afterwards leaves everything else unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as torch
import fgrad.torch._tensor.autograd as A
from fgrad.torch._tensor.tensor import sole_owner


@pytest.fixture
def owned_flags(monkeypatch):
    """The `owned` flag of each accumulation, by leaf identity."""
    flags: dict = {}
    real = A.accumulate_grad

    def spy(t, g, owned=False):
        flags[id(t)] = owned
        return real(t, g, owned)
    monkeypatch.setattr(A, "accumulate_grad", spy)
    return flags


def _snapshot(*ts):
    return [None if t is None else np.array(t.detach().numpy(), copy=True) for t in ts]


def _scribble(*leaves):
    for leaf in leaves:
        if leaf.grad is not None:
            leaf.grad.add_(1000.0)


def test_a_linear_layers_gradients_are_kept_uncopied(owned_flags):
    """The training step's case: weight (a transposed product turned back by TBackward0) and
    bias gradients of nn.Linear layers become .grad without a copy, C-contiguous."""
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    x = torch.randn(4, 6)
    model(x).pow(2).sum().backward()
    params = list(model.parameters())
    assert all(owned_flags[id(p)] for p in params)
    assert all(p.grad.is_contiguous() for p in params)
    want = [p.grad.clone() for p in params]
    model.zero_grad(set_to_none=False)  # (a second backward accumulates into the kept buffers)
    model(x).pow(2).sum().backward()
    for p, w in zip(params, want):
        assert torch.equal(p.grad, w)


def test_the_users_gradient_is_not_stolen(owned_flags):
    w = torch.randn(3, 4, requires_grad=True)
    g = torch.randn(3, 4)
    before = _snapshot(g)
    w.clone().backward(g)  # (clone's backward passes the cotangent through: w's gradient is g's memory)
    assert not owned_flags[id(w)]
    _scribble(w)
    assert np.array_equal(g.numpy(), before[0])


def test_one_cotangent_for_two_leaves_is_copied_for_each(owned_flags):
    a, b = torch.randn(5, requires_grad=True), torch.randn(5, requires_grad=True)
    ((a + b) * torch.randn(5)).sum().backward()  # (add's backward hands both operands one array)
    ga, gb = _snapshot(a.grad, b.grad)
    _scribble(a)
    assert np.array_equal(b.grad.numpy(), gb) and not np.array_equal(a.grad.numpy(), ga)


def test_a_leaf_hooks_stored_gradient_is_not_stolen(owned_flags):
    w = torch.randn(4, 3, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g))
    (w * 2.0).sum().backward()
    before = _snapshot(seen[0])
    _scribble(w)
    assert np.array_equal(seen[0].numpy(), before[0])


def test_a_hook_that_returns_a_kept_tensor_is_not_stolen(owned_flags):
    w = torch.randn(4, 3, requires_grad=True)
    kept = torch.ones(4, 3)
    w.register_hook(lambda g: kept)
    (w * 2.0).sum().backward()
    assert not owned_flags[id(w)]
    _scribble(w)
    assert np.array_equal(kept.numpy(), np.ones((4, 3)))


def test_saved_values_of_a_retained_graph_are_not_stolen(owned_flags):
    """A guard for future rules: today no backward rule hands a saved value to a leaf as its
    cotangent (product rules compute a new array), so this passes even if every gradient is
    kept. A rule that returned a saved operand itself would make it fail."""
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    y = (x * w).sum()
    y.backward(retain_graph=True)  # x's gradient is w's value, saved by the product for x
    wx = _snapshot(w, x)
    _scribble(x, w)
    assert np.array_equal(w.detach().numpy(), wx[0]) and np.array_equal(x.detach().numpy(), wx[1])
    x.grad, w.grad = None, None
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), wx[0])


def test_a_scalar_losss_cached_ones_are_not_stolen(owned_flags):
    """A guard for future rules: the implicit seed of a scalar loss is fresh today, so this
    passes even if every gradient is kept; a cached seed array would make it fail."""
    for _ in range(2):  # (a second loss must still see ones, whatever the first .grad became)
        w = torch.tensor(2.0, requires_grad=True)
        w.clone().backward()
        assert w.grad.item() == 1.0
        _scribble(w)


def test_leaves_viewing_each_others_gradients(owned_flags):
    """A gradient that is a partial view of a larger cotangent (stack's, cat's backward) shows
    memory another leaf's gradient may show too: copied."""
    a, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    torch.stack([a, b]).mul(torch.arange(6.0).reshape(2, 3)).sum().backward()
    assert not owned_flags[id(a)] and not owned_flags[id(b)]  # (rows of one array: each keeps it all)
    gb = _snapshot(b.grad)
    _scribble(a)
    assert np.array_equal(b.grad.numpy(), gb[0])


def test_sole_owner_counts_every_holder():
    def check():
        a = np.ones((3, 4))
        own = sole_owner(a)
        held = np.ones((3, 4))
        holder = [held]
        transposed = np.ones((3, 4)).T
        base = np.ones((3, 4))
        viewed = base.T
        part = np.ones((3, 4))[1:]
        shared = np.ones((3, 4))
        one, two = shared.T, shared.T
        del shared
        ro = np.ones(3)
        ro.flags.writeable = False
        return (own, sole_owner(held), sole_owner(transposed), sole_owner(viewed), sole_owner(part),
                sole_owner(one), sole_owner(ro), len(holder) + len(two) * 0 + base.size * 0)
    assert check() == (True, False, True, False, False, False, False, 1)


@pytest.mark.parametrize("model_name", ["mlp", "cnn", "lstm"])
def test_training_with_kept_gradients_matches_copying_them_bit_for_bit(monkeypatch, model_name):
    """Whole training runs (repeated steps, where a replayed backward may take over, momentum
    buffers, zero_grad both ways) give the bytes the copying rule gives: no kept gradient is
    memory something later writes. A guard for future rules and optimizers: with today's rules
    these runs give the same bytes even if every gradient is kept; the tests above are the ones
    that fail then."""
    def train():
        torch.manual_seed(0)
        nn = torch.nn
        if model_name == "mlp":
            model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))
            x = torch.randn(8, 12)
        elif model_name == "cnn":
            model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 36, 5))
            x = torch.randn(8, 1, 6, 6)
        else:
            lstm, dec = nn.LSTM(4, 6, num_layers=2), nn.Linear(6, 5)
            model = nn.ModuleList([lstm, dec])
            x = torch.randn(7, 8, 4)
        y = torch.randint(0, 5, (8,))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for i in range(12):
            opt.zero_grad(set_to_none=i % 3 != 0)
            out = model(x) if model_name != "lstm" else model[1](model[0](x)[0][-1])
            torch.nn.functional.cross_entropy(out, y).backward()
            opt.step()
        return [p.detach().numpy().tobytes() for p in model.parameters()]
    kept = train()
    monkeypatch.setattr(A, "sole_owner", lambda a: False)
    assert train() == kept
