"""Convolution, pooling, padding and resampling (fgrad.torch.nn.functional and their layers)
against PyTorch, in float32 and float64.

Each configuration runs the same call through fgrad's Tensor facade and through PyTorch
(inputs and weights copied via NumPy) and compares: the values (indices exactly), the
gradient of <out, ct> with respect to every floating-point argument (inputs and weights),
and a second-order quantity taken with create_graph: the gradient of <grad, v>, i.e. a
Hessian-vector product of <out, ct> (nonzero for the bilinear convolutions and for
grid_sample's grid, zero for the functions linear in their input, which both libraries
must agree on). The tables cover strides, paddings (ints, tuples, 'same', 'valid', every
padding mode), dilations, groups (grouped and depthwise), odd sizes, batched and unbatched
inputs. Further tests: layers (weights copied, repr, initialisation), max-pooling ties,
vmap/jit/hessian through the functions, errors (PyTorch's exception types), dropouts.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F
from fgrad.test_util import check_grads

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DTYPES = [np.float64, np.float32]


class Arr:
    """A random argument: shape, value range, and whether to differentiate it."""

    def __init__(self, *shape, lo=-1.0, hi=1.0, diff=True, distinct=False):
        self.shape, self.lo, self.hi, self.diff, self.distinct = shape, lo, hi, diff, distinct

    def make(self, rng, dtype):
        if self.distinct:  # no ties (max pooling's derivative is conventional there)
            n = int(np.prod(self.shape))
            v = (rng.permutation(n).reshape(self.shape) + rng.uniform(0.1, 0.4, self.shape)) / n
            return (self.lo + (self.hi - self.lo) * v).astype(dtype)
        return rng.uniform(self.lo, self.hi, self.shape).astype(dtype)


def _lib_run(lib, fn, args, kw, diff, ct_seed):
    """Values, first and second derivatives of <fn(*args)[0], ct> through lib's autograd."""
    ts = []
    for a, d in zip(args, diff):
        if isinstance(a, np.ndarray):
            ts.append(lib.tensor(a, requires_grad=d and a.dtype.kind == "f"))
        else:
            ts.append(a)
    out = fn(*ts, **kw)
    outs = out if isinstance(out, tuple) else (out,)
    y = outs[0]
    rng = np.random.default_rng(ct_seed)
    ct = rng.standard_normal(tuple(y.shape)).astype(y.detach().numpy().dtype)
    inputs = [t for t, d in zip(ts, diff) if d and isinstance(t, lib.Tensor)]
    L = (y * lib.tensor(ct)).sum()
    grads = lib.autograd.grad(L, inputs, create_graph=True, allow_unused=True)
    vs = [rng.standard_normal(tuple(t.shape)).astype(ct.dtype) for t in inputs]
    terms = [(g * lib.tensor(v)).sum() for g, v in zip(grads, vs) if g is not None and g.requires_grad]
    if terms:
        s = terms[0]
        for t in terms[1:]:
            s = s + t
        second = lib.autograd.grad(s, inputs, allow_unused=True)
    else:
        second = [None] * len(inputs)

    def np_(t, like):
        return np.zeros(tuple(like.shape), ct.dtype) if t is None else t.detach().numpy()
    return ([o.detach().numpy() for o in outs], [np_(g, t) for g, t in zip(grads, inputs)],
            [np_(g, t) for g, t in zip(second, inputs)])


def _close(ours, theirs, dtype, what, scale=1.0):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape}, PyTorch {theirs.shape}"
    if theirs.dtype.kind in "iub":
        np.testing.assert_array_equal(ours, theirs, err_msg=what)
        return
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype}, PyTorch {theirs.dtype}"
    tol = (1e-9 if dtype == np.float64 else 3e-4) * scale
    mag = max(1.0, float(np.max(np.abs(theirs), initial=0.0)))
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * mag, err_msg=what)


def compare(name, specs, kw, dtype, seed=0, scale=1.0, fg_fn=None, th_fn=None):
    """fgrad.torch.nn.functional.<name> against torch.nn.functional.<name> (see the module doc)."""
    rng = np.random.default_rng(seed)
    args = [s.make(rng, dtype) if isinstance(s, Arr) else s for s in specs]
    diff = [isinstance(s, Arr) and s.diff for s in specs]
    fg_fn = fg_fn or getattr(F, name)
    th_fn = th_fn or getattr(TF, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _lib_run(fgrad.torch, fg_fn, args, kw, diff, seed + 1)
        theirs = _lib_run(torch, th_fn, args, kw, diff, seed + 1)
    for kind, a, b in zip(("value", "gradient", "second-order"), ours, theirs):
        assert len(a) == len(b)
        for i, (u, t) in enumerate(zip(a, b)):
            _close(u, t, dtype, f"{name}{kw} {kind} {i}", scale)


def _table(rows):
    return [pytest.param(*r, id=f"{r[0]}-{i}") for i, r in enumerate(rows)]


# --- convolutions --------------------------------------------------------------------------------

CONV = _table([
    ("conv2d", [Arr(2, 3, 7, 6), Arr(4, 3, 3, 3), Arr(4)], dict(stride=2, padding=1)),
    ("conv2d", [Arr(2, 4, 7, 6), Arr(6, 2, 3, 2), Arr(6)], dict(stride=(1, 2), padding=(2, 1), groups=2)),
    ("conv2d", [Arr(2, 4, 6, 5), Arr(4, 1, 3, 3), None], dict(padding="same", groups=4)),          # depthwise
    ("conv2d", [Arr(1, 3, 8, 7), Arr(6, 1, 2, 3), Arr(6)], dict(padding="same", dilation=(2, 1), groups=3)),
    ("conv2d", [Arr(3, 5, 6), Arr(2, 3, 2, 2), Arr(2)], dict(padding="valid")),                    # unbatched
    ("conv2d", [Arr(2, 2, 9, 8), Arr(3, 2, 3, 3), None], dict(stride=3, dilation=2, padding=2)),
    ("conv2d", [Arr(2, 4, 5, 5), Arr(8, 2, 4, 4), None], dict(groups=2, padding="same")),         # even kernel
    ("conv1d", [Arr(2, 4, 11), Arr(6, 2, 3), Arr(6)], dict(stride=2, padding=1, groups=2)),
    ("conv1d", [Arr(4, 9), Arr(4, 1, 4), None], dict(padding="same", dilation=2, groups=4)),      # unbatched dw
    ("conv1d", [Arr(3, 2, 10), Arr(5, 2, 5), Arr(5)], dict(stride=3, dilation=2)),
    ("conv3d", [Arr(2, 4, 5, 6, 5), Arr(6, 2, 3, 2, 3), Arr(6)],
     dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)),
    ("conv3d", [Arr(3, 4, 5, 4), Arr(2, 3, 2, 3, 2), None], dict(padding="same")),
    ("conv_transpose2d", [Arr(2, 4, 4, 5), Arr(4, 3, 3, 3), Arr(6)],
     dict(stride=2, padding=1, output_padding=1, groups=2)),
    ("conv_transpose2d", [Arr(2, 3, 4, 5), Arr(3, 2, 3, 2), Arr(2)],
     dict(stride=(1, 2), padding=(0, 1), output_padding=(1, 0), dilation=(2, 1))),
    ("conv_transpose2d", [Arr(3, 4, 4), Arr(3, 2, 2, 2), None], dict(stride=3)),                  # unbatched
    ("conv_transpose2d", [Arr(1, 4, 3, 3), Arr(4, 1, 3, 3), Arr(4)], dict(groups=4, dilation=2)),  # depthwise
    ("conv_transpose1d", [Arr(2, 4, 6), Arr(4, 2, 3), Arr(2)], dict(stride=3, padding=1, output_padding=2)),
    ("conv_transpose1d", [Arr(4, 5), Arr(4, 3, 4), Arr(6)], dict(stride=2, groups=2, dilation=2)),
])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,specs,kw", CONV)
def test_convolutions_match_pytorch(name, specs, kw, dtype):
    compare(name, specs, kw, dtype)


@pytest.mark.parametrize("algo", ["gemm", "fft"])
def test_conv2d_algorithms_match_pytorch_with_groups(algo, monkeypatch):
    import fgrad.ops.nn as N
    monkeypatch.setattr(N, "conv_algorithm", algo)
    compare("conv2d", [Arr(2, 4, 9, 9), Arr(4, 4, 5, 5), Arr(4)], dict(padding=2), np.float64)
    compare("conv2d", [Arr(2, 4, 9, 9), Arr(4, 2, 5, 5), Arr(4)], dict(padding=2, groups=2), np.float64)


# --- pooling -------------------------------------------------------------------------------------

POOL = _table([
    ("max_pool2d", [Arr(2, 3, 7, 6, distinct=True)], dict(kernel_size=3, stride=2, padding=1, return_indices=True)),
    ("max_pool2d", [Arr(2, 2, 9, 8, distinct=True)], dict(kernel_size=(2, 3), dilation=2, padding=1,
                                                          ceil_mode=True, return_indices=True)),
    ("max_pool2d", [Arr(3, 5, 7, distinct=True)], dict(kernel_size=2, return_indices=True)),
    ("max_pool1d", [Arr(2, 3, 11, distinct=True)], dict(kernel_size=3, stride=2, padding=1, return_indices=True)),
    ("max_pool1d", [Arr(3, 10, distinct=True)], dict(kernel_size=4, dilation=2, ceil_mode=True)),
    ("avg_pool1d", [Arr(2, 3, 11)], dict(kernel_size=3, stride=2, padding=1, count_include_pad=False,
                                         ceil_mode=True)),
    ("avg_pool1d", [Arr(3, 9)], dict(kernel_size=4)),
    ("avg_pool2d", [Arr(3, 7, 6)], dict(kernel_size=3, stride=2, padding=1, divisor_override=5)),
    ("adaptive_avg_pool2d", [Arr(2, 3, 9, 7)], dict(output_size=(4, 3))),
    ("adaptive_avg_pool2d", [Arr(3, 8, 7)], dict(output_size=(3, None))),
    ("adaptive_avg_pool2d", [Arr(2, 3, 8, 6)], dict(output_size=1)),
    ("adaptive_avg_pool2d", [Arr(2, 3, 5, 4)], dict(output_size=(7, 6))),                     # upsampling
    ("adaptive_avg_pool3d", [Arr(2, 3, 5, 6, 7)], dict(output_size=(2, 3, 4))),
    ("adaptive_avg_pool3d", [Arr(3, 4, 6, 5)], dict(output_size=(None, 1, 3))),
    ("adaptive_avg_pool1d", [Arr(2, 3, 10)], dict(output_size=4)),
    ("adaptive_avg_pool1d", [Arr(3, 12)], dict(output_size=4)),
    ("adaptive_max_pool2d", [Arr(2, 3, 9, 7, distinct=True)], dict(output_size=(4, 3), return_indices=True)),
    ("adaptive_max_pool2d", [Arr(2, 3, 8, 6, distinct=True)], dict(output_size=(4, 3), return_indices=True)),
    ("adaptive_max_pool2d", [Arr(3, 5, 7, distinct=True)], dict(output_size=(None, 3))),
    ("adaptive_max_pool1d", [Arr(2, 3, 10, distinct=True)], dict(output_size=4, return_indices=True)),
    ("adaptive_max_pool1d", [Arr(3, 7, distinct=True)], dict(output_size=3)),
    ("lp_pool2d", [Arr(2, 3, 8, 6, lo=0.2, hi=1.5)], dict(norm_type=2, kernel_size=(3, 2), stride=2)),
    ("lp_pool2d", [Arr(3, 7, 7, lo=0.2, hi=1.5)], dict(norm_type=3, kernel_size=3, ceil_mode=True)),
    ("lp_pool1d", [Arr(2, 3, 8, lo=0.2, hi=1.5)], dict(norm_type=1.5, kernel_size=3)),
])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,specs,kw", POOL)
def test_pooling_matches_pytorch(name, specs, kw, dtype):
    compare(name, specs, kw, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dims", [1, 2])
def test_max_unpool_of_max_pool_indices_matches_pytorch(dims, dtype):
    rng = np.random.default_rng(3)
    shape = (2, 3, 9) if dims == 1 else (2, 3, 6, 7)
    x = ((rng.permutation(int(np.prod(shape))).reshape(shape) + 0.5) / 100).astype(dtype)
    pool, unpool = (F.max_pool1d, F.max_unpool1d) if dims == 1 else (F.max_pool2d, F.max_unpool2d)
    tpool, tunpool = (TF.max_pool1d, TF.max_unpool1d) if dims == 1 else (TF.max_pool2d, TF.max_unpool2d)
    _, idx = pool(fgrad.torch.tensor(x), 2, return_indices=True)
    _, tidx = tpool(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    vals = Arr(*tuple(idx.shape))
    out_size = shape[2:]  # odd sizes need output_size to get back to the input's size
    compare("unpool", [vals, idx.numpy()], dict(kernel_size=2, output_size=out_size), dtype,
            fg_fn=lambda v, i, **kw: unpool(v, fgrad.torch.tensor(i), **kw),
            th_fn=lambda v, i, **kw: tunpool(v, torch.tensor(i), **kw))


def test_max_unpool_layer_round_trip_and_invalid_index():
    x = fgrad.torch.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    y, idx = nn.MaxPool2d(2, return_indices=True)(x)
    out = nn.MaxUnpool2d(2)(y, idx)
    want = np.zeros((1, 1, 4, 4))
    want[0, 0, 1::2, 1::2] = [[5, 7], [13, 15]]
    np.testing.assert_array_equal(out.numpy(), want)
    with pytest.raises(RuntimeError, match="invalid max index: 99"):
        F.max_unpool2d(y, fgrad.torch.tensor(np.full((1, 1, 2, 2), 99)), 2)


@pytest.mark.parametrize("fn,kw", [
    ("max_pool2d", dict(kernel_size=2)), ("max_pool2d", dict(kernel_size=3, stride=1, padding=1)),
    ("max_pool1d", dict(kernel_size=3, stride=1, padding=1)),
    ("adaptive_max_pool2d", dict(output_size=(3, 2))), ("adaptive_max_pool1d", dict(output_size=3)),
])
@pytest.mark.filterwarnings("ignore:invalid value encountered")  # the -inf windows' loss is NaN
def test_max_pool_ties_go_to_the_first_maximum_as_pytorch(fn, kw):
    """Inputs made of ties (every window has several equal maxima, and -inf windows): the
    whole derivative goes to the first maximum in row-major order, as PyTorch."""
    rng = np.random.default_rng(0)
    shape = (2, 2, 5, 6) if "2d" in fn else (2, 2, 7)
    x = rng.integers(0, 2, shape).astype(np.float64)
    x[0, 0] = -np.inf
    ours, theirs = fgrad.torch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ct = rng.standard_normal(tuple(getattr(TF, fn)(theirs, **kw).shape))
    (getattr(F, fn)(ours, **kw) * fgrad.torch.tensor(ct)).sum().backward()
    (getattr(TF, fn)(theirs, **kw) * torch.tensor(ct)).sum().backward()
    # overlapping windows sum their cotangents in another order: equal up to rounding
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-14, atol=1e-14)
    _, i = getattr(F, fn)(ours, return_indices=True, **kw)
    _, ti = getattr(TF, fn)(theirs, return_indices=True, **kw)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())


# --- padding, pixel shuffle, unfold/fold -------------------------------------------------------------

PAD = _table([
    ("pad", [Arr(2, 3, 5, 6), (1, 2, 2, 0)], dict(mode=mode)) for mode in
    ("constant", "reflect", "replicate", "circular")] + [
    ("pad", [Arr(2, 3, 5, 6), (-1, 2, 2, -1)], dict(mode=mode)) for mode in
    ("constant", "reflect", "replicate", "circular")] + [
    ("pad", [Arr(3, 5, 6, 4), (1, 2, 2, 0, 3, 1)], dict(mode=mode)) for mode in
    ("constant", "reflect", "replicate", "circular")] + [
    ("pad", [Arr(2, 7), (3, 2)], dict(mode="reflect")),                    # unbatched 1-D
    ("pad", [Arr(2, 3, 7), (6, 6)], dict(mode="reflect")),
    ("pad", [Arr(2, 3, 7), (-2, 5)], dict(mode="reflect")),                # mirrors the uncropped input
    ("pad", [Arr(2, 3, 7), (-2, 4)], dict(mode="circular")),               # wraps the cropped one
    ("pad", [Arr(2, 3, 7), (7, 7)], dict(mode="circular")),
    ("pad", [Arr(1, 2, 3, 4, 5), (1, 1, 2, 0, 0, 3)], dict(mode="replicate")),
    ("pad", [Arr(2, 3, 4), (1, 1, 2, 0, 1, 1)], dict(mode="constant", value=2.5)),
    ("pad", [Arr(2, 3, 4, 2, 2), (1, 1, 0, 1, 1, 0, 1, 1, 1, 0)], dict(value=-1.0)),
    ("pixel_shuffle", [Arr(2, 12, 3, 4), 2], {}),
    ("pixel_shuffle", [Arr(2, 2, 18, 2, 3), 3], {}),
    ("pixel_unshuffle", [Arr(2, 3, 6, 4), 2], {}),
    ("pixel_unshuffle", [Arr(3, 6, 9), 3], {}),
    ("unfold", [Arr(2, 3, 7, 6)], dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))),
    ("unfold", [Arr(3, 5, 5)], dict(kernel_size=3)),
    ("fold", [Arr(2, 18, 15), (5, 6)], dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))),
    ("fold", [Arr(12, 9), (4, 4)], dict(kernel_size=2, stride=1)),
])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,specs,kw", PAD)
def test_padding_shuffle_and_blocks_match_pytorch(name, specs, kw, dtype):
    compare(name, specs, kw, dtype)


# --- resampling ------------------------------------------------------------------------------------

_INTERP = []
for _mode, _ac in [("nearest", None), ("nearest-exact", None), ("bilinear", False), ("bilinear", True),
                   ("bicubic", False), ("bicubic", True), ("area", None)]:
    _INTERP += [("interpolate", [Arr(2, 3, 5, 7)], dict(size=(9, 4), mode=_mode, align_corners=_ac)),
                ("interpolate", [Arr(2, 3, 5, 7)], dict(scale_factor=(1.7, 0.6), mode=_mode, align_corners=_ac)),
                ("interpolate", [Arr(1, 2, 4, 5)], dict(scale_factor=2.3, mode=_mode, align_corners=_ac,
                                                        recompute_scale_factor=True))]
_INTERP += [
    ("interpolate", [Arr(2, 3, 5)], dict(scale_factor=2.5, mode="linear")),
    ("interpolate", [Arr(2, 3, 6)], dict(size=4, mode="linear", align_corners=True)),
    ("interpolate", [Arr(2, 3, 6)], dict(size=6, mode="linear", scale_factor=None)),
    ("interpolate", [Arr(2, 3, 7)], dict(scale_factor=0.5, mode="nearest")),
    ("interpolate", [Arr(1, 2, 5, 4, 3)], dict(size=(7, 3, 5), mode="trilinear", align_corners=True)),
    ("interpolate", [Arr(1, 2, 5, 4, 3)], dict(scale_factor=(0.6, 1.5, 2.0), mode="trilinear")),
    ("interpolate", [Arr(1, 2, 5, 4, 3)], dict(size=(7, 3, 5), mode="nearest")),
    ("interpolate", [Arr(1, 2, 6, 4, 3)], dict(size=(4, 2, 2), mode="area")),
    ("interpolate", [Arr(2, 3, 4, 4)], dict(scale_factor=2, mode="bilinear", align_corners=False)),
]
for _mode in ("bilinear", "nearest"):
    for _pm in ("zeros", "border", "reflection"):
        for _ac in (False, True):
            _INTERP.append(("grid_sample", [Arr(2, 3, 5, 6), Arr(2, 4, 3, 2, lo=-1.4, hi=1.4)],
                            dict(mode=_mode, padding_mode=_pm, align_corners=_ac)))
_INTERP += [
    ("affine_grid", [Arr(2, 2, 3), (2, 3, 4, 5)], dict(align_corners=False)),
    ("affine_grid", [Arr(2, 2, 3), (2, 3, 1, 5)], dict(align_corners=True)),
    ("affine_grid", [Arr(2, 3, 4), (2, 3, 4, 5, 3)], dict(align_corners=True)),
]
INTERP = _table(_INTERP)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,specs,kw", INTERP)
def test_resampling_matches_pytorch(name, specs, kw, dtype):
    compare(name, specs, kw, dtype)


def test_grid_sample_through_affine_grid_matches_pytorch():
    """A spatial transformer: the derivative w.r.t. theta goes through both functions."""
    def fg(x, theta):
        return F.grid_sample(x, F.affine_grid(theta, (2, 3, 4, 5), align_corners=False),
                             align_corners=False, padding_mode="border")

    def th(x, theta):
        return TF.grid_sample(x, TF.affine_grid(theta, (2, 3, 4, 5), align_corners=False),
                              align_corners=False, padding_mode="border")
    for dtype in DTYPES:
        compare("spatial_transformer", [Arr(2, 3, 6, 7), Arr(2, 2, 3, lo=-0.8, hi=0.8)], {}, dtype,
                fg_fn=fg, th_fn=th)


# --- fgrad's transforms: finite differences, vmap, jit ----------------------------------------------

def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


FD = {
    "conv1d_groups": (lambda x, w: F.conv1d(x, w, stride=2, padding=1, groups=2), (_rand(2, 4, 7), _rand(4, 2, 3))),
    "conv3d": (lambda x, w: F.conv3d(x, w, padding=(1, 0, 1), stride=(2, 1, 1)), (_rand(1, 2, 4, 3, 4), _rand(2, 2, 2, 2, 2))),
    "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2),
                         (_rand(1, 2, 3, 3), _rand(2, 2, 3, 3))),
    "grid_sample": (lambda x, g: F.grid_sample(x, g, align_corners=False, padding_mode="reflection"),
                    (_rand(1, 2, 4, 5), _rand(1, 3, 2, 2, seed=1) * 1.3)),
    "interpolate_bicubic": (lambda x: F.interpolate(x, size=(5, 3), mode="bicubic", align_corners=False),
                            (_rand(1, 2, 4, 4),)),
    "pad_reflect": (lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect") ** 2, (_rand(1, 2, 4, 4),)),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (2, 3)) ** 2,
                            ((np.random.default_rng(0).permutation(40).reshape(1, 2, 5, 4) + 0.5) / 40,)),
    "lp_pool2d": (lambda x: F.lp_pool2d(x, 2, 2), (np.abs(_rand(1, 2, 4, 4)) + 0.5,)),
    "fold_unfold": (lambda x: F.fold(F.unfold(x, 2, padding=1) ** 2, (3, 4), 2, padding=1), (_rand(1, 2, 3, 4),)),
}


@pytest.mark.parametrize("name", sorted(FD))
def test_second_order_derivatives_against_finite_differences(name):
    fn, args = FD[name]
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


VMAP = {
    "conv1d": lambda x, w: F.conv1d(x, w, padding=1, groups=2),
    "conv3d": lambda x, w: F.conv3d(x, w, padding=1),
    "conv_transpose1d": lambda x, w: F.conv_transpose1d(x, w, stride=2, groups=2),
    "conv_transpose2d": lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
}
VMAP_SHAPES = {"conv1d": ((2, 4, 6), (4, 2, 3)), "conv3d": ((1, 2, 3, 3, 3), (2, 2, 2, 2, 2)),
               "conv_transpose1d": ((2, 4, 5), (4, 1, 3)), "conv_transpose2d": ((1, 2, 3, 3), (2, 3, 3, 3))}


@pytest.mark.parametrize("name", sorted(VMAP))
def test_vmap_over_inputs_and_per_example_kernels_equals_a_loop(name):
    fn = VMAP[name]
    xs_shape, w_shape = VMAP_SHAPES[name]
    xs, ws = _rand(3, *xs_shape), _rand(3, *w_shape, seed=1)
    for in_axes, args in (((0, None), (xs, ws[0])), ((0, 0), (xs, ws)), ((None, 0), (xs[0], ws))):
        got = fgrad.vmap(fn, in_axes=in_axes)(*args)
        want = np.stack([fn(xs[i] if in_axes[0] == 0 else xs[0], ws[i] if in_axes[1] == 0 else ws[0])
                         for i in range(3)])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # per-example weight gradients: the kernels' gradient batched over the examples
    g = fgrad.grad(lambda w, x: (fn(x, w) ** 2).sum())
    got = fgrad.vmap(g, in_axes=(None, 0))(ws[0], xs)
    want = np.stack([g(ws[0], x) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


def test_grouped_per_example_gradients_use_one_grouped_convolution():
    """vmap of per-example weight gradients folds the examples into the groups: the jaxpr
    holds single conv2d / conv2d_weight_grad equations, not a loop of them."""
    w, xs = _rand(4, 2, 3, 3), _rand(5, 1, 4, 6, 6)
    f = fgrad.vmap(fgrad.grad(lambda w, x: (F.conv2d(x, w, padding=1, groups=2) ** 2).sum()), in_axes=(None, 0))
    jaxpr = str(fgrad.make_jaxpr(f)(w, xs))
    assert jaxpr.count("conv2d_weight_grad[") == 1 and "groups=10" in jaxpr


@pytest.mark.parametrize("name,fn,args", [
    ("interpolate", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), (_rand(2, 1, 2, 3, 3),)),
    ("grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=True), (_rand(2, 1, 2, 3, 3), _rand(2, 1, 2, 2, 2))),
    ("pad", lambda x: F.pad(x, (1, 2, 2, 1), mode="circular"), (_rand(2, 1, 2, 3, 3),)),
    ("max_pool2d_indices", lambda x: F.max_pool2d(x, 2, return_indices=True)[1], (_rand(2, 1, 2, 4, 4),)),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 2), return_indices=True)[1], (_rand(2, 1, 2, 5, 3),)),
    ("unfold", lambda x: F.unfold(x, 2, stride=2), (_rand(2, 1, 2, 4, 4),)),
])
def test_vmap_and_jit_equal_eager(name, fn, args):
    want = np.stack([fn(*[a[i] for a in args]) for i in range(2)])
    np.testing.assert_array_equal(fgrad.vmap(fn)(*args), want)
    np.testing.assert_allclose(fgrad.jit(fn)(*[a[0] for a in args]), want[0], rtol=1e-14, atol=1e-14)


def test_hessian_through_a_small_upsampling_cnn():
    x = _rand(1, 2, 4, 4)

    def f(p):
        w1 = p[:8].reshape(2, 1, 2, 2)
        h = F.conv2d(x, w1, padding=1, groups=2)
        h = F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False)
        h = F.conv_transpose2d(h, p[8:].reshape(2, 1, 2, 2), stride=2, groups=2)
        return F.adaptive_avg_pool2d(h ** 2, 3).sum()
    check_grads(f, (_rand(16, seed=2),), order=2, modes=("rev",))
    h = fgrad.hessian(f)(_rand(16, seed=2))
    np.testing.assert_allclose(h, h.T, atol=1e-10)


# --- layers -----------------------------------------------------------------------------------------

def _copy_params(ours, theirs):
    with torch.no_grad():
        for (n1, p), (n2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n1 == n2 and tuple(p.shape) == tuple(q.shape), (n1, n2)
            q.copy_(torch.tensor(p.detach().numpy()))


LAYERS = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, groups=2, padding_mode="reflect"), (2, 4, 9)),
    ("Conv1d", (3, 2, 4), dict(padding="same", dilation=2, padding_mode="circular"), (3, 10)),
    ("Conv2d", (4, 4, 3), dict(padding=1, groups=4, padding_mode="replicate"), (2, 4, 6, 5)),
    ("Conv2d", (2, 6, (3, 2)), dict(stride=(2, 1), padding=(1, 2), bias=False), (2, 2, 7, 6)),
    ("Conv2d", (2, 4, 4), dict(padding="same", padding_mode="reflect"), (1, 2, 6, 6)),
    ("Conv3d", (2, 4, 2), dict(padding=1, groups=2, padding_mode="circular"), (1, 2, 3, 4, 3)),
    ("ConvTranspose1d", (4, 2, 3), dict(stride=2, padding=1, output_padding=1), (2, 4, 5)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, groups=2, dilation=(1, 2)), (1, 4, 3, 4)),
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 8)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 8)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 8)),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, (2, 3, 7, 5)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, (2, 3, 5, 4, 7)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 8)),
    ("AdaptiveMaxPool2d", ((3, None),), {}, (2, 3, 7, 5)),
    ("LPPool1d", (2, 3), {}, (2, 3, 8)),
    ("LPPool2d", (2, 2), dict(stride=1), (2, 3, 5, 4)),
    ("Upsample", (), dict(scale_factor=2, mode="bilinear", align_corners=True), (2, 3, 3, 4)),
    ("Upsample", (), dict(size=(5, 3), mode="nearest"), (2, 3, 3, 4)),
    ("UpsamplingNearest2d", (), dict(scale_factor=2), (2, 3, 3, 4)),
    ("UpsamplingBilinear2d", (), dict(size=(5, 7)), (2, 3, 3, 4)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 4)),
    ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
    ("Unfold", ((2, 3),), dict(padding=1, stride=2), (2, 3, 5, 6)),
    ("Fold", ((4, 5), 2), {}, (2, 12, 12)),
    ("ZeroPad2d", ((1, 2, 0, 1),), {}, (2, 3, 4, 4)),
    ("ConstantPad1d", (2, 1.5), {}, (2, 3, 4)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), -1.0), {}, (2, 3, 2, 2, 2)),
    ("ReflectionPad1d", (2,), {}, (2, 3, 4)),
    ("ReflectionPad2d", ((1, 0, 2, 1),), {}, (2, 3, 4, 4)),
    ("ReflectionPad3d", (1,), {}, (1, 2, 3, 3, 3)),
    ("ReplicationPad1d", ((0, 3),), {}, (3, 4)),
    ("ReplicationPad2d", (2,), {}, (2, 3, 4, 4)),
    ("ReplicationPad3d", ((1, 0, 0, 1, 2, 0),), {}, (1, 2, 3, 3, 3)),
    ("CircularPad1d", (2,), {}, (2, 3, 4)),
    ("CircularPad2d", ((1, 0, 2, 1),), {}, (2, 3, 4, 4)),
    ("CircularPad3d", (1,), {}, (1, 2, 3, 3, 3)),
    ("ZeroPad1d", (2,), {}, (2, 3, 4)),
    ("ZeroPad3d", (1,), {}, (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("name,args,kw,shape", LAYERS, ids=[f"{r[0]}-{i}" for i, r in enumerate(LAYERS)])
def test_layers_match_pytorch(name, args, kw, shape):
    fgrad.torch.manual_seed(0)
    ours, theirs = getattr(nn, name)(*args, **kw).double(), getattr(torch.nn, name)(*args, **kw).double()
    assert repr(ours) == repr(theirs)
    _copy_params(ours, theirs)
    x = np.random.default_rng(1).uniform(0.1, 1.0, shape)
    xo, xt = fgrad.torch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, want = ours(xo), theirs(xt)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    ct = np.random.default_rng(2).standard_normal(tuple(want.shape))
    (out * fgrad.torch.tensor(ct)).sum().backward()
    (want * torch.tensor(ct)).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=n)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())


def test_conv_layers_attributes_and_initialisation_follow_pytorch():
    fgrad.torch.manual_seed(0)
    for cls, args, kw in [("Conv1d", (6, 4, 3), dict(groups=2)), ("Conv3d", (2, 4, (1, 2, 3)), {}),
                          ("ConvTranspose2d", (4, 6, 3), dict(groups=2)),
                          ("ConvTranspose1d", (3, 5, 2), dict(bias=False))]:
        ours, theirs = getattr(nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
        for attr in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                     "groups", "padding_mode", "output_padding", "transposed",
                     "_reversed_padding_repeated_twice"):
            assert getattr(ours, attr) == getattr(theirs, attr), (cls, attr)
        assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
        fan_in = int(np.prod(tuple(ours.weight.shape)[1:]))
        bound = 1 / np.sqrt(fan_in)
        assert np.abs(ours.weight.detach().numpy()).max() <= bound
        if ours.bias is not None:
            assert np.abs(ours.bias.detach().numpy()).max() <= bound


def test_conv_transpose_output_size_picks_output_padding():
    fgrad.torch.manual_seed(0)
    ours = nn.ConvTranspose2d(2, 3, 3, stride=3, padding=1).double()
    theirs = torch.nn.ConvTranspose2d(2, 3, 3, stride=3, padding=1).double()
    _copy_params(ours, theirs)
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    for size in [(10, 10), (11, 12), [1, 3, 12, 10]]:
        out = ours(fgrad.torch.tensor(x), output_size=size)
        want = theirs(torch.tensor(x), output_size=size)
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="valid sizes range from 10 to 12"):
        ours(fgrad.torch.tensor(x), output_size=(13, 10))


def test_layer_grad_fn_names():
    x = fgrad.torch.tensor(_rand(1, 2, 5).astype(np.float32), requires_grad=True)
    assert nn.Conv1d(2, 4, 3, groups=2)(x).grad_fn is not None
    assert F.conv2d(fgrad.torch.tensor(_rand(1, 2, 4, 4), requires_grad=True), fgrad.torch.tensor(_rand(2, 1, 2, 2)),
                    groups=2).grad_fn.name() == "ConvolutionBackward0"
    assert F.unfold(fgrad.torch.tensor(_rand(1, 2, 4, 4), requires_grad=True), 2).grad_fn.name() == "Im2ColBackward0"
    assert F.fold(fgrad.torch.tensor(_rand(1, 8, 9), requires_grad=True), (4, 4), 2).grad_fn.name() == "Col2ImBackward0"


# --- dropout ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,shape,mask_axes", [
    ("dropout1d", (8, 16, 5), (0, 1)), ("dropout1d", (16, 5), (0,)),
    ("dropout2d", (8, 16, 3, 4), (0, 1)), ("dropout3d", (8, 16, 2, 2, 2), (0, 1)),
    ("dropout3d", (16, 2, 2, 2), (0,)), ("feature_alpha_dropout", (8, 16, 3, 4), (0, 1)),
])
def test_channel_dropout_drops_whole_channels(name, shape, mask_axes):
    fgrad.torch.manual_seed(0)
    x = np.ones(shape)
    out = np.asarray(getattr(F, name)(x, p=0.5, training=True))
    per_channel = out.reshape(tuple(shape[a] for a in mask_axes) + (-1,))
    assert (per_channel == per_channel[..., :1]).all(), "a channel was only partly dropped"
    if name.startswith("dropout"):
        assert set(np.unique(out)) <= {0.0, 2.0} and 0.2 < (out == 0).mean() < 0.8
    np.testing.assert_array_equal(getattr(F, name)(x, p=0.5, training=False), x)
    t = fgrad.torch.tensor(x, requires_grad=True)
    y = getattr(F, name)(t, p=0.3, training=True)
    y.sum().backward()
    assert t.grad is not None and tuple(t.grad.shape) == shape


def test_alpha_dropout_keeps_mean_and_variance():
    fgrad.torch.manual_seed(0)
    x = np.random.default_rng(0).standard_normal(200_000)
    for fn in (F.alpha_dropout, lambda v, p, training: nn.AlphaDropout(p).train(training)(fgrad.torch.tensor(v)).numpy()):
        y = np.asarray(fn(x, p=0.2, training=True))
        assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
        alpha = 1.7580993408473766
        a = 1 / np.sqrt((alpha ** 2 * 0.2 + 1) * 0.8)
        dropped = np.isclose(y, alpha * a * (0.2 - 1))  # dropped units: -alpha', then a * . + b
        assert 0.18 < dropped.mean() < 0.22
    np.testing.assert_array_equal(F.alpha_dropout(x, 0.2), x)          # training=False by default
    np.testing.assert_array_equal(F.alpha_dropout(x, 1.0, training=True), np.zeros_like(x))


def test_dropout_layers_and_warnings():
    fgrad.torch.manual_seed(1)
    layer = nn.Dropout2d(0.5)
    x = fgrad.torch.ones(4, 6, 3, 3)
    out = layer(x).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(), x.numpy())
    assert repr(nn.Dropout1d(0.2)) == repr(torch.nn.Dropout1d(0.2))
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        F.dropout2d(np.ones((2, 3, 4)), 0.5)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(np.ones((2, 3, 4, 5)), 0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout3d(1.5)


# --- errors: PyTorch's exception types ---------------------------------------------------------------

ERRORS = [
    ("conv2d", lambda m: m.conv2d(m.ones(1, 3, 5, 5), m.ones(2, 2, 3, 3), groups=2), "expected input"),
    ("conv2d", lambda m: m.conv2d(m.ones(1, 4, 5, 5), m.ones(3, 2, 3, 3), groups=2), "divisible by 2"),
    ("conv2d", lambda m: m.conv2d(m.ones(1, 2, 5, 5), m.ones(2, 2, 3, 3), stride=2, padding="same"),
     "strided convolutions"),
    ("conv2d", lambda m: m.conv2d(m.ones(2, 5), m.ones(2, 2, 3, 3)), "Expected 3D"),
    ("conv1d", lambda m: m.conv1d(m.ones(1, 2, 5), m.ones(2, 2, 3), padding="full"), "Invalid padding"),
    ("conv_transpose2d", lambda m: m.conv_transpose2d(m.ones(1, 3, 4, 4), m.ones(2, 2, 3, 3)),
     "channels"),
    ("conv_transpose2d", lambda m: m.conv_transpose2d(m.ones(1, 2, 4, 4), m.ones(2, 2, 3, 3),
                                                      output_padding=1), "output padding"),
    ("pad", lambda m: m.pad(m.ones(1, 1, 3), (3, 3), mode="reflect"), "Padding size should be less"),
    ("pad", lambda m: m.pad(m.ones(3), (1, 1), mode="reflect"), "not supported for 1D input"),
    ("pad", lambda m: m.pad(m.ones(2, 3), (1, 1, 1)), "divisible by 2"),
    ("pad", lambda m: m.pad(m.ones(1, 1, 3), (1, 1), mode="reflect", value=2.0), "value argument"),
    ("pad", lambda m: m.pad(m.ones(1, 1, 3), (1, 1), mode="wrap"), "Unrecognised padding mode"),
    ("pad", lambda m: m.pad(m.ones(1, 1, 3), (4, 0), mode="circular"), "wrapping around"),
    ("interpolate", lambda m: m.interpolate(m.ones(1, 1, 3, 3), size=4, scale_factor=2), "only one of"),
    ("interpolate", lambda m: m.interpolate(m.ones(1, 1, 3, 3)), "either size or scale_factor"),
    ("interpolate", lambda m: m.interpolate(m.ones(1, 1, 3, 3), size=4, mode="linear"), "needs 3D input"),
    ("interpolate", lambda m: m.interpolate(m.ones(1, 1, 3, 3), size=4, align_corners=True),
     "align_corners option"),
    ("grid_sample", lambda m: m.grid_sample(m.ones(1, 1, 3, 3), m.ones(1, 2, 2, 3), align_corners=True),
     "size 2 in last dimension"),
    ("grid_sample", lambda m: m.grid_sample(m.ones(1, 1, 3, 3), m.ones(1, 2, 2, 2), mode="cubic",
                                            align_corners=True), "expected mode"),
    ("affine_grid", lambda m: m.affine_grid(m.ones(1, 2, 2), (1, 1, 3, 3), align_corners=True), "Nx2x3"),
    ("fold", lambda m: m.fold(m.ones(1, 8, 5), (4, 4), 2), "sliding blocks"),
    ("fold", lambda m: m.fold(m.ones(1, 7, 9), (4, 4), 2), "divisible by the product"),
    ("pixel_shuffle", lambda m: m.pixel_shuffle(m.ones(1, 3, 2, 2), 2), "divisible by the square"),
    ("max_unpool2d", lambda m: m.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 3, dtype=m.int64), 2),
     "Expected shape of indices"),
    ("adaptive_avg_pool2d", lambda m: m.adaptive_avg_pool2d(m.ones(3, 4), 2), "Expected 3D or 4D"),
]


@pytest.mark.parametrize("name,call,match", ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_have_pytorchs_types_and_name_the_problem(name, call, match):
    class Lib:  # fgrad or torch, with tensors made by ones/zeros and F's functions
        def __init__(self, lib, fn):
            self.lib, self.fn, self.int64 = lib, fn, lib.int64

        def ones(self, *s):
            return self.lib.ones(*s, dtype=self.lib.float64)

        def zeros(self, *s, dtype):
            return self.lib.zeros(*s, dtype=dtype)

        def __getattr__(self, n):
            return getattr(self.fn, n)
    with pytest.raises(Exception) as theirs:
        call(Lib(torch, TF))
    with pytest.raises(Exception, match=match) as ours:
        call(Lib(fgrad.torch, F))
    assert isinstance(ours.value, type(theirs.value)), (
        f"fgrad raised {type(ours.value).__name__}, PyTorch {type(theirs.value).__name__}: {ours.value}")


def test_conv_layer_constructor_errors_match_pytorch():
    for kw, match in [(dict(groups=3), "in_channels must be divisible by groups"),
                      (dict(padding="full"), "Invalid padding string"),
                      (dict(padding_mode="mirror"), "padding_mode must be one of"),
                      (dict(stride=2, padding="same"), "strided convolutions")]:
        with pytest.raises(ValueError, match=match):
            nn.Conv2d(4, 6, 3, **kw)
        with pytest.raises(ValueError):
            torch.nn.Conv2d(4, 6, 3, **kw)
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
