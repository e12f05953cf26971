"""fgrad.scipy: SciPy-compatible functions over fgrad primitives (differentiable)."""
from . import integrate, linalg, signal, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
