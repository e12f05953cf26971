"""Batching rules a primitive defined outside fgrad can use (`prim.def_batch`), as JAX's
`jax.interpreters.batching` offers its helpers.

  loop_batch(prim, n, vals, dims, **params) -> (out, 0): binds `prim` once per example (the
    batched operands indexed along their batch axis `dims[i]`, unbatched ones, dims[i] None,
    passed whole) and stacks the results along a new leading axis. Correct for any
    primitive; the rule of last resort for one whose batched form has no cheaper expression.
"""
from __future__ import annotations

from ..ops._batching import loop_batch

__all__ = ["loop_batch"]
