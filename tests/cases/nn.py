"""Cases for the neural-network primitives of fgrad.ops.nn and fgrad.nn.functional
(format: see tests/test_primitives.py). NumPy references are written out directly."""
import numpy as np

import fgrad.nn.functional as F
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
    ("batch_norm[train]", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     np_batch_norm_train, U((-1, 1, (3, 2, 2, 2)), (0.5, 1.5, (2,)), (-1, 1, (2,)))),
    ("sigmoid[nn]", F.sigmoid, lambda x: 1 / (1 + np.exp(-x)), U((-3, 3, (3, 4)))),
    ("softplus", F.softplus, lambda x: np.logaddexp(x, 0.0), U((-3, 3, (3, 4))), {"f32": True}),
    ("softplus[beta]", lambda x: N.softplus(x, 2.0, 1.0), lambda x: np.logaddexp(2 * x, 0.0) / 2,
     U((-2, 0.3, (3, 4)))),
    ("softplus[linear]", lambda x: N.softplus(x, 2.0, 1.0), lambda x: x, U((0.8, 2, (3, 4)))),
]
