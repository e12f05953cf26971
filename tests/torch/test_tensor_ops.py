"""The facade's scatter/index updates, counting, cumulative, fused multiply-add, order
statistics and product functions, differentially against PyTorch: for float32 and float64,
the values, dtypes and shapes of every output, the gradients of a weighted sum of the
outputs (backward), and the second-order gradients through create_graph where PyTorch can
differentiate its own backward; and the exception types of bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad

torch = pytest.importorskip("torch")

DTYPES = ("float32", "float64")
TOL = {"float32": {"rtol": 2e-4, "atol": 2e-5}, "float64": {"rtol": 1e-9, "atol": 1e-11}}


def R(*shape, lo=-2.0, hi=2.0, seed=0):
    """A float array (differentiated; it takes the dtype under test)."""
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def I(data):
    return np.asarray(data, np.int64)


def B(data):
    return np.asarray(data, bool)


def _tensor(L, a, dt):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return L.tensor(a, dtype=getattr(L, dt), requires_grad=True)
    if isinstance(a, np.ndarray):
        return L.tensor(a)
    return a


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _leaves(o)]
    return [out]


def _np(t):
    if getattr(t, "_is_zerotensor", lambda: False)():  # PyTorch's symbolic zero gradient
        return np.zeros(tuple(t.shape))
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _run(L, fn, args, dt):
    ts = [_tensor(L, a, dt) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(L, *ts)
    return ts, _leaves(out)


def _grads(L, ts, outs, order):
    """First (and second) order gradients of sum(w * out) with respect to the float inputs."""
    xs = [t for t in ts if hasattr(t, "requires_grad") and t.requires_grad]
    # each output's weights depend on its position only (PyTorch marks some outputs with a zero
    # derivative as requiring grad, slogdet's sign, where fgrad does not)
    diff = [(k, o) for k, o in enumerate(outs) if hasattr(o, "dtype") and o.dtype.is_floating_point
            and o.requires_grad]
    if not xs or not diff:
        return []
    rng = np.random.default_rng(7)
    loss = sum((o * L.tensor(np.random.default_rng(k).uniform(0.5, 1.5, tuple(o.shape)), dtype=o.dtype)).sum()
               for k, o in diff)
    g1 = L.autograd.grad(loss, xs, create_graph=order > 1, allow_unused=True)
    res = [np.zeros(tuple(x.shape)) if g is None else _np(g) for g, x in zip(g1, xs)]
    if order > 1:
        live = [g for g in g1 if g is not None and g.requires_grad]
        g2 = [None] * len(xs)  # gradients that do not depend on the inputs: zero second order
        if live:
            loss2 = sum((g * L.tensor(rng.uniform(0.5, 1.5, tuple(g.shape)), dtype=g.dtype)).sum() for g in live)
            g2 = L.autograd.grad(loss2, xs, allow_unused=True)
        res += [np.zeros(tuple(x.shape)) if g is None else _np(g) for g, x in zip(g2, xs)]
    return res


def check(fn, *args, dtypes=DTYPES, grad=True, order=2, tol=None):
    """fn(L, *tensors) with L = fgrad and L = torch agree in values, dtypes, shapes and gradients."""
    for dt in dtypes:
        ref_ts, ref = _run(torch, fn, args, dt)
        got_ts, got = _run(fgrad.torch, fn, args, dt)
        assert len(got) == len(ref), f"{dt}: {len(got)} outputs instead of {len(ref)}"
        t = tol or TOL[dt]
        for k, (a, b) in enumerate(zip(got, ref)):
            if isinstance(b, (bool, int, float)):
                assert a == pytest.approx(b), f"{dt} output {k}"
                continue
            assert tuple(a.shape) == tuple(b.shape), f"{dt} output {k}: shape {tuple(a.shape)} != {tuple(b.shape)}"
            assert _dtype_name(a) == _dtype_name(b), f"{dt} output {k}: dtype {a.dtype} != {b.dtype}"
            np.testing.assert_allclose(_np(a), _np(b), err_msg=f"{dt} output {k}", equal_nan=True, **t)
        if grad:
            want = _grads(torch, ref_ts, ref, order)
            have = _grads(fgrad.torch, got_ts, got, order)
            assert want, "the case has nothing to differentiate: pass grad=False"
            if not have:  # fgrad's outputs are constants (matrix_power(A, 0)): PyTorch's gradients are 0
                have = [np.zeros_like(w) for w in want]
            for k, (a, b) in enumerate(zip(have[:len(want)], want)):
                np.testing.assert_allclose(a, b, err_msg=f"{dt} gradient {k}", **t)
            assert len(have) == len(want), f"{dt}: {len(have)} gradients instead of {len(want)}"


# --- scatter and index updates ---------------------------------------------------------------------

IDX2 = I([[0, 1, 2, 0], [2, 0, 1, 1]])  # no position repeats within a column: scatter is unambiguous


def test_scatter_src_value_and_reduce():
    check(lambda L, x, s, i: L.scatter(x, 0, i, s), R(3, 4), R(2, 4, seed=1), IDX2)
    check(lambda L, x, s, i: x.scatter(1, i[:, :3] % 3, s), R(2, 5), R(2, 3, seed=1), IDX2)
    # an index smaller than src uses src's leading part (PyTorch's own backward fails there)
    check(lambda L, x, s, i: x.scatter(1, i[:, :3] % 3, s), R(2, 5), R(2, 4, seed=1), IDX2, grad=False)
    check(lambda L, x, i: x.scatter(0, i, 2.5), R(3, 4), IDX2)
    check(lambda L, x, i: L.scatter(x, 0, i, value=-1.0), R(3, 4), IDX2)
    rep = I([[0, 0, 2, 2], [0, 0, 2, 2]])  # repeated positions: the reductions accumulate
    check(lambda L, x, s, i: x.scatter(0, i, s, reduce="add"), R(3, 4), R(2, 4, seed=1), rep, grad=False)
    check(lambda L, x, s, i: x.scatter(0, i, s, reduce="multiply"), R(3, 4), R(2, 4, seed=1), rep, grad=False)


def test_scatter_add():
    rep = I([[0, 0, 2, 2], [0, 0, 2, 1], [1, 0, 0, 2]])
    check(lambda L, x, s, i: L.scatter_add(x, 0, i, s), R(3, 4), R(3, 4, seed=1), rep)
    check(lambda L, x, s, i: x.scatter_add(-1, i, s), R(3, 4), R(3, 4, seed=1), rep)
    check(lambda L, x, s, i: x.scatter_add(1, i[:2, :2], s), R(3, 4), R(2, 2, seed=1), rep)
    check(lambda L, x, s, i: x.scatter_add(1, i[:2, :2], s), R(3, 4), R(3, 4, seed=1), rep, grad=False)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    idx = I([[0, 1, 0], [1, 1, 0], [2, 0, 2]])
    # distinct values: amax/amin have no ties, whose gradient PyTorch splits differently
    x, s = R(3, 3), R(3, 3, seed=1)
    check(lambda L, x, s, i: L.scatter_reduce(x, 0, i, s, reduce, include_self=include_self), x, s, idx,
          order=1 if reduce in ("amax", "amin", "prod") else 2)


def test_scatter_reduce_integers():
    x, s, i = I([[0, 1, 2], [3, 4, 5]]), I([[3, 3, 3], [3, 3, 3]]), I([[0, 1, 0], [1, 1, 0]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            check(lambda L, x, s, i, r=reduce, inc=inc: x.scatter_reduce(0, i, s, r, include_self=inc), x, s, i, grad=False,
                  dtypes=("float64",))


def test_index_add_copy_fill_put():
    idx = I([2, 0, 2])
    check(lambda L, x, s, i: L.index_add(x, 0, i, s), R(3, 4), R(3, 4, seed=1), idx)
    check(lambda L, x, s, i: x.index_add(1, i, s, alpha=0.5), R(2, 3), R(2, 3, seed=1), idx)
    check(lambda L, x, s, i: x.index_copy(1, i[:2], s), R(2, 3), R(2, 2, seed=1), idx)
    check(lambda L, x, i: L.index_fill(x, 1, i, -2.0), R(2, 3), idx)
    check(lambda L, x, i: L.index_fill(x, 1, i - 3, -2.0), R(2, 3), idx)  # index_fill wraps negative indices
    check(lambda L, x, v, i: x.index_fill(0, i, v.sum()), R(3, 2), R(2, seed=1), idx)
    rows, cols = I([0, 2, 0]), I([1, 1, 1])
    check(lambda L, x, v, r, c: x.index_put((r, c), v, accumulate=True), R(3, 2), R(3, seed=1), rows, cols)
    check(lambda L, x, v, r: L.index_put(x, (r[1:],), v), R(3, 2), R(2, 2, seed=1), rows)
    check(lambda L, x, v, m: x.index_put((m,), v), R(3, 2), R(2, seed=1), B([[True, False], [False, False],
                                                                              [False, True]]))


def test_masked_scatter_and_repeat_interleave():
    mask = B([[True, False, True], [False, True, True]])
    check(lambda L, x, s, m: x.masked_scatter(m, s), R(2, 3), R(6, seed=1), mask)
    check(lambda L, x, s, m: L.masked_scatter(x, m[0], s), R(2, 3), R(3, 2, seed=1), mask)  # broadcast mask
    check(lambda L, x: L.repeat_interleave(x, 2), R(2, 3))
    check(lambda L, x, r: x.repeat_interleave(r, dim=1), R(2, 3), I([1, 0, 3]))
    check(lambda L, x: x.repeat_interleave(L.tensor(2), dim=0), R(2, 3))
    check(lambda L, r: L.repeat_interleave(r), I([2, 0, 1]), grad=False)


@pytest.mark.parametrize("name, args", [
    ("scatter_", (0, I([[0, 2]]), R(1, 2, seed=1))),
    ("scatter_add_", (1, I([[0, 0], [1, 1]]), R(2, 2, seed=1))),
    ("scatter_reduce_", (0, I([[0, 2]]), R(1, 2, seed=1), "sum")),
    ("index_add_", (0, I([1, 1]), R(2, 3, seed=1))),
    ("index_copy_", (0, I([2, 0]), R(2, 3, seed=1))),
    ("index_fill_", (1, I([0, 2]), 3.0)),
    ("masked_scatter_", (B([[True, False, True], [False, False, False], [True, True, True]]), R(5, seed=1))),
    ("clamp_min_", (0.1,)), ("clamp_max_", (-0.1,)), ("frac_", ()), ("logit_", (0.1,)),
    ("cumprod_", (1,)), ("addcmul_", (R(3, 3, seed=1), R(3, seed=2))),
    ("addcdiv_", (R(3, 3, seed=1), R(3, lo=1, hi=2, seed=2))), ("hypot_", (R(3, 3, seed=1),)),
    ("xlogy_", (R(3, 3, lo=0.5, seed=1),)), ("addmm_", (R(3, 2, seed=1), R(2, 3, seed=2))),
    ("addmv_", (R(3, 3, seed=1), R(3, seed=2))),
])
def test_inplace_variants(name, args):
    """y = x * 1; y.<name>(...): the same values, and gradients through the modified tensor."""
    def fn(L, x, *a):
        y = x * 1.0
        if name == "addmv_":
            y = y[:, 0]
        out = getattr(y, name)(*a)
        assert out is y
        return y
    x = R(3, 3, lo=0.2, hi=0.8) if name == "logit_" else R(3, 3)
    check(fn, x, *args, order=1)


# --- unique, counting, searching -----------------------------------------------------------------------

def test_unique_and_unique_consecutive():
    ints = I([[3, 1, 2], [1, 3, 3]])
    check(lambda L, x: L.unique(x), ints, grad=False, dtypes=("float64",))
    check(lambda L, x: x.unique(return_inverse=True, return_counts=True), ints, grad=False, dtypes=("float64",))
    check(lambda L, x: L.unique(x, sorted=False, return_counts=True), ints, grad=False, dtypes=("float64",))
    rows = I([[1, 2], [0, 5], [1, 2], [0, 5]])
    check(lambda L, x: L.unique(x, dim=0, return_inverse=True, return_counts=True), rows, grad=False,
          dtypes=("float64",))
    runs = I([1, 1, 2, 2, 3, 1, 1, 2])
    check(lambda L, x: L.unique_consecutive(x, return_inverse=True, return_counts=True), runs, grad=False,
          dtypes=("float64",))
    check(lambda L, x: x.unique_consecutive(dim=1, return_counts=True), I([[1, 1, 2], [3, 3, 2]]), grad=False,
          dtypes=("float64",))
    vals = np.array([2.0, 1.0, 2.0, 0.5])
    check(lambda L, x: L.unique(x), vals, grad=False)


def test_bincount_histc():
    x = I([1, 1, 4, 0, 4, 4])
    check(lambda L, x: L.bincount(x), x, grad=False, dtypes=("float64",))
    check(lambda L, x: x.bincount(minlength=8), x, grad=False, dtypes=("float64",))
    check(lambda L, x, w: L.bincount(x, w), x, R(6), grad=False)  # PyTorch has no derivative here
    check(lambda L, x, w: L.bincount(x, w.long()), x, I([1, 2, 3, 4, 5, 6]), grad=False, dtypes=("float64",))
    data = np.array([0.1, 0.35, 0.7, 0.71, 2.2, -1.3, 0.5])
    check(lambda L, x: L.histc(x, bins=4), data, grad=False)
    check(lambda L, x: x.histc(bins=3, min=0, max=1), data, grad=False)
    check(lambda L, x: L.histc(x[:1], bins=2), data, grad=False)  # one value: the range widens by 1


def test_searchsorted_and_bucketize():
    seq = np.array([-1.0, 0.0, 0.5, 0.5, 2.0])
    v = np.array([[0.5, -3.0, 1.0], [2.0, 0.25, 9.0]])
    check(lambda L, s, v: L.searchsorted(s, v), seq, v, grad=False)
    check(lambda L, s, v: L.searchsorted(s, v, right=True), seq, v, grad=False)
    check(lambda L, s, v: L.searchsorted(s, v, side="right", out_int32=True), seq, v, grad=False)
    check(lambda L, s: L.searchsorted(s, 0.5), seq, grad=False)
    rows = np.array([[0.0, 1.0, 2.0], [-2.0, -1.0, 3.0]])
    check(lambda L, s, v: L.searchsorted(s, v), rows, v, grad=False)
    check(lambda L, s, v, o: L.searchsorted(s, v, sorter=o), np.array([2.0, -1.0, 0.5]), v, I([1, 2, 0]),
          grad=False)
    check(lambda L, v, s: L.bucketize(v, s), v, seq, grad=False)
    check(lambda L, v, s: L.bucketize(v, s, right=True, out_int32=True), v, seq, grad=False)


def test_multinomial():
    w = fgrad.torch.tensor([[0.0, 1.0, 3.0, 0.0], [2.0, 2.0, 0.0, 1.0]])
    g = fgrad.torch.Generator().manual_seed(0)
    draws = fgrad.torch.multinomial(w, 2, generator=g)
    assert draws.shape == (2, 2) and draws.dtype == fgrad.torch.int64
    for row, d in zip(w.numpy(), draws.numpy()):
        assert len(set(d)) == 2 and all(row[d] > 0)  # without replacement: distinct, positive weight
    many = fgrad.torch.multinomial(fgrad.torch.tensor([1.0, 3.0]), 20000, replacement=True, generator=g).numpy()
    assert abs(many.mean() - 0.75) < 0.02
    a = w.multinomial(5, True, generator=fgrad.torch.Generator().manual_seed(5))
    b = fgrad.torch.multinomial(w, 5, replacement=True, generator=fgrad.torch.Generator().manual_seed(5))
    assert fgrad.torch.equal(a, b) and a.shape == (2, 5)


def test_tril_triu_indices():
    for args in [(3, 3), (4, 3, 1), (3, 5, -1), (0, 2)]:
        check(lambda L, a=args: L.tril_indices(*a), grad=False, dtypes=("float64",))
        check(lambda L, a=args: L.triu_indices(*a), grad=False, dtypes=("float64",))
    check(lambda L: L.tril_indices(3, 3, dtype=L.int32), grad=False, dtypes=("float64",))


# --- cumulative ----------------------------------------------------------------------------------------

def test_cumprod_with_zeros():
    x = R(3, 4)
    x[0, 1] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    check(lambda L, x: L.cumprod(x, 1), x)
    check(lambda L, x: x.cumprod(dim=0, dtype=L.float64), x)
    check(lambda L, x: L.cumprod(x, 0), I([[1, 2], [3, 4]]), grad=False, dtypes=("float64",))


def test_cummax_cummin():
    x = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, -1.0, -1.0, 5.0, -2.0]])  # ties: the latest index
    check(lambda L, x: L.cummax(x, 1), x)
    check(lambda L, x: x.cummin(1), x)
    check(lambda L, x: L.cummax(x, 0), R(4, 3))
    check(lambda L, x: x.cummin(-1), R(2, 7))
    nan = np.array([1.0, np.nan, 3.0, np.nan, 5.0])
    check(lambda L, x: (L.cummax(x, 0), L.cummin(x, 0)), nan, grad=False)
    check(lambda L, x: L.cummax(x, 0), I([1, 3, 2, 3]), grad=False, dtypes=("float64",))


def test_logcumsumexp():
    check(lambda L, x: L.logcumsumexp(x, 1), R(3, 5, lo=-4, hi=4))
    check(lambda L, x: x.logcumsumexp(0), np.array([-30.0, 0.0, 0.0, 20.0, -30.0]))  # ties
    # stable far apart (PyTorch's float32 gradient is off by 5e-5 there: values only)
    check(lambda L, x: x.logcumsumexp(0), np.array([-1000.0, 0.0, 0.0, 700.0, -1000.0]), grad=False)
    check(lambda L, x: L.logcumsumexp(x, 0), np.array([2.0]))


# --- fused multiply-adds -------------------------------------------------------------------------------

def test_addcmul_addcdiv():
    check(lambda L, x, a, b: L.addcmul(x, a, b, value=0.5), R(3, 4), R(3, 4, seed=1), R(4, seed=2))
    check(lambda L, x, a, b: x.addcmul(a, b), R(3, 4), R(3, 1, seed=1), R(4, seed=2))
    check(lambda L, x, a, b: L.addcdiv(x, a, b, value=-2), R(3, 4), R(3, 4, seed=1), R(4, lo=1, hi=2, seed=2))
    check(lambda L, x, a, b: x.addcdiv(a, b), R(3, 4), R(3, 4, seed=1), R(4, lo=1, hi=2, seed=2))


def test_addmm_family():
    check(lambda L, x, a, b: L.addmm(x, a, b), R(3, 2), R(3, 4, seed=1), R(4, 2, seed=2))
    check(lambda L, x, a, b: x.addmm(a, b, beta=0.5, alpha=2.0), R(2), R(3, 4, seed=1), R(4, 2, seed=2))
    check(lambda L, x, a, b: L.addmv(x, a, b, alpha=-1), R(3), R(3, 4, seed=1), R(4, seed=2))
    check(lambda L, x, a, b: L.baddbmm(x, a, b, beta=2), R(2, 3, 2), R(2, 3, 4, seed=1), R(2, 4, 2, seed=2))
    check(lambda L, x, a, b: x.addbmm(a, b), R(3, 2), R(2, 3, 4, seed=1), R(2, 4, 2, seed=2))
    nan = np.full((3, 2), np.nan)  # beta=0 ignores input, NaN included
    check(lambda L, x, a, b: L.addmm(x, a, b, beta=0), nan, R(3, 4, seed=1), R(4, 2, seed=2))


# --- differences, grids, distances ---------------------------------------------------------------------

def test_diff():
    check(lambda L, x: L.diff(x), R(3, 4))
    check(lambda L, x: x.diff(n=2, dim=0), R(4, 3))
    check(lambda L, x, p, a: L.diff(x, dim=1, prepend=p, append=a), R(2, 3), R(2, 1, seed=1), R(2, 2, seed=2))
    check(lambda L, x: L.diff(x), B([True, True, False, True]), grad=False, dtypes=("float64",))
    check(lambda L, x: L.diff(x, n=5), R(3), grad=False)


def test_meshgrid_cartesian_prod_block_diag():
    check(lambda L, x, y: L.meshgrid(x, y, indexing="ij"), R(3), R(2, seed=1))
    check(lambda L, x, y: L.meshgrid([x, y], indexing="xy"), R(3), R(2, seed=1))
    check(lambda L, x, y: L.meshgrid(x, y), R(3), R(2, seed=1))
    check(lambda L, x, y, z: L.cartesian_prod(x, y, z), R(2), R(3, seed=1), R(2, seed=2))
    check(lambda L, x: L.cartesian_prod(x), R(3))
    check(lambda L, a, b, c: L.block_diag(a, b, c), R(2, 3), R(3, seed=1), R(1, 1, seed=2))
    check(lambda L, a: L.block_diag(a, L.tensor(2), L.ones(2, 2, dtype=L.int32)), R(2, 1))
    check(lambda L: L.block_diag(), grad=False)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, 0.0, float("inf")])
def test_cdist(p):
    a, b = R(4, 3), R(5, 3, seed=1)
    # PyTorch cannot differentiate its cdist backward: first order only
    check(lambda L, a, b: L.cdist(a, b, p=p), a, b, grad=p != 0.0, order=1)
    check(lambda L, a, b: L.cdist(a, b, p=p), R(2, 3, 2), R(2, 4, 2, seed=1), grad=p != 0.0, order=1)


def test_cdist_matrix_product_form_and_zero_distance():
    a, b = R(30, 3), R(4, 3, seed=1)  # more than 25 rows: PyTorch's matmul path
    check(lambda L, a, b: L.cdist(a, b), a, b, order=1, tol={"rtol": 1e-4, "atol": 1e-5})
    check(lambda L, a, b: L.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"), a, b, order=1)
    same = R(3, 2)
    check(lambda L, a: L.cdist(a, a * 1.0), same, order=1)  # zero distances: gradient 0 there


def test_dist():
    check(lambda L, a, b: L.dist(a, b), R(3, 4), R(4, seed=1))
    check(lambda L, a, b: a.dist(b, p=3), R(3, 4), R(3, 4, seed=1), order=1)


# --- order statistics ----------------------------------------------------------------------------------

def test_median_nanmedian():
    x = R(3, 6)
    check(lambda L, x: L.median(x), x)
    check(lambda L, x: L.median(x, 1), x)
    check(lambda L, x: x.median(dim=0, keepdim=True), R(5, 2))
    nan = np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 2.0, 0.0, -1.0], [np.nan] * 4])
    check(lambda L, x: L.median(x, 1), nan, grad=False)
    check(lambda L, x: L.nanmedian(x, 1), nan[:2], grad=False)
    check(lambda L, x: L.nanmedian(x, 1).values, nan, grad=False)  # all NaN: PyTorch's index is arbitrary
    check(lambda L, x: (x.nanmedian(), L.median(x)), nan, grad=False)
    check(lambda L, x: L.nanmedian(x, -1), R(2, 5))
    check(lambda L, x: L.median(x, 0), I([3, 1, 2, 2]), grad=False, dtypes=("float64",))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(interpolation):
    x = R(3, 7)
    check(lambda L, x: L.quantile(x, 0.3, interpolation=interpolation), x)
    check(lambda L, x: x.quantile(L.tensor([0.0, 0.25, 0.8, 1.0], dtype=x.dtype), dim=1, keepdim=True,
                                  interpolation=interpolation), x)
    check(lambda L, x: L.quantile(x, 0.5, dim=0, interpolation=interpolation), x)
    nan = x.copy()
    nan[1, 2] = nan[2, :] = np.nan
    check(lambda L, x: L.nanquantile(x, 0.4, dim=1, interpolation=interpolation), nan, grad=False)
    check(lambda L, x: L.quantile(x, 0.4, dim=1, interpolation=interpolation), nan, grad=False)
    check(lambda L, x: x.nanquantile(0.6, interpolation=interpolation), nan, grad=False)


def test_std_mean_var_mean():
    x = R(3, 4)
    check(lambda L, x: L.std_mean(x), x)
    check(lambda L, x: L.var_mean(x, 1, keepdim=True), x)
    check(lambda L, x: L.std_mean(x, dim=(0, 1), correction=0), x)
    check(lambda L, x: L.var_mean(x, False), x)


# --- products and elementwise --------------------------------------------------------------------------

def test_rot90_kron_cross():
    for k in (-1, 0, 1, 2, 3, 5):
        check(lambda L, x, k=k: L.rot90(x, k, (0, 1)), R(2, 3))
    check(lambda L, x: x.rot90(1, [2, 0]), R(2, 3, 4))
    check(lambda L, a, b: L.kron(a, b), R(2, 3), R(2, 2, seed=1))
    check(lambda L, a, b: a.kron(b), R(3), R(2, 2, seed=1))
    check(lambda L, a, b: L.kron(a, b), I([[1, 2], [3, 4]]), I([1, -1]), grad=False, dtypes=("float64",))
    check(lambda L, a, b: L.cross(a, b, dim=1), R(4, 3), R(4, 3, seed=1))
    check(lambda L, a, b: a.cross(b), R(3, 2), R(3, 2, seed=1))  # dim=None: the first dim of size 3
    check(lambda L, a, b: L.cross(a, b, dim=-1), R(2, 3), R(1, 3, seed=1))


def test_clamp_min_max_frac():
    x = np.array([-1.5, -0.5, 0.0, 0.5, 1.0, 2.5])
    check(lambda L, x: (L.clamp_min(x, 0.5), x.clamp_max(0.5)), x)  # bounds hit: the gradient passes
    check(lambda L, x, m: L.clamp_min(x, m), x, R(6, seed=1))
    check(lambda L, x: L.frac(x * 1.7), x)


def test_hypot_logit_xlogy():
    check(lambda L, a, b: L.hypot(a, b), R(3, 4), R(4, seed=1))
    check(lambda L, a, b: a.hypot(b), np.array([3.0, 1e30, -2.0]), np.array([4.0, 1e30, 0.0]), dtypes=("float64",))
    check(lambda L, p: L.logit(p), R(5, lo=0.05, hi=0.95))
    check(lambda L, p: p.logit(eps=0.2), np.array([0.1, 0.2, 0.5, 0.8, 0.9]))
    check(lambda L, x, y: L.xlogy(x, y), np.array([0.0, 0.0, 1.0, 2.0, 0.5, 0.0]),
          np.array([0.5, 2.0, 0.0, 0.5, 3.0, -1.0]), order=1)
    # at x = y = 0 the x-gradient is PyTorch's 0 (not log 0), the y-gradient PyTorch's 0/0 = NaN
    x, y = fgrad.torch.zeros(1, requires_grad=True), fgrad.torch.zeros(1, requires_grad=True)
    fgrad.torch.xlogy(x, y).sum().backward()
    assert x.grad.tolist() == [0.0] and np.isnan(y.grad.tolist()[0])
    check(lambda L, x, y: x.xlogy(y), R(3, lo=0.1), R(3, lo=0.5, seed=1))
    check(lambda L, y: L.xlogy(2.0, y), R(3, lo=0.5))
    check(lambda L, x: L.xlogy(x, 3), R(3))


def test_hypot_at_origin_is_zero_not_nan():
    """fgrad's convention (the norm's): hypot'(0, 0) = 0; PyTorch gives NaN there."""
    x = fgrad.torch.zeros(2, requires_grad=True)
    fgrad.torch.hypot(x, fgrad.torch.zeros(2)).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_grad_fn_names():
    x = fgrad.torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    i = fgrad.torch.tensor([[0, 1]])
    assert type(x.scatter(0, i, x[:1]).grad_fn).__name__ == "ScatterBackward0"
    assert type(x.scatter_add(0, i, x[:1]).grad_fn).__name__ == "ScatterAddBackward0"
    assert type(x.cumprod(0).grad_fn).__name__ == "CumprodBackward0"
    assert type(x.median(0).values.grad_fn).__name__ == "MedianBackward1"
    assert type(x.addcmul(x, x).grad_fn).__name__ == "AddcmulBackward0"


# --- errors: PyTorch's exception types ---------------------------------------------------------------

def _raises_like_torch(fn, *args):
    ts = {L: [_tensor(L, a, "float32") for a in args] for L in (fgrad.torch, torch)}
    with pytest.raises(Exception) as want:
        fn(torch, *ts[torch])
    # torch.linalg.LinAlgError's counterpart is fgrad.torch.linalg.LinAlgError (both RuntimeErrors)
    expected = fgrad.torch.linalg.LinAlgError if isinstance(want.value, torch.linalg.LinAlgError) else type(want.value)
    with pytest.raises(expected):
        fn(fgrad.torch, *ts[fgrad.torch])


@pytest.mark.parametrize("fn, args", [
    (lambda L, x, i: x.scatter(0, i, 1.0), (R(3, 4), I([[5, 0]]))),                  # out of bounds
    (lambda L, x, i: x.scatter(0, i, 1.0), (R(3, 4), I([[-1, 0]]))),                 # negative
    (lambda L, x, i: x.scatter(0, i, 1.0), (R(3, 4), I([1, 0]))),                    # ndim
    (lambda L, x, i: x.scatter(0, i, x.double()), (R(3, 4), I([[1, 0]]))),           # dtype
    (lambda L, x, i: x.scatter(0, i, x[:1, :1]), (R(3, 4), I([[1, 0]]))),            # src too small
    (lambda L, x, i: x.scatter(0, i.float(), 1.0), (R(3, 4), I([[1, 0]]))),          # float index
    (lambda L, x, i: x.scatter(0, i, x, reduce="max"), (R(3, 4), I([[1, 0]]))),      # bad reduce
    (lambda L, x, i: x.scatter_reduce(0, i, x, "maximum"), (R(3, 4), I([[1, 0]]))),
    (lambda L, x, i: x.index_add(0, i, x), (R(3, 4), I([0, 1]))),                    # count mismatch
    (lambda L, x, i: x.index_add(0, i, x[:1]), (R(3, 4), I([-1]))),                  # negative
    (lambda L, x, i: x.index_add(0, i, x[:1]), (R(3, 4), I([3]))),                   # out of bounds
    (lambda L, x, i: x.index_add(0, i, x[:1]), (R(3), I([3]))),                      # (1-D: an IndexError)
    (lambda L, x, i: x.index_copy(0, i, x[:1]), (R(3, 4), I([-1]))),
    (lambda L, x, i: x.index_fill(0, i, 1.0), (R(3, 4), I([3]))),
    (lambda L, x, i: x.index_add(0, i, x[:2]), (R(3, 4), I([[0, 1]]))),              # 2-D index
    (lambda L, x, i: x.index_fill(0, i, x[0]), (R(3, 4), I([0]))),                   # non-0-d value
    (lambda L, x, i: x.index_put((i,), x.double()[0]), (R(3, 4), I([0]))),
    (lambda L, x, m: x.masked_scatter(m, x[0, :1]), (R(3, 4), B([True, True, False, True]))),
    (lambda L, x, m: x.masked_scatter(m.long(), x), (R(3, 4), B([True, True, False, True]))),
    (lambda L, x: x.repeat_interleave(L.tensor([-1, 1, 1, 1]), dim=1), (R(3, 4),)),
    (lambda L, x: L.bincount(x), (I([1, -1]),)),
    (lambda L, x: L.bincount(x), (I([[1, 1]]),)),
    (lambda L, x: L.bincount(x.float()), (I([1, 1]),)),
    (lambda L, x: L.histc(x), (I([1, 1]),)),
    (lambda L, x: L.histc(x, 3, 2, 1), (R(3),)),
    (lambda L, x, v: L.searchsorted(x, v), (R(2, 3), R(3, 2))),
    (lambda L, x, v: L.searchsorted(x, v, side="middle"), (R(3), R(2))),
    (lambda L, x: L.multinomial(x, 5), (np.array([1.0, 2.0]),)),
    (lambda L, x: L.multinomial(x, 1), (np.array([1.0, -2.0]),)),
    (lambda L, x: L.multinomial(x, 1), (np.zeros((2, 2, 2)),)),
    (lambda L, x: L.quantile(x, 1.5), (R(4),)),
    (lambda L, x: L.quantile(x, 0.5), (I([1, 2]),)),
    (lambda L, x: L.quantile(x, x), (R(2, 2),)),
    (lambda L, x: L.rot90(x, 1, (0,)), (R(2, 2),)),
    (lambda L, x: L.rot90(x, 1, (0, 0)), (R(2, 2),)),
    (lambda L, a, b: L.cross(a, b, dim=0), (R(2, 3), R(2, 3, seed=1))),
    (lambda L, a, b: L.cdist(a, b), (R(2, 3), R(2, 4, seed=1))),
    (lambda L, a, b: L.cdist(a, b, p=-1.0), (R(2, 3), R(2, 3, seed=1))),
    (lambda L, a, b: L.cdist(a.long(), b), (R(2, 3), R(2, 3, seed=1))),
    (lambda L, a, b: L.addmm(a, b, b), (R(2, 2), R(2, 3, seed=1))),
    (lambda L, a, b: L.addcdiv(a, b.long(), b.long()), (R(2), R(2, seed=1))),
    (lambda L, a: L.meshgrid(a, indexing="yx"), (R(2),)),
    (lambda L, a: L.meshgrid(a, indexing="ij"), (R(2, 2),)),
    (lambda L, a: L.cartesian_prod(a, a), (R(2, 2),)),
    (lambda L, a: L.block_diag(a), (R(2, 2, 2),)),
    (lambda L, a: L.frac(a), (I([1, 2]),)),
    (lambda L, a: L.diff(a, n=-1), (R(3),)),
    (lambda L, a: L.median(a, 1), (np.zeros((2, 0)),)),
])
def test_errors_have_pytorchs_types(fn, args):
    _raises_like_torch(fn, *args)


def test_meshgrid_warns_without_indexing():
    with pytest.warns(UserWarning, match="indexing"):
        fgrad.torch.meshgrid(fgrad.torch.ones(2), fgrad.torch.ones(3))


# --- torch.special ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name, lo, hi", [
    ("expit", -3, 3), ("erf", -2, 2), ("erfc", -2, 2), ("erfcx", -1, 3), ("erfinv", -0.9, 0.9),
    ("gammaln", 0.5, 4), ("digamma", 0.5, 4), ("psi", 0.5, 4), ("i0", -2, 2), ("i0e", -2, 2), ("i1", -2, 2),
    ("i1e", -2, 2), ("ndtr", -2, 2), ("ndtri", 0.05, 0.95), ("log_ndtr", -3, 3), ("entr", 0.1, 2),
    ("bessel_j0", 0.1, 3), ("bessel_j1", 0.1, 3), ("logit", 0.1, 0.9), ("expm1", -1, 1), ("log1p", -0.5, 2),
    ("exp2", -1, 1),
])
def test_special_unary(name, lo, hi):
    # PyTorch's second derivatives of the Bessel and scaled functions are not all implemented
    order = 1 if name.startswith(("bessel", "i0", "i1", "erfcx", "ndtri", "log_ndtr")) else 2
    grad = not name.startswith("bessel")  # PyTorch has no derivative for bessel_j0/j1
    check(lambda L, x: getattr(L.special, name)(x), R(3, 4, lo=lo, hi=hi), order=order, grad=grad)


def test_special_other_signatures():
    check(lambda L, x, y: L.special.xlog1py(x, y), R(4), R(4, lo=0.1, seed=1), order=1)
    check(lambda L, x, y: L.special.xlogy(x, y), R(4), R(4, lo=0.1, seed=1))
    check(lambda L, x, y: L.special.gammainc(x, y), R(4, lo=0.5, hi=3), R(4, lo=0.5, seed=1), grad=False)
    check(lambda L, x: L.special.polygamma(2, x), R(4, lo=0.5, hi=3), order=1)
    check(lambda L, x: L.special.multigammaln(x, 3), R(4, lo=1.5, hi=4))
    check(lambda L, x: (L.special.logsumexp(x, 1), L.special.softmax(x, 0), L.special.log_softmax(x, 1)), R(3, 4))
    check(lambda L, x: L.special.expit(x), I([0, 1, -2]), grad=False, dtypes=("float64",))  # ints: float32


# --- functions built from the facade's table (fgrad/torch/_tensor/_adapt.py) ---------------------------

@pytest.mark.parametrize("name, sig, target", [
    ("sum", "(input, dim=None, keepdim=False, *, dtype=None)", "fgrad.numpy.sum(input, axis=_axis(dim), "
                                                                 "keepdims=keepdim, dtype=_np_dtype(dtype), policy=TORCH)"),
    ("roll", "(input, shifts, dims=None)", "fgrad.numpy.roll(input, shifts, axis=dims, policy=TORCH)"),
    ("tril", "(input, diagonal=0)", "fgrad.numpy.tril(input, diagonal)"),
    ("cumsum", "(input, dim, *, dtype=None)", "fgrad.numpy.cumsum(input, axis=_axis(dim), dtype=_np_dtype(dtype), "
                                              "policy=TORCH)"),
])
def test_table_functions_have_torch_signatures_and_docs(name, sig, target):
    import inspect
    fn = getattr(fgrad.torch, name)
    # torch.<name> takes PyTorch's out= besides the row's parameters (_out.py); the row's
    # function itself is the Tensor method
    with_out = sig[:-1] + (", out=None)" if "*" in sig else ", *, out=None)")
    assert str(inspect.signature(fn)) == with_out
    assert str(inspect.signature(getattr(fgrad.torch.Tensor, name))) == sig
    assert fn.__doc__.startswith(f"torch.{name}: {target}")
    assert fn.__name__ == name and fn.__module__ == "fgrad"


def test_table_functions_agree_with_torch_and_name_grad_fn():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    x, t = fgrad.torch.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    for f in (lambda m, v: m.sum(v), lambda m, v: m.sum(v, 1, keepdim=True), lambda m, v: m.mean(v, dim=()),
              lambda m, v: m.flip(v, [0, 1]), lambda m, v: m.roll(v, 2), lambda m, v: m.roll(v, (1, -1), (0, 1)),
              lambda m, v: m.tril(v, -1), lambda m, v: m.triu(v, diagonal=1), lambda m, v: m.cumsum(v, dim=1),
              lambda m, v: m.cumprod(v, 0), lambda m, v: m.unsqueeze(v, -1),
              lambda m, v: m.hypot(v + 0.5, v * 2), lambda m, v: m.amax(v, 0), lambda m, v: m.movedim(v, 0, 1)):
        got, want = f(fgrad.torch, x), f(torch, t)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
        assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
        (g,) = fgrad.torch.autograd.grad(got.sum(), x)
        (w,) = torch.autograd.grad(want.sum(), t)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert fgrad.torch.sum(fgrad.torch.tensor([1, 2]), dtype=fgrad.torch.float64).dtype == fgrad.torch.float64


def test_table_rows_are_checked_when_built():
    from fgrad.torch._tensor._adapt import adapt
    with pytest.raises(ValueError, match="positional parameter 'shifts' after a renamed one"):
        adapt("bad", fgrad.numpy.roll, "input, dims, shifts")
