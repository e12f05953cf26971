"""Sampling: shapes for every distribution, seeded samples equal to torch's (transforms of its
streams and its rejection kernels), rsample gradients equal to torch's for the same sample (pathwise
and implicit), and the moments of the rejection samplers."""
import warnings

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

from .cases import CASES, RSAMPLE_EQUAL, SEEDED_EQUAL, build  # noqa: E402

SHAPES = [(), (4,), (2, 3)]


@pytest.mark.parametrize("name", list(CASES))
def test_sample_shapes_and_dtypes(name):
    dt, _ = build(name, torch)
    df, _ = build(name, ft)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Wishart's singular-sample warning in torch
        for shape in SHAPES[:2]:
            want = dt.sample(torch.Size(shape))
            got = df.sample(shape)
            assert tuple(got.shape) == tuple(want.shape), (name, shape)
            assert str(got.dtype) == str(want.dtype).replace("torch", "torch"), (name, got.dtype, want.dtype)
            assert not got.requires_grad
            if df.has_rsample:
                r = df.rsample(shape)
                assert tuple(r.shape) == tuple(want.shape)
    # every sample is inside the support
    x = df.sample((5,))
    assert bool(df.support.check(x).all()), name


# samplers that are arithmetic on the draws, or torch's rejection kernels (libm math in double):
# bit for bit. The others pass the (equal) draws through a float32 log/exp/pow/tanh, where
# fgrad's results may differ from PyTorch's vectorised ones in the last bits (a few ulps), so
# they are compared to that rounding.
EXACT = {"Normal", "Uniform", "Exponential", "Cauchy", "HalfNormal", "HalfCauchy", "Bernoulli", "Geometric",
         "Categorical", "OneHotCategorical", "Multinomial", "Independent", "Gamma", "Chi2", "StudentT", "Beta",
         "FisherSnedecor", "Dirichlet", "Poisson", "Binomial", "Binomial(logits)", "NegativeBinomial", "VonMises"}


@pytest.mark.parametrize("name", SEEDED_EQUAL)
def test_seeded_samples_equal_torch(name):
    """manual_seed(s) then sample(): torch's values (bit for bit where the sampler is arithmetic
    on the draws) and the generator left in torch's state."""
    dt, _ = build(name, torch)
    df, _ = build(name, ft)
    for seed in (0, 7):
        for shape in SHAPES:
            torch.manual_seed(seed)
            ft.manual_seed(seed)
            want = dt.sample(torch.Size(shape)).numpy()
            got = df.sample(shape).numpy()
            assert got.shape == want.shape and got.dtype == want.dtype
            if name in EXACT:
                np.testing.assert_array_equal(got, want, err_msg=f"{name} seed {seed} shape {shape}")
            elif "MultivariateNormal" in name:
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
            else:
                np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-7, err_msg=f"{name} seed {seed}")
            # the streams are left in the same state
            assert float(ft.rand(())) == float(torch.rand(()))


@pytest.mark.parametrize("name", RSAMPLE_EQUAL)
def test_rsample_gradients_equal_torch(name):
    """d(sum of w * rsample)/d(parameters) with the same seed equals torch's (pathwise)."""
    dt, lt = build(name, torch, True)
    df, lf = build(name, ft, True)
    torch.manual_seed(3)
    ft.manual_seed(3)
    xt = dt.rsample(torch.Size((3,)))
    xf = df.rsample((3,))
    np.testing.assert_allclose(xf.detach().numpy(), xt.detach().numpy(), rtol=1e-5, atol=1e-6)
    w = np.linspace(0.5, 1.5, xt.numel()).reshape(tuple(xt.shape)).astype(np.float32)
    want = torch.autograd.grad((xt * torch.tensor(w)).sum(), lt, allow_unused=True)
    got = ft.autograd.grad((xf * ft.tensor(w)).sum(), lf, allow_unused=True)
    for g, wa in zip(got, want):
        if wa is None:
            assert g is None or not np.any(g.numpy())
        else:
            np.testing.assert_allclose(g.numpy(), wa.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def test_standard_gamma_gradient_is_torchs():
    """The implicit reparameterisation gradient of a Gamma sample equals torch's
    _standard_gamma_grad at the same (alpha, x), over all three of its regimes."""
    from fgrad.torch.distributions._samplers import gamma_grad_np
    alpha = np.array([0.3, 0.9, 2.5, 2.5, 7.0, 12.0, 12.0, 30.0, 30.0])
    x = np.array([0.1, 0.5, 0.7, 3.0, 9.0, 11.5, 20.0, 29.0, 15.0])
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(gamma_grad_np(alpha, x), want, rtol=1e-10)


def test_gamma_rsample_gradient_flows():
    """Gamma's rsample is one StandardGammaBackward0 node; d x / d alpha is the implicit gradient
    at the drawn x, and d x / d rate is -x / rate."""
    from fgrad.torch.distributions._samplers import gamma_grad_np
    a = ft.tensor([0.7, 2.0, 9.0], dtype=ft.float64, requires_grad=True)
    r = ft.tensor([1.5, 0.5, 2.0], dtype=ft.float64, requires_grad=True)
    ft.manual_seed(0)
    x = ft.distributions.Gamma(a, r).rsample()
    assert [type(f).__name__ for f, _ in x.grad_fn.next_functions] == ["StandardGammaBackward0", "ExpandBackward0"]
    ga, gr = ft.autograd.grad(x.sum(), [a, r])
    z = x.detach().numpy() * r.detach().numpy()  # the standard Gamma draw
    np.testing.assert_allclose(ga.numpy(), gamma_grad_np(a.detach().numpy(), z) / r.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gr.numpy(), -x.detach().numpy() / r.detach().numpy(), rtol=1e-12)


def test_dirichlet_gradient_is_torchs():
    """The Dirichlet (Beta-marginal) implicit gradient equals torch's _dirichlet_grad at the
    same (x, alpha, total), over its four regimes."""
    from fgrad.torch.distributions._samplers import dirichlet_grad_np
    x = np.array([0.05, 0.3, 0.97, 0.45, 0.6, 0.2, 0.52, 0.5])
    alpha = np.array([0.5, 2.0, 3.0, 9.0, 8.0, 1.5, 20.0, 20.0])
    total = np.array([3.0, 4.0, 3.5, 20.0, 14.0, 9.0, 40.0, 40.0])
    want = torch._dirichlet_grad(torch.tensor(x), torch.tensor(alpha), torch.tensor(total)).numpy()
    np.testing.assert_allclose(dirichlet_grad_np(x, alpha, total), want, rtol=1e-9)


@pytest.mark.parametrize("name", ["Dirichlet", "Beta"])
def test_dirichlet_and_beta_rsample_gradients_are_torchs(name):
    """For a drawn sample x, d(w . x)/d(concentration) is what torch's Dirichlet backward gives
    at that x (torch's _dirichlet_grad, then its projection)."""
    conc = np.array([[1.2, 0.4, 2.5], [7.0, 9.0, 0.8]])
    if name == "Dirichlet":
        a = ft.tensor(conc, requires_grad=True)
        ft.manual_seed(0)
        x = ft.distributions.Dirichlet(a).rsample()
        assert type(x.grad_fn).__name__ == "_DirichletBackward"  # torch's node
        w = np.array([[0.3, -1.0, 2.0], [1.5, 0.2, -0.7]])
        got, = ft.autograd.grad((x * ft.tensor(w)).sum(), [a])
        xs = x.detach().numpy()
    else:
        c1 = ft.tensor(conc[:, 0], requires_grad=True)
        c0 = ft.tensor(conc[:, 1], requires_grad=True)
        ft.manual_seed(0)
        x1 = ft.distributions.Beta(c1, c0).rsample()
        w = np.array([[0.3, 0.0], [1.5, 0.0]])
        g1, g0 = ft.autograd.grad((x1 * ft.tensor(w[:, 0])).sum(), [c1, c0])
        got = np.stack([g1.numpy(), g0.numpy()], -1)
        conc = conc[:, :2]
        xs = np.stack([x1.detach().numpy(), 1 - x1.detach().numpy()], -1)
    xt, at = torch.tensor(xs), torch.tensor(conc)
    G = torch._dirichlet_grad(xt, at, at.sum(-1, True).expand_as(at))
    wt = torch.tensor(w)
    want = (G * (wt - (xt * wt).sum(-1, True))).numpy()
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-9)


@pytest.mark.slow
def test_dirichlet_and_beta_rsample_gradients_are_unbiased():
    """Dirichlet's implicit reparameterisation gradient averages to d E[x] / d alpha."""
    alpha = ft.tensor([1.5, 2.5, 4.0], dtype=ft.float64, requires_grad=True)
    ft.manual_seed(1)
    x = ft.distributions.Dirichlet(alpha).rsample((4000,))
    g, = ft.autograd.grad(x[:, 0].mean(), [alpha])
    a = np.array([1.5, 2.5, 4.0])
    exact = -a[0] / a.sum() ** 2 * np.ones(3)
    exact[0] += 1 / a.sum()
    np.testing.assert_allclose(g.numpy(), exact, atol=4e-3)


# distribution -> (make, mean, variance) for the rejection samplers, float64
MOMENTS = {
    "Gamma": (lambda: ft.distributions.Gamma(ft.tensor([0.4, 3.0], dtype=ft.float64),
                                              ft.tensor([1.0, 2.0], dtype=ft.float64))),
    "Beta": (lambda: ft.distributions.Beta(ft.tensor([0.5, 3.0], dtype=ft.float64),
                                            ft.tensor([2.0, 1.5], dtype=ft.float64))),
    "Poisson": (lambda: ft.distributions.Poisson(ft.tensor([0.5, 4.0, 60.0], dtype=ft.float64))),
    "Binomial": (lambda: ft.distributions.Binomial(ft.tensor([5.0, 200.0, 1000.0], dtype=ft.float64),
                                                    ft.tensor([0.3, 0.4, 0.97], dtype=ft.float64))),
    "NegativeBinomial": (lambda: ft.distributions.NegativeBinomial(ft.tensor([2.0, 30.0], dtype=ft.float64),
                                                                    ft.tensor([0.3, 0.6], dtype=ft.float64))),
    "Chi2": (lambda: ft.distributions.Chi2(ft.tensor([1.0, 9.0], dtype=ft.float64))),
    "StudentT": (lambda: ft.distributions.StudentT(ft.tensor([5.0, 9.0], dtype=ft.float64))),
    "Dirichlet": (lambda: ft.distributions.Dirichlet(ft.tensor([0.5, 1.0, 3.0], dtype=ft.float64))),
    "Wishart": (lambda: ft.distributions.Wishart(ft.tensor(5.0, dtype=ft.float64),
                                                  covariance_matrix=ft.tensor([[1.0, 0.3], [0.3, 0.5]],
                                                                              dtype=ft.float64))),
    "FisherSnedecor": (lambda: ft.distributions.FisherSnedecor(ft.tensor([6.0, 12.0], dtype=ft.float64),
                                                                ft.tensor([9.0, 14.0], dtype=ft.float64))),
    "InverseGamma": (lambda: ft.distributions.InverseGamma(ft.tensor([5.0, 7.0], dtype=ft.float64),
                                                            ft.tensor([1.0, 2.0], dtype=ft.float64))),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MOMENTS))
def test_rejection_samplers_moments(name):
    """20000 draws: the sample mean is within 5 standard errors of the mean, the sample
    variance within 12% of the variance."""
    d = MOMENTS[name]()
    ft.manual_seed(11)
    x = d.sample((20000,)).numpy()
    mean, var = d.mean.numpy(), d.variance.numpy()
    se = np.sqrt(var / x.shape[0])
    assert np.all(np.abs(x.mean(0) - mean) <= 5 * se + 1e-12), (name, x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=0.12)


@pytest.mark.slow
def test_von_mises_circular_moments():
    d = ft.distributions.VonMises(ft.tensor([0.5, -2.5], dtype=ft.float64), ft.tensor([2.0, 0.3], dtype=ft.float64))
    ft.manual_seed(5)
    x = d.sample((20000,)).numpy()
    assert np.all((x >= -np.pi) & (x < np.pi))
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance
    import scipy.special as sps
    k = np.array([2.0, 0.3])
    r = np.mean(np.cos(x - np.array([0.5, -2.5])), 0)
    np.testing.assert_allclose(r, sps.i1(k) / sps.i0(k), atol=0.02)
    np.testing.assert_allclose(d.variance.numpy(), 1 - sps.i1(k) / sps.i0(k), rtol=1e-6)


def test_lkj_cholesky_samples_are_correlation_factors():
    d = ft.distributions.LKJCholesky(4, ft.tensor([0.5, 3.0]))
    ft.manual_seed(2)
    L = d.sample((50,))
    assert tuple(L.shape) == (50, 2, 4, 4)
    assert bool(ft.distributions.constraints.corr_cholesky.check(L).all())
    C = (L @ L.mT).numpy()
    np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, rtol=1e-5)


def test_samplers_follow_manual_seed():
    """Rejection samplers draw from the default generator: the same seed, the same draws."""
    for make in MOMENTS.values():
        ft.manual_seed(4)
        a = make().sample((3,)).numpy()
        ft.manual_seed(4)
        b = make().sample((3,)).numpy()
        np.testing.assert_array_equal(a, b)


FLOAT64_EXACT = {
    "Normal": lambda D, p, q: D.Normal(p, q), "Uniform": lambda D, p, q: D.Uniform(p, p + q),
    "Exponential": lambda D, p, q: D.Exponential(q), "Cauchy": lambda D, p, q: D.Cauchy(p, q),
    "Gumbel": lambda D, p, q: D.Gumbel(p, q), "LogNormal": lambda D, p, q: D.LogNormal(p, q),
    "Geometric": lambda D, p, q: D.Geometric(q / 3),
}


@pytest.mark.parametrize("name", list(FLOAT64_EXACT))
def test_seeded_float64_samples_equal_torch(name):
    """float64 parameters: float64 samples, bit for bit torch's (these samplers' float64 math
    rounds as torch's)."""
    out = []
    for lib in (torch, ft):
        p = lib.tensor([0.3, 1.7], dtype=lib.float64)
        q = lib.tensor([2.0, 0.6], dtype=lib.float64)
        lib.manual_seed(5)
        out.append(FLOAT64_EXACT[name](lib.distributions, p, q).sample((20,)).numpy())
    assert out[1].dtype == np.float64
    np.testing.assert_array_equal(out[1], out[0])


def test_wishart_draws_are_torchs_bartlett_draws():
    """Wishart.rsample's draws are torch's Bartlett draws for the same seed (torch 2.13's own
    rsample then redraws every valid sample once: its singularity check is inverted)."""
    dt, _ = build("Wishart", torch)
    df, _ = build("Wishart", ft)
    for shape in ((), (3,)):
        torch.manual_seed(2)
        ft.manual_seed(2)
        want = dt._bartlett_sampling(torch.Size(shape)).numpy()
        got = df.rsample(shape).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert float(ft.rand(())) == float(torch.rand(()))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rejection_kernels_equal_torchs_in_every_regime(dtype):
    """The kernels against torch's own functions over their regimes: Gamma with alpha < 1 (the
    boost), near 1 and large; Poisson below 10 (multiplication), at and above it (PTRS); Binomial
    by inversion and BTRS on both sides of p = 1/2, with the edge cases; Dirichlet."""
    from fgrad.torch.distributions import _samplers as S
    alpha = np.array([0.05, 0.3, 0.999, 1.0, 2.5, 7.0, 30.0, 0.0] * 4, dtype)
    rate = np.array([0.0, 0.3, 3.0, 9.99, 10.0, 25.0, 400.0, 4.0] * 4, dtype)
    count = np.array([5.0, 200.0, 1000.0, 10.0, 40.0, 0.0, 7.0, 1000.0, 60.0] * 3, dtype)
    prob = np.array([0.3, 0.4, 0.97, 0.5, 0.9, 0.5, 1.0, 0.013, 0.0] * 3, dtype)
    conc = np.array([[0.4, 1.5, 3.0], [7.0, 0.2, 1.0]], dtype)
    td = getattr(torch, dtype)
    for seed in (0, 1):
        torch.manual_seed(seed)
        want = [torch._standard_gamma(torch.tensor(alpha)), torch.poisson(torch.tensor(rate)),
                torch.binomial(torch.tensor(count), torch.tensor(prob)), torch._sample_dirichlet(torch.tensor(conc))]
        ft.manual_seed(seed)
        got = [np.maximum(S.gamma_np(alpha).astype(dtype), np.finfo(dtype).tiny),
               S.poisson_np(rate).astype(dtype), S.binomial_np(count, prob).astype(dtype),
               S.sample_dirichlet(ft.tensor(conc)).numpy()]
        for g, w in zip(got, want):
            assert w.dtype == td
            np.testing.assert_array_equal(g, w.numpy())
        assert float(ft.rand(())) == float(torch.rand(()))


def test_torch_poisson_and_binomial():
    """torch.poisson / torch.binomial (the kernels the distributions draw with): a Generator's
    stream, poisson's zero derivative, torch's errors."""
    g, tg = ft.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    for _ in range(2):
        np.testing.assert_array_equal(ft.poisson(ft.full((6,), 12.0), generator=g).numpy(),
                                      torch.poisson(torch.full((6,), 12.0), generator=tg).numpy())
        np.testing.assert_array_equal(
            ft.binomial(ft.full((6,), 40.0), ft.tensor([0.1, 0.3, 0.5, 0.7, 0.9, 0.99]), generator=g).numpy(),
            torch.binomial(torch.full((6,), 40.0), torch.tensor([0.1, 0.3, 0.5, 0.7, 0.9, 0.99]), generator=tg).numpy())
    r = ft.tensor([1.0, 30.0], requires_grad=True)
    y = ft.poisson(r)
    assert type(y.grad_fn).__name__ == "PoissonBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(r.grad.numpy(), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        ft.poisson(ft.tensor([-1.0]))
    with pytest.raises(NotImplementedError, match="not implemented for torch.int64"):
        ft.poisson(ft.tensor([1]))
