"""Lowering one element-wise equation to a scalar Python expression: the operands handed to a
primitive's lowering rule, typed constants, and the cast that gives NumPy's result dtype.

What jit computes is a function of the program, its dtypes and shapes and `MATH`
(`$FGRAD_JIT_MATH`), never of measured speed. Arithmetic, comparisons, casts, rounding,
remainders and sqrt are exact (correctly rounded), so kernels compute eager's bits. The
functions a library approximates (exp, log, tanh, sin, pow, erf, ...; `EXACT_CALLS` lists
the exact calls) are where NumPy's own SIMD code and the C library may differ by an ulp or
two: under "fused" (the default) kernels and the scalar tier compute them with the C library,
or vmath's versions in kernels over `vmath.LARGE` elements or more (within a few ulps of
eager, the same bits on every run of the same program); under "eager" they are left to
NumPy's functions, as eager computes them, so jit is bit-identical to eager (at the price of
a NumPy call, and of the kernels and compiled loop bodies they split).
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
from typing import Iterator

import numpy as np

from ...core.errors import FgradValueError
from ...core.ir import Literal

MATH = os.environ.get("FGRAD_JIT_MATH", "fused")
_MATH_MODES = ("fused", "eager")
# MATH for the programs lowered in a `math_as` block (None: MATH)
_MATH_HERE: contextvars.ContextVar[str | None] = contextvars.ContextVar("fgrad_jit_math", default=None)
# Calls a lowering may make that compute exactly what NumPy computes on every machine
# (correctly rounded, or exact): everything else is a library's approximation (see above)
EXACT_CALLS = frozenset({"math.sqrt", "math.isinf", "math.isfinite", "abs", "float", "int", "bool",
                         "fg_floor", "fg_ceil", "fg_rint", "fg_fmod", "fg_sign", "fg_floordiv_i",
                         "fg_fmod_i"})
_CALL = re.compile(r"(?<![\w.])((?:math\.|np\.)?\w+)\(")

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
    """A lowering rule's operand: the name of a scalar local (a `str`), its `dtype`, for a
    literal its `value` (a Python scalar; None for a variable), and whether it is one value
    for all elements (`zero_d`: a 0-d operand beside full ones, which NumPy's loops see with
    stride 0 and some compute differently, as power does)."""

    def __new__(cls, name: str, dtype, value=None, zero_d: bool = False) -> Operand:
        self = super().__new__(cls, name)
        self.dtype = np.dtype(dtype)
        self.value = None if value is None else np.asarray(value).item()
        self.zero_d = zero_d or value is not None
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
    elif int(v) == -(1 << 63):  # (-9223372036854775808 is the uint64 2**63 negated, in Numba too)
        text = "(-9223372036854775807 - 1)"
    else:
        text = repr(int(v))
    if dtype not in (np.float64, np.int64):
        return f"np.{dtype.name}({text})"
    return f"({text})" if text.startswith("-") else text  # (-2.0): safe beside any operator


def lower_expr(eqn, operands: list[Operand], any_math: bool = False) -> str | None:
    """The scalar expression of `eqn` (an element-wise equation) on `operands`, cast to its
    output dtype; None when its primitive has no lowering for these operands, or (unless
    `any_math`) when MATH leaves the function it computes to NumPy."""
    rule = eqn.primitive.lowering
    if rule is None:
        return None
    expr = rule(*operands, **eqn.params)
    if expr is None:
        return None
    if not any_math and approximated(expr) and math_mode() == "eager":
        return None  # NumPy's function, as eager runs it
    out = eqn.outvars[0].aval.dtype
    if out in _NATURAL and out.kind != "i":
        return expr
    # (integers always: Numba's int() of a uint64 stays a uint64, and a rule's integer
    # arithmetic may compute in another integer type than the output's)
    return f"np.{out.name}({expr})"


def approximated(expr: str) -> bool:
    """Whether `expr` calls a function that a library approximates (not in EXACT_CALLS;
    NumPy's casts, np.float64(...), are exact)."""
    return any(c not in EXACT_CALLS and not c.startswith("np.") for c in _CALL.findall(expr))


@contextlib.contextmanager
def math_as(mode: str) -> Iterator[None]:
    """Lower the programs that jit compiles inside the block with MATH `mode`, whatever MATH
    is (a program is lowered once, on its first call: a caller that wants one mode for a
    jitted function enters the block around each of its calls; fgrad.torch.compile does).

    Args:
        mode: "fused" or "eager" (see MATH).

    Raises:
        FgradValueError: for another mode.
    """
    if mode not in _MATH_MODES:
        raise FgradValueError(f"math_as: mode {mode!r}; expected one of {_MATH_MODES}")
    token = _MATH_HERE.set(mode)
    try:
        yield
    finally:
        _MATH_HERE.reset(token)


def math_mode() -> str:
    """The MATH in effect (math_as's, else MATH), checked: "fused" or "eager"."""
    here = _MATH_HERE.get()
    if here is not None:
        return here
    if MATH not in _MATH_MODES:
        raise FgradValueError(f"FGRAD_JIT_MATH / compile.scalar.MATH is {MATH!r}; expected one of "
                              f"{_MATH_MODES}: 'fused' (kernels compute exp, tanh, pow, ... with the "
                              f"C library or vmath, within a few ulps of eager) or 'eager' (jit "
                              f"leaves them to NumPy, bit-identical to eager)")
    return MATH


def operand(name: str, atom) -> Operand:
    """The Operand called `name` of the jaxpr atom `atom` (a Var or a Literal)."""
    return Operand(name, atom.aval.dtype, atom.val if isinstance(atom, Literal) else None,
                   atom.aval.shape == ())


def lowerable(eqn, dtypes: frozenset, any_math: bool = False) -> bool:
    """Whether `eqn` can be computed element by element with dtypes from `dtypes` (with
    `any_math`: whether it could be, whatever MATH leaves to NumPy; see lower_expr)."""
    if eqn.primitive.lowering is None or len(eqn.outvars) != 1:
        return False
    if eqn.outvars[0].aval.dtype not in dtypes or any(a.aval.dtype not in dtypes for a in eqn.invars):
        return False
    ops = [operand(f"x{i}", a) for i, a in enumerate(eqn.invars)]
    return lower_expr(eqn, ops, any_math) is not None
