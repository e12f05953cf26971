"""fgrad.optim: PyTorch's optimizers (SGD, Adam, AdamW) with identical update formulas."""
from .adam import Adam, AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
