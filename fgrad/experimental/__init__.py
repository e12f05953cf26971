"""fgrad.experimental: JAX's jax.experimental names that fgrad has.

- `fgrad.experimental.jet`: Taylor-mode higher-order differentiation (`jet.jet`, as
  `jax.experimental.jet.jet`).
"""
from . import jet  # noqa: F401
