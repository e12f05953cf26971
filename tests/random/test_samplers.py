"""fgrad.random against jax.random (with x64): every public sampler x keys x shapes x dtypes,
eagerly, under jit and under vmap; keys and errors.

Integer results, keys, bits and uniform are compared bit for bit. Floats from samplers that
apply transcendental functions are compared to `ULPS` units of the dtype's epsilon (relative to
max(1, |x|)): XLA's CPU approximations of log/erf_inv/tan/pow and NumPy/SciPy's differ in the
last bits (the largest difference measured over this table is reported in the module docs).
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jr = jax.random

import fgrad  # noqa: E402
import fgrad.random as fr  # noqa: E402
from tests import sampled  # noqa: E402

ULPS = 256
# uniform on [0, 1) is exact; with another range XLA fuses floats * (max - min) + min into one
# fused multiply-add (one rounding where fgrad rounds twice), so those are within tolerance
EXACT = {"uniform", "bits", "randint", "bernoulli", "permutation", "permutation__axis", "shuffle", "choice",
         "choice__no_replace"}

MU, COV = np.array([0.5, -1.0, 2.0]), np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]])
P4 = np.array([0.1, 0.2, 0.3, 0.4])
LOGITS = np.log(np.array([0.1, 0.2, 0.7]))

# name -> sample(m, key, shape, dtype); `m` is fgrad.random or jax.random. A new public function
# of fgrad.random must be added here (test_every_public_function_is_in_the_table).
FLOAT = ("float32", "float64")
TABLE = {
    "bits": (lambda m, k, s, d: m.bits(k, s, d), ("uint32", "uint64")),
    "randint": (lambda m, k, s, d: m.randint(k, s, -3, 17, d), ("int32", "int64", "uint32")),
    "uniform": (lambda m, k, s, d: m.uniform(k, s, d), FLOAT),
    "uniform__range": (lambda m, k, s, d: m.uniform(k, s, d, -2.0, 3.0), FLOAT),
    "normal": (lambda m, k, s, d: m.normal(k, s, d), FLOAT),
    "truncated_normal": (lambda m, k, s, d: m.truncated_normal(k, -1.0, 2.0, s, d), FLOAT),
    "exponential": (lambda m, k, s, d: m.exponential(k, s, d), FLOAT),
    "laplace": (lambda m, k, s, d: m.laplace(k, s, d), FLOAT),
    "logistic": (lambda m, k, s, d: m.logistic(k, s, d), FLOAT),
    "gumbel": (lambda m, k, s, d: m.gumbel(k, s, d), FLOAT),
    "cauchy": (lambda m, k, s, d: m.cauchy(k, s, d), FLOAT),
    "pareto": (lambda m, k, s, d: m.pareto(k, 2.0, s, d), FLOAT),
    "rayleigh": (lambda m, k, s, d: m.rayleigh(k, 1.5, s, d), FLOAT),
    "wald": (lambda m, k, s, d: m.wald(k, 1.0, s, d), FLOAT),
    "weibull_min": (lambda m, k, s, d: m.weibull_min(k, 1.0, 2.0, s, d), FLOAT),
    "triangular": (lambda m, k, s, d: m.triangular(k, 0.0, 0.3, 1.0, s, d), FLOAT),
    "lognormal": (lambda m, k, s, d: m.lognormal(k, 0.5, s, d), FLOAT),
    "maxwell": (lambda m, k, s, d: m.maxwell(k, s, d), FLOAT),
    "double_sided_maxwell": (lambda m, k, s, d: m.double_sided_maxwell(k, 0.5, 2.0, s, d), FLOAT),
    "multivariate_normal": (lambda m, k, s, d: m.multivariate_normal(k, MU.astype(d), COV.astype(d), s, d), FLOAT),
    "orthogonal": (lambda m, k, s, d: m.orthogonal(k, 3, s, d), FLOAT),
    "gamma": (lambda m, k, s, d: m.gamma(k, 0.6 if len(s) % 2 else 2.5, s, d), FLOAT),
    "loggamma": (lambda m, k, s, d: m.loggamma(k, 0.3, s, d), FLOAT),
    "beta": (lambda m, k, s, d: m.beta(k, 2.0, 0.7, s, d), FLOAT),
    "dirichlet": (lambda m, k, s, d: m.dirichlet(k, np.array([1.0, 2.0, 0.5]), s, d), FLOAT),
    "chisquare": (lambda m, k, s, d: m.chisquare(k, 3.0, s, d), FLOAT),
    "f": (lambda m, k, s, d: m.f(k, 2.0, 5.0, s, d), FLOAT),
    "t": (lambda m, k, s, d: m.t(k, 3.0, s, d), FLOAT),
    "generalized_normal": (lambda m, k, s, d: m.generalized_normal(k, 1.5, s, d), FLOAT),
    "ball": (lambda m, k, s, d: m.ball(k, 3, 2, s, d), FLOAT),
    "bernoulli": (lambda m, k, s, d: m.bernoulli(k, np.asarray(0.3, d), s), FLOAT),
    "rademacher": (lambda m, k, s, d: m.rademacher(k, s, d), ("int32", "int64")),
    "categorical": (lambda m, k, s, d: m.categorical(k, LOGITS.astype(d), shape=s), FLOAT),
    "choice": (lambda m, k, s, d: m.choice(k, 7, s), (None,)),
    "choice__p": (lambda m, k, s, d: m.choice(k, 4, s, p=P4.astype(d)), FLOAT),
    "choice__no_replace": (lambda m, k, s, d: m.choice(k, np.arange(10.0).reshape(5, 2), s[:1], False, axis=0), (None,)),
    "choice__p_no_replace": (lambda m, k, s, d: m.choice(k, 4, s[:1], False, P4.astype(d)), FLOAT),
    "permutation": (lambda m, k, s, d: m.permutation(k, 6 + len(s)), (None,)),
    "permutation__axis": (lambda m, k, s, d: m.permutation(k, np.arange(12).reshape(3, 4), 1), (None,)),
    "shuffle": (lambda m, k, s, d: (m.shuffle(k, np.arange(12).reshape(3, 4), 1) if m is fr else
                                    m.permutation(k, np.arange(12).reshape(3, 4), 1, True)), (None,)),
    "poisson": (lambda m, k, s, d: m.poisson(k, 3.0 if len(s) % 2 else 40.0, s, d), ("int32", "int64")),
    "geometric": (lambda m, k, s, d: m.geometric(k, 0.3, s, d), ("int32", "int64")),
}
KEY_FUNCTIONS = {"key", "PRNGKey", "key_data", "wrap_key_data", "key_impl", "split", "fold_in",
                 "clone", "KeyArray"}
SHAPES = [(), (3,), (2, 5)]


def _keys(m):
    k = m.PRNGKey
    return [k(0), k(42), k(2 ** 31 - 1), m.split(k(7), 3)[1], m.fold_in(k(3), 2 ** 31 + 5)]


def _close(name, a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (name, a.shape, b.shape, a.dtype, b.dtype)
    if a.dtype.kind != "f" or name in EXACT:
        np.testing.assert_array_equal(a, b, err_msg=name)
    else:
        tol = ULPS * np.finfo(a.dtype).eps * np.maximum(1.0, np.abs(b))
        bad = ~(np.abs(a - b) <= tol)
        assert not bad.any(), (name, a[bad], b[bad])


def test_every_public_function_is_in_the_table():
    public = {n for n in dir(fr) if not n.startswith("_")} - {"annotations"}
    covered = {n.split("__")[0] for n in TABLE} | KEY_FUNCTIONS
    assert public - covered == set(), "add these to TABLE in tests/random/test_samplers.py"


def _compare(name, keys, shapes):
    sample, dtypes = TABLE[name]
    fkeys, jkeys = _keys(fr), _keys(jr)
    for i in keys:
        fk, jk = fkeys[i], jkeys[i]
        for shape in shapes:
            for dt in dtypes:
                _close(name, sample(fr, fk, shape, dt), sample(jr, jk, shape, dt))


# jax compiles their while loops for seconds each: they run in the slow-marked full grid
JAX_SLOW = {"loggamma", "beta", "dirichlet", "chisquare", "f", "t", "generalized_normal", "ball", "poisson"}


@pytest.mark.parametrize("name", sampled(sorted(set(TABLE) - JAX_SLOW), 2))
def test_equals_jax(name):
    # a split key and a 2-d shape (jax's compilations dominate the time); the full grid of
    # keys x shapes is slow-marked below
    _compare(name, [3], [(2, 5)])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TABLE))
def test_equals_jax_every_key_and_shape(name):
    _compare(name, range(5), SHAPES)


@pytest.mark.parametrize("name", ["normal", "uniform", "randint", "gamma", "categorical", "bits"])
def test_jit_and_vmap_equal_jax(name):
    sample, dtypes = TABLE[name]
    dt = dtypes[-1]
    key, jkey = fr.PRNGKey(42), jr.PRNGKey(42)
    got = fgrad.jit(lambda k: sample(fr, k, (3,), dt))(key)
    _close(name, got, sample(jr, jkey, (3,), dt))
    got = fgrad.vmap(lambda k: sample(fr, k, (2,), dt))(fr.split(key, 4))
    _close(name, got, jax.vmap(lambda k: sample(jr, k, (2,), dt))(jr.split(jkey, 4)))


def test_keys_split_fold_in_typed_and_raw():
    for seed in [0, 42, 2 ** 31 - 1, -1, 2 ** 40, np.uint64(2 ** 63 + 5), np.int32(-7)]:
        np.testing.assert_array_equal(fr.PRNGKey(seed), jr.PRNGKey(seed))
        np.testing.assert_array_equal(fr.key_data(fr.key(seed)), jr.key_data(jr.key(seed)))
    k, jk = fr.key(5), jr.key(5)
    for num in (2, 3, (2, 3)):
        s, js = fr.split(k, num), jr.split(jk, num)
        assert isinstance(s, fr.KeyArray) and s.shape == js.shape
        np.testing.assert_array_equal(fr.key_data(s), jr.key_data(js))
    a, b = fr.split(k)
    np.testing.assert_array_equal(fr.key_data(b), jr.key_data(jr.split(jk)[1]))
    for data in (0, 7, 2 ** 32 - 1, np.int32(-3)):
        np.testing.assert_array_equal(fr.key_data(fr.fold_in(k, data)), jr.key_data(jr.fold_in(jk, data)))
    w = fr.wrap_key_data(fr.key_data(fr.split(k, 4)))
    assert w.shape == (4,) and fr.key_impl(w) == "threefry2x32"
    # typed and raw keys give the same samples
    np.testing.assert_array_equal(fr.normal(k, (3,)), fr.normal(fr.key_data(k), (3,)))
    # typed keys are pytrees: jit and vmap take them
    np.testing.assert_array_equal(fgrad.jit(lambda q: fr.normal(q, (3,)))(k), fr.normal(k, (3,)))
    np.testing.assert_array_equal(fgrad.vmap(lambda q: fr.uniform(q))(fr.split(k, 4)),
                                  jax.vmap(lambda q: jr.uniform(q))(jr.split(jk, 4)))


def test_reparameterised_gradient():
    key = fr.PRNGKey(0)
    z = fr.normal(key, (3,))
    g = fgrad.grad(lambda s: (fr.normal(key, (3,)) * s).sum())(2.0)
    np.testing.assert_allclose(g, np.asarray(z).sum(), rtol=1e-15)
    g = fgrad.grad(lambda lo: fr.uniform(key, (4,), minval=lo, maxval=3.0).sum())(0.5)
    u = np.asarray(fr.uniform(key, (4,)))
    np.testing.assert_allclose(g, (1 - u).sum(), rtol=1e-12)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: fr.normal(np.zeros(2, np.int32)), TypeError, ["uint32", "shape (2,)", "PRNGKey"]),
    (lambda: fr.normal(np.zeros(3, np.uint32)), TypeError, ["(3,)", "PRNGKey"]),
    (lambda: fr.normal(fr.split(fr.PRNGKey(0), 2)), ValueError, ["single key", "(2,)", "vmap"]),
    (lambda: fr.normal(fr.split(fr.key(0), 2)), ValueError, ["single key", "(2,)", "vmap"]),
    (lambda: fr.uniform(fr.PRNGKey(0), (3,), "int32"), ValueError, ["uniform", "int32", "float"]),
    (lambda: fr.randint(fr.PRNGKey(0), (3,), 0, 5, "float32"), ValueError, ["randint", "float32", "int"]),
    (lambda: fr.bits(fr.PRNGKey(0), (3,), "int32"), ValueError, ["bits", "int32", "unsigned"]),
    (lambda: fr.gamma(fr.PRNGKey(0), np.ones(3), (2,)), ValueError, ["(3,)", "(2,)", "broadcast"]),
    (lambda: fr.key(np.arange(2)), TypeError, ["scalar", "(2,)", "vmap"]),
    (lambda: fr.key(1.5), TypeError, ["integer", "1.5"]),
    (lambda: fr.normal(3), TypeError, ["PRNG key", "fgrad.random.key(3)"]),
    (lambda: fr.choice(fr.PRNGKey(0), 3, (5,), replace=False), ValueError, ["size 5", "size 3", "replace=False"]),
])
def test_errors_name_value_shape_and_fix(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))
