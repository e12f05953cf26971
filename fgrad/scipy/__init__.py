"""fgrad.scipy: SciPy-compatible functions over fgrad primitives (differentiable)."""
from . import special  # noqa: F401

__all__ = ["special"]
