"""kl_divergence against torch 2.13 for every pair torch registers (values and gradients), and
register_kl's dispatch."""
import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

from .cases import t  # noqa: E402


def _mk(lib, name, g, alt=False):
    """A member of family `name` (two parameter sets: alt picks the second); g: leaves."""
    D = lib.distributions
    s = 1.3 if alt else 1.0
    p = lambda x: t(lib, np.asarray(x) * s, g)  # noqa: E731
    return {
        "Bernoulli": lambda: D.Bernoulli(p([0.3, 0.6])),
        "Beta": lambda: D.Beta(p([1.5, 2.0]), p([2.5, 0.7])),
        "Binomial": lambda: D.Binomial(10, p([0.3, 0.6])),
        "Categorical": lambda: D.Categorical(p([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])),
        "Cauchy": lambda: D.Cauchy(p([0.3, -1.0]), p([1.5, 0.7])),
        "ContinuousBernoulli": lambda: D.ContinuousBernoulli(p([0.3, 0.6])),
        "Dirichlet": lambda: D.Dirichlet(p([[1.2, 0.5, 2.5], [0.6, 3.1, 0.8]])),
        "Exponential": lambda: D.Exponential(p([1.5, 0.7])),
        "Gamma": lambda: D.Gamma(p([1.5, 2.5]), p([2.5, 0.7])),
        "Geometric": lambda: D.Geometric(p([0.3, 0.6])),
        "Gumbel": lambda: D.Gumbel(p([0.3, -1.0]), p([1.5, 0.7])),
        "HalfNormal": lambda: D.HalfNormal(p([1.5, 0.7])),
        "Laplace": lambda: D.Laplace(p([0.3, -1.0]), p([1.5, 0.7])),
        "Normal": lambda: D.Normal(p([0.3, -1.0]), p([1.5, 0.7])),
        "OneHotCategorical": lambda: D.OneHotCategorical(p([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])),
        "Pareto": lambda: D.Pareto(p([1.5, 0.7]), p([3.5, 2.7])),
        "Poisson": lambda: D.Poisson(p([1.5, 0.7])),
        "Uniform": lambda: D.Uniform(p([0.1, 0.2]), p([0.6, 0.7])),
        "MultivariateNormal": lambda: D.MultivariateNormal(p([0.3, -1.0]), scale_tril=p([[1.2, 0.0], [0.4, 0.8]])),
        "LowRankMultivariateNormal": lambda: D.LowRankMultivariateNormal(p([0.3, -1.0]), p([[0.5, 0.1], [0.2, 0.7]]),
                                                                           p([1.5, 0.7])),
        "Independent": lambda: D.Independent(D.Normal(p([0.3, -1.0]), p([1.5, 0.7])), 1),
        "TransformedDistribution": lambda: D.TransformedDistribution(D.Normal(p([0.3, -1.0]), p([1.5, 0.7])),
                                                                     [D.transforms.ExpTransform()]),
    }[name]()


def _pairs():
    from torch.distributions import kl
    return sorted({(a.__name__, b.__name__) for a, b in kl._KL_REGISTRY
                   if a.__name__ not in ("ExponentialFamily",)}, key=str)



@pytest.mark.parametrize("pq", _pairs(), ids=lambda pq: f"{pq[0]}-{pq[1]}")
def test_kl_pairs_match_torch(pq):
    pn, qn = pq
    tp, tq = _mk(torch, pn, True), _mk(torch, qn, True, alt=True)
    leaves_t = [x for x in _collect(tp) + _collect(tq)]
    want = torch.distributions.kl_divergence(tp, tq)
    fp, fq = _mk(ft, pn, True), _mk(ft, qn, True, alt=True)
    leaves_f = [x for x in _collect(fp) + _collect(fq)]
    got = ft.distributions.kl_divergence(fp, fq)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=2e-5, atol=1e-5)
    if not np.all(np.isfinite(want.detach().numpy())) or not want.requires_grad:
        return
    gw = torch.autograd.grad(want.sum(), leaves_t, allow_unused=True)
    gg = ft.autograd.grad(got.sum(), leaves_f, allow_unused=True)
    for a, b in zip(gg, gw):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-4, err_msg=str(pq))


def _collect(d):
    """The leaf parameter tensors a distribution (or its parts) holds, in a fixed order."""
    seen, out = set(), []

    def visit(obj, depth=0):
        if depth > 3:
            return
        for k in sorted(vars(obj)):
            v = vars(obj)[k]
            if hasattr(v, "requires_grad") and hasattr(v, "is_leaf"):
                if v.requires_grad and v.is_leaf and id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
                elif v.requires_grad and v.grad_fn is not None:
                    # parameters kept as views or normalised copies: walk to the leaves
                    stack = [v.grad_fn]
                    while stack:
                        fn = stack.pop()
                        for nxt, _ in (fn.next_functions if fn is not None else ()):
                            if nxt is None:
                                continue
                            var = getattr(nxt, "variable", None)
                            if var is not None and id(var) not in seen:
                                seen.add(id(var))
                                out.append(var)
                            elif var is None:
                                stack.append(nxt)
            elif hasattr(v, "__dict__") and not isinstance(v, type) and "distributions" in type(v).__module__:
                visit(v, depth + 1)
    visit(d)
    return out


def test_expfamily_bregman_kl():
    """Two members of one exponential family without a registered pair go through the
    Bregman divergence of the log normaliser (here Wishart || Wishart)."""
    def make(lib, s):
        return lib.distributions.Wishart(lib.tensor(4.0 * s), covariance_matrix=lib.tensor([[1.0, 0.3], [0.3, s]]))
    want = torch.distributions.kl_divergence(make(torch, 1.0), make(torch, 1.4))
    got = ft.distributions.kl_divergence(make(ft, 1.0), make(ft, 1.4))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4)
    with pytest.raises(NotImplementedError, match="different exponential families"):
        ft.distributions.kl_divergence(ft.distributions.Poisson(ft.tensor(1.0)),
                                       ft.distributions.Dirichlet(ft.tensor([1.0, 2.0])))


def test_unregistered_pair_and_register_kl():
    D = ft.distributions
    p, q = D.VonMises(ft.tensor(0.0), ft.tensor(1.0)), D.Normal(0.0, 1.0)
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type VonMises"):
        D.kl_divergence(p, q)

    class MyNormal(D.Normal):
        pass

    # a subclass dispatches to its parent's pair until it registers its own
    a, b = MyNormal(0.0, 1.0), MyNormal(1.0, 2.0)
    np.testing.assert_allclose(D.kl_divergence(a, b).numpy(), D.kl_divergence(D.Normal(0.0, 1.0),
                                                                             D.Normal(1.0, 2.0)).numpy())

    @D.register_kl(MyNormal, MyNormal)
    def _kl(p, q):
        return ft.tensor(42.0)
    assert float(D.kl_divergence(a, b)) == 42.0
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)
