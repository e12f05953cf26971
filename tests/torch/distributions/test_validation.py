"""Argument and sample validation with torch's ValueError messages, constraints, transforms
(values, inverses, log-det-Jacobians, shapes), biject_to/transform_to and torch's module paths."""
import re

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

from .cases import t  # noqa: E402

BAD_ARGS = {
    "Normal scale": lambda l: l.distributions.Normal(t(l, [0.0, 1.0]), t(l, [1.0, -2.0])),
    "Exponential rate": lambda l: l.distributions.Exponential(t(l, [0.0])),
    "Gamma concentration": lambda l: l.distributions.Gamma(t(l, [-1.0]), t(l, [1.0])),
    "Beta concentration0": lambda l: l.distributions.Beta(t(l, [1.0]), t(l, [0.0])),
    "Bernoulli probs": lambda l: l.distributions.Bernoulli(t(l, [1.5])),
    "Categorical probs": lambda l: l.distributions.Categorical(t(l, [0.5, -0.1, 0.6])),
    "Dirichlet concentration": lambda l: l.distributions.Dirichlet(t(l, [1.0, -1.0])),
    "Poisson rate": lambda l: l.distributions.Poisson(t(l, [-1.0])),
    "Binomial total_count": lambda l: l.distributions.Binomial(t(l, [2.5]), t(l, [0.5])),
    "MultivariateNormal scale_tril": lambda l: l.distributions.MultivariateNormal(
        t(l, [0.0, 0.0]), scale_tril=t(l, [[1.0, 0.0], [0.5, -1.0]])),
    "MultivariateNormal covariance_matrix": lambda l: l.distributions.MultivariateNormal(
        t(l, [0.0, 0.0]), covariance_matrix=t(l, [[1.0, 2.0], [2.0, 1.0]])),
    "StudentT df": lambda l: l.distributions.StudentT(t(l, [0.0])),
    "VonMises concentration": lambda l: l.distributions.VonMises(t(l, [0.0]), t(l, [-1.0])),
}


def _message(fn):
    with pytest.raises(ValueError) as info:
        fn()
    return str(info.value).split("\n  at ")[0]  # (fgrad adds the user's line below the message)


@pytest.mark.parametrize("name", list(BAD_ARGS))
def test_invalid_parameters_raise_torchs_value_error(name):
    want = _message(lambda: BAD_ARGS[name](torch))
    got = _message(lambda: BAD_ARGS[name](ft))
    assert got == want


BAD_VALUES = {
    "Normal nan": (lambda l: l.distributions.Normal(t(l, [0.0]), t(l, [1.0])), [float("nan")]),
    "Exponential negative": (lambda l: l.distributions.Exponential(t(l, [1.0])), [-1.0]),
    "Beta outside": (lambda l: l.distributions.Beta(t(l, [1.0]), t(l, [2.0])), [1.5]),
    "Bernoulli 0.5": (lambda l: l.distributions.Bernoulli(t(l, [0.3])), [0.5]),
    "Categorical 3": (lambda l: l.distributions.Categorical(t(l, [0.3, 0.7])), [3.0]),
    "Poisson fraction": (lambda l: l.distributions.Poisson(t(l, [1.0])), [1.5]),
    "Dirichlet not simplex": (lambda l: l.distributions.Dirichlet(t(l, [1.0, 2.0])), [0.5, 0.6]),
    "Uniform outside": (lambda l: l.distributions.Uniform(t(l, [0.0]), t(l, [1.0])), [2.0]),
    "Normal shape": (lambda l: l.distributions.Normal(t(l, [0.0, 1.0]), t(l, [1.0, 1.0])), [0.0, 1.0, 2.0]),
    "MVN event shape": (lambda l: l.distributions.MultivariateNormal(t(l, [0.0, 0.0]),
                                                                     scale_tril=t(l, [[1.0, 0.0], [0.0, 1.0]])),
                        [0.0, 1.0, 2.0]),
}


@pytest.mark.parametrize("name", list(BAD_VALUES))
def test_invalid_values_raise_torchs_value_error(name):
    make, value = BAD_VALUES[name]
    want = _message(lambda: make(torch).log_prob(t(torch, value)))
    got = _message(lambda: make(ft).log_prob(t(ft, value)))
    assert got == want


def test_construction_errors():
    D = ft.distributions
    for call, match in [
        (lambda: D.Bernoulli(), "Either `probs` or `logits` must be specified, but not both."),
        (lambda: D.Categorical(ft.tensor(0.5)), "`probs` parameter must be at least one-dimensional."),
        (lambda: D.MultivariateNormal(ft.zeros(2)), "Exactly one of covariance_matrix"),
        (lambda: D.Uniform(ft.tensor(1.0), ft.tensor(0.0)), "Uniform is not defined when low>= high"),
        (lambda: D.Independent(D.Normal(0.0, 1.0), 1), "Expected reinterpreted_batch_ndims <= len"),
        (lambda: D.LKJCholesky(1), "Expected dim to be an integer greater than or equal to 2"),
        (lambda: D.Wishart(ft.tensor(0.5), covariance_matrix=ft.eye(2)), "expected to be greater than ndim - 1"),
        (lambda: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(ft.zeros(2), ft.ones(2))),
         "needs to be an  instance of torch.distributions.Categorical"),
        (lambda: D.Normal(ft.zeros(2), ft.ones(2)).log_prob([0.0, 1.0]), "must be a Tensor"),
    ]:
        with pytest.raises(ValueError, match=re.escape(match)):
            call()


def test_validate_args_off():
    D = ft.distributions
    d = D.Normal(ft.tensor([0.0]), ft.tensor([-1.0]), validate_args=False)  # no check
    assert tuple(d.batch_shape) == (1,)
    D.Distribution.set_default_validate_args(False)
    try:
        D.Exponential(ft.tensor([-1.0]))
        D.Exponential(ft.tensor([1.0])).log_prob(ft.tensor([-1.0]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Exponential(ft.tensor([-1.0]))


CONSTRAINTS = {
    "real": ("real", [[0.0, float("nan")]]),
    "positive": ("positive", [[0.5, 0.0, -1.0]]),
    "nonnegative_integer": ("nonnegative_integer", [[0.0, 2.0, 1.5, -1.0]]),
    "unit_interval": ("unit_interval", [[0.0, 1.0, 1.5]]),
    "simplex": ("simplex", [[0.2, 0.8], [0.5, 0.6]]),
    "lower_cholesky": ("lower_cholesky", [[[1.0, 0.0], [0.3, 2.0]], [[1.0, 0.2], [0.3, 2.0]]]),
    "positive_definite": ("positive_definite", [[[2.0, 0.3], [0.3, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    "corr_cholesky": ("corr_cholesky", [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.9]]]),
    "one_hot": ("one_hot", [[0.0, 1.0], [1.0, 1.0]]),
    "real_vector": ("real_vector", [[0.0, 1.0], [float("nan"), 1.0]]),
}


@pytest.mark.parametrize("name", list(CONSTRAINTS))
def test_constraints_check_and_repr(name):
    attr, value = CONSTRAINTS[name]
    ct, cf = getattr(torch.distributions.constraints, attr), getattr(ft.distributions.constraints, attr)
    assert repr(cf) == repr(ct) and cf.event_dim == ct.event_dim and cf.is_discrete == ct.is_discrete
    np.testing.assert_array_equal(cf.check(t(ft, value)).numpy(), ct.check(t(torch, value)).numpy())


def test_parameterised_constraints():
    C, TC = ft.distributions.constraints, torch.distributions.constraints
    for make in (lambda c: c.interval(0.0, 2.0), lambda c: c.greater_than(1.0), lambda c: c.integer_interval(0, 3),
                 lambda c: c.half_open_interval(-1.0, 1.0), lambda c: c.less_than(0.5),
                 lambda c: c.independent(c.positive, 1)):
        assert repr(make(C)) == repr(make(TC))
        x = [[0.0, 1.0, 2.0, 3.0], [-1.0, 0.5, 1.5, 4.0]]
        np.testing.assert_array_equal(make(C).check(t(ft, x)).numpy(), make(TC).check(t(torch, x)).numpy())
    cat_f = C.cat([C.positive, C.real], 0, [1, 2])
    cat_t = TC.cat([TC.positive, TC.real], 0, [1, 2])
    x = [-1.0, 2.0, 3.0]
    np.testing.assert_array_equal(cat_f.check(t(ft, x)).numpy(), cat_t.check(t(torch, x)).numpy())
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)


def _transforms(lib):
    T = lib.distributions.transforms
    return {
        "Exp": (T.ExpTransform(), [[0.3, -1.2]]),
        "Affine": (T.AffineTransform(t(lib, [1.0, -2.0]), t(lib, [0.5, -3.0])), [[0.3, -1.2]]),
        "Affine(event_dim=1)": (T.AffineTransform(1.0, t(lib, [0.5, 3.0]), event_dim=1), [[0.3, -1.2]]),
        "Sigmoid": (T.SigmoidTransform(), [[0.3, -1.2]]),
        "Tanh": (T.TanhTransform(), [[0.3, -1.2]]),
        "Softplus": (T.SoftplusTransform(), [[0.3, -1.2]]),
        "Power": (T.PowerTransform(t(lib, 2.5)), [[0.3, 1.2]]),
        "StickBreaking": (T.StickBreakingTransform(), [[0.3, -1.2, 0.5]]),
        "CorrCholesky": (T.CorrCholeskyTransform(), [[0.3, -1.2, 0.5]]),
        "LowerCholesky": (T.LowerCholeskyTransform(), [[[0.3, 0.0], [-1.2, 0.5]]]),
        "Compose": (T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform(), T.PowerTransform(t(lib, 0.5))]),
                    [[0.3, -1.2]]),
        "Independent": (T.IndependentTransform(T.ExpTransform(), 1), [[0.3, -1.2]]),
        "Reshape": (T.ReshapeTransform((4,), (2, 2)), [[0.3, -1.2, 0.1, 0.4]]),
        "Cat": (T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=-1, lengths=[1, 2]),
                [[0.3, -1.2, 0.1]]),
        "Stack": (T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=-1), [[0.3, -1.2]]),
        "Softmax": (T.SoftmaxTransform(), [[0.3, -1.2, 0.1]]),
        "Abs": (T.AbsTransform(), [[0.3, -1.2]]),
        "PositiveDefinite": (T.PositiveDefiniteTransform(), [[[0.3, 0.0], [-1.2, 0.5]]]),
        "CumulativeDistribution": (T.CumulativeDistributionTransform(
            lib.distributions.Normal(t(lib, 0.5), t(lib, 2.0))), [[0.3, -1.2]]),
    }


@pytest.mark.parametrize("name", list(_transforms(torch)))
def test_transforms_match_torch(name):
    tt, x = _transforms(torch)[name]
    tf, _ = _transforms(ft)[name]
    xt, xf = t(torch, x, True), t(ft, x, True)
    yt, yf = tt(xt), tf(xf)
    np.testing.assert_allclose(yf.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tf.inv(yf).detach().numpy(), tt.inv(yt).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert repr(tf.domain) == repr(tt.domain) and repr(tf.codomain) == repr(tt.codomain)
    assert tf.bijective == tt.bijective
    assert tuple(tf.forward_shape(tuple(xf.shape))) == tuple(tt.forward_shape(xt.shape))
    assert tuple(tf.inverse_shape(tuple(yf.shape))) == tuple(tt.inverse_shape(yt.shape))
    try:
        lt = tt.log_abs_det_jacobian(xt, yt)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            tf.log_abs_det_jacobian(xf, yf)
        return
    lf = tf.log_abs_det_jacobian(xf, yf)
    np.testing.assert_allclose(lf.detach().numpy(), lt.detach().numpy(), rtol=1e-5, atol=1e-5)
    gt, = torch.autograd.grad(lt.sum() + yt.sum(), xt)
    gf, = ft.autograd.grad(lf.sum() + yf.sum(), xf)
    np.testing.assert_allclose(gf.numpy(), gt.numpy(), rtol=1e-4, atol=1e-5)


def test_transform_cache_and_inverse_identity():
    T = ft.distributions.transforms
    e = T.ExpTransform(cache_size=1)
    x = ft.tensor([0.3])
    y = e(x)
    assert e.inv(y) is x and e.inv.inv is e
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.identity_transform(x) is x
    assert repr(T.ComposeTransform([T.ExpTransform(), T.TanhTransform()])) == \
        repr(torch.distributions.transforms.ComposeTransform([torch.distributions.transforms.ExpTransform(),
                                                              torch.distributions.transforms.TanhTransform()]))
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


@pytest.mark.parametrize("attr", ["real", "positive", "unit_interval", "simplex", "corr_cholesky", "greater_than",
                                  "interval", "less_than", "real_vector", "lower_cholesky", "positive_definite"])
def test_biject_to_and_transform_to(attr):
    def constraint(c):
        if attr == "greater_than":
            return c.greater_than(1.5)
        if attr == "interval":
            return c.interval(-1.0, 3.0)
        if attr == "less_than":
            return c.less_than(2.0)
        return getattr(c, attr)
    ct, cf = constraint(torch.distributions.constraints), constraint(ft.distributions.constraints)
    n = {"simplex": [0.3, -1.2], "corr_cholesky": [0.3, -1.2, 0.5], "lower_cholesky": [[0.3, 0.0], [-1.2, 0.5]],
         "positive_definite": [[0.3, 0.0], [-1.2, 0.5]]}.get(attr, [0.3, -1.2])
    for reg in ("biject_to", "transform_to"):
        try:
            tt = getattr(torch.distributions, reg)(ct)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(ft.distributions, reg)(cf)
            continue
        tf = getattr(ft.distributions, reg)(cf)
        assert type(tf).__name__ == type(tt).__name__
        y = tf(t(ft, n))
        np.testing.assert_allclose(y.numpy(), tt(t(torch, n)).numpy(), rtol=1e-5, atol=1e-6)
        assert bool(cf.check(y).all())


def test_torch_module_paths_import():
    import importlib
    for mod, name in [("normal", "Normal"), ("gamma", "Gamma"), ("one_hot_categorical", "OneHotCategorical"),
                      ("studentT", "StudentT"), ("transforms", "ExpTransform"), ("constraints", "positive"),
                      ("kl", "kl_divergence"), ("utils", "broadcast_all"), ("distribution", "Distribution"),
                      ("constraint_registry", "biject_to"), ("exp_family", "ExponentialFamily")]:
        m = importlib.import_module(f"fgrad.torch.distributions.{mod}")
        assert getattr(m, name) is not None
    assert set(torch.distributions.__all__) <= set(dir(ft.distributions))


def test_under_torch_func_transforms():
    """log_prob and kl_divergence under vmap agree with torch's, func.grad of log_prob with the
    closed form (validation checks values where they are known and is skipped on staged ones)."""
    out = []
    for lib in (torch, ft):
        D = lib.distributions
        lp = lib.vmap(lambda x: D.Normal(lib.tensor(0.0), lib.tensor(2.0)).log_prob(x))(lib.tensor([0.0, 1.0]))
        kl = lib.vmap(lambda a, b: D.kl_divergence(D.Gamma(a, 1.0), D.Gamma(b, 2.0)))(lib.tensor([1.0, 2.0]),
                                                                                  lib.tensor([3.0, 1.0]))
        out.append((lp.numpy(), kl.numpy()))
    for got, want in zip(out[1], out[0]):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # d/ds log N(1; 0, s) = -1/s + 1/s**3
    g = ft.func.grad(lambda s: ft.distributions.Normal(ft.tensor(0.0), s).log_prob(ft.tensor(1.0)))(ft.tensor(2.0))
    np.testing.assert_allclose(g.numpy(), -0.5 + 1 / 8, rtol=1e-6)


def test_deepcopy_and_pickle():
    import copy
    import pickle
    g = ft.distributions.Gumbel(ft.tensor(0.5), ft.tensor(2.0))
    # (an inverse transform keeps its forward one when copied: torch's copy cannot sample)
    assert tuple(copy.deepcopy(g).sample((2,)).shape) == (2,)
    x = ft.tensor(0.3)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(g)).log_prob(x).numpy(), g.log_prob(x).numpy())
    assert repr(pickle.loads(pickle.dumps(ft.distributions.constraints.interval(0.0, 1.0)))) == \
        "Interval(lower_bound=0.0, upper_bound=1.0)"
