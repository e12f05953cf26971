"""fgrad.nn against jax.nn (x64), a class test over the whole namespace.

Every public function of fgrad.nn has a row in CASES (a new function without a row fails
`test_every_function_has_a_row`); each row is checked against jax for values and for first and
second derivatives of the sum in both of fgrad's modes (jacrev, jacfwd), and for one jit and
one vmap against fgrad's plain call. Inputs include the kinks (0, ±1, 6, ±3 for the hard functions), ±inf and large
values. Every initializer is checked against jax for 2 keys and 2 shapes.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import fgrad
import fgrad.nn as fnn

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnn = jax.nn

# the kinks of every elementwise activation (0; ±1 for hard_tanh, sparse_*; 6 for relu6; ±3
# for hard_sigmoid/hard_silu), moderate values, large values and the infinities
KINKS = np.array([-np.inf, -40.0, -6.0, -3.0, -1.0, -0.5, 0.0, 0.3, 1.0, 3.0, 6.0, 40.0, np.inf])
# log1mexp is defined for x >= 0 (log 2 is where its formula switches branch)
NONNEG = np.array([0.0, 1e-3, 0.5, np.log(2.0), 1.0, 5.0, 40.0, np.inf])
MATRIX = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 0.0, -np.inf, 2.0], [40.0, -40.0, 1.0, 1.0]])
FINITE = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 0.0, 7.0, 2.0], [4.0, -1.0, 1.0, 1.0]])
MASK = np.array([[True, True, False, True], [True, False, True, True], [False, True, True, True]])

_rng = np.random.default_rng(0)
_ATT = {"q": _rng.normal(size=(1, 2, 2, 2)), "k": _rng.normal(size=(1, 3, 1, 2)), "v": _rng.normal(size=(1, 3, 1, 2)),
        "bias": _rng.normal(size=(1, 2, 2, 3)), "mask": np.array([[[[True, False, True], [True, True, False]]]])}

# name -> list of (kwargs, input); each kwargs is passed to both fgrad.nn.<name> and jax.nn.<name>
CASES: dict[str, list[tuple[dict, np.ndarray]]] = {
    **{name: [({}, KINKS)] for name in [
        "relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "selu",
        "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish", "sparse_plus", "sparse_sigmoid",
        "squareplus", "mish", "tanh", "identity"]},
    # soft_sign is x / (|x| + 1): its second derivative at 0 is abs's convention, which differs
    # (test_soft_sign_second_derivative_at_zero)
    "soft_sign": [({}, KINKS[KINKS != 0])],
    "gelu": [({}, KINKS), ({"approximate": False}, KINKS)],
    "elu": [({}, KINKS), ({"alpha": 0.5}, KINKS)],
    "celu": [({}, KINKS), ({"alpha": 2.0}, KINKS)],
    "leaky_relu": [({}, KINKS), ({"negative_slope": 0.2}, KINKS)],
    "log1mexp": [({}, NONNEG)],
    "glu": [({}, FINITE), ({"axis": 0}, FINITE[:2])],
    "softmax": [({}, MATRIX), ({"axis": 0}, FINITE), ({"where": MASK}, FINITE), ({"axis": None}, FINITE)],
    "log_softmax": [({}, FINITE), ({"axis": 0}, MATRIX), ({"where": MASK}, FINITE)],
    "logsumexp": [({}, MATRIX), ({"axis": 1}, FINITE), ({"axis": 0, "where": MASK}, FINITE),
                  ({"axis": 1, "b": FINITE[0] ** 2}, FINITE)],
    "logmeanexp": [({}, FINITE), ({"axis": 1, "where": MASK}, FINITE), ({"axis": 0, "keepdims": True}, MATRIX)],
    "standardize": [({}, FINITE), ({"axis": 0, "algorithm": "stable"}, FINITE), ({"where": MASK}, FINITE),
                    ({"mean": 0.5, "variance": 2.0, "epsilon": 0.1}, FINITE)],
    # x is the query (B=1, T=2, N=2, H=2) of a grouped-query attention (K=1 key/value head)
    "dot_product_attention": [({"key": _ATT["k"], "value": _ATT["v"]}, _ATT["q"]),
                              ({"key": _ATT["k"], "value": _ATT["v"], "bias": _ATT["bias"], "mask": _ATT["mask"],
                                "is_causal": True}, _ATT["q"]),
                              ({"key": _ATT["k"], "value": _ATT["v"], "local_window_size": (1, 0), "scale": 0.7,
                                "query_seq_lengths": np.array([1], np.int32),
                                "key_value_seq_lengths": np.array([2], np.int32)}, _ATT["q"])],
    # integer indices: values, jit and vmap only (nothing to differentiate)
    "one_hot": [({"num_classes": 4}, np.array([0, 3, -1, 4, 2])),
                ({"num_classes": 3, "axis": 0}, np.array([[0, 1], [2, 5]]))],
}
NOT_DIFFERENTIABLE = {"one_hot"}

ROWS = [pytest.param(name, kw, x, id=f"{name}-{i}") for name, rows in CASES.items() for i, (kw, x) in enumerate(rows)]


def _public_functions(module) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))
                  and not inspect.ismodule(getattr(module, n)))


def test_every_function_has_a_row() -> None:
    missing = [n for n in _public_functions(fnn) if n not in CASES]
    assert not missing, f"fgrad.nn functions without a row in CASES: {missing}"


# jax.nn's functions that fgrad.nn leaves out (fgrad/nn/__init__.py says why): block-scaled
# fp8/fp4 matmuls for GPUs
NOT_PROVIDED = {"scaled_matmul", "scaled_dot_general", "get_scaled_dot_general_config"}


def test_every_function_exists_in_jax_nn() -> None:
    assert [n for n in _public_functions(fnn) if not hasattr(jnn, n)] == []


def test_every_jax_nn_function_is_provided_or_listed() -> None:
    missing = set(_public_functions(jnn)) - set(_public_functions(fnn)) - NOT_PROVIDED
    assert not missing, f"jax.nn functions missing from fgrad.nn: {sorted(missing)}"


def _fns(name: str, kw: dict):
    kw_j = {k: (jax.numpy.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    return (lambda x: getattr(fnn, name)(x, **kw)), (lambda x: getattr(jnn, name)(x, **kw_j))


# XLA's tanh is not exactly ±1 where it saturates, NumPy's is: gelu(approximate=True)'(-40) is
# 1.4e-13 in jax and 0 here, gelu''(-40) 4.9e-11 and 0
# dot_product_attention runs its softmax in float32, in JAX too (XLA's float32 exp and NumPy's
# differ in the last bits)
ATOL = {"gelu": 1e-10, "dot_product_attention": 2e-6}


def _close(got, want, what: str, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != jax's {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != jax's {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _reverse(fun, diff, x) -> dict:
    """The value and the first and second derivatives of the sum, in reverse mode."""
    s = lambda t: fun(t).sum()  # noqa: E731
    return {"value": fun(x), "first derivative": diff.jacrev(s)(x),
            "second derivative": diff.jacrev(diff.jacrev(s))(x)}


@pytest.mark.parametrize("name,kw,x", ROWS)
def test_values_and_derivatives_match_jax(name: str, kw: dict, x: np.ndarray) -> None:
    f, g = _fns(name, kw)
    if name in NOT_DIFFERENTIABLE:
        _close(f(x), g(x), f"{name}({kw}) value")
        return
    # jax's side runs as one jit per row: its eager transforms compile op by op, several times
    # slower; its reverse mode is the oracle for both of fgrad's modes
    want = jax.jit(lambda t: _reverse(g, jax, t))(x)
    got = _reverse(f, fgrad, x)
    for what in got:
        _close(got[what], want[what], f"{name}({kw}) {what} (jacrev)", atol=ATOL.get(name, 1e-12))
    # Forward mode pushes every basis tangent through every element, so where x = ±inf (inf * 0)
    # or f' or f'' is infinite (0 * inf) the whole jacfwd is nan, in jax too (eagerly; under jit
    # XLA simplifies the product): take forward mode on the other entries of a 1-D (elementwise) row
    keep = np.ones(x.shape, bool)
    if x.ndim == 1:
        keep = np.isfinite(x) & np.isfinite(got["first derivative"]) & np.isfinite(np.diag(got["second derivative"]))
    x_fwd = x[keep] if x.ndim == 1 else x
    s = lambda t: f(t).sum()  # noqa: E731
    d1 = np.asarray(want["first derivative"])
    d2 = np.asarray(want["second derivative"])
    if x.ndim == 1:
        d1, d2 = d1[keep], d2[np.ix_(keep, keep)]
    _close(fgrad.jacfwd(s)(x_fwd), d1, f"{name}({kw}) first derivative (jacfwd)", atol=ATOL.get(name, 1e-12))
    _close(fgrad.jacfwd(fgrad.jacfwd(s))(x_fwd), d2, f"{name}({kw}) second derivative (jacfwd of jacfwd)",
           atol=ATOL.get(name, 1e-12))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("name", [n for n in CASES if n not in ("one_hot", "dot_product_attention")])
def test_result_dtype_matches_jax(name: str, dtype) -> None:
    kw, x = CASES[name][0]
    f, g = _fns(name, kw)
    x = x.astype(dtype) if dtype == np.float32 else np.nan_to_num(x, posinf=9, neginf=-9).astype(dtype)
    try:
        want = jax.eval_shape(g, x).dtype  # traced, not compiled
    except TypeError:  # jax refuses integers where lax needs floats (sigmoid, silu, glu); fgrad promotes
        assert np.asarray(f(x)).dtype == np.float64
        return
    assert np.asarray(f(x)).dtype == want, f"{name}({kw}) on {dtype.__name__}"


@pytest.mark.parametrize("name,kw,x", ROWS)
def test_jit_and_vmap_agree_with_the_plain_call(name: str, kw: dict, x: np.ndarray) -> None:
    # the plain call is checked against jax above; here the transforms must not change it
    f = _fns(name, kw)[0]
    _close(fgrad.jit(f)(x), f(x), f"jit({name}({kw}))")
    mapped = [k for k in ("where", "b") if k in kw]  # a mask of x's shape is batched with x
    rest = {k: v for k, v in kw.items() if k not in mapped}
    fm = lambda t, *ms: getattr(fnn, name)(t, **rest, **dict(zip(mapped, ms)))  # noqa: E731
    xs = [x, x[::-1]] if name == "log1mexp" or x.dtype.kind == "i" else [x, -x[::-1]]
    ms = [[kw[k], kw[k][::-1]] for k in mapped]
    want = np.stack([fm(xi, *mi) for xi, *mi in zip(xs, *ms)])
    _close(fgrad.vmap(fm)(np.stack(xs), *[np.stack(m) for m in ms]), want, f"vmap({name}({kw}))")


@pytest.mark.xfail(strict=True, reason="fgrad.numpy.abs'(0) is 0 (PyTorch's sign(x), shared with the "
                   "facade); JAX's is 1, so soft_sign''(0) is 0 here and -2 in jax")
def test_soft_sign_second_derivative_at_zero() -> None:
    d2 = fgrad.grad(fgrad.grad(fnn.soft_sign))(0.0)
    assert d2 == jax.grad(jax.grad(jnn.soft_sign))(0.0) == -2.0


# --- initializers ----------------------------------------------------------------------------

INIT = fnn.initializers
JINIT = jnn.initializers
# factory name -> (arguments, shapes); None: the name is an initializer itself, not a factory
INITIALIZERS: dict[str, tuple[tuple, list[tuple]]] = {
    "zeros": (None, [(3, 4), (2, 3, 5)]),
    "ones": (None, [(3, 4), (2, 3, 5)]),
    "constant": ((-0.75,), [(3, 4), (2, 3, 5)]),
    "uniform": ((), [(3, 4), (2, 3, 5)]),
    "normal": ((0.5,), [(3, 4), (2, 3, 5)]),
    "truncated_normal": ((2.0,), [(3, 4), (2, 3, 5)]),
    "variance_scaling": ((2.0, "fan_geo_avg", "normal"), [(3, 4), (2, 3, 5)]),
    "glorot_uniform": ((), [(3, 4), (2, 3, 5)]),
    "glorot_normal": ((), [(3, 4), (2, 3, 5)]),
    "lecun_uniform": ((), [(3, 4), (2, 3, 5)]),
    "lecun_normal": ((), [(3, 4), (2, 3, 5)]),
    "he_uniform": ((), [(3, 4), (2, 3, 5)]),
    "he_normal": ((), [(3, 4), (2, 3, 5)]),
    "orthogonal": ((), [(3, 4), (5, 2, 3)]),
    "delta_orthogonal": ((), [(3, 2, 4), (3, 3, 2, 2)]),
}
# draws that only scale bits (uniform and its affine maps) are bit for bit; those that apply
# a transcendental (erf_inv for normal / truncated normal) or a QR (orthogonal) agree to the
# ulps that XLA's CPU kernels and NumPy/LAPACK differ by
BITWISE = {"zeros", "ones", "constant", "uniform", "glorot_uniform", "lecun_uniform", "he_uniform"}
ALIASES = {"xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal"}


def test_every_initializer_has_a_row() -> None:
    names = [n for n in dir(INIT) if not n.startswith("_") and inspect.isfunction(getattr(INIT, n))
             and getattr(INIT, n).__module__ == INIT.__name__]
    assert sorted(set(names) - set(INITIALIZERS) - ALIASES) == []
    jax_names = {n for n in dir(JINIT) if not n.startswith("_")}
    assert sorted(jax_names - set(INITIALIZERS) - ALIASES) == ["Initializer"]


SEEDS = (0, 7)


def _factory(module, name: str):
    args = INITIALIZERS[name][0]
    return getattr(module, name) if args is None else getattr(module, name)(*args)


# kernel fans from several axes, with a batch axis and a receptive field
_AXES = {"in_axis": (0, 1), "out_axis": -1, "batch_axis": 2}
# further draws: id -> (the initializer from a module, shape, dtype, bit for bit?)
VARIANTS = {
    "variance_scaling fan_out uniform, axes": (
        lambda m: m.variance_scaling(1.5, "fan_out", "uniform", **_AXES), (2, 3, 4, 2, 5), np.float64, True),
    "variance_scaling fan_avg truncated_normal, axes": (
        lambda m: m.variance_scaling(1.5, "fan_avg", "truncated_normal", **_AXES), (2, 3, 4, 2, 5), np.float64, False),
    "variance_scaling uniform, complex (the disk)": (
        lambda m: m.variance_scaling(1.0, "fan_in", "uniform"), (3, 4), np.complex128, False),
    "variance_scaling truncated_normal, complex": (
        lambda m: m.variance_scaling(1.0, "fan_in", "truncated_normal"), (3, 4), np.complex128, False),
}


@pytest.fixture(scope="module")
def jax_draws() -> dict:
    """jax's draws for every row of INITIALIZERS and VARIANTS and each seed, as one jit (eager
    jax retraces its samplers on every call, about a second per initializer)."""
    def draw_all(key):
        table = {name: [_factory(JINIT, name)(key, shape) for shape in shapes]
                 for name, (_, shapes) in INITIALIZERS.items()}
        table.update({vid: make(JINIT)(key, shape, dtype) for vid, (make, shape, dtype, _) in VARIANTS.items()})
        return table
    keys = jax.numpy.stack([jax.random.key(seed) for seed in SEEDS])
    return jax.tree_util.tree_map(np.asarray, jax.jit(jax.vmap(draw_all))(keys))


def _agree(got: np.ndarray, want: np.ndarray, bitwise: bool, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, what
    if bitwise:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=64 * np.finfo(np.float64).eps * np.abs(want).max(),
                                   err_msg=what)


@pytest.mark.parametrize("name", sorted(INITIALIZERS))
def test_initializer_matches_jax(name: str, jax_draws: dict) -> None:
    init = _factory(INIT, name)
    assert isinstance(init, INIT.Initializer)
    for shape, want_by_seed in zip(INITIALIZERS[name][1], jax_draws[name]):
        for seed, want in zip(SEEDS, want_by_seed):
            got = np.asarray(init(fgrad.random.key(seed), shape))
            assert got.dtype == np.float64
            _agree(got, want, name in BITWISE, f"{name} {shape} seed {seed}")
        assert init(fgrad.random.key(0), shape, np.float32).dtype == np.float32


@pytest.mark.parametrize("name", sorted(INITIALIZERS))
def test_initializer_under_jit_and_vmap_over_keys(name: str) -> None:
    init, shape = _factory(INIT, name), INITIALIZERS[name][1][0]
    keys = fgrad.random.split(fgrad.random.key(3), 2)
    plain = np.stack([np.asarray(init(k, shape)) for k in keys])
    np.testing.assert_array_equal(fgrad.jit(lambda k: init(k, shape))(keys[0]), plain[0])
    np.testing.assert_array_equal(fgrad.vmap(lambda k: init(k, shape))(keys), plain)


def test_initializer_aliases_are_jaxs() -> None:
    for alias, name in [("xavier_uniform", "glorot_uniform"), ("xavier_normal", "glorot_normal"),
                        ("kaiming_uniform", "he_uniform"), ("kaiming_normal", "he_normal")]:
        assert getattr(INIT, alias) is getattr(INIT, name)
        assert getattr(JINIT, alias) is getattr(JINIT, name)


@pytest.mark.parametrize("vid", sorted(VARIANTS))
def test_initializer_variant_matches_jax(vid: str, jax_draws: dict) -> None:
    make, shape, dtype, bitwise = VARIANTS[vid]
    for seed, want in zip(SEEDS, jax_draws[vid]):
        _agree(np.asarray(make(INIT)(fgrad.random.key(seed), shape, dtype)), want, bitwise, f"{vid} seed {seed}")


def test_errors_name_the_shape() -> None:
    with pytest.raises(ValueError, match=r"size of axis -1 of x \(shape \(2, 3\)\) is 3"):
        fnn.glu(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"axis 2 is out of range .*x has shape \(3,\)"):
        fnn.one_hot(np.array([0, 1, 2]), 3, axis=2)
    with pytest.raises(ValueError, match="unknown algorithm 'exact'"):
        fnn.standardize(np.zeros(3), algorithm="exact")
    with pytest.raises(ValueError, match=r"\(5,\)"):
        INIT.glorot_uniform()(fgrad.random.key(0), (5,))
    with pytest.raises(ValueError, match=r"fan_in 4 > fan_out 2"):
        INIT.delta_orthogonal()(fgrad.random.key(0), (3, 4, 2))
    with pytest.raises(ValueError, match="fan_sum"):
        INIT.variance_scaling(1.0, "fan_sum", "normal")


def test_dot_product_attention_errors_name_the_heads_and_the_implementation() -> None:
    q, k = np.zeros((1, 2, 3, 4)), np.zeros((1, 2, 2, 4))
    with pytest.raises(ValueError, match="multiple of the number of key/value heads, but got 3 vs 2"):
        fnn.dot_product_attention(q, k, k)
    with pytest.raises(ValueError, match="'cudnn' is not available"):
        fnn.dot_product_attention(q, q, q, implementation="cudnn")
