"""bfloat16 (and float8, complex32) arithmetic on fgrad.torch, against PyTorch 2.13's CPU kernels.

PyTorch computes an op on bfloat16 operands in float32 and rounds each bfloat16 result once to
nearest even; its backward runs in float32 per op and rounds the gradients. fgrad's boundary does
the same (_boundary._call_low), so elementwise results are bit-equal; matmul and reductions
accumulate in another order, so they agree to a bfloat16 ulp."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")


def _pair(shape=(3, 5), seed=0, positive=False):
    x = np.random.RandomState(seed).randn(*shape).astype(np.float32) * 3
    if positive:
        x = np.abs(x) + 0.1
    return ft.tensor(x).bfloat16(), torch.tensor(x).bfloat16()


def _np(t) -> np.ndarray:
    """float32 copy of a bfloat16 result (both libraries)."""
    return t.detach().float().numpy()


def _ulps(a, b) -> float:
    """Largest difference in units of bfloat16's last place (2**-7 relative)."""
    a, b = _np(a), _np(b)
    scale = np.maximum(np.abs(b), np.float32(2.0 ** -120))
    return float(np.max(np.abs(a - b) / (scale * 2.0 ** -7)))


def test_float32_to_bfloat16_rounds_to_nearest_even_as_torch():
    # ties between two bfloat16 values, both ways, and a random sweep
    ties = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 2 ** -126 * (1 + 2 ** -8)], np.float32)
    x = np.concatenate([ties, np.random.RandomState(1).randn(5000).astype(np.float32)])
    np.testing.assert_array_equal(_np(ft.tensor(x).bfloat16()), _np(torch.tensor(x).bfloat16()))


UNARY_EXACT = ["neg", "abs", "sqrt", "relu", "floor", "round", "frac", "square", "reciprocal"]
UNARY_ULP = ["exp", "log", "sin", "tanh", "sigmoid", "rsqrt", "erf"]


@pytest.mark.parametrize("op", UNARY_EXACT)
def test_unary_bit_equal(op):
    a, ta = _pair(positive=op in ("sqrt", "reciprocal"))
    r, tr = getattr(a, op)(), getattr(ta, op)()
    assert r.dtype == ft.bfloat16
    np.testing.assert_array_equal(_np(r), _np(tr))


@pytest.mark.parametrize("op", UNARY_ULP)
def test_unary_transcendental_within_one_ulp(op):
    # (PyTorch's vectorised float32 exp/log/... may differ from NumPy's in the last float32
    # bit, which can move a result across a bfloat16 rounding boundary)
    a, ta = _pair(positive=op in ("log", "rsqrt"))
    r, tr = getattr(a, op)(), getattr(ta, op)()
    assert r.dtype == ft.bfloat16
    assert _ulps(r, tr) <= 1.0


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "pow"])
def test_binary_bit_equal(op):
    a, ta = _pair(positive=op == "pow")
    b, tb = _pair(seed=2, positive=op in ("div", "pow"))
    r, tr = getattr(ft, op)(a, b), getattr(torch, op)(ta, tb)
    assert r.dtype == ft.bfloat16
    if op == "pow":
        assert _ulps(r, tr) <= 1.0
    else:
        np.testing.assert_array_equal(_np(r), _np(tr))
    # a Python scalar keeps bfloat16 (it does not promote within its category)
    np.testing.assert_array_equal(_np(a * 1.37 + 0.1), _np(ta * 1.37 + 0.1))
    np.testing.assert_array_equal(_np((a > 0.5)), _np(ta > 0.5))
    # add rounds its number operand to bfloat16 first, mul and div keep it in float32: PyTorch's
    for s in (0.3, -2.71828):
        for f in (lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y):
            np.testing.assert_array_equal(_np(f(a, s)), _np(f(ta, s)))
        np.testing.assert_array_equal(_np(a + ft.tensor(s)), _np(ta + torch.tensor(s)))


def test_matmul_and_reductions_within_one_ulp():
    a, ta = _pair((16, 32))
    b, tb = _pair((32, 8), seed=3)
    r, tr = a @ b, ta @ tb
    assert r.dtype == ft.bfloat16
    np.testing.assert_allclose(_np(r), _np(tr), rtol=2 ** -7, atol=2 ** -6)
    for name in ("sum", "mean"):
        r, tr = getattr(a, name)(), getattr(ta, name)()
        assert r.dtype == ft.bfloat16
        assert _ulps(r, tr) <= 1.0
        r, tr = getattr(a, name)(1), getattr(ta, name)(1)
        assert _ulps(r, tr) <= 1.0
    # accumulated in float32: 4096 ones sum to 4096 (a bfloat16 accumulator stops at 256)
    assert float(ft.ones(4096, dtype=ft.bfloat16).sum()) == 4096.0


def test_in_place_ops_and_views():
    a, ta = _pair()
    a.mul_(5).add_(0.3).clamp_(-4, 4)
    ta.mul_(5).add_(0.3).clamp_(-4, 4)
    assert a.dtype == ft.bfloat16
    np.testing.assert_array_equal(_np(a), _np(ta))
    # indexing gives a view of the bfloat16 storage, as PyTorch's
    row = a[1]
    row.fill_(2.5)
    assert float(a[1, 0]) == 2.5
    assert a[0].reshape(-1).dtype == ft.bfloat16
    # ops that make a value in their operand's dtype (a fill) compute in float32 too
    a, ta = _pair(seed=5)
    m = a > 0
    np.testing.assert_array_equal(_np(a.masked_fill(m, 0.3)), _np(ta.masked_fill(torch.tensor(m.numpy()), 0.3)))
    i = ft.tensor([0, 2])
    np.testing.assert_array_equal(_np(a.index_fill(0, i, -1.7)), _np(ta.index_fill(0, torch.tensor([0, 2]), -1.7)))


def test_mixed_promotion():
    a, ta = _pair()
    f = ft.ones(3, 5) * 0.7
    tf = torch.ones(3, 5) * 0.7
    r, tr = a + f, ta + tf
    assert r.dtype == ft.float32 and tr.dtype == torch.float32
    np.testing.assert_array_equal(r.numpy(), tr.numpy())
    # a 0-d float32 tensor does not promote a dimensioned bfloat16 one; a 0-d bfloat16 one
    # does not demote a float32 one
    assert (a * ft.tensor(1.5)).dtype == ft.bfloat16
    assert (f * ft.tensor(1.5).bfloat16()).dtype == ft.float32
    assert (a * 2).float().dtype == ft.float32


def test_grads_are_bfloat16_and_equal_torch():
    a, ta = _pair()
    a.requires_grad_()
    ta.requires_grad_()
    (a.exp() * a + a.sin()).sum().backward()
    (ta.exp() * ta + ta.sin()).sum().backward()
    assert a.grad.dtype == ft.bfloat16
    np.testing.assert_array_equal(_np(a.grad), _np(ta.grad))
    # one node per op, linked to the bfloat16 leaf
    y = a * 2
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].variable is a
    # a float32 -> bfloat16 conversion passes its gradient back in float32
    x = ft.tensor([1.0, 2.0], requires_grad=True)
    (x.bfloat16() * 3).sum().backward()
    assert x.grad.dtype == ft.float32
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_linear_in_bfloat16_forward_backward():
    ft.manual_seed(0)
    model = ft.nn.Linear(8, 4)
    tmodel = torch.nn.Linear(8, 4)
    with torch.no_grad():
        tmodel.weight.copy_(torch.tensor(model.weight.detach().numpy()))
        tmodel.bias.copy_(torch.tensor(model.bias.detach().numpy()))
    model.to(ft.bfloat16)
    tmodel.to(torch.bfloat16)
    x, tx = _pair((6, 8), seed=4)
    out, tout = model(x), tmodel(tx)
    assert out.dtype == ft.bfloat16
    np.testing.assert_allclose(_np(out), _np(tout), rtol=2 ** -7, atol=2 ** -6)
    (out.float() ** 2).mean().backward()
    (tout.float() ** 2).mean().backward()
    for p, tp in ((model.weight, tmodel.weight), (model.bias, tmodel.bias)):
        assert p.grad.dtype == ft.bfloat16
        np.testing.assert_allclose(_np(p.grad), _np(tp.grad), rtol=2 ** -6, atol=2 ** -6)


def test_float8_arithmetic_says_to_convert():
    a = ft.tensor([1.0, 2.0, 3.0]).to(ft.float8_e4m3fn)
    with pytest.raises(RuntimeError, match=r"not implemented for 'Float8_e4m3fn'.*\.float\(\)"):
        a * 2
    with pytest.raises(RuntimeError, match="Float8_e4m3fn"):
        a.exp()
    # moving and converting are PyTorch's too
    assert a.reshape(3, 1).dtype == ft.float8_e4m3fn
    np.testing.assert_array_equal(a.float().numpy(), [1.0, 2.0, 3.0])


def test_complex32_add_mul_as_torch():
    z = np.array([1 + 2j, -0.3 + 0.7j], np.complex64)
    a, ta = ft.tensor(z).to(ft.complex32), torch.tensor(z).to(torch.complex32)
    for r, tr in ((a + a, ta + ta), (a * a, ta * ta)):
        assert r.dtype == ft.complex32
        np.testing.assert_array_equal(r.to(ft.complex64).numpy(), tr.to(torch.complex64).numpy())


def test_sgd_training_in_bfloat16_follows_torch():
    rng = np.random.default_rng(0)
    init = [rng.normal(0, 0.3, (16, 8)), np.zeros(16), rng.normal(0, 0.3, (2, 16)), np.zeros(2)]
    X, y = rng.normal(size=(32, 8)).astype(np.float32), rng.integers(0, 2, 32)

    def train(lib):
        m = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 2))
        with lib.no_grad():
            for p, v in zip(m.parameters(), init):
                p.copy_(lib.tensor(v.astype(np.float32)))
        m.to(lib.bfloat16)
        opt = lib.optim.SGD(m.parameters(), lr=0.05)
        x, t = lib.tensor(X).bfloat16(), lib.tensor(y)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(m(x), t)
            loss.backward()
            opt.step()
            losses.append(loss.detach().float().item())
        assert loss.dtype == lib.bfloat16 and m[0].weight.grad.dtype == lib.bfloat16
        return np.array(losses), [p.detach().float().numpy() for p in m.parameters()]

    (l1, p1), (l2, p2) = train(ft), train(torch)
    # (matmul accumulation order differs, so values drift by a few bfloat16 ulps over the steps)
    np.testing.assert_allclose(l1, l2, atol=2 ** -7)
    for a, b in zip(p1, p2):
        np.testing.assert_allclose(a, b, atol=2 ** -7)


def test_create_graph_gradients_are_bfloat16():
    x = np.array([0.3, -1.7, 2.2], np.float32)
    res = []
    for lib in (ft, torch):
        w = lib.tensor(x).bfloat16().requires_grad_()
        (g,) = lib.autograd.grad((w.sin() * w).sum(), w, create_graph=True)
        g.sum().backward()
        assert g.dtype == lib.bfloat16 and w.grad.dtype == lib.bfloat16
        res.append((_np(g), _np(w.grad)))
    # (PyTorch's double-backward formulas round after each of their own ops: a bfloat16 ulp apart)
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=2 ** -6, atol=2 ** -7)
