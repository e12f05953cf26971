"""fgrad.torch.utils: PyTorch's torch.utils namespace (`utils.data`, `utils.checkpoint`,
`utils.dlpack`)."""
from . import checkpoint, data, dlpack  # noqa: F401

__all__ = ["checkpoint", "data", "dlpack"]
