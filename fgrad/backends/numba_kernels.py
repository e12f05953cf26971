"""Numba kernels fusing an optimiser's element-wise update into one pass over memory (CPU,
contiguous float arrays). The NumPy code in sgd.py/adam.py is the reference and the
fallback; the kernels compute the same expressions in the same dtype."""
from __future__ import annotations

import numpy as np

_KERNELS = None


def kernels():
    """The compiled kernels, or None without Numba."""
    global _KERNELS
    if _KERNELS is None:
        try:
            import numba
        except ImportError:  # pragma: no cover - numba is a dependency
            _KERNELS = False
            return None
        _KERNELS = _build(numba)
    return _KERNELS or None


def usable(*arrays) -> bool:
    a0 = arrays[0]
    return (type(a0) is np.ndarray and a0.dtype in (np.float32, np.float64)
            and all(type(a) is np.ndarray and a.dtype == a0.dtype and a.flags.c_contiguous
                    and a.shape == a0.shape for a in arrays)
            and a0.flags.writeable and kernels() is not None)


def _build(numba):
    @numba.njit(cache=True, nogil=True)
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

    return {"sgd_momentum": sgd_momentum}
