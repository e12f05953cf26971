"""Primitives that need structured inputs, against the oracles on generated shapes and
values: linear algebra against JAX (functional API), nn ops against PyTorch (facade).
Values, first-order gradients and second order (HVPs / create_graph)."""
import numpy as onp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fgrad
import fgrad.torch.nn.functional as F
import fgrad.numpy as fnp

EXAMPLES = int(__import__("os").environ.get("FGRAD_ORACLE_EXAMPLES", "40")) // 2 or 1
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


def _close(a, b, tol=1e-8):
    a = a.detach().numpy() if hasattr(a, "detach") else onp.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else onp.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    onp.testing.assert_allclose(a.astype(onp.float64), b.astype(onp.float64), rtol=tol, atol=tol)


# --- linear algebra vs JAX ------------------------------------------------------------------------

LINALG = {
    "inv": (lambda m: m.linalg.inv, "general"),
    "solve": (lambda m: (lambda a: m.linalg.solve(a, a[..., :1] * 2.0 + 1.0)), "general"),
    "det": (lambda m: m.linalg.det, "general"),
    "slogdet": (lambda m: (lambda a: m.linalg.slogdet(a)[1]), "general"),
    "cholesky": (lambda m: m.linalg.cholesky, "spd"),
    "norm": (lambda m: (lambda a: m.linalg.norm(a, axis=(-2, -1))), "general"),
    "matmul": (lambda m: (lambda a: a @ m.swapaxes(a, -1, -2) @ a), "general"),
    "einsum": (lambda m: (lambda a: m.einsum("...ij,...jk->...ik", a, m.tanh(a))), "general"),
    "trace_diag": (lambda m: (lambda a: m.trace(a, axis1=-2, axis2=-1) * m.diagonal(a, axis1=-2, axis2=-1).sum(-1)),
                   "general"),
}


@st.composite
def matrices(draw, kind):
    n = draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,)]))
    rng = onp.random.default_rng(draw(st.integers(0, 2 ** 31)))
    a = rng.standard_normal(batch + (n, n))
    if kind == "spd":
        return a @ onp.swapaxes(a, -1, -2) + n * onp.eye(n)
    return a + 2.0 * n * onp.eye(n)  # well conditioned


@pytest.mark.slow  # (XLA's compiles for each JAX reference dominate; CI's slow step runs it)
@pytest.mark.parametrize("name", LINALG)
@SETTINGS
@given(data=st.data())
def test_linalg_matches_jax(name, data):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    make, kind = LINALG[name]
    a = data.draw(matrices(kind))
    f, jf = make(fnp), make(jax.numpy)
    _close(f(a), jf(a), 1e-9)
    w = onp.cos(onp.arange(onp.asarray(jf(a)).size)).reshape(onp.shape(jf(a)))
    loss = lambda b: fnp.sum(f(b) * w)
    jloss = lambda b: jax.numpy.sum(jf(b) * w)
    _close(fgrad.grad(loss)(a), jax.grad(jloss)(a), 1e-8)
    v = onp.sin(onp.arange(a.size)).reshape(a.shape)
    _close(fgrad.jvp(fgrad.grad(loss), (a,), (v,))[1], jax.jvp(jax.grad(jloss), (a,), (v,))[1], 1e-7)


# --- nn ops vs PyTorch ------------------------------------------------------------------------------

@st.composite
def conv_case(draw):
    n, cin, cout = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    k = draw(st.integers(1, 3))
    stride, padding, dilation = draw(st.integers(1, 2)), draw(st.integers(0, 2)), draw(st.integers(1, 2))
    size = draw(st.integers(dilation * (k - 1) + 1, 7))
    rng = onp.random.default_rng(draw(st.integers(0, 2 ** 31)))
    return (rng.standard_normal((n, cin, size, size + 1)), rng.standard_normal((cout, cin, k, k)),
            rng.standard_normal(cout), dict(stride=stride, padding=padding, dilation=dilation))


def _facade_and_torch(arrays, fn_name, **kwargs):
    torch = pytest.importorskip("torch")
    results = []
    for lib, functional in ((fgrad.torch, F), (torch, torch.nn.functional)):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = getattr(functional, fn_name)(*ts, **kwargs)
        w = lib.tensor(onp.cos(onp.arange(out.numel())).reshape(tuple(out.shape)))
        loss = (out * w).sum()
        grads = lib.autograd.grad(loss, ts, create_graph=True)
        total = sum((g * g).sum() for g in grads)
        # a linear op's gradient is constant: then there is no second derivative to take
        second = lib.autograd.grad(total, ts, allow_unused=True) if total.requires_grad else (None,) * len(ts)
        results.append((out, grads, second))
    return results


def _compare(results, tol=1e-8):
    (o1, g1, s1), (o2, g2, s2) = results
    _close(o1, o2, tol)
    for a, b in zip(g1, g2):
        _close(a, b, tol)
    for a, b in zip(s1, s2):
        if a is None or b is None:
            assert (a is None or not onp.any(a.detach().numpy())) and (b is None or not onp.any(b.detach().numpy()))
        else:
            _close(a, b, tol * 10)


@SETTINGS
@given(case=conv_case())
def test_conv2d_matches_torch(case):
    x, w, b, params = case
    _compare(_facade_and_torch([x, w, b], "conv2d", **params))


@st.composite
def pool_case(draw):
    k = draw(st.integers(1, 3))
    stride, padding = draw(st.integers(1, 3)), draw(st.integers(0, k // 2))
    size = draw(st.integers(k, 7))
    rng = onp.random.default_rng(draw(st.integers(0, 2 ** 31)))
    x = rng.standard_normal((2, 2, size, size))  # continuous values: no ties inside a window
    return x, dict(kernel_size=k, stride=stride, padding=padding)


@SETTINGS
@given(case=pool_case(), kind=st.sampled_from(["max_pool2d", "avg_pool2d"]))
def test_pooling_matches_torch(case, kind):
    x, params = case
    _compare(_facade_and_torch([x], kind, **params))


@SETTINGS
@given(n=st.integers(1, 5), c=st.integers(2, 5), seed=st.integers(0, 2 ** 31),
       smoothing=st.sampled_from([0.0, 0.1]), reduction=st.sampled_from(["mean", "sum", "none"]),
       ignore=st.booleans(), scale=st.sampled_from([1.0, 100.0]))
def test_cross_entropy_matches_torch(n, c, seed, smoothing, reduction, ignore, scale):
    torch = pytest.importorskip("torch")
    rng = onp.random.default_rng(seed)
    logits = rng.standard_normal((n, c)) * scale
    target = rng.integers(0, c, n)
    kwargs = dict(label_smoothing=smoothing, reduction=reduction)
    if ignore and n > 1:
        target[0] = -100
    outs = []
    for lib, functional in ((fgrad.torch, F), (torch, torch.nn.functional)):
        t = lib.tensor(logits, requires_grad=True)
        out = functional.cross_entropy(t, lib.tensor(target), **kwargs)
        (g,) = lib.autograd.grad(out.sum(), [t], create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), [t])
        outs.append((out, g, h))
    for a, b in zip(*outs):
        _close(a, b, 1e-8)


@SETTINGS
@given(n=st.integers(1, 4), fin=st.integers(1, 5), fout=st.integers(1, 5), seed=st.integers(0, 2 ** 31))
def test_linear_matches_torch(n, fin, fout, seed):
    rng = onp.random.default_rng(seed)
    arrays = [rng.standard_normal((n, fin)), rng.standard_normal((fout, fin)), rng.standard_normal(fout)]
    _compare(_facade_and_torch(arrays, "linear"))
