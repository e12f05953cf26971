"""JAX's `jax.lax`: structured control flow (cond, switch, while_loop, fori_loop, scan,
map) and lax's primitive functions with lax's signatures and no dtype promotion (add, mul,
dot_general, conv_general_dilated, pad, reduce_max, ...: see _ops).

Python `if` and `for` on traced values either unroll (a loop under jit becomes one equation
per iteration) or fail (a branch on a value jit does not know yet). These functions stage
their bodies once into jaxprs nested in one equation, so under jit the loop stays a loop,
and every transform (grad, jvp, vmap, jit, in any order) goes through them. Reverse mode
also works through while_loop, which JAX refuses: see `while_loop`.

Each is one primitive (`cond`, `while`, `scan`) whose output leaves travel packed into one
array (fgrad._packing); values the bodies close over become explicit operands, so enclosing
transforms see them.
"""
from ._cond import cond, cond_p, switch  # noqa: F401 (the primitives, for tools that walk jaxprs)
from ._scan import map, scan, scan_p  # noqa: A004,F401 (map: JAX's name)
from ._while import fori_loop, while_loop, while_p  # noqa: F401
from ._ops import *  # noqa: F401,F403,E402 (lax's primitive functions: add, dot_general, pad, ...)
from ._ops import __all__ as _ops_all

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", *_ops_all]
