"""Lowering one element-wise equation to a scalar Python expression: the operands handed to a
primitive's lowering rule, typed constants, and the cast that gives NumPy's result dtype."""
from __future__ import annotations

import math

import numpy as np

# dtypes a Numba kernel computes with exactly as NumPy does (float16 and complex are left to
# the impls)
KERNEL_DTYPES = frozenset(np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64"))
# dtypes the scalar tier computes with in plain Python floats and bools, bit for bit as NumPy
SCALAR_DTYPES = frozenset(np.dtype(d) for d in ("bool", "float64"))
# results whose natural Python/Numba type is already the output's (no cast emitted)
_NATURAL = frozenset(np.dtype(d) for d in ("bool", "int64", "float64"))


class Operand(str):
    """A lowering rule's operand: the name of a scalar local (a `str`) and its `dtype`."""

    def __new__(cls, name: str, dtype) -> Operand:
        self = super().__new__(cls, name)
        self.dtype = np.dtype(dtype)
        return self

    def const(self, value) -> str:
        """`value` as a constant expression of this operand's dtype."""
        return const_expr(value, self.dtype)


def const_expr(value, dtype) -> str:
    """A Python expression for the scalar `value` with NumPy dtype `dtype` (exact: a float is
    written by its shortest round-trip repr, inf and NaN through math)."""
    dtype = np.dtype(dtype)
    v = np.asarray(value, dtype=dtype).item()
    if dtype.kind == "b":
        return repr(bool(v))
    if dtype.kind == "f":
        f = float(v)
        text = repr(f) if math.isfinite(f) else ("math.nan" if math.isnan(f) else ("math.inf" if f > 0 else "-math.inf"))
    else:
        text = repr(int(v))
    if dtype not in (np.float64, np.int64):
        return f"np.{dtype.name}({text})"
    return f"({text})" if text.startswith("-") else text  # (-2.0): safe beside any operator


def lower_expr(eqn, operands: list[Operand]) -> str | None:
    """The scalar expression of `eqn` (an element-wise equation) on `operands`, cast to its
    output dtype; None when its primitive has no lowering for these operands."""
    rule = eqn.primitive.lowering
    if rule is None:
        return None
    expr = rule(*operands, **eqn.params)
    if expr is None:
        return None
    out = eqn.outvars[0].aval.dtype
    if out in _NATURAL:
        return expr
    return f"np.{out.name}({expr})"


def lowerable(eqn, dtypes: frozenset) -> bool:
    """Whether `eqn` can be computed element by element with dtypes from `dtypes`."""
    if eqn.primitive.lowering is None or len(eqn.outvars) != 1:
        return False
    if eqn.outvars[0].aval.dtype not in dtypes or any(a.aval.dtype not in dtypes for a in eqn.invars):
        return False
    ops = [Operand(f"x{i}", a.aval.dtype) for i, a in enumerate(eqn.invars)]
    return lower_expr(eqn, ops) is not None
