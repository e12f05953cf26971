"""Numba CPU kernels. Each is an override of an impl or a fused update and never carries
derivative rules; every caller keeps its NumPy code as the reference and the fallback (used
when kernels() is None), and a kernel computes the same values in the same dtype.

  relu, relu_grad                  fgrad.ops.nn.dense impls
  max_pool22, max_pool22_grad      fgrad.ops.nn.pool impls (2x2 windows, stride 2, no padding)
  sgd_momentum                     fgrad.torch.optim.sgd: the optimiser's element-wise update fused into
                                   one pass over memory (contiguous float arrays, see usable())

Importing this module does not import Numba: kernels() compiles on first use (cached on disk).
"""
from __future__ import annotations

import numpy as np

from ..interpreters.compile.kernels import prefer_wide_vectors

_KERNELS = None


def kernels():
    """The compiled kernels (a dict by name), or None without Numba."""
    global _KERNELS
    if _KERNELS is None:
        prefer_wide_vectors()  # (before Numba first compiles in the process)
        try:
            import numba  # on first use: importing it costs ~0.1 s that kernel-free programs skip
        except ImportError:  # pragma: no cover - numba is a dependency
            _KERNELS = False
            return None
        _KERNELS = _build(numba)
    return _KERNELS or None


def usable(*arrays) -> bool:
    """Whether a fused Numba kernel may update `arrays` in place: writable C-contiguous NumPy
    arrays of one float dtype and shape, with Numba importable."""
    a0 = arrays[0]
    return (type(a0) is np.ndarray and a0.dtype in (np.float32, np.float64)
            and all(type(a) is np.ndarray and a.dtype == a0.dtype and a.flags.c_contiguous
                    and a.shape == a0.shape for a in arrays)
            and a0.flags.writeable and kernels() is not None)


def _build(numba):
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def relu(x):
        out = np.empty_like(x)
        xf, of = x.reshape(-1), out.reshape(-1)
        zero = np.zeros(1, x.dtype)[0]
        for i in range(xf.size):
            v = xf[i]
            of[i] = zero if v <= 0 else v   # NaN propagates
        return out

    @jit
    def max_pool22(x, Ho, Wo):
        N, C = x.shape[0], x.shape[1]
        out = np.empty((N, C, Ho, Wo), x.dtype)
        for n in range(N):
            for c in range(C):
                for oy in range(Ho):
                    for ox in range(Wo):
                        a, b = x[n, c, 2 * oy, 2 * ox], x[n, c, 2 * oy, 2 * ox + 1]
                        d, e = x[n, c, 2 * oy + 1, 2 * ox], x[n, c, 2 * oy + 1, 2 * ox + 1]
                        m = a if (a >= b or a != a) else b
                        m2 = d if (d >= e or d != d) else e
                        out[n, c, oy, ox] = m if (m >= m2 or m != m) else m2
        return out

    @jit
    def max_pool22_grad(ct, x, y):
        # the first (row-major) element of each 2x2 window equal to its max gets ct. Every
        # element is written once (no zero-filled allocation first): the windows cover all
        # but an odd last row or column, which are zeroed below
        N, C, Ho, Wo = ct.shape
        H, W = x.shape[2], x.shape[3]
        g = np.empty(x.shape, ct.dtype)
        zero = np.zeros(1, ct.dtype)[0]
        for n in range(N):
            for c in range(C):
                xc, yc, cc, gc = x[n, c], y[n, c], ct[n, c], g[n, c]
                for oy in range(Ho):
                    x0, x1, g0, g1 = xc[2 * oy], xc[2 * oy + 1], gc[2 * oy], gc[2 * oy + 1]
                    for ox in range(Wo):
                        t, v = yc[oy, ox], cc[oy, ox]
                        nan = t != t  # NaN counts as the maximum
                        a, b, d = x0[2 * ox], x0[2 * ox + 1], x1[2 * ox]
                        ha = (a == t) | (nan & (a != a))
                        hb = ((b == t) | (nan & (b != b))) & ~ha
                        hc = ((d == t) | (nan & (d != d))) & ~(ha | hb)
                        hd = ~(ha | hb | hc)
                        g0[2 * ox] = v if ha else zero
                        g0[2 * ox + 1] = v if hb else zero
                        g1[2 * ox] = v if hc else zero
                        g1[2 * ox + 1] = v if hd else zero
                    for j in range(2 * Wo, W):
                        g0[j] = zero
                        g1[j] = zero
                for i in range(2 * Ho, H):
                    for j in range(W):
                        gc[i, j] = zero
        return g

    @jit
    def relu_grad(ct, y):
        out = np.empty_like(ct)
        cf, yf, of = ct.reshape(-1), y.reshape(-1), out.reshape(-1)
        zero = np.zeros(1, ct.dtype)[0]
        for i in range(cf.size):
            of[i] = cf[i] if yf[i] > 0 else zero
        return out

    @jit
    def sgd_momentum(w, g, buf, lr, mom, one_minus_damp, wd, nesterov, maximize, first):
        wf, gf, bf = w.reshape(-1), g.reshape(-1), buf.reshape(-1)
        for i in range(wf.size):
            gi = gf[i]
            if maximize:
                gi = -gi
            if wd != 0:
                gi = gi + wd * wf[i]
            if first:
                b = gi
            else:
                b = mom * bf[i] + one_minus_damp * gi
            bf[i] = b
            if nesterov:
                gi = gi + mom * b
            else:
                gi = b
            wf[i] = wf[i] - lr * gi

    return dict(relu=relu, relu_grad=relu_grad, max_pool22=max_pool22, max_pool22_grad=max_pool22_grad,
                sgd_momentum=sgd_momentum)
