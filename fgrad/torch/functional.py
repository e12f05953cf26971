"""torch.functional on fgrad.torch: the module PyTorch defines some of its top-level functions in.

Scripts reach them there (`torch.functional.einsum`, `from torch.functional import split`);
each name here is the same object as `fgrad.torch.<name>`, for those of PyTorch's names
fgrad.torch has.
"""
from __future__ import annotations

from .. import torch as _torch  # the package: fgrad.torch imports this module last

# PyTorch 2.13's torch.functional.__all__
_TORCH_NAMES = (
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
    "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm",
    "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot", "unique",
    "unique_consecutive", "unravel_index",
)

__all__ = [name for name in _TORCH_NAMES if hasattr(_torch, name)]
globals().update({name: getattr(_torch, name) for name in __all__})
