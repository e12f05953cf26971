"""Cases for the neural-network primitives of fgrad.ops.nn and fgrad.torch.nn.functional
(format: see tests/ops/test_primitives.py). NumPy references are written out directly."""
import numpy as np

import fgrad.torch.nn.functional as F
import fgrad.ops.nn as N


def U(*specs):
    return lambda rng, dt: tuple(rng.uniform(lo, hi, shape).astype(dt) for lo, hi, shape in specs)


def _distinct(shape):
    """Values with no ties (max pooling has no derivative at ties)."""
    def make(rng, dt):
        n = int(np.prod(shape))
        return ((rng.permutation(n).reshape(shape) + rng.uniform(0.1, 0.4, shape)) / n).astype(dt),
    return make


def _with_targets(shape, n_classes, target_shape):
    def make(rng, dt):
        return (rng.uniform(-2, 2, shape).astype(dt), rng.integers(0, n_classes, target_shape))
    return make


# --- NumPy references -----------------------------------------------------------------------

def np_conv2d(x, w, stride=1, padding=0, dilation=1):
    s = (stride, stride) if np.isscalar(stride) else stride
    p = (padding, padding) if np.isscalar(padding) else padding
    d = (dilation, dilation) if np.isscalar(dilation) else dilation
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    Ho = (H - d[0] * (kh - 1) - 1) // s[0] + 1
    Wo = (W - d[1] * (kw - 1) - 1) // s[1] + 1
    out = np.zeros((N, O, Ho, Wo), x.dtype)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i * d[0]:i * d[0] + s[0] * (Ho - 1) + 1:s[0],
                      j * d[1]:j * d[1] + s[1] * (Wo - 1) + 1:s[1]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def np_conv2d_grouped(x, w, groups, **kw):
    """Grouped convolution as `groups` independent convolutions of channel slices."""
    C, O = x.shape[1], w.shape[0]
    cg, og = C // groups, O // groups
    return np.concatenate([np_conv2d(x[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], **kw)
                           for g in range(groups)], axis=1)


def np_unfold(x, k, dilation=1, padding=0, stride=1):
    """Columns [N, C*kh*kw, L] of the sliding blocks, written out with loops."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (
        (v, v) if np.isscalar(v) else v for v in (k, dilation, padding, stride))
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    N, C, H, W = x.shape
    Ho, Wo = (H - dh * (kh - 1) - 1) // sh + 1, (W - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((N, C, kh, kw, Ho, Wo), x.dtype)
    for i in range(kh):
        for j in range(kw):
            for a in range(Ho):
                for b in range(Wo):
                    out[:, :, i, j, a, b] = x[:, :, a * sh + i * dh, b * sw + j * dw]
    return out.reshape(N, C * kh * kw, Ho * Wo)


def np_fold(cols, size, k, dilation=1, padding=0, stride=1):
    """The adjoint of np_unfold: every column entry added back at its position."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (
        (v, v) if np.isscalar(v) else v for v in (k, dilation, padding, stride))
    N, CK, L = cols.shape
    C = CK // (kh * kw)
    H, W = size
    Ho, Wo = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((N, C, H + 2 * ph, W + 2 * pw), cols.dtype)
    c = cols.reshape(N, C, kh, kw, Ho, Wo)
    for i in range(kh):
        for j in range(kw):
            for a in range(Ho):
                for b in range(Wo):
                    out[:, :, a * sh + i * dh, b * sw + j * dw] += c[:, :, i, j, a, b]
    return out[:, :, ph:ph + H, pw:pw + W]


def np_max_pool2d_indices(x, k, s, p):
    """Flat index h * W + w of each window's first maximum (padding never chosen)."""
    N, C, H, W = x.shape
    Ho, Wo = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
    out = np.zeros((N, C, Ho, Wo), np.int64)
    for a in range(Ho):
        for b in range(Wo):
            rows = [r for r in range(a * s - p, a * s - p + k) if 0 <= r < H]
            cols = [c for c in range(b * s - p, b * s - p + k) if 0 <= c < W]
            win = x[:, :, rows][:, :, :, cols].reshape(N, C, -1)
            am = win.argmax(-1)
            out[:, :, a, b] = np.array(rows)[am // len(cols)] * W + np.array(cols)[am % len(cols)]
    return out


# resampling taps: a linear interpolation 4 -> 7 (repeated, non-monotone-free indices), and
# an adaptive-average-like set whose tap columns are not monotone
_TAPS_IDX = np.array([[0, 1], [0, 1], [1, 2], [1, 2], [2, 3], [2, 3], [3, 3]])
_TAPS_W = np.array([[1.0, 0.0], [0.6, 0.4], [0.9, 0.1], [0.3, 0.7], [0.8, 0.2], [0.1, 0.9], [1.0, 0.0]])
_AREA_IDX = np.array([[0, 1, 0], [1, 2, 3], [3, 3, 3]])
_AREA_W = np.array([[0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]])


def np_resample(x, axis, idx, wts):
    """sum_t wts[o, t] * x[..., idx[o, t], ...] along axis, with a loop over the outputs."""
    x = np.moveaxis(x, axis, 0)
    out = np.stack([sum(x.dtype.type(w) * x[i] for i, w in zip(row_i, row_w)) for row_i, row_w in zip(idx, wts)])
    return np.moveaxis(out, 0, axis)


def np_resample_transpose(ct, axis, idx, wts, n_in):
    ct = np.moveaxis(ct, axis, 0)
    out = np.zeros((n_in,) + ct.shape[1:], ct.dtype)
    for o, (row_i, row_w) in enumerate(zip(idx, wts)):
        for i, w in zip(row_i, row_w):
            out[i] += ct.dtype.type(w) * ct[o]
    return np.moveaxis(out, 0, axis)


def _np_windows(x, k, s, p, fill):
    x = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    N, C, H, W = x.shape
    Ho, Wo = (H - k) // s + 1, (W - k) // s + 1
    return np.stack([x[:, :, i:i + s * (Ho - 1) + 1:s, j:j + s * (Wo - 1) + 1:s]
                     for i in range(k) for j in range(k)], axis=-1)


def np_max_pool2d(x, k, s=None, p=0):
    return _np_windows(x, k, s or k, p, -np.inf).max(-1)


def np_avg_pool2d(x, k, s=None, p=0):
    return _np_windows(x, k, s or k, p, 0).mean(-1)


def np_log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def np_cross_entropy(x, t, reduction="mean", label_smoothing=0.0, ignore_index=-100):
    logp = np_log_softmax(x, 1)
    C = x.shape[1]
    keep = t != ignore_index
    picked = np.take_along_axis(logp, np.where(keep, t, 0)[:, None], 1)[:, 0]
    loss = -((1 - label_smoothing) * picked + label_smoothing / C * logp.sum(1)) * keep
    if reduction == "mean":
        return (loss.sum() / keep.sum()).astype(x.dtype)
    return loss.sum() if reduction == "sum" else loss


def np_batch_norm_train(x, w, b, eps=1e-5):
    axes = (0, 2, 3)
    mean = x.mean(axes, keepdims=True)
    var = x.var(axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w[None, :, None, None] + b[None, :, None, None]


X4 = U((-1, 1, (2, 3, 6, 5)), (-1, 1, (4, 3, 3, 3)))

CASES = [
    ("conv2d", lambda x, w: N.conv2d(x, w), np_conv2d, X4, {"f32": True, "rtol": 1e-9}),
    ("conv2d[pad_stride]", lambda x, w: N.conv2d(x, w, stride=2, padding=1),
     lambda x, w: np_conv2d(x, w, 2, 1), X4, {"rtol": 1e-9}),
    ("conv2d[dilation]", lambda x, w: N.conv2d(x, w, padding=(2, 1), dilation=2),
     lambda x, w: np_conv2d(x, w, 1, (2, 1), 2), U((-1, 1, (2, 3, 7, 6)), (-1, 1, (2, 3, 2, 3))),
     {"rtol": 1e-9}),
    ("conv2d[same_5x5]", lambda x, w: N.conv2d(x, w, padding="same"),
     lambda x, w: np_conv2d(x, w, 1, 2), U((-1, 1, (2, 2, 6, 6)), (-1, 1, (3, 2, 5, 5))),
     {"rtol": 1e-9}),
    ("conv2d_input_grad", lambda g, w: N.conv2d_input_grad(g, w, (6, 5), stride=2, padding=1),
     None, U((-1, 1, (2, 4, 3, 3)), (-1, 1, (4, 3, 3, 3)))),
    ("conv2d_weight_grad", lambda x, g: N.conv2d_weight_grad(x, g, (3, 3), padding=1),
     None, U((-1, 1, (2, 3, 5, 4)), (-1, 1, (2, 2, 5, 4)))),
    ("F.conv2d[bias]", lambda x, w, b: F.conv2d(x, w, b, padding=1),
     lambda x, w, b: np_conv2d(x, w, 1, 1) + b[None, :, None, None],
     U((-1, 1, (2, 3, 5, 5)), (-1, 1, (4, 3, 3, 3)), (-1, 1, (4,))), {"rtol": 1e-9}),
    ("conv2d[groups]", lambda x, w: N.conv2d(x, w, stride=(1, 2), padding=1, groups=2),
     lambda x, w: np_conv2d_grouped(x, w, 2, stride=(1, 2), padding=1),
     U((-1, 1, (2, 4, 5, 6)), (-1, 1, (6, 2, 3, 2))), {"f32": True, "rtol": 1e-9}),
    ("conv2d[depthwise_bias]", lambda x, w, b: N.conv2d(x, w, padding="same", bias=b, groups=3),
     lambda x, w, b: np_conv2d_grouped(x, w, 3, padding=1) + b[None, :, None, None],
     U((-1, 1, (2, 3, 5, 4)), (-1, 1, (3, 1, 3, 3)), (-1, 1, (3,))), {"rtol": 1e-9}),
    ("conv2d_input_grad[groups]", lambda g, w: N.conv2d_input_grad(g, w, (6, 5), stride=2, padding=1,
                                                                    groups=2),
     None, U((-1, 1, (2, 4, 3, 3)), (-1, 1, (4, 1, 3, 3)))),
    ("conv2d_weight_grad[groups]", lambda x, g: N.conv2d_weight_grad(x, g, (3, 2), padding=(1, 0),
                                                                     dilation=(1, 2), groups=3),
     None, U((-1, 1, (2, 6, 5, 6)), (-1, 1, (2, 3, 5, 4)))),
    ("unfold", lambda x: N.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
     lambda x: np_unfold(x, (2, 3), (2, 1), 1, (1, 2)), U((-1, 1, (2, 3, 5, 6))), {"f32": True}),
    ("fold", lambda c: N.fold(c, (5, 6), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
     lambda c: np_fold(c, (5, 6), (2, 3), (2, 1), 1, (1, 2)), U((-1, 1, (2, 18, 15))),
     {"f32": True}),
    ("resample", lambda x: N.resample(x, 2, _TAPS_IDX, _TAPS_W),
     lambda x: np_resample(x, 2, _TAPS_IDX, _TAPS_W), U((-1, 1, (2, 3, 4, 5))), {"f32": True}),
    ("resample[area_axis0]", lambda x: N.resample(x, 0, _AREA_IDX, _AREA_W),
     lambda x: np_resample(x, 0, _AREA_IDX, _AREA_W), U((-1, 1, (4, 3)))),
    ("resample[gather]", lambda x: N.resample(x, 1, np.array([[0], [0], [2], [1]])),
     lambda x: x[:, [0, 0, 2, 1]], U((-1, 1, (2, 3, 2)))),
    ("resample_transpose", lambda c: N.resample_transpose(c, 1, _TAPS_IDX, _TAPS_W, 4),
     lambda c: np_resample_transpose(c, 1, _TAPS_IDX, _TAPS_W, 4), U((-1, 1, (3, 7, 2))),
     {"f32": True}),
    ("resample_transpose[area]", lambda c: N.resample_transpose(c, 0, _AREA_IDX, _AREA_W, 4),
     lambda c: np_resample_transpose(c, 0, _AREA_IDX, _AREA_W, 4), U((-1, 1, (3, 2)))),
    ("max_pool2d_indices", lambda x: N.max_pool2d_indices(x, 3, 2, 1),
     lambda x: np_max_pool2d_indices(x, 3, 2, 1), _distinct((2, 2, 7, 6)), {"grad": False}),
    ("max_pool2d", lambda x: N.max_pool2d(x, 2), lambda x: np_max_pool2d(x, 2),
     _distinct((2, 3, 6, 4)), {"f32": True}),
    ("max_pool2d[overlap_pad]", lambda x: N.max_pool2d(x, 3, 2, 1),
     lambda x: np_max_pool2d(x, 3, 2, 1), _distinct((2, 2, 7, 6))),
    ("max_pool2d[odd]", lambda x: N.max_pool2d(x, 2), lambda x: np_max_pool2d(x, 2),
     _distinct((1, 2, 5, 7))),
    ("avg_pool2d", lambda x: N.avg_pool2d(x, 2), lambda x: np_avg_pool2d(x, 2),
     U((-1, 1, (2, 3, 6, 4))), {"f32": True}),
    ("avg_pool2d[overlap_pad]", lambda x: N.avg_pool2d(x, 3, 2, 1),
     lambda x: np_avg_pool2d(x, 3, 2, 1), U((-1, 1, (2, 2, 7, 6)))),
    ("avg_pool2d_grad", lambda g: N.avg_pool2d_grad(g, (2, 2, 7, 6), 3, 2, 1), None,
     U((-1, 1, (2, 2, 4, 3)))),
    ("relu", N.relu, lambda x: np.maximum(x, 0), U((-1, 1, (3, 4))), {"f32": True}),
    ("log_softmax", lambda x: N.log_softmax(x, 1), lambda x: np_log_softmax(x, 1),
     U((-3, 3, (3, 5))), {"f32": True}),
    ("log_softmax[axis0]", lambda x: N.log_softmax(x, 0), lambda x: np_log_softmax(x, 0),
     U((-3, 3, (4, 2, 3)))),
    ("softmax", lambda x: F.softmax(x, dim=-1),
     lambda x: np.exp(np_log_softmax(x, -1)), U((-3, 3, (2, 5)))),
    ("cross_entropy", N.cross_entropy, np_cross_entropy, _with_targets((4, 5), 5, (4,)),
     {"f32": True}),
    ("cross_entropy[sum_smoothing]", lambda x, t: N.cross_entropy(x, t, reduction="sum",
                                                                  label_smoothing=0.1),
     lambda x, t: np_cross_entropy(x, t, "sum", 0.1), _with_targets((4, 5), 5, (4,))),
    ("cross_entropy[none_ignore]", lambda x, t: F.cross_entropy(x, t, reduction="none", ignore_index=2),
     lambda x, t: np_cross_entropy(x, t, "none", 0.0, 2), _with_targets((6, 4), 4, (6,))),
    ("nll_loss", lambda x, t: F.nll_loss(x, t),
     lambda x, t: -np.take_along_axis(x, t[:, None], 1).mean(), _with_targets((4, 3), 3, (4,))),
    ("mse_loss", F.mse_loss, lambda x, y: ((x - y) ** 2).mean(), U((-1, 1, (3, 4)), (-1, 1, (3, 4)))),
    ("linear", F.linear, lambda x, w, b: x @ w.T + b,
     U((-1, 1, (3, 4)), (-1, 1, (2, 4)), (-1, 1, (2,))), {"f32": True}),
    ("addmm", N.addmm, lambda b, x, wt: b + x @ wt,
     U((-1, 1, (2,)), (-1, 1, (3, 4)), (-1, 1, (4, 2))), {"f32": True}),
    ("batch_norm[train]", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     np_batch_norm_train, U((-1, 1, (3, 2, 2, 2)), (0.5, 1.5, (2,)), (-1, 1, (2,)))),
    ("sigmoid[nn]", F.sigmoid, lambda x: 1 / (1 + np.exp(-x)), U((-3, 3, (3, 4)))),
    ("softplus", F.softplus, lambda x: np.logaddexp(x, 0.0), U((-3, 3, (3, 4))), {"f32": True}),
    ("softplus[beta]", lambda x: N.softplus(x, 2.0, 1.0), lambda x: np.logaddexp(2 * x, 0.0) / 2,
     U((-2, 0.3, (3, 4)))),
    ("softplus[linear]", lambda x: N.softplus(x, 2.0, 1.0), lambda x: x, U((0.8, 2, (3, 4)))),
]
