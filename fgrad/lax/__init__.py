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

Every primitive that lax and the layers below it define is exported as `<name>_p` (`add_p`,
`reshape_p`, `conv2d_p`, `while_p`: JAX's `jax.lax.add_p`), read from the primitive registry,
for code that binds primitives, writes rules or walks jaxprs (`eqn.primitive is lax.add_p`).
fgrad.custom's and fgrad.debug's primitives live with their modules. The functions that bind
these primitives without lax's argument checks are `fgrad.extend.lax`'s.
"""
import sys as _sys

from ._cond import cond, cond_p, switch  # noqa: F401 (the primitives, for tools that walk jaxprs)
from ._scan import map, scan, scan_p  # noqa: A004,F401 (map: JAX's name)
from ._solves import custom_linear_solve, custom_root, linear_solve_p, root_p  # noqa: F401
from ._while import fori_loop, while_loop, while_p  # noqa: F401
from ._ops import *  # noqa: F401,F403,E402 (lax's primitive functions: add, dot_general, pad, ...)
from ._ops import __all__ as _ops_all
from ..core.primitive import ALL_PRIMITIVES as _ALL_PRIMITIVES
from ..core.primitive import Primitive as _Primitive
# fgrad.ops's __init__ imports no family; each is imported here so that the `_p` exports below do
# not depend on what else was imported first
from ..ops import (complex as _complex, convolve as _convolve, cumulative as _cumulative,  # noqa: F401
                   decompositions as _decompositions, elementwise as _elementwise, fft as _fft,
                   float_parts as _float_parts, index as _index, linalg as _linalg,
                   linalg_lu as _linalg_lu, matrix_functions as _matrix_functions, nn as _nn,
                   reduce as _reduce, search as _search, shape as _shape, sort as _sort,
                   sparse as _sparse, special_bessel as _special_bessel, special_erf as _special_erf,
                   special_expint as _special_expint, special_gamma as _special_gamma,
                   special_hyper as _special_hyper, special_kairy as _special_kairy,
                   special_orthopoly as _special_orthopoly, special_xlogy as _special_xlogy)


def _primitives_of_lax_and_below() -> list:
    """The registered primitives defined by a module of fgrad.lax or of a layer below it (the
    registry also holds those of fgrad.custom, fgrad.debug and the facade, whichever of them are
    imported already)."""
    homes = ("fgrad.core", "fgrad.interpreters", "fgrad.ops", "fgrad.lax")
    defined = {id(v) for name, module in list(_sys.modules.items())
               if name == __name__ or name.startswith(tuple(h + "." for h in homes))
               for v in list(vars(module).values()) if isinstance(v, _Primitive)}
    return [p for p in _ALL_PRIMITIVES if id(p) in defined]


for _p in _primitives_of_lax_and_below():
    globals()[f"{_p.name}_p"] = _p
del _p

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", *_ops_all]
