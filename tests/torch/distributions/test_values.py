"""Every distribution's densities, moments, cdf/icdf, shapes and support against torch 2.13, and
the gradients of log_prob and entropy with respect to the parameters."""
import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

from .cases import CASES, U, build, t  # noqa: E402

ATTRS = ["log_prob", "entropy", "mean", "variance", "stddev", "mode", "cdf", "icdf"]


def _get(dist, attr, lib, value):
    if attr in ("log_prob", "cdf"):
        return getattr(dist, attr)(t(lib, value))
    if attr == "icdf":
        return dist.icdf(t(lib, U))
    if attr == "entropy":
        return dist.entropy()
    return getattr(dist, attr)


def _outcome(fn):
    try:
        return fn(), None
    except NotImplementedError as e:
        return None, e


@pytest.mark.parametrize("name", list(CASES))
def test_values_match_torch(name):
    """Each method torch implements agrees (float32, rtol 1e-5); fgrad raises NotImplementedError
    exactly where torch does."""
    value = CASES[name][1]
    dt, _ = build(name, torch)
    df, _ = build(name, ft)
    assert tuple(df.batch_shape) == tuple(dt.batch_shape) and tuple(df.event_shape) == tuple(dt.event_shape)
    assert repr(df.support) == repr(dt.support)
    assert repr(df) == repr(dt)
    assert df.has_rsample == dt.has_rsample
    assert df.has_enumerate_support == dt.has_enumerate_support
    for attr in ATTRS:
        want, terr = _outcome(lambda: _get(dt, attr, torch, value))
        got, ferr = _outcome(lambda: _get(df, attr, ft, value))
        if terr is not None:
            assert ferr is not None, (name, attr, "fgrad implements what torch does not")
            continue
        assert ferr is None, (name, attr, ferr)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   equal_nan=True, err_msg=f"{name}.{attr}")
        assert got.dtype == ft.float32 or attr == "mode", (name, attr, got.dtype)


def test_generalized_pareto_zero_concentration():
    """concentration 0 (the exponential limit) takes its own branch in every method."""
    def make(lib):
        return lib.distributions.GeneralizedPareto(t(lib, [0.3, 1.7]), t(lib, [2.0, 0.6]), t(lib, [0.0, -0.1]))
    for attr in ("log_prob", "cdf", "icdf", "entropy", "mean", "variance"):
        want = _get(make(torch), attr, torch, [0.4, 2.0])
        got = _get(make(ft), attr, ft, [0.4, 2.0])
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, err_msg=attr)


@pytest.mark.parametrize("name", list(CASES))
def test_log_prob_and_entropy_gradients_match_torch(name):
    value = CASES[name][1]
    dt, lt = build(name, torch, True)
    df, lf = build(name, ft, True)
    if not lt:
        pytest.skip("no parameters")
    outs = [(dt.log_prob(t(torch, value)).sum(), df.log_prob(t(ft, value)).sum())]
    try:
        outs.append((dt.entropy().sum(), None))
    except NotImplementedError:
        pass
    else:
        outs[-1] = (outs[-1][0], df.entropy().sum())
    for want_out, got_out in outs:
        want = torch.autograd.grad(want_out, lt, allow_unused=True, retain_graph=True)
        got = ft.autograd.grad(got_out, lf, allow_unused=True, retain_graph=True)
        for w, g in zip(want, got):
            if w is None:
                assert g is None or not np.any(g.numpy()), name
                continue
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("name", ["Bernoulli", "Categorical", "Binomial", "OneHotCategorical"])
def test_enumerate_support(name):
    dt, _ = build(name, torch)
    df, _ = build(name, ft)
    for expand in (True, False):
        want = dt.enumerate_support(expand)
        got = df.enumerate_support(expand)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", list(CASES))
def test_expand(name):
    dt, _ = build(name, torch)
    df, _ = build(name, ft)
    shape = (3,) + tuple(dt.batch_shape)
    et, ef = dt.expand(shape), df.expand(shape)
    assert type(ef).__name__ == type(et).__name__
    assert tuple(ef.batch_shape) == tuple(et.batch_shape) and tuple(ef.event_shape) == tuple(et.event_shape)
    x = et.sample()
    np.testing.assert_allclose(ef.log_prob(ft.tensor(x.numpy())).detach().numpy(),
                               et.log_prob(x).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert tuple(ef.sample().shape) == tuple(x.shape)


def test_perplexity_and_stddev():
    d = ft.distributions.Gamma(ft.tensor([2.0, 3.0]), ft.tensor([1.0, 0.5]))
    e = torch.distributions.Gamma(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 0.5]))
    np.testing.assert_allclose(d.perplexity().numpy(), e.perplexity().numpy(), rtol=1e-6)
    np.testing.assert_allclose(d.stddev.numpy(), e.stddev.numpy(), rtol=1e-6)


def test_exponential_family_entropy_by_bregman():
    """ExponentialFamily.entropy (the log normaliser's Bregman form) agrees with the closed form."""
    for make in (lambda l: l.distributions.Gamma(l.tensor([2.0, 3.0]), l.tensor([1.0, 0.5])),
                 lambda l: l.distributions.Normal(l.tensor([0.3, 1.0]), l.tensor([1.5, 0.2])),
                 lambda l: l.distributions.Exponential(l.tensor([2.0, 3.0]))):
        d = make(ft)
        generic = ft.distributions.ExponentialFamily.entropy(d)
        want = torch.distributions.ExponentialFamily.entropy(make(torch))
        np.testing.assert_allclose(generic.detach().numpy(), want.detach().numpy(), rtol=1e-5)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "StudentT", "MultivariateNormal", "VonMises", "Binomial"])
def test_log_prob_second_derivatives_match_torch(name):
    """d/dθ |d log_prob / dθ|^2 (create_graph) agrees with torch."""
    value = CASES[name][1]
    outs = []
    for lib in (torch, ft):
        d, leaves = build(name, lib, True)
        g = lib.autograd.grad(d.log_prob(t(lib, value)).sum(), leaves, create_graph=True)
        h = lib.autograd.grad(sum((gi * gi).sum() for gi in g), leaves, allow_unused=True)
        outs.append([None if x is None else x.detach().numpy() for x in h])
    for got, want in zip(outs[1], outs[0]):
        assert (got is None) == (want is None), name
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4, err_msg=name)
