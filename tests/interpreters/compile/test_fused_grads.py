"""The fused backward primitives of tanh and logistic (tanh_grad(ct, y) = ct (1 + y)(1 - y),
logistic_grad(ct, y) = ct y (1 - y)): their own derivatives to order 2 in both modes, bit
for bit agreement with the composed ops they replace (in the blocked impl for large arrays
too), agreement with PyTorch's tanh_backward / sigmoid_backward and JAX, and that tanh's and
logistic's derivatives go through them (one array per backward step, not three)."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.core.ir import eval_jaxpr
from fgrad.ops import elementwise as ew
from fgrad.test_util import check_grads

FUSED = {"tanh_grad": (ew.tanh_grad_p, ew.tanh), "logistic_grad": (ew.logistic_grad_p, ew.logistic)}


def _composed(name, ct, y):
    """What the derivative rules computed before the fusion (fgrad ops)."""
    one = ew.const(y, 1.0)
    if name == "tanh_grad":
        return ew.mul(ct, ew.mul(ew.add(one, y), ew.sub(one, y)))
    return ew.mul(ct, ew.mul(y, ew.sub(one, y)))


def _operands(name, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    ct = rng.standard_normal(n).astype(dtype)
    x = rng.uniform(-3, 3, n).astype(dtype)
    y = np.tanh(x) if name == "tanh_grad" else 1 / (1 + np.exp(-x))
    return ct, y.astype(dtype)


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_grad_check_grads_orders_1_2(name):
    prim = FUSED[name][0]
    ct, y = _operands(name, 5, np.float64)
    check_grads(lambda c, t: prim.bind(c, t), (ct, y), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(FUSED))
def test_activation_through_fused_grad_check_grads_orders_1_3(name):
    fn = FUSED[name][1]
    x = np.linspace(-2.5, 2.5, 7)
    check_grads(fn, (x,), order=3, modes=("fwd", "rev"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 7, (1 << 16) * 3 + 5], ids=["empty", "small", "blocked"])
@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_grad_equals_the_composed_ops_bit_for_bit(name, n, dtype):
    prim = FUSED[name][0]
    ct, y = _operands(name, n, dtype)
    got = prim.bind(ct, y)
    want = _composed(name, ct, y)
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    # a strided cotangent (grad of a sum seeds a broadcast one) and an N-d shape
    seed = np.broadcast_to(dtype(0.75), y.shape)
    np.testing.assert_array_equal(prim.bind(seed, y), _composed(name, np.ascontiguousarray(seed), y))
    if n:
        y2 = np.ascontiguousarray(y[: n - n % 4].reshape(4, -1).T)  # C-contiguous, transposed data
        c2 = ct[: n - n % 4].reshape(4, -1).T                         # strided
        np.testing.assert_array_equal(prim.bind(c2, y2), _composed(name, np.ascontiguousarray(c2), y2))


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_grad_special_values(name):
    prim = FUSED[name][0]
    vals = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan])
    ct, y = (np.array(v) for v in zip(*[(a, b) for a in vals for b in vals]))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(prim.bind(ct, y), _composed(name, ct, y))


@pytest.mark.parametrize("name", sorted(FUSED))
def test_activation_derivatives_bind_the_fused_primitive(name):
    fn = FUSED[name][1]
    x = np.linspace(-1, 1, 4)
    rev = fgrad.make_jaxpr(fgrad.grad(lambda v: fnp.sum(fn(v))))(x)
    fwd = fgrad.make_jaxpr(lambda v: fgrad.jvp(fn, (v,), (v,))[1])(x)
    for closed in (rev, fwd):
        assert [e.primitive.name for e in closed.eqns].count(name) == 1, str(closed)
        assert not any(e.primitive.name in ("add", "sub") for e in closed.eqns), str(closed)


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_grad_jit_and_vmap_agree_with_eager(name):
    prim = FUSED[name][0]
    ct, y = _operands(name, 12, np.float64, seed=3)
    want = prim.bind(ct, y)
    np.testing.assert_array_equal(fgrad.jit(lambda c, t: prim.bind(c, t))(ct, y), want)
    np.testing.assert_array_equal(fgrad.vmap(lambda c, t: prim.bind(c, t))(ct.reshape(3, 4), y.reshape(3, 4)),
                                  want.reshape(3, 4))
    closed = fgrad.make_jaxpr(lambda c, t: prim.bind(c, t))(ct, y)
    np.testing.assert_array_equal(eval_jaxpr(closed.jaxpr, closed.consts, ct, y)[0], want)
    # second derivatives through jit equal eager ones
    f = lambda v: fnp.sum(fgrad.grad(lambda u: fnp.sum(FUSED[name][1](u) ** 2))(v))
    x = np.linspace(-1.5, 1.5, 6)
    np.testing.assert_allclose(fgrad.jit(fgrad.grad(f))(x), fgrad.grad(f)(x), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_grad_against_torch(name):
    torch = pytest.importorskip("torch")
    prim = FUSED[name][0]
    ct, y = _operands(name, 50, np.float64, seed=1)
    aten = torch.ops.aten.tanh_backward if name == "tanh_grad" else torch.ops.aten.sigmoid_backward
    want = aten(torch.from_numpy(ct), torch.from_numpy(y)).numpy()
    np.testing.assert_allclose(prim.bind(ct, y), want, rtol=1e-14, atol=1e-15)
    # second derivatives of the activation, as torch's double backward gives them
    x = np.linspace(-2, 2, 9)
    tx = torch.tensor(x, requires_grad=True)
    act = torch.tanh if name == "tanh_grad" else torch.sigmoid
    (g,) = torch.autograd.grad(act(tx).sum(), tx, create_graph=True)
    (h,) = torch.autograd.grad((g ** 2).sum(), tx)
    fn = FUSED[name][1]
    ours = fgrad.grad(lambda v: fnp.sum(fgrad.grad(lambda u: fnp.sum(fn(u)))(v) ** 2))(x)
    np.testing.assert_allclose(ours, h.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_grad_against_jax_hessian(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jfn = jax.numpy.tanh if name == "tanh_grad" else jax.nn.sigmoid
    fn = FUSED[name][1]
    x = np.linspace(-2, 2, 5)
    want = np.asarray(jax.hessian(lambda v: jax.numpy.sum(jfn(v) ** 3))(x))
    got = fgrad.hessian(lambda v: fnp.sum(fn(v) ** 3))(x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_tanh_backward_peak_is_one_array_per_step():
    """The backward of a tanh layer allocates its result only (the composed rule made three
    input-sized temporaries besides): measured with tracemalloc, which sees NumPy's buffers."""
    y = np.tanh(np.linspace(-2, 2, 1 << 20)).astype(np.float32)
    ct = np.ones_like(y)
    ew.tanh_grad_p.bind(ct, y)  # warm-up
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = ew.tanh_grad_p.bind(ct, y)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak <= 1.25 * out.nbytes, f"peak {peak / out.nbytes:.2f} outputs"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["softplus", "softplus_grad"])
def test_softplus_impls_in_blocks_equal_the_whole_array_and_stay_small(name, dtype):
    """softplus and softplus_grad make four or five input-sized temporaries each; on large
    arrays their impls run block by block (the same values, bit for bit, as one call)."""
    from fgrad.ops.nn import dense
    prim = getattr(dense, f"{name}_p")
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((1 << 16) * 12 + 7) * 30).astype(dtype)
    x[:4] = [np.inf, -np.inf, np.nan, 0.0]
    params = {"beta": 1.5, "threshold": 20.0}
    got = prim.impl(x, xp=np, **params)
    parts = [prim.impl(x[i:i + 1000], xp=np, **params) for i in range(0, x.size, 1000)]
    np.testing.assert_array_equal(got, np.concatenate(parts))
    assert got.dtype == dtype
    prim.impl(x, xp=np, **params)  # warm-up
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = prim.impl(x, xp=np, **params)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak <= 1.5 * out.nbytes, f"peak {peak / out.nbytes:.2f} outputs"


# --- the fused backward of sin and cos: sin_grad(ct, x) = ct cos(x), cos_grad(ct, x) = ct (-sin(x))

TRIG = {"sin_grad": (ew.sin_grad_p, ew.sin), "cos_grad": (ew.cos_grad_p, ew.cos)}


def _trig_composed(name, ct, x):
    """What sin's and cos's VJPs computed before the fusion (fgrad ops)."""
    return ew.mul(ct, ew.cos(x)) if name == "sin_grad" else ew.mul(ct, ew.neg(ew.sin(x)))


def _same_bits(a, b):
    """Equal arrays, bit for bit, except the sign and payload of NaNs (which NaN of two a
    product keeps is the compiler's choice)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    nan = np.isnan(a)
    assert np.array_equal(nan, np.isnan(b))
    assert a[~nan].tobytes() == b[~nan].tobytes()


@pytest.mark.parametrize("name", sorted(TRIG))
def test_trig_grad_check_grads_orders_1_2(name):
    prim = TRIG[name][0]
    rng = np.random.default_rng(4)
    ct, x = rng.standard_normal(5), rng.uniform(-3, 3, 5)
    check_grads(lambda c, t: prim.bind(c, t), (ct, x), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(TRIG))
def test_sin_cos_through_trig_grad_check_grads_orders_1_3(name):
    check_grads(TRIG[name][1], (np.linspace(-2.5, 2.5, 7),), order=3, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(TRIG))
def test_sin_cos_vjp_binds_the_fused_primitive_and_jvp_the_product(name):
    fn = TRIG[name][1]
    x = np.linspace(-1, 1, 4)
    rev = fgrad.make_jaxpr(fgrad.grad(lambda v: fnp.sum(fn(v) * 2.0)))(x)
    assert [e.primitive.name for e in rev.eqns].count(name) == 1, str(rev)
    assert not any(e.primitive.name in ("sin", "cos") for e in rev.eqns), str(rev)
    fwd = fgrad.make_jaxpr(lambda v: fgrad.jvp(fn, (v,), (v,))[1])(x)
    assert name not in [e.primitive.name for e in fwd.eqns], str(fwd)
    # grad's literal-one seed of a scalar output keeps the plain derivative (no product)
    scalar = fgrad.make_jaxpr(fgrad.grad(fn))(0.5)
    assert [e.primitive.name for e in scalar.eqns] == (["cos"] if name == "sin_grad" else ["sin", "neg"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 8191, 8192, 8193, 8197, 20_003])
@pytest.mark.parametrize("name", sorted(TRIG))
def test_trig_grad_equals_the_composed_ops_bit_for_bit(name, n, dtype):
    """Below eager_math.EAGER_MIN, NumPy's functions; from it (float64) one kernel pass of
    vmath's function and the product: either way the bits of the two ops, for arguments past
    vmath's TRIG_MAX (the C library's rerun), infinities and NaNs too, in every layout."""
    prim = TRIG[name][0]
    rng = np.random.default_rng(n)
    x = rng.uniform(-40, 40, n).astype(dtype)
    ct = rng.standard_normal(n).astype(dtype)
    x[:5] = [0.0, -0.0, np.inf, np.nan, 1e7][:n]
    ct[5:7] = [np.nan, np.inf]
    with np.errstate(all="ignore"):
        _same_bits(prim.bind(ct, x), _trig_composed(name, ct, x))
        _same_bits(prim.bind(np.broadcast_to(dtype(0.75), x.shape), x),
                   _trig_composed(name, np.full(x.shape, 0.75, dtype), x))
        m = n - n % 4
        x2, c2 = x[:m].reshape(4, -1), ct[:m].reshape(4, -1)
        for c, v in [(np.asfortranarray(c2), np.asfortranarray(x2)), (c2.T, x2.T), (c2[:, ::2], x2[:, ::2])]:
            _same_bits(prim.bind(c, v), _trig_composed(name, np.ascontiguousarray(c), np.ascontiguousarray(v)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [8, 300, 10_000])
@pytest.mark.parametrize("name", sorted(TRIG))
def test_jit_regions_weigh_a_trig_grad_as_its_composite(name, n, dtype):
    """A region holding only a fused trig gradient is as long as the ops it replaced (cos and
    mul; sin, neg and mul): a lone cos_grad is a jit kernel, as its three ops were, and a lone
    sin_grad runs its impl, as its two ops did, so jit computes what it computed before."""
    from fgrad.interpreters.compile.regions import plan
    prim = TRIG[name][0]
    rng = np.random.default_rng(1)
    ct, x = rng.standard_normal(n).astype(dtype), rng.uniform(-3, 3, n).astype(dtype)
    fused = fgrad.make_jaxpr(lambda c, v: prim.bind(c, v))(ct, x)
    composed = fgrad.make_jaxpr(lambda c, v: _trig_composed(name, c, v))(ct, x)
    kinds = [[s.kind for s in plan(c.jaxpr)] for c in (fused, composed)]
    assert kinds[0] == (["kernel"] if name == "cos_grad" else ["call"]), kinds
    assert kinds[1] == (["kernel"] if name == "cos_grad" else ["call", "call"]), kinds
    got = fgrad.jit(lambda c, v: prim.bind(c, v))(ct, x)
    want = fgrad.jit(lambda c, v: _trig_composed(name, c, v))(ct, x)
    _same_bits(got, want)


@pytest.mark.parametrize("name", sorted(TRIG))
def test_trig_grad_second_derivatives_against_torch(name):
    torch = pytest.importorskip("torch")
    fn = TRIG[name][1]
    x = np.linspace(-2, 2, 9)
    tx = torch.tensor(x, requires_grad=True)
    act = torch.sin if name == "sin_grad" else torch.cos
    (g,) = torch.autograd.grad((act(tx) ** 2).sum(), tx, create_graph=True)
    (h,) = torch.autograd.grad((g ** 3).sum(), tx)
    ours = fgrad.grad(lambda v: fnp.sum(fgrad.grad(lambda u: fnp.sum(fn(u) ** 2))(v) ** 3))(x)
    np.testing.assert_allclose(ours, h.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fgrad.jit(fgrad.grad(lambda v: fnp.sum(fgrad.grad(lambda u: fnp.sum(fn(u) ** 2))(v) ** 3)))(x),
                               ours, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", sorted(TRIG))
def test_trig_grad_with_numpys_functions_allocates_its_result_only(name):
    """On NumPy's path (float32 here) the product goes into the function's new array: one
    input-sized allocation, where the two ops made two."""
    prim = TRIG[name][0]
    x = np.linspace(-3, 3, 1 << 20, dtype=np.float32)
    ct = np.ones_like(x)
    prim.bind(ct, x)  # warm-up
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = prim.bind(ct, x)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak <= 1.25 * out.nbytes, f"peak {peak / out.nbytes:.2f} outputs"
