"""fgrad.torch.utils: PyTorch's torch.utils namespace (`utils.data`, `utils.checkpoint`,
`utils.dlpack`, `utils.swap_tensors`)."""
from . import checkpoint, data, dlpack  # noqa: F401
from .._tensor._swap import swap_tensors

__all__ = ["checkpoint", "data", "dlpack", "swap_tensors"]
