"""fgrad.data: datasets and batching for training loops (PyTorch's torch.utils.data names)."""
from .dataset import DataLoader, Dataset, TensorDataset  # noqa: F401
from . import datasets  # noqa: F401

__all__ = ["Dataset", "TensorDataset", "DataLoader", "datasets"]
