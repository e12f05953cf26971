"""torch's top-level elementwise, reduction, shape, copy and creation functions added for
breadth (fgrad/torch/_tensor/_ops_breadth.py), against PyTorch: values, dtypes, shapes,
grad_fn names, first and second derivatives over a table of cases, and the error class
for bad input."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

from .breadth_cases import Case, check, check_error

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)


def n(*shape, lo=-2.0, hi=2.0, dtype=np.float64):
    """Uniform values in [lo, hi) of `shape` (float64 unless `dtype`)."""
    return _rng.uniform(lo, hi, size=shape).astype(dtype)


def i(*shape, lo=-6, hi=7):
    return _rng.integers(lo, hi, size=shape).astype(np.int64)


X, Y, V = n(3, 4), n(3, 4), n(4)
POS = n(3, 4, lo=0.5, hi=3.0)
U = n(3, 4, lo=-0.9, hi=0.9)
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0 ** -1022, 5e-324, 1.5, np.inf, -np.inf, np.nan, 1e300])

CASES = [
    Case("deg2rad", lambda T, x: T.deg2rad(x), (X,)),
    Case("deg2rad_int", lambda T, x: T.deg2rad(x), (i(5),), order=0),
    Case("rad2deg", lambda T, x: T.rad2deg(x), (X,)),
    Case("copysign", lambda T, x, y: T.copysign(x, y), (X, Y), order=1),
    Case("copysign_number", lambda T, x: T.copysign(x, -1.0), (X,), order=1),
    Case("copysign_int", lambda T, x, y: T.copysign(x, y), (i(5), i(5)), order=0),
    Case("fmax", lambda T, x, y: T.fmax(x, y), (np.where(X > 1, np.nan, X), Y)),
    Case("fmin", lambda T, x, y: T.fmin(x, y), (X, np.where(Y > 1, np.nan, Y))),
    Case("sinc", lambda T, x: T.sinc(x), (X,)),
    # (PyTorch's second derivative at 0 is NaN; fgrad's is the limit)
    Case("sinc_at_0", lambda T, x: T.sinc(x), (np.array([0.0, 1.0, -0.5]),), order=1),
    # (non-negative exponents: PyTorch's gradient computes 2 ** e in integers, 0 for e < 0)
    Case("ldexp", lambda T, x, e: T.ldexp(x, e), (X, i(3, 4, lo=0)), order=1),
    Case("ldexp_negative_values", lambda T, x, e: T.ldexp(x, e), (X, i(3, 4)), order=0),
    Case("frexp", lambda T, x: T.frexp(x), (X * 100,), order=1),
    Case("gcd", lambda T, a, b: T.gcd(a, b), (i(20, lo=-50, hi=50), i(20, lo=-50, hi=50)), order=0),
    Case("lcm", lambda T, a, b: T.lcm(a, b), (i(20, lo=-20, hi=20), i(20, lo=-20, hi=20)), order=0),
    Case("left_shift", lambda T, a, b: T.bitwise_left_shift(a, b), (i(20, lo=-100, hi=100), i(20, lo=0, hi=70)),
         order=0),
    Case("right_shift", lambda T, a, b: T.bitwise_right_shift(a, b), (i(20, lo=-100, hi=100), i(20, lo=0, hi=70)),
         order=0),
    Case("nextafter_up", lambda T, a: T.nextafter(a, T.tensor(np.inf, dtype=T.float64)), (SPECIAL,), order=0,
         grad_fn=False),
    Case("nextafter_down", lambda T, a: T.nextafter(a, T.tensor(-np.inf, dtype=T.float64)), (SPECIAL,), order=0,
         grad_fn=False),
    Case("nextafter_f32", lambda T, a, b: T.nextafter(a, b), (SPECIAL[:8].astype(np.float32),
                                                              SPECIAL[4:12].astype(np.float32)), order=0),
    Case("heaviside", lambda T, a, b: T.heaviside(a, b), (np.array([-1.0, 0.0, 2.0]), np.array([0.5, 0.7, 0.1])),
         order=0, grad_fn=False),
    Case("signbit", lambda T, a: T.signbit(a), (SPECIAL,), order=0),
    Case("sgn", lambda T, x: T.sgn(x), (X,)),
    Case("sgn_complex", lambda T, z: T.sgn(z), ((X + 1j * Y),), order=1),
    Case("positive", lambda T, x: T.positive(x), (X,)),
    Case("isposinf", lambda T, a: T.isposinf(a), (SPECIAL,), order=0),
    Case("isneginf", lambda T, a: T.isneginf(a), (SPECIAL,), order=0),
    Case("isreal", lambda T, a: T.isreal(a), (np.array([1.0, 2j, 3 + 0j]),), order=0),
    Case("isin", lambda T, a, b: T.isin(a, b), (i(4, 5), i(6)), order=0),
    Case("isin_invert", lambda T, a, b: T.isin(a, b, invert=True), (i(4, 5), i(6)), order=0),
    Case("isin_scalar", lambda T, a: T.isin(a, 3), (i(7),), order=0),
    Case("digamma", lambda T, x: T.digamma(x), (POS,)),
    Case("lgamma", lambda T, x: T.lgamma(x), (POS,)),
    Case("erfc", lambda T, x: T.erfc(x), (X,)),
    Case("erfinv", lambda T, x: T.erfinv(x), (U,)),
    Case("i0", lambda T, x: T.i0(x), (X,)),
    Case("polygamma", lambda T, x: T.polygamma(2, x), (POS,), order=1, tol=1e-5),
    Case("mvlgamma", lambda T, x: T.mvlgamma(x, 3), (POS + 1.5,)),
    # (PyTorch differentiates igamma in x only)
    Case("igamma", lambda T, x: T.igamma(T.tensor(POS), x), (POS[::-1].copy(),), order=1, tol=1e-5),
    Case("igammac", lambda T, x: T.igammac(T.tensor(POS), x), (POS[::-1].copy(),), order=1, tol=1e-5),
    # reductions
    Case("aminmax", lambda T, x: T.aminmax(x), (X,)),
    Case("aminmax_dim", lambda T, x: T.aminmax(x, dim=1, keepdim=True), (X,)),
    Case("kthvalue", lambda T, x: T.kthvalue(x, 2), (X,)),
    Case("kthvalue_dim0", lambda T, x: T.kthvalue(x, 3, 0, True), (X,)),
    Case("mode", lambda T, x: T.mode(x), (np.array([[1.0, 2, 2, 1, 3], [4, 4, 0, 0, 5]]),)),
    Case("mode_dim0", lambda T, x: T.mode(x, 0), (np.array([[1.0, 2], [3, 2], [1, 5]]),)),
    Case("nanmean", lambda T, x: T.nanmean(x), (np.where(X > 1, np.nan, X),)),
    Case("nanmean_dim", lambda T, x: T.nanmean(x, 1, keepdim=True), (np.where(X > 1, np.nan, X),)),
    Case("msort", lambda T, x: T.msort(x), (X,)),
    Case("histogram", lambda T, x: T.histogram(x, 5), (X,), order=0, grad_fn=False),
    Case("histogram_range", lambda T, x: T.histogram(x, 4, range=(-1.0, 1.0), density=True), (X,), order=0,
         grad_fn=False),
    Case("cov", lambda T, x: T.cov(x), (X,)),
    Case("cov_correction0", lambda T, x: T.cov(x, correction=0), (X,)),
    Case("cov_aweights", lambda T, x, w: T.cov(x, aweights=w), (X, POS[0])),
    Case("corrcoef", lambda T, x: T.corrcoef(x), (X,)),
    Case("trapezoid", lambda T, y: T.trapezoid(y), (X,)),
    Case("trapezoid_dx", lambda T, y: T.trapezoid(y, dx=0.5, dim=0), (X,)),
    Case("trapezoid_x", lambda T, y, x: T.trapezoid(y, x), (X, np.sort(V))),
    Case("trapz", lambda T, y: T.trapz(y), (X,)),
    Case("cumulative_trapezoid", lambda T, y: T.cumulative_trapezoid(y), (X,)),
    Case("cumulative_trapezoid_x", lambda T, y, x: T.cumulative_trapezoid(y, x), (X, np.sort(V)), grad_fn=False),
    # (torch.norm with a number p over two dims: the vector norm of their elements, not a matrix norm)
    *[Case(f"norm_two_dims_p{p}", lambda T, x, p=p: T.norm(x, p, dim=(0, 1)), (X,)) for p in (2, 1, 3.0)],
    Case("norm_two_dims_inf_keepdim", lambda T, x: T.norm(x, float("inf"), dim=(0, 1), keepdim=True), (X,)),
    Case("frobenius_norm", lambda T, x: T.frobenius_norm(x, (0, 1)), (X,)),
    Case("nuclear_norm", lambda T, x: T.nuclear_norm(x), (X,), order=1, tol=1e-5),
    Case("renorm", lambda T, x: T.renorm(x, 2, 0, 1.5), (X,)),
    Case("renorm_inf", lambda T, x: T.renorm(x, float("inf"), 1, 1.0), (X,)),
    # shape ops
    Case("atleast_1d_0d", lambda T, x: T.atleast_1d(x.sum()), (X,)),
    Case("atleast_2d", lambda T, x: T.atleast_2d(x), (V,)),
    Case("atleast_3d", lambda T, x, v: T.atleast_3d(x, v), (X, V)),
    Case("column_stack", lambda T, a, b: T.column_stack([a, b]), (V, X.T.copy())),
    Case("row_stack", lambda T, a, b: T.row_stack([a, b]), (X, Y)),
    Case("dstack", lambda T, a, b: T.dstack([a, b]), (X, Y)),
    Case("hsplit", lambda T, x: T.hsplit(x, 2), (X,)),
    Case("hsplit_idx", lambda T, x: T.hsplit(x, [1, 3]), (X,)),
    Case("vsplit", lambda T, x: T.vsplit(x, 3), (X,)),
    Case("dsplit", lambda T, x: T.dsplit(x.reshape(1, 3, 4), [1]), (X,)),
    Case("tile", lambda T, x: T.tile(x, (2, 1, 2)), (X,)),
    Case("ravel", lambda T, x: T.ravel(x.t()), (X,)),
    Case("take_along_dim", lambda T, x, k: T.take_along_dim(x, k, 1), (X, i(3, 2, lo=0, hi=4))),
    Case("take_along_dim_flat", lambda T, x, k: T.take_along_dim(x, k), (X, i(5, lo=0, hi=12))),
    Case("take_along_dim_bcast", lambda T, x, k: T.take_along_dim(x, k, 1), (X, i(1, 2, lo=0, hi=4))),
    Case("select", lambda T, x: T.select(x, 1, -1), (X,)),
    Case("select_scatter", lambda T, x, s: T.select_scatter(x, s, 0, 1), (X, V)),
    Case("slice_scatter", lambda T, x, s: T.slice_scatter(x, s, 1, 0, 4, 2), (X, n(3, 2))),
    Case("diagonal_scatter", lambda T, x, s: T.diagonal_scatter(x, s, 1), (X, n(3))),
    Case("diag_embed", lambda T, x: T.diag_embed(x, 1, 0, 2), (X,)),
    Case("diagflat", lambda T, x: T.diagflat(x, -1), (X,)),
    Case("fliplr", lambda T, x: T.fliplr(x), (X,)),
    Case("flipud", lambda T, x: T.flipud(x), (X,)),
    Case("combinations", lambda T, x: T.combinations(x), (V,)),
    Case("combinations_r3_repl", lambda T, x: T.combinations(x, 3, True), (V[:3],)),
    Case("broadcast_tensors", lambda T, x, v: T.broadcast_tensors(x, v), (X, V), grad_fn=False),
    Case("split_with_sizes", lambda T, x: T.split_with_sizes(x, [1, 3], 1), (X,)),
    Case("unsafe_split", lambda T, x: T.unsafe_split(x, 2), (X,)),
    Case("unsafe_chunk", lambda T, x: T.unsafe_chunk(x, 2, 1), (X,)),
    Case("unsafe_split_with_sizes", lambda T, x: T.unsafe_split_with_sizes(x, [2, 2], 1), (X,)),
    Case("tensordot", lambda T, a, b: T.tensordot(a, b, ([1], [1])), (X, Y)),
    Case("tensordot_int", lambda T, a, b: T.tensordot(a, b, 1), (X, Y.T.copy())),
    Case("vdot", lambda T, a, b: T.vdot(a, b), (V, V[::-1].copy())),
    Case("vdot_complex", lambda T, a, b: T.vdot(a, b), (V + 1j, V * 1j), order=1),
    Case("chain_matmul", lambda T, a, b, c: T.chain_matmul(a, b, c), (X, Y.T.copy(), n(3, 2))),
    Case("adjoint", lambda T, x: T.adjoint(x), (X,)),
    Case("addr", lambda T, x, a, b: T.addr(x, a, b, beta=0.5, alpha=2.0), (X, n(3), V)),
    # (PyTorch's own backward of vander fails: its cumprod saves a value it then modifies;
    # test_vander_gradient checks fgrad's against the derivative of x ** k)
    Case("vander", lambda T, x: T.vander(x, 3), (V,), order=0),
    Case("vander_inc", lambda T, x: T.vander(x, increasing=True), (V,), order=0),
    Case("vander_int", lambda T, x: T.vander(x), (i(3),), order=0),
    Case("constant_pad_nd", lambda T, x: T.constant_pad_nd(x, (1, 2, -1, 0), 3.0), (X,)),
    Case("channel_shuffle", lambda T, x: T.channel_shuffle(x, 2), (n(2, 4, 3),)),
    Case("index_reduce_prod", lambda T, x, s: T.index_reduce(x, 0, T.tensor([0, 2, 0]), s, "prod"), (X, POS)),
    Case("index_reduce_mean", lambda T, x, s: T.index_reduce(x, 1, T.tensor([0, 0, 1, 3]), s, "mean",
                                                             include_self=False), (X, Y)),
    Case("index_reduce_amax", lambda T, x, s: T.index_reduce(x, 0, T.tensor([1, 2, 0]), s, "amax"), (X, Y)),
    Case("put", lambda T, x, s: T.put(x, T.tensor([0, -1, 5]), s), (X, n(3))),
    Case("put_accumulate", lambda T, x, s: T.put(x, T.tensor([0, 0, 5]), s, accumulate=True), (X, n(3))),
    Case("as_strided", lambda T, x: T.as_strided(x, (2, 3), (1, 2), 1), (X,)),
    Case("fill", lambda T, x: T.fill(x, 2.5), (X,)),
    Case("rsub", lambda T, x, y: T.rsub(x, y, alpha=2), (X, Y)),
    # (PyTorch's gradient in `input` goes to the scattered positions instead of the others: src's only)
    Case("as_strided_scatter", lambda T, s: T.as_strided_scatter(T.tensor(X), s, (2, 2), (1, 2), 1), (n(2, 2),)),
    Case("as_strided_copy", lambda T, x: T.as_strided_copy(x, (2, 3), (1, 2)), (X,)),
    Case("gradient", lambda T, x: T.gradient(x, dim=1), (X,), grad_fn=False),
    Case("gradient_all_edge2", lambda T, x: T.gradient(x, spacing=[0.5, 2.0], edge_order=2), (X,), grad_fn=False),
    Case("gradient_coordinates", lambda T, x, c: T.gradient(x, spacing=[c], dim=1), (X, np.array([0.0, 0.5, 1.5, 3.0])),
         grad_fn=False, order=1),
    Case("unravel_index", lambda T: T.unravel_index(T.tensor([5, 7, -1, 0]), (3, 4)), (), order=0),
    Case("nonzero_static", lambda T, x: T.nonzero_static(x, size=4), (np.array([[0, 1], [2, 0], [3, 4]]),), order=0),
    Case("nonzero_static_pad", lambda T, x: T.nonzero_static(x, size=4, fill_value=9), (np.array([0, 1, 0]),),
         order=0),
    Case("histogramdd", lambda T, x: T.histogramdd(x, bins=3), (n(10, 2),), order=0, grad_fn=False),
    Case("histogramdd_range", lambda T, x, w: T.histogramdd(x, bins=[2, 3], range=[-1.0, 1.0, 0.0, 2.0], weight=w,
                                                            density=True), (n(10, 2), n(10, lo=0.1)), order=0,
         grad_fn=False),
    Case("stft", lambda T, x: T.stft(x, 8, window=T.hann_window(8, dtype=T.float64), return_complex=True), (n(20),),
         order=1),
    Case("stft_batched", lambda T, x: T.stft(x, 8, 3, window=T.hann_window(8, dtype=T.float64), return_complex=True),
         (n(2, 20),), order=1),
    Case("stft_real_out", lambda T, x: T.stft(x, 6, 2, center=False, return_complex=False), (n(20),)),
    Case("stft_normalized", lambda T, x: T.stft(x, 8, 4, 6, T.hamming_window(6, dtype=T.float64), pad_mode="constant",
                                                normalized=True, return_complex=True), (n(2, 17),), order=1),
    Case("stft_twosided", lambda T, x: T.stft(x, 8, onesided=False, return_complex=True), (n(16),), order=1,
         grad_fn=False),
    Case("istft", lambda T, z: T.istft(z, 8, 3, window=T.hann_window(8, dtype=T.float64), length=20),
         (n(2, 5, 7) + 1j * n(2, 5, 7),), order=1, grad_fn=False),
    Case("istft_roundtrip", lambda T, x: T.istft(T.stft(x, 8, 2, return_complex=True), 8, 2, center=True,
                                                 normalized=False), (n(18),), order=1, grad_fn=False),
    # copies of views
    Case("alias_copy", lambda T, x: T.alias_copy(x), (X,)),
    Case("diagonal_copy", lambda T, x: T.diagonal_copy(x, 1), (X,)),
    Case("expand_copy", lambda T, x: T.expand_copy(x, (2, -1)), (V,)),
    Case("permute_copy", lambda T, x: T.permute_copy(x, (1, 0)), (X,)),
    Case("select_copy", lambda T, x: T.select_copy(x, 0, 1), (X,)),
    Case("slice_copy", lambda T, x: T.slice_copy(x, 1, 0, 3, 2), (X,)),
    Case("squeeze_copy", lambda T, x: T.squeeze_copy(x.unsqueeze(0), 0), (X,)),
    Case("t_copy", lambda T, x: T.t_copy(x), (X,)),
    Case("transpose_copy", lambda T, x: T.transpose_copy(x, 0, 1), (X,)),
    Case("unbind_copy", lambda T, x: T.unbind_copy(x, 1), (X,)),
    Case("unfold_copy", lambda T, x: T.unfold_copy(x, 1, 2, 1), (X,)),
    Case("unsqueeze_copy", lambda T, x: T.unsqueeze_copy(x, 1), (X,)),
    Case("view_copy", lambda T, x: T.view_copy(x, (12,)), (X,)),
    Case("split_copy", lambda T, x: T.split_copy(x, 2), (X,)),
    Case("split_with_sizes_copy", lambda T, x: T.split_with_sizes_copy(x, [3, 1], 1), (X,)),
    Case("narrow_copy", lambda T, x: T.narrow_copy(x, 1, 1, 2), (X,)),
    Case("view_as_real_copy", lambda T, z: T.view_as_real_copy(z), (X + 1j * Y,), order=1),
    Case("detach_copy", lambda T, x: T.detach_copy(x), (X,), order=0),
    # creation
    Case("range", lambda T: T.range(1, 4), (), order=0),
    Case("range_step", lambda T: T.range(0, 1, 0.25, dtype=T.float64), (), order=0),
    Case("scalar_tensor", lambda T: T.scalar_tensor(3), (), order=0),
    Case("empty_strided_shape", lambda T: T.empty_strided((2, 3), (3, 1)).shape, (), order=0),
    Case("hann", lambda T: T.hann_window(8), (), order=0),
    Case("hann_symmetric", lambda T: T.hann_window(7, False, dtype=T.float64), (), order=0),
    Case("hamming", lambda T: T.hamming_window(9, dtype=T.float64), (), order=0),
    Case("blackman", lambda T: T.blackman_window(6, dtype=T.float64), (), order=0),
    Case("bartlett", lambda T: T.bartlett_window(5, False, dtype=T.float64), (), order=0),
    Case("kaiser", lambda T: T.kaiser_window(6, dtype=T.float64), (), order=0, tol=1e-9),
    Case("kaiser_beta", lambda T: T.kaiser_window(7, False, 5.0, dtype=T.float64), (), order=0, tol=1e-9),
    Case("frombuffer", lambda T: T.frombuffer(bytearray(np.arange(6, dtype=np.int32).tobytes()), dtype=T.int32,
                                              count=4, offset=4), (), order=0),
    # in-place functions and queries
    Case("relu_", lambda T, x: T.relu_(x * 1), (X,)),
    Case("sin_", lambda T, x: T.sin_(x * 1), (X,)),
    Case("clamp_", lambda T, x: T.clamp_(x * 1, -0.5, 0.5), (X,)),
    Case("logit_", lambda T, x: T.logit_(x * 1), (U * 0.5 + 0.5,), order=0),
    Case("xlogy_", lambda T, x, y: T.xlogy_(x * 1, y), (X, POS), order=0),
    Case("fill_", lambda T, x: T.fill_(x * 1, 2.0), (X,)),
    Case("zero_", lambda T, x: T.zero_(x * 1), (X,)),
    Case("queries", lambda T, x, z: (T.is_complex(x), T.is_complex(z), T.is_signed(x), T.is_nonzero(x[:1, 0]),
                                     T.is_same_size(x, x), T.is_neg(x), T.get_device(x),
                                     T.can_cast(T.float64, T.int32), T.can_cast(T.int32, T.float16),
                                     T.can_cast(T.bool, T.uint8), T.can_cast(T.complex64, T.float64),
                                     str(T.result_type(x, 2)), str(T.result_type(T.tensor([1]), 2.0))),
         (X, X + 1j), order=0),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case):
    check(torch, ft, case)


ERRORS = {
    "frexp_int": lambda T: T.frexp(T.tensor([1, 2])),
    "gcd_float": lambda T: T.gcd(T.tensor([1.0]), T.tensor([2.0])),
    "heaviside_dtypes": lambda T: T.heaviside(T.tensor([1.0]), T.tensor([1])),
    "polygamma_negative": lambda T: T.polygamma(-1, T.tensor([1.0])),
    "nanmean_int": lambda T: T.nanmean(T.tensor([1, 2])),
    "kthvalue_k": lambda T: T.kthvalue(T.tensor([1.0, 2.0]), 3),
    "cov_3d": lambda T: T.cov(T.zeros(2, 2, 2)),
    "hsplit_indivisible": lambda T: T.hsplit(T.zeros(3, 4), 3),
    "vsplit_1d": lambda T: T.vsplit(T.zeros(4), 2),
    "take_along_dim_dims": lambda T: T.take_along_dim(T.zeros(3, 4), T.zeros(3, dtype=T.int64), 1),
    "select_scatter_shape": lambda T: T.select_scatter(T.zeros(3, 4), T.zeros(3), 0, 0),
    "diagonal_scatter_shape": lambda T: T.diagonal_scatter(T.zeros(3, 4), T.zeros(4)),
    "combinations_2d": lambda T: T.combinations(T.zeros(2, 2)),
    "vdot_2d": lambda T: T.vdot(T.zeros(2, 2), T.zeros(2, 2)),
    "vdot_dtypes": lambda T: T.vdot(T.zeros(2), T.zeros(2, dtype=T.float64)),
    "chain_matmul_1d": lambda T: T.chain_matmul(T.zeros(2), T.zeros(2)),
    "adjoint_1d": lambda T: T.adjoint(T.zeros(3)),
    "addr_2d_vec": lambda T: T.addr(T.zeros(2, 2), T.zeros(2, 2), T.zeros(2)),
    "vander_2d": lambda T: T.vander(T.zeros(2, 2)),
    "pad_odd": lambda T: T.constant_pad_nd(T.zeros(2, 2), (1,)),
    "channel_shuffle_groups": lambda T: T.channel_shuffle(T.zeros(1, 3, 2), 2),
    "index_reduce_reduce": lambda T: T.index_reduce(T.zeros(3), 0, T.tensor([0]), T.zeros(1), "sum"),
    "put_range": lambda T: T.put(T.zeros(3), T.tensor([5]), T.zeros(1)),
    "fill_1d_value": lambda T: T.fill(T.zeros(3), T.zeros(2)),
    "sqrt__int": lambda T: T.sqrt_(T.tensor([4, 9])),
    "relu__leaf": lambda T: T.relu_(T.zeros(2, requires_grad=True)),
    "is_nonzero_many": lambda T: T.is_nonzero(T.zeros(2)),
    "range_zero_step": lambda T: T.range(0, 1, 0),
    "window_negative": lambda T: T.hann_window(-1),
    "window_int": lambda T: T.hann_window(4, dtype=T.int64),
    "not_tensor": lambda T: T.deg2rad([1.0]),
    "fliplr_1d": lambda T: T.fliplr(T.zeros(3)),
    "renorm_p": lambda T: T.renorm(T.zeros(2, 2), -1, 0, 1.0),
    "gradient_edge_order": lambda T: T.gradient(T.zeros(4), edge_order=3),
    "stft_return_complex": lambda T: T.stft(T.zeros(16), 8),
    "stft_3d": lambda T: T.stft(T.zeros(1, 1, 16), 8, return_complex=True),
    "stft_window_size": lambda T: T.stft(T.zeros(16), 8, window=T.ones(5), return_complex=True),
    "istft_real": lambda T: T.istft(T.zeros(5, 3), 8),
    "gradient_small": lambda T: T.gradient(T.zeros(1)),
    "unravel_index_float": lambda T: T.unravel_index(T.tensor([1.0]), (2, 2)),
    "nonzero_static_size": lambda T: T.nonzero_static(T.zeros(2), size=-1),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error(name):
    check_error(torch, ft, ERRORS[name])


def test_inplace_functions_write_their_input():
    """torch.sin_(x) returns x itself, with the values written and the in-place grad_fn."""
    for lib in (torch, ft):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = x * 2
        out = lib.sin_(y)
        assert out is y
        np.testing.assert_allclose(out.detach().numpy(), np.sin([1.0, 2.0]))
        assert type(out.grad_fn).__name__ == "SinBackward0"


def test_resize_as_and_as_strided_write_their_input():
    """torch.resize_as_ and torch.as_strided_ change their input in place and return it."""
    got = []
    for lib in (torch, ft):
        x = lib.tensor(np.arange(12.0).reshape(3, 4))
        y = lib.as_strided_(x, (2, 2), (1, 2), 1)
        z = lib.zeros(2, 3)
        w = lib.resize_as_(z, lib.zeros(3, 2))
        got.append((y is x, y.numpy().tolist(), tuple(x.shape), w is z, tuple(z.shape)))
    assert got[0] == got[1], got


def test_vander_gradient():
    """d vander(x)[i, j] / dx_i = k x_i ** (k - 1) for the column's power k, to second order."""
    x = ft.tensor(V, requires_grad=True)
    w = ft.tensor(n(4, 3))
    (g,) = ft.autograd.grad((ft.vander(x, 3) * w).sum(), [x], create_graph=True)
    want = w.numpy()[:, 0] * 2 * V + w.numpy()[:, 1]
    np.testing.assert_allclose(g.detach().numpy(), want, rtol=1e-12)
    (g2,) = ft.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(g2.numpy(), 2 * w.numpy()[:, 0], rtol=1e-12)


def test_views_and_copies():
    """select/atleast/ravel give views (writes show in the base); the *_copy functions give
    new tensors."""
    for lib in (torch, ft):
        base = lib.zeros(3, 4)
        lib.select(base, 0, 1).fill_(1.0)
        lib.ravel(base)[0] = 2.0
        assert base[1].sum().item() == 4.0 and base[0, 0].item() == 2.0
        lib.select_copy(base, 0, 2).fill_(5.0)
        lib.narrow_copy(base, 0, 2, 1).fill_(7.0)
        assert base[2].sum().item() == 0.0
