"""fgrad's Numba CPU kernels, for code that fuses an element-wise update into one pass over
memory (fgrad.torch.optim.SGD's momentum step).

  kernels() -> dict | None: the compiled kernels by name, or None without Numba (compiled on
    first use and cached on disk; importing this module does not import Numba). Each computes
    what its NumPy reference computes, in the same dtype: "sgd_momentum"(w, g, buf, lr,
    momentum, 1 - dampening, weight_decay, nesterov, maximize, first) does PyTorch's SGD
    step with momentum, updating w and its momentum buffer buf in place (scalars of w's
    dtype; first: buf holds no momentum yet).
  usable(*arrays) -> bool: whether a kernel may update `arrays` in place (writable
    C-contiguous NumPy arrays of one float dtype and shape, with Numba importable); the
    caller keeps its NumPy code for the other cases.
"""
from __future__ import annotations

from ..ops.numba_kernels import kernels, usable

__all__ = ["kernels", "usable"]
