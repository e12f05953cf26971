"""Eager and traced evaluation agree.

The same code must give the same values AND dtypes whether it runs eagerly on NumPy arrays
or on values traced by a transform: under grad (vjp's primal output), jvp, jit and vmap
(vmap is compared with a loop over the examples). This file checks

* every public function of fgrad.numpy and fgrad.numpy.linalg (and the r_/c_ index tricks),
  found by walking the modules: how to call each comes from the recipe tables below, by kind
  (unary, binary, reductions) or one list of recipes per function. A public function without
  a recipe fails `test_every_public_function_has_a_recipe`, so a new function is covered as
  soon as it is added: give it a recipe (or, only when calling it cannot work, a SKIP entry
  with the reason). Where NumPy has the function, the eager result is also compared with
  NumPy's;
* every Python operator (+ - * / // % ** @ divmod, unary - + ~, abs, comparisons, & | ^,
  indexing), where "eager" is NumPy itself: `x % 3.0` on a traced x must mean what it means
  on an ndarray; Python scalars beside float32 arrays stay weak (float32 * 2.0 is float32);
* the ndarray-style methods of traced values, and plain NumPy functions applied to traced
  values (numpy.sum(x) calls x.sum(...)), which must work or raise
  TracerArrayConversionError;
* the regression tests of behaviours that once differed (named after the behaviour).

A recipe's function takes the array module first (fgrad.numpy, or numpy for the NumPy
reference) and then the arrays its `args` make; everything else (axes, shapes, Python
scalars) is written into the function, so it stays static under every transform.
"""
from __future__ import annotations

import inspect
import math
import operator
import types
from typing import Any, Callable

import numpy as onp
import pytest
import scipy
import scipy.integrate  # noqa: F401  (scipy.integrate.trapezoid: the reference of fgrad's)
import scipy.special  # noqa: F401  (scipy.special.<name>: the reference of fgrad.scipy.special)
import scipy.stats  # noqa: F401

import fgrad
import fgrad.numpy as fnp
import fgrad.scipy.special as fss
import fgrad.scipy.stats as fst
from fgrad.core.errors import ConcretizationError, TracerArrayConversionError
from fgrad.numpy._index_tricks import AxisConcatenator
from fgrad.tree_util import tree_flatten

F8, F4, I8, I4, B = (onp.dtype(t) for t in ("float64", "float32", "int64", "int32", "bool"))
FLOATS = (F8, F4)
REALS = (F8, F4, I8, I4)
ALL = (F8, F4, I8, I4, B)
INTEGRAL = (I8, I4, B)  # bitwise operations
TRANSFORMS = ("grad", "jvp", "jit", "vmap")


# --- recipes -------------------------------------------------------------------------------

class Arg:
    """How to make one array argument: shape, value range, and a fixed dtype (None: the dtype
    under test). Integers are drawn from [ceil(lo), floor(hi)]; `sign` flips the sign of
    random entries (divisors in [1, 3] become +-[1, 3]: never zero)."""

    def __init__(self, shape: tuple = (2, 3), lo: float = -2.0, hi: float = 2.0, dtype: Any = None,
                 sign: bool = False) -> None:
        self.shape, self.lo, self.hi, self.sign = shape, lo, hi, sign
        self.dtype = None if dtype is None else onp.dtype(dtype)

    def make(self, rng: onp.random.Generator, dtype: onp.dtype) -> onp.ndarray:
        dt = self.dtype or dtype
        if dt.kind == "b":
            return rng.random(self.shape) < 0.5
        if dt.kind in "iu":
            v = rng.integers(math.ceil(self.lo), math.floor(self.hi) + 1, self.shape)
        else:
            v = rng.uniform(self.lo, self.hi, self.shape)
        if self.sign:
            v = v * rng.choice([-1, 1], self.shape)
        return onp.asarray(v).astype(dt)


class Distinct(Arg):
    """`k` distinct integer indices below `n` (int64): index arrays without repeats, whose
    updates do not depend on which of two writes to one position wins (see
    test_at_set_repeated_traced_indices_agree_with_eager)."""

    def __init__(self, k: int, n: int) -> None:
        super().__init__((k,), 0, n - 1, dtype=I8)
        self.n = n

    def make(self, rng: onp.random.Generator, dtype: onp.dtype) -> onp.ndarray:
        return rng.choice(self.n, self.shape[0], replace=False).astype(onp.int64)


class Recipe:
    """One way to call a function. `fn(M, *arrays)` with M = fgrad.numpy (or numpy);
    `concrete`: the result's shape depends on the values, so under jit and vmap the call must
    raise ConcretizationError (grad and jvp keep values concrete and must agree); `numpy`:
    also compare the eager result with the same recipe run on numpy (None: when numpy has
    the function of that name); `raises`: the call is an error eagerly (for every dtype), and
    must be one under the transforms too."""

    def __init__(self, label: str, fn: Callable, args: tuple, dtypes: tuple, concrete: bool = False,
                 numpy: bool | None = None, raises: bool = False) -> None:
        self.label, self.fn, self.args, self.dtypes = label, fn, args, dtypes
        self.concrete, self.numpy, self.raises = concrete, numpy, raises

    def make_args(self, dtype: onp.dtype, seed: int = 0) -> tuple:
        rng = onp.random.default_rng(seed)
        return tuple(a.make(rng, dtype) for a in self.args)


RECIPES: dict[str, list[Recipe]] = {}


def recipe(name: str, label: str, fn: Callable, *args: Arg, dtypes: tuple = FLOATS, **kw: Any) -> None:
    """Register a recipe for public function `name` (dotted for submodules: 'linalg.norm')."""
    RECIPES.setdefault(name, []).append(Recipe(f"{name}[{label}]", fn, args, dtypes, **kw))


def by_name(name: str) -> Callable:
    """M.<name> (dotted names reach into submodules), for recipes that only vary arguments.
    "scipy." names reach fgrad.scipy when M is fgrad.numpy, and SciPy itself when it is numpy."""
    def get(M):
        if name.startswith("scipy."):
            M = fgrad if M is fnp else {"scipy": scipy}
            M = types.SimpleNamespace(**M) if isinstance(M, dict) else M
        for part in name.split("."):
            M = getattr(M, part)
        return M
    return get


X = Arg()                   # (2, 3) in [-2, 2]
X3 = Arg((2, 3, 4))
V = Arg((3,))
S0 = Arg(())                # 0-d

# --- unary elementwise: name -> (lo, hi), a domain away from singularities
_UNARY_FLOAT = {
    "sqrt": (0.5, 2), "cbrt": (-2, 2), "exp": (-2, 2), "exp2": (-2, 2), "expm1": (-2, 2),
    "log": (0.5, 3), "log2": (0.5, 3), "log10": (0.5, 3), "log1p": (-0.5, 2), "sin": (-3, 3),
    "cos": (-3, 3), "tan": (-1, 1), "arcsin": (-0.8, 0.8), "arccos": (-0.8, 0.8),
    "arctan": (-2, 2), "sinh": (-2, 2), "cosh": (-2, 2), "tanh": (-2, 2), "arcsinh": (-2, 2),
    "arccosh": (1.2, 3), "arctanh": (-0.8, 0.8), "reciprocal": (0.5, 2),
}
_UNARY_ANY = ["negative", "positive", "abs", "absolute", "sign", "floor", "ceil", "round", "around",
              "square", "isnan", "isinf", "isfinite", "logical_not"]
for _n, (_lo, _hi) in _UNARY_FLOAT.items():
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, f=_f: f(M)(x), Arg(lo=_lo, hi=_hi), dtypes=REALS)
    recipe(_n, "0d", lambda M, x, f=_f: f(M)(x), Arg((), _lo, _hi))
for _n in _UNARY_ANY:
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, f=_f: f(M)(x), Arg(lo=-3, hi=3), dtypes=ALL)
    recipe(_n, "0d", lambda M, x, f=_f: f(M)(x), Arg((), -3, 3))
for _n in ("invert", "bitwise_not"):
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, f=_f: f(M)(x), Arg(lo=-3, hi=3), dtypes=INTEGRAL)
recipe("round", "decimals", lambda M, x: M.round(x, 1), X)
recipe("around", "decimals", lambda M, x: M.around(x, -1), Arg(lo=-30, hi=30), dtypes=REALS)

# --- binary elementwise: name -> (x, y, dtypes, Python scalars tried in each position)
_ARITH = (Arg(lo=-3, hi=3), Arg(lo=-3, hi=3))
_DIV = (Arg(lo=-5, hi=5), Arg(lo=1, hi=3, sign=True))   # divisors never zero
_BINARY = {
    "add": (*_ARITH, ALL, (2.5, 2)), "subtract": (*_ARITH, ALL, (2.5, 2)),
    "multiply": (*_ARITH, ALL, (2.5, 2)), "divide": (*_DIV, ALL, (2.5, 2)),
    "true_divide": (*_DIV, REALS, (2.5, 2)), "floor_divide": (*_DIV, ALL, (2.5, 2, -2)),
    "fmod": (*_DIV, ALL, (2.5, 2, -2)), "remainder": (*_DIV, ALL, (2.5, 2, -2)),
    "mod": (*_DIV, REALS, (2.5, -2)), "divmod": (*_DIV, ALL, (2.5, -2)),
    "power": (Arg(lo=0.5, hi=2), Arg(lo=0, hi=3), ALL, (2, 3, 0.5)),
    "maximum": (*_ARITH, ALL, (0.5, 1)), "minimum": (*_ARITH, ALL, (0.5, 1)),
    "arctan2": (*_ARITH, REALS, (0.5, -1)), "logaddexp": (*_ARITH, REALS, (0.5, 1)),
    "logaddexp2": (*_ARITH, REALS, (0.5, 1)),
    "less": (*_ARITH, ALL, (0.5, 1)), "less_equal": (*_ARITH, ALL, (0.5, 1)),
    "greater": (*_ARITH, ALL, (0.5, 1)), "greater_equal": (*_ARITH, ALL, (0.5, 1)),
    "equal": (*_ARITH, ALL, (1.0, 1)), "not_equal": (*_ARITH, ALL, (1.0, 1)),
    "logical_and": (*_ARITH, ALL, (0.0, 1)), "logical_or": (*_ARITH, ALL, (0.0, 1)),
    "logical_xor": (*_ARITH, ALL, (0.0, 1)),
    "bitwise_and": (*_ARITH, INTEGRAL, (3, True)), "bitwise_or": (*_ARITH, INTEGRAL, (3, True)),
    "bitwise_xor": (*_ARITH, INTEGRAL, (3, True)),
}
for _n, (_x, _y, _dts, _scalars) in _BINARY.items():
    _f = by_name(_n)
    recipe(_n, "same_shape", lambda M, x, y, f=_f: f(M)(x, y), _x, _y, dtypes=_dts)
    recipe(_n, "broadcast", lambda M, x, y, f=_f: f(M)(x, y), _x, Arg((3,), _y.lo, _y.hi, sign=_y.sign),
           dtypes=_dts)
    recipe(_n, "0d", lambda M, x, y, f=_f: f(M)(x, y), Arg((), _x.lo, _x.hi),
           Arg((), _y.lo, _y.hi, sign=_y.sign), dtypes=_dts[:2])
    for _other in (I8, F4) if _dts != INTEGRAL else (I8,):  # mixed: the dtype under test and another
        recipe(_n, f"with_{_other}", lambda M, x, y, f=_f: f(M)(x, y), _x,
               Arg(lo=_y.lo, hi=_y.hi, dtype=_other, sign=_y.sign), dtypes=_dts)
    for _s in _scalars:  # Python scalars are weak: float32 with 2.5 stays float32
        recipe(_n, f"x,{_s!r}", lambda M, x, f=_f, s=_s: f(M)(x, s), _x, dtypes=_dts)
        if _n not in ("power",) or _s != 0.5:
            recipe(_n, f"{_s!r},y", lambda M, y, f=_f, s=_s: f(M)(s, y), _y, dtypes=_dts)
recipe("power", "negative_int_exponent", lambda M, x: M.power(x, -2), Arg(lo=1, hi=3), dtypes=ALL)

# --- reductions
_REDUCTIONS = ["sum", "mean", "var", "std", "max", "min", "amax", "amin", "prod", "any", "all"]
for _n in _REDUCTIONS:
    _f = by_name(_n)
    recipe(_n, "all_axes", lambda M, x, f=_f: f(M)(x), X, dtypes=ALL)
    recipe(_n, "axis=0", lambda M, x, f=_f: f(M)(x, axis=0), X3, dtypes=ALL)
    recipe(_n, "axis=-1,keepdims", lambda M, x, f=_f: f(M)(x, axis=-1, keepdims=True), X, dtypes=ALL)
    recipe(_n, "axis=(0,2)", lambda M, x, f=_f: f(M)(x, axis=(0, 2)), X3, dtypes=ALL)
    recipe(_n, "0d", lambda M, x, f=_f: f(M)(x), S0)
_MASK = onp.array([True, False, True])
for _n in ("sum", "prod", "mean", "any", "all", "var", "std"):
    _f = by_name(_n)
    recipe(_n, "where", lambda M, x, f=_f: f(M)(x, axis=1, where=_MASK), X, dtypes=REALS)
for _n in ("sum", "prod", "max", "min"):
    _f = by_name(_n)
    recipe(_n, "initial", lambda M, x, f=_f: f(M)(x, axis=0, initial=1), X, dtypes=REALS)
    if _n in ("max", "min"):
        recipe(_n, "where,initial", lambda M, x, f=_f: f(M)(x, axis=1, where=_MASK, initial=0.5), X)
for _n in ("var", "std"):
    _f = by_name(_n)
    recipe(_n, "ddof", lambda M, x, f=_f: f(M)(x, axis=1, ddof=1), X, dtypes=REALS)
    recipe(_n, "dtype", lambda M, x, f=_f: f(M)(x, dtype=onp.float32), X)
recipe("sum", "dtype", lambda M, x: M.sum(x, dtype=onp.float32), X, dtypes=REALS)
recipe("mean", "dtype", lambda M, x: M.mean(x, axis=0, dtype=onp.float32), X, dtypes=REALS)
for _n in ("argmax", "argmin"):
    _f = by_name(_n)
    recipe(_n, "flat", lambda M, x, f=_f: f(M)(x), X, dtypes=ALL)
    recipe(_n, "axis", lambda M, x, f=_f: f(M)(x, axis=1), X3, dtypes=ALL)
    recipe(_n, "keepdims", lambda M, x, f=_f: f(M)(x, axis=0, keepdims=True), X)
recipe("cumsum", "flat", lambda M, x: M.cumsum(x), X, dtypes=ALL)
for _n in ("sort", "argsort"):
    _f = by_name(_n)
    recipe(_n, "last_axis", lambda M, x, f=_f: f(M)(x), X3, dtypes=ALL)
    recipe(_n, "axis0", lambda M, x, f=_f: f(M)(x, axis=0), X3, dtypes=ALL)
    recipe(_n, "flat", lambda M, x, f=_f: f(M)(x, axis=None), X3)
    recipe(_n, "0d", lambda M, x, f=_f: f(M)(x), S0)
recipe("cumsum", "axis", lambda M, x: M.cumsum(x, axis=1), X3, dtypes=ALL)
recipe("cumsum", "dtype", lambda M, x: M.cumsum(x, axis=0, dtype=onp.float32), X, dtypes=REALS)

# --- elementwise with extra arguments
recipe("where", "traced_condition", lambda M, x, y: M.where(x > 0, x, y), X, X, dtypes=ALL)
recipe("where", "scalar_branch", lambda M, x: M.where(x > 0, x, 0.5), X, dtypes=ALL)
recipe("where", "broadcast", lambda M, x, y: M.where(x > 0, x, y), X, V, dtypes=REALS)
recipe("where", "one_argument", lambda M, x: M.where(x > 0), X, dtypes=REALS, concrete=True)
recipe("clip", "scalars", lambda M, x: M.clip(x, -1, 1), X, dtypes=REALS)
recipe("clip", "arrays", lambda M, x, lo, hi: M.clip(x, lo, hi), X, Arg((3,), -2, -1), Arg((), 1, 2),
       dtypes=REALS)
recipe("clip", "upper_only", lambda M, x: M.clip(x, None, 0.5), X)

# --- shapes
recipe("reshape", "tuple", lambda M, x: M.reshape(x, (3, 2)), X, dtypes=ALL)
recipe("reshape", "-1", lambda M, x: M.reshape(x, (4, -1)), X3)
recipe("ravel", "2d", lambda M, x: M.ravel(x), X, dtypes=ALL)
recipe("flatten", "2d", lambda M, x: M.flatten(x), X, numpy=False)  # numpy has only the method
recipe("transpose", "reverse", lambda M, x: M.transpose(x), X3, dtypes=ALL)
recipe("transpose", "axes", lambda M, x: M.transpose(x, (1, 2, 0)), X3)
recipe("swapaxes", "0,2", lambda M, x: M.swapaxes(x, 0, 2), X3)
recipe("moveaxis", "0,-1", lambda M, x: M.moveaxis(x, 0, -1), X3)
recipe("expand_dims", "1", lambda M, x: M.expand_dims(x, 1), X, dtypes=ALL)
recipe("expand_dims", "(0,3)", lambda M, x: M.expand_dims(x, (0, 3)), X)
recipe("squeeze", "all", lambda M, x: M.squeeze(x), Arg((1, 3, 1)), dtypes=ALL)
recipe("squeeze", "axis", lambda M, x: M.squeeze(x, axis=0), Arg((1, 3, 1)))
for _n in ("atleast_1d", "atleast_2d", "atleast_3d"):
    _f = by_name(_n)
    recipe(_n, "0d", lambda M, x, f=_f: f(M)(x), S0)
    recipe(_n, "1d", lambda M, x, f=_f: f(M)(x), V, dtypes=ALL)
    recipe(_n, "two", lambda M, x, y, f=_f: f(M)(x, y), X, V)
for _n in ("shape", "ndim", "size"):
    _f = by_name(_n)
    recipe(_n, "3d", lambda M, x, f=_f: f(M)(x), X3, dtypes=ALL)
recipe("astype", "float32", lambda M, x: M.astype(x, onp.float32), X, dtypes=ALL)
recipe("astype", "int32", lambda M, x: M.astype(x, onp.int32), Arg(lo=-5, hi=5), dtypes=ALL)
recipe("astype", "bool", lambda M, x: M.astype(x, bool), X, dtypes=ALL)
recipe("broadcast_to", "row", lambda M, x: M.broadcast_to(x, (2, 3)), V, dtypes=ALL)
recipe("broadcast_arrays", "two", lambda M, x, y: M.broadcast_arrays(x, y), Arg((2, 1)), V, dtypes=ALL)
recipe("concatenate", "axis0", lambda M, x, y: M.concatenate([x, y]), X, X, dtypes=ALL)
recipe("concatenate", "axis1", lambda M, x, y: M.concatenate((x, y), axis=1), X, Arg((2, 2)))
recipe("concatenate", "None", lambda M, x, y: M.concatenate([x, y], axis=None), X, V)
recipe("concatenate", "mixed_dtypes", lambda M, x, y: M.concatenate([x, y]), X, Arg(dtype=I4), dtypes=ALL)
recipe("stack", "axis0", lambda M, x, y: M.stack([x, y]), X, X, dtypes=ALL)
recipe("stack", "axis-1", lambda M, x, y: M.stack((x, y), axis=-1), X, X)
for _n in ("hstack", "vstack", "dstack", "column_stack"):
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, y, f=_f: f(M)([x, y]), X, X, dtypes=ALL)
    recipe(_n, "1d", lambda M, x, y, f=_f: f(M)((x, y)), V, V)
recipe("array_split", "3", lambda M, x: M.array_split(x, 3), Arg((5,)), dtypes=ALL)
recipe("array_split", "axis", lambda M, x: M.array_split(x, [1], axis=1), X)
recipe("split", "3", lambda M, x: M.split(x, 3), Arg((6,)), dtypes=ALL)
recipe("split", "indices", lambda M, x: M.split(x, [1, 4], axis=1), Arg((2, 6)))
recipe("hsplit", "2", lambda M, x: M.hsplit(x, 2), Arg((2, 4)))
recipe("vsplit", "2", lambda M, x: M.vsplit(x, 2), Arg((4, 3)))
recipe("dsplit", "2", lambda M, x: M.dsplit(x, 2), X3)
recipe("tile", "2d", lambda M, x: M.tile(x, (2, 1)), X, dtypes=ALL)
recipe("tile", "more_dims", lambda M, x: M.tile(x, (2, 1, 2)), V)
recipe("repeat", "flat", lambda M, x: M.repeat(x, 2), X, dtypes=ALL)
recipe("repeat", "counts", lambda M, x: M.repeat(x, [1, 2], axis=0), X)
recipe("flip", "all", lambda M, x: M.flip(x), X, dtypes=ALL)
recipe("flip", "axis", lambda M, x: M.flip(x, 1), X3)
recipe("fliplr", "2d", lambda M, x: M.fliplr(x), X)
recipe("flipud", "2d", lambda M, x: M.flipud(x), X)
recipe("rot90", "1", lambda M, x: M.rot90(x), X, dtypes=ALL)
recipe("rot90", "3,axes", lambda M, x: M.rot90(x, 3, axes=(1, 2)), X3)
recipe("pad", "constant", lambda M, x: M.pad(x, 1), X, dtypes=ALL)
recipe("pad", "constant_values", lambda M, x: M.pad(x, ((1, 0), (0, 2)), constant_values=1.5), X,
       dtypes=REALS)
recipe("pad", "reflect", lambda M, x: M.pad(x, 1, mode="reflect"), X)
recipe("pad", "edge", lambda M, x: M.pad(x, (0, 2), mode="edge"), X)
recipe("roll", "flat", lambda M, x: M.roll(x, 1), X, dtypes=ALL)
recipe("roll", "axis", lambda M, x: M.roll(x, -1, axis=1), X)
recipe("meshgrid", "xy", lambda M, x, y: M.meshgrid(x, y), V, Arg((2,)), dtypes=ALL)
recipe("meshgrid", "ij", lambda M, x, y: M.meshgrid(x, y, indexing="ij"), V, Arg((2,)))

# --- indexing (getitem/at_* are fgrad's own API; x[...] itself is in the operator tests)
_IDX = Distinct(2, 3)
recipe("getitem", "int", lambda M, x: M.getitem(x, 1), X, dtypes=ALL, numpy=False)
recipe("getitem", "slices", lambda M, x: M.getitem(x, (slice(None, None, -1), slice(1, None))), X,
       numpy=False)
recipe("getitem", "none_ellipsis", lambda M, x: M.getitem(x, (None, Ellipsis, 0)), X3, numpy=False)
recipe("getitem", "int_array", lambda M, x, i: M.getitem(x, (slice(None), i)), X, _IDX, dtypes=ALL,
       numpy=False)
recipe("getitem", "mask", lambda M, x: M.getitem(x, x > 0), X, concrete=True, numpy=False)
recipe("at_set", "int", lambda M, x, v: M.at_set(x, 0, v), X, V, dtypes=ALL, numpy=False)
recipe("at_set", "array", lambda M, x, v, i: M.at_set(x, (slice(None), i), v), X, Arg((2, 2)), _IDX,
       numpy=False)
recipe("at_add", "repeated", lambda M, x, v: M.at_add(x, ([0, 0], [1, 1]), v), X, Arg((2,)), dtypes=REALS,
       numpy=False)
recipe("at_mul", "repeated", lambda M, x, v: M.at_mul(x, ([0, 0], [1, 1]), v), X, Arg((2,)), dtypes=REALS,
       numpy=False)
recipe("at_min", "slice", lambda M, x, v: M.at_min(x, (slice(None), 1), v), X, Arg((2,)), dtypes=REALS,
       numpy=False)
recipe("at_max", "repeated", lambda M, x, v: M.at_max(x, [1, 1], v), X, Arg((2, 3)), dtypes=REALS,
       numpy=False)
recipe("at", "mul", lambda M, x, v: M.at(x)[1].mul(v), X, V, dtypes=REALS, numpy=False)
recipe("at_get", "slice", lambda M, x: M.at_get(x, (slice(None), 1)), X, numpy=False)
recipe("at", "set", lambda M, x, v: M.at(x)[1, 2].set(v), X, S0, dtypes=REALS, numpy=False)
recipe("at", "add", lambda M, x, v: M.at(x)[0].add(v), X, V, numpy=False)
recipe("take", "flat", lambda M, x: M.take(x, [0, 5, 2]), X, dtypes=ALL)
recipe("take", "axis", lambda M, x, i: M.take(x, i, axis=1), X, _IDX)
recipe("take", "wrap", lambda M, x: M.take(x, [-1, 4], axis=1, mode="wrap"), X)
recipe("take_along_axis", "axis1", lambda M, x, i: M.take_along_axis(x, i, axis=1), X,
       Arg((2, 2), 0, 2, dtype=I8), dtypes=ALL)
for _n in ("nonzero", "flatnonzero", "argwhere"):
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, f=_f: f(M)(x > 0), X, concrete=True)
recipe("nonzero", "sized", lambda M, x: M.nonzero(x > 0, size=4, fill_value=-1), X, numpy=False)  # (JAX's size=)
recipe("diagonal", "2d", lambda M, x: M.diagonal(x), X, dtypes=ALL)
recipe("diagonal", "offset,axes", lambda M, x: M.diagonal(x, 1, 1, 2), X3)
recipe("diag", "vector", lambda M, x: M.diag(x, -1), V, dtypes=ALL)
recipe("diag", "matrix", lambda M, x: M.diag(x, 1), X)
recipe("diagflat", "2d", lambda M, x: M.diagflat(x), Arg((2, 2)), dtypes=ALL)
recipe("trace", "2d", lambda M, x: M.trace(x), X, dtypes=ALL)
recipe("trace", "3d", lambda M, x: M.trace(x, 1, 1, 2), X3)
for _n in ("tril", "triu"):
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, f=_f: f(M)(x), X, dtypes=ALL)
    recipe(_n, "k", lambda M, x, f=_f: f(M)(x, -1), X3)

# --- creation (traced only where an argument is)
recipe("zeros", "shape", lambda M: M.zeros((2, 3)), dtypes=(F8,))
recipe("zeros", "dtype", lambda M: M.zeros(3, dtype=onp.int32), dtypes=(F8,))
recipe("ones", "shape", lambda M: M.ones((2, 1)), dtypes=(F8,))
recipe("ones", "dtype", lambda M: M.ones(2, onp.float32), dtypes=(F8,))
recipe("empty", "shape", lambda M: M.empty((2, 3)), dtypes=(F8,), numpy=False)  # numpy's is garbage
recipe("full", "traced_fill", lambda M, v: M.full((2, 3), v), S0, dtypes=ALL)
recipe("full", "array_fill", lambda M, v: M.full((2, 3), v), V)
recipe("full", "dtype", lambda M, v: M.full((2,), v, dtype=onp.float32), S0, dtypes=REALS)
recipe("full", "constant", lambda M: M.full((2,), 2.5), dtypes=(F8,))
recipe("eye", "square", lambda M: M.eye(3), dtypes=(F8,))
recipe("eye", "k", lambda M: M.eye(3, 4, k=1, dtype=onp.int32), dtypes=(F8,))
recipe("identity", "3", lambda M: M.identity(3), dtypes=(F8,))
recipe("tri", "k", lambda M: M.tri(3, 4, -1), dtypes=(F8,))
recipe("arange", "stop", lambda M: M.arange(5), dtypes=(F8,))
recipe("arange", "float_step", lambda M: M.arange(1, 4, 0.5), dtypes=(F8,))
recipe("arange", "dtype", lambda M: M.arange(3, dtype=onp.float32), dtypes=(F8,))
recipe("linspace", "traced_bounds", lambda M, a, b: M.linspace(a, b, 5), S0, Arg((), 3, 4))
recipe("linspace", "array_bounds", lambda M, a, b: M.linspace(a, b, 4, axis=1), V, V)
recipe("linspace", "no_endpoint", lambda M, a: M.linspace(a, 2.0, 4, endpoint=False), S0, dtypes=REALS)
recipe("linspace", "constant", lambda M: M.linspace(0, 1, 5), dtypes=(F8,))
for _n in ("zeros_like", "ones_like", "empty_like"):
    _f = by_name(_n)
    recipe(_n, "like", lambda M, x, f=_f: f(M)(x), X, dtypes=ALL, numpy=_n != "empty_like")
    recipe(_n, "dtype", lambda M, x, f=_f: f(M)(x, dtype=onp.int32), X, numpy=_n != "empty_like")
recipe("full_like", "scalar", lambda M, x: M.full_like(x, 2.5), X, dtypes=ALL)
recipe("full_like", "traced_fill", lambda M, x, v: M.full_like(x, v), X, S0, dtypes=REALS)
for _n in ("asarray", "array"):
    _f = by_name(_n)
    recipe(_n, "array", lambda M, x, f=_f: f(M)(x), X, dtypes=ALL)
    recipe(_n, "dtype", lambda M, x, f=_f: f(M)(x, dtype=onp.float32), X, dtypes=ALL)
    recipe(_n, "list", lambda M, x, y, f=_f: f(M)([x, y]), X, X, dtypes=ALL)
    recipe(_n, "tuple_with_numbers", lambda M, x, f=_f: f(M)((x, 2.0, 1)), S0, dtypes=ALL)
    recipe(_n, "nested", lambda M, x, y, f=_f: f(M)([[x, y], [y, 0.5]]), S0, S0, dtypes=REALS)
    recipe(_n, "rows", lambda M, x, f=_f: f(M)([x, [1.0, 2.0, 3.0]]), V, dtypes=REALS)
    recipe(_n, "list_dtype", lambda M, x, y, f=_f: f(M)([x, y], dtype=onp.float32), V, V, dtypes=REALS)
recipe("array", "ndmin", lambda M, x: M.array(x, ndmin=3), V)
recipe("r_", "arrays_scalars", lambda M, x, y: M.r_[x, 0, y, 2.5], V, Arg((2,)), dtypes=ALL)
recipe("r_", "slices", lambda M, x: M.r_[x, 0:3, -1:1:4j], V, dtypes=REALS)
recipe("r_", "rows", lambda M, x, y: M.r_["0,2", x, y], V, V, dtypes=REALS)
recipe("r_", "axis1", lambda M, x, y: M.r_["1,2,0", x, y], V, V)
recipe("r_", "list", lambda M, x, y: M.r_[[x, y], 1.0], S0, S0)
recipe("c_", "columns", lambda M, x, y: M.c_[x, y], V, V, dtypes=ALL)
recipe("c_", "2d_and_scalars", lambda M, x, y: M.c_[x, 0, 0, y], Arg((1, 3)), Arg((1, 3)), dtypes=REALS)

# --- products and linear algebra (matrices built well conditioned from the arguments)
_SPD = lambda M, m: m @ M.swapaxes(m, -1, -2) + 3.0 * M.eye(m.shape[-1])  # noqa: E731
recipe("dot", "matrices", lambda M, a, b: M.dot(a, b), X, Arg((3, 2)), dtypes=REALS)
recipe("dot", "vectors", lambda M, a, b: M.dot(a, b), V, V, dtypes=REALS)
recipe("dot", "scalar", lambda M, a: M.dot(a, 2.5), X)
recipe("dot", "nd", lambda M, a, b: M.dot(a, b), X3, Arg((4, 2)))
recipe("matmul", "matrices", lambda M, a, b: M.matmul(a, b), X, Arg((3, 2)), dtypes=REALS)
recipe("matmul", "batched", lambda M, a, b: M.matmul(a, b), X3, Arg((4,)))
recipe("vdot", "2d", lambda M, a, b: M.vdot(a, b), X, X, dtypes=REALS)
recipe("inner", "2d", lambda M, a, b: M.inner(a, b), X, Arg((4, 3)), dtypes=REALS)
recipe("outer", "vectors", lambda M, a, b: M.outer(a, b), V, Arg((2,)), dtypes=REALS)
recipe("tensordot", "axes1", lambda M, a, b: M.tensordot(a, b, axes=1), X, Arg((3, 2)), dtypes=REALS)
recipe("tensordot", "axes_pairs", lambda M, a, b: M.tensordot(a, b, axes=([0, 1], [1, 0])), X, Arg((3, 2)))
recipe("einsum", "matmul", lambda M, a, b: M.einsum("ij,jk->ik", a, b), X, Arg((3, 2)), dtypes=REALS)
recipe("einsum", "trace_sum", lambda M, a: M.einsum("iij->j", a), Arg((2, 2, 3)))
recipe("linalg.norm", "vector", lambda M, x: M.linalg.norm(x), V)
recipe("linalg.norm", "axis", lambda M, x: M.linalg.norm(x, axis=1), X)
recipe("linalg.norm", "ord1", lambda M, x: M.linalg.norm(x, ord=1), V)
recipe("linalg.norm", "fro", lambda M, x: M.linalg.norm(x, "fro"), X)
recipe("linalg.norm", "int", lambda M, x: M.linalg.norm(x), V, dtypes=(I8,))
recipe("linalg.inv", "spd", lambda M, m: M.linalg.inv(_SPD(M, m)), Arg((3, 3)))
recipe("linalg.solve", "spd", lambda M, m, b: M.linalg.solve(_SPD(M, m), b), Arg((3, 3)), V)
recipe("linalg.det", "spd", lambda M, m: M.linalg.det(_SPD(M, m)), Arg((3, 3)))
recipe("linalg.slogdet", "spd", lambda M, m: tuple(M.linalg.slogdet(_SPD(M, m))), Arg((3, 3)))
recipe("linalg.cholesky", "spd", lambda M, m: M.linalg.cholesky(_SPD(M, m)), Arg((3, 3)))
recipe("linalg.matrix_transpose", "3d", lambda M, x: M.linalg.matrix_transpose(x), X3, dtypes=ALL)
recipe("linalg.matmul", "matrices", lambda M, a, b: M.linalg.matmul(a, b), X, Arg((3, 2)), dtypes=REALS)
recipe("linalg.outer", "vectors", lambda M, a, b: M.linalg.outer(a, b), V, Arg((2,)))
recipe("linalg.tensordot", "axes1", lambda M, a, b: M.linalg.tensordot(a, b, axes=1), X, Arg((3, 2)))
_SEP = Arg((3, 2), lo=0.5, hi=1.5)  # tall, full column rank
recipe("linalg.eigh", "spd", lambda M, m: tuple(M.linalg.eigh(_SPD(M, m))), Arg((2, 3, 3)))
recipe("linalg.eigvalsh", "spd", lambda M, m: M.linalg.eigvalsh(_SPD(M, m)), Arg((3, 3)))
recipe("linalg.svd", "full", lambda M, x: tuple(M.linalg.svd(x)), Arg((3, 2)))
recipe("linalg.svd", "values", lambda M, x: M.linalg.svd(x, compute_uv=False), X3)
recipe("linalg.svdvals", "matrix", lambda M, x: M.linalg.svdvals(x), X)
recipe("linalg.qr", "reduced", lambda M, x: tuple(M.linalg.qr(x)), Arg((3, 2)))
recipe("linalg.qr", "r", lambda M, x: M.linalg.qr(x, "r"), X)
recipe("linalg.pinv", "matrix", lambda M, x: M.linalg.pinv(x), X)
recipe("linalg.lstsq", "tall", lambda M, a, b: M.linalg.lstsq(a + M.eye(3, 2), b), _SEP, V)
recipe("linalg.matrix_power", "cube", lambda M, m: M.linalg.matrix_power(m, 3), Arg((3, 3)), dtypes=REALS)
recipe("linalg.matrix_power", "inverse", lambda M, m: M.linalg.matrix_power(_SPD(M, m), -2), Arg((3, 3)))
recipe("linalg.matrix_rank", "matrix", lambda M, x: M.linalg.matrix_rank(x), X3, dtypes=REALS)
recipe("linalg.cond", "spd", lambda M, m: M.linalg.cond(_SPD(M, m)), Arg((3, 3)))
recipe("linalg.multi_dot", "chain", lambda M, a, b, c: M.linalg.multi_dot([a, b, c]), V, Arg((3, 4)),
       Arg((4, 2)))
recipe("linalg.vector_norm", "axes", lambda M, x: M.linalg.vector_norm(x, axis=(0, 2)), X3)
recipe("linalg.matrix_norm", "nuc", lambda M, x: M.linalg.matrix_norm(x, ord="nuc"), X3)
recipe("linalg.trace", "offset", lambda M, x: M.linalg.trace(x, offset=1), X3, dtypes=REALS)
recipe("linalg.diagonal", "3d", lambda M, x: M.linalg.diagonal(x), X3, dtypes=ALL)
recipe("linalg.cross", "vectors", lambda M, a, b: M.linalg.cross(a, b), X, V)
recipe("linalg.vecdot", "rows", lambda M, a, b: M.linalg.vecdot(a, b), X, V, dtypes=REALS)
recipe("linalg.tensorinv", "spd", lambda M, m: M.linalg.tensorinv(M.reshape(_SPD(M, m), (4, 2, 2)), 1),
       Arg((4, 4)))
recipe("linalg.tensorsolve", "spd", lambda M, m, b: M.linalg.tensorsolve(M.reshape(_SPD(M, m), (2, 2, 4)), b),
       Arg((4, 4)), Arg((2, 2)))
recipe("real", "real", lambda M, x: M.real(x), X, dtypes=ALL)
recipe("imag", "real", lambda M, x: M.imag(x), X, dtypes=ALL)
recipe("conj", "real", lambda M, x: M.conj(x), X, dtypes=ALL)
recipe("conjugate", "real", lambda M, x: M.conjugate(x), X, dtypes=ALL)
recipe("fft.fftshift", "all", lambda M, x: M.fft.fftshift(x), X3)
recipe("fft.ifftshift", "axis", lambda M, x: M.fft.ifftshift(x, axes=1), X3, dtypes=ALL)
# the transforms (complex results: their derivatives are tests/ops/test_fft.py's and test_complex.py's)
recipe("fft.fft", "1d", lambda M, x: M.fft.fft(x), X)
recipe("fft.ifft", "n", lambda M, x: M.fft.ifft(x, n=4, norm="ortho"), X)
recipe("fft.fft2", "2d", lambda M, x: M.fft.fft2(x), X3)
recipe("fft.ifft2", "s", lambda M, x: M.fft.ifft2(x, s=(3, 3)), X3)
recipe("fft.fftn", "axes", lambda M, x: M.fft.fftn(x, axes=(0, 2)), X3)
recipe("fft.ifftn", "all", lambda M, x: M.fft.ifftn(x, norm="forward"), X3)
recipe("fft.rfft", "1d", lambda M, x: M.fft.rfft(x), X)
recipe("fft.irfft", "n", lambda M, x: M.fft.irfft(x, n=5), X)
recipe("fft.rfft2", "2d", lambda M, x: M.fft.rfft2(x), X3)
recipe("fft.irfft2", "2d", lambda M, x: M.fft.irfft2(x), X3)
recipe("fft.rfftn", "all", lambda M, x: M.fft.rfftn(x, norm="ortho"), X3)
recipe("fft.irfftn", "s", lambda M, x: M.fft.irfftn(x, s=(3, 4), axes=(1, 2)), X3)
recipe("fft.hfft", "1d", lambda M, x: M.fft.hfft(x), X)
recipe("fft.ihfft", "1d", lambda M, x: M.fft.ihfft(x), X)
# scipy.fft's Hermitian transforms over several axes (NumPy has none: parity under the transforms only)
recipe("fft.hfftn", "s", lambda M, x: M.fft.hfftn(x, s=(3, 4), axes=(1, 2)), X3)
recipe("fft.ihfftn", "all", lambda M, x: M.fft.ihfftn(x, norm="ortho"), X3)
recipe("fft.hfft2", "2d", lambda M, x: M.fft.hfft2(x), X3)
recipe("fft.ihfft2", "2d", lambda M, x: M.fft.ihfft2(x), X3)
recipe("linalg.eig", "general", lambda M, m: tuple(M.linalg.eig(m)), Arg((3, 3)))
recipe("linalg.eigvals", "general", lambda M, m: M.linalg.eigvals(m), Arg((3, 3)))
recipe("fft.fftfreq", "spacing", lambda M: M.fft.fftfreq(5, 0.1))
recipe("fft.rfftfreq", "spacing", lambda M: M.fft.rfftfreq(6, 0.5))

# --- cumulative products, differences, counting, order statistics, pair products
_COUNTS = Arg((7,), 0, 4, dtype=I8)
recipe("cumprod", "flat", lambda M, x: M.cumprod(x), X, dtypes=ALL)
recipe("cumprod", "axis", lambda M, x: M.cumprod(x, axis=2), X3, dtypes=REALS)
recipe("cumprod", "dtype", lambda M, x: M.cumprod(x, axis=0, dtype=onp.float32), X)
recipe("diff", "last", lambda M, x: M.diff(x), X3, dtypes=ALL)
recipe("diff", "n2_axis0", lambda M, x: M.diff(x, 2, axis=0), Arg((4, 3)), dtypes=REALS)
recipe("diff", "prepend_append", lambda M, x, a: M.diff(x, axis=1, prepend=0.5, append=a), X, Arg((2, 1)))
recipe("unique", "flat", lambda M, x: M.unique(x), Arg((3, 4), -2, 2), dtypes=ALL, concrete=True)
recipe("unique", "sized", lambda M, x: M.unique(x, size=5, fill_value=0, return_counts=True), Arg((3, 4), -2, 2),
       dtypes=REALS, numpy=False)  # (JAX's size=: stages)
recipe("unique", "all_returns", lambda M, x: M.unique(x, True, True, True), Arg((3, 4), -2, 2), dtypes=REALS,
       concrete=True)
recipe("unique", "axis", lambda M, x: M.unique(M.concatenate([x, x]), return_inverse=True, axis=0), X,
       concrete=True)
recipe("bincount", "counts", lambda M, i: M.bincount(i, minlength=6), _COUNTS, concrete=True)
recipe("bincount", "weights", lambda M, w, i: M.bincount(i, w), Arg((7,)), _COUNTS, concrete=True)
recipe("bincount", "length", lambda M, w, i: M.bincount(i, w, length=6), Arg((7,)), _COUNTS, numpy=False)
recipe("searchsorted", "left", lambda M, a, v: M.searchsorted(M.sort(a), v), Arg((5,)), X, dtypes=REALS)
recipe("searchsorted", "right_sorter", lambda M, a, v: M.searchsorted(a, v, "right", M.argsort(a)), Arg((5,)),
       V, dtypes=REALS)
recipe("digitize", "increasing", lambda M, x: M.digitize(x, onp.array([-1.0, 0.0, 0.5, 1.5])), X, dtypes=REALS)
recipe("digitize", "decreasing_right", lambda M, x: M.digitize(x, onp.array([1.5, 0.0, -1.0]), right=True), X)
recipe("histogram", "bins", lambda M, x: M.histogram(x, 4), Arg((20,)))
recipe("histogram", "range_weights", lambda M, x, w: M.histogram(x, 3, range=(-1, 1), weights=w), X, X)
recipe("histogram", "density", lambda M, x: M.histogram(x, 5, density=True), Arg((4, 5)))
for _n in ("quantile", "nanquantile"):
    _f = by_name(_n)
    recipe(_n, "scalar_q", lambda M, x, f=_f: f(M)(x, 0.3), X3)
    recipe(_n, "q_axis", lambda M, x, f=_f: f(M)(x, [0.0, 0.25, 1.0], axis=1), X3)
    recipe(_n, "axes_keepdims", lambda M, x, f=_f: f(M)(x, 0.6, axis=(0, 2), keepdims=True), X3)
    recipe(_n, "methods", lambda M, x, f=_f: tuple(f(M)(x, 0.4, axis=0, method=m) for m in (
        "lower", "higher", "midpoint", "nearest")), X3)
    recipe(_n, "int", lambda M, x, f=_f: f(M)(x, 0.5, axis=1), X, dtypes=(I8, I4))
    recipe(_n, "nan", lambda M, x, f=_f: f(M)(M.where(x > 1.0, M.nan, x), [0.2, 0.9], axis=1), X3)
for _n in ("median", "nanmedian"):
    _f = by_name(_n)
    recipe(_n, "all", lambda M, x, f=_f: f(M)(x), X3, dtypes=REALS)
    recipe(_n, "axis_keepdims", lambda M, x, f=_f: f(M)(x, axis=1, keepdims=True), X3)
    recipe(_n, "nan", lambda M, x, f=_f: f(M)(M.where(x > 1.0, M.nan, x), axis=-1), X3)
recipe("kron", "matrices", lambda M, a, b: M.kron(a, b), X, Arg((2, 2)), dtypes=REALS)
recipe("kron", "vector_matrix", lambda M, a, b: M.kron(a, b), V, X3)
recipe("cross", "rows", lambda M, a, b: M.cross(a, b), X, V, dtypes=REALS)
recipe("cross", "axes", lambda M, a, b: M.cross(a, b, axisa=0, axisc=0), Arg((3, 2)), Arg((2, 3)))
recipe("hypot", "same_shape", lambda M, x, y: M.hypot(x, y), X, X, dtypes=REALS)
recipe("hypot", "broadcast_scalar", lambda M, x, y: M.hypot(x, y) + M.hypot(x, 2.0), X, V)
recipe("tril_indices", "k", lambda M: M.tril_indices(3, -1, 4), dtypes=(F8,))
recipe("triu_indices", "square", lambda M: M.triu_indices(4, 1), dtypes=(F8,))

# --- fgrad.scipy.special and fgrad.scipy.stats, against SciPy (by_name reaches both). Shape
# parameters without a derivative (betainc's a and b, Bessel orders, the df of t's CDF) are
# Python numbers of the recipe: jvp of a traced one raises DifferentiationError, by design.
_SPECIAL_UNARY = {  # name: (lo, hi, dtypes)
    "gamma": (0.3, 4, REALS), "gammaln": (0.3, 6, REALS), "rgamma": (-2.5, 3, REALS),
    "gammasgn": (-2.5, 3, REALS), "digamma": (0.3, 4, REALS), "psi": (0.3, 4, FLOATS),
    "erf": (-2, 2, REALS), "erfc": (-3, 3, REALS), "erfcx": (-2, 4, REALS), "erfinv": (-0.9, 0.9, FLOATS),
    "erfcinv": (0.1, 1.9, FLOATS), "ndtr": (-4, 4, REALS), "log_ndtr": (-8, 4, REALS),
    "ndtri": (0.05, 0.95, FLOATS), "expit": (-4, 4, REALS), "logit": (0.1, 0.9, FLOATS),
    "log_expit": (-6, 6, REALS), "entr": (-0.5, 3, REALS), "i0": (-4, 4, REALS), "i1": (-4, 4, REALS),
    "i0e": (-4, 4, REALS), "i1e": (-4, 4, REALS), "j0": (-8, 8, REALS), "j1": (-8, 8, REALS),
    "y0": (0.3, 8, FLOATS), "y1": (0.3, 8, FLOATS),
}
for _n, (_lo, _hi, _dts) in _SPECIAL_UNARY.items():
    _f = by_name(f"scipy.special.{_n}")
    recipe(f"scipy.special.{_n}", "2d", lambda M, x, f=_f: f(M)(x), Arg(lo=_lo, hi=_hi), dtypes=_dts)
    recipe(f"scipy.special.{_n}", "0d", lambda M, x, f=_f: f(M)(x), Arg((), _lo, _hi))
_SPECIAL_BINARY = {  # name: (x, y, dtypes)
    "beta": (Arg(lo=0.5, hi=3), Arg(lo=0.5, hi=3), REALS), "betaln": (Arg(lo=0.5, hi=3), Arg(lo=0.5, hi=30), REALS),
    "xlogy": (X, Arg(lo=0.2, hi=3), REALS), "xlog1py": (X, Arg(lo=-0.5, hi=3), FLOATS),
    "rel_entr": (Arg(lo=-0.5, hi=2), Arg(lo=-0.2, hi=2), FLOATS),
    "kl_div": (Arg(lo=-0.5, hi=2), Arg(lo=-0.2, hi=2), FLOATS),
}
for _n, (_x, _y, _dts) in _SPECIAL_BINARY.items():
    _f = by_name(f"scipy.special.{_n}")
    recipe(f"scipy.special.{_n}", "same_shape", lambda M, x, y, f=_f: f(M)(x, y), _x, _y, dtypes=_dts)
    recipe(f"scipy.special.{_n}", "broadcast", lambda M, x, y, f=_f: f(M)(x, y), _x,
           Arg((3,), _y.lo, _y.hi))
_SPECIAL_WITH_ORDER = {  # name: (call with the constant parameters, x, dtypes)
    "polygamma": (lambda f, x: f(2, x), Arg(lo=0.5, hi=4), (F8,)),  # (SciPy's formula widens float32)
    "multigammaln": (lambda f, x: f(x, 3), Arg(lo=1.5, hi=4), (F8,)),
    "betainc": (lambda f, x: f(2.0, 0.5, x), Arg(lo=0.0, hi=1.0), FLOATS),
    # (SciPy's gammainc loops list float64 first, so a Python float beside float32 gives float64
    # there; fgrad follows NumPy's promotion: float32, checked below without SciPy)
    "gammainc": (lambda f, x: f(2.5, x), Arg(lo=0.0, hi=5.0), (F8, I8, I4)),
    "gammaincc": (lambda f, x: f(0.5, x), Arg(lo=0.0, hi=5.0), (F8, I8, I4)),
    "stdtr": (lambda f, x: f(3.0, x), Arg(lo=-3, hi=3), REALS),
    "stdtrit": (lambda f, x: f(3.0, x), Arg(lo=0.05, hi=0.95), FLOATS),
    "jv": (lambda f, x: f(1.5, x), Arg(lo=0.2, hi=8), REALS),
    "jn": (lambda f, x: f(2, x), Arg(lo=-8, hi=8), REALS),
    "yv": (lambda f, x: f(0.5, x), Arg(lo=0.3, hi=8), FLOATS),
    "yn": (lambda f, x: f(2.0, x), Arg(lo=0.3, hi=8), FLOATS),  # (2.0: SciPy's int loop widens float32)
    "iv": (lambda f, x: f(1.5, x), Arg(lo=0.2, hi=4), REALS),
    "ive": (lambda f, x: f(1.5, x), Arg(lo=-4, hi=4), FLOATS),
}
for _n, (_call, _x, _dts) in _SPECIAL_WITH_ORDER.items():
    _f = by_name(f"scipy.special.{_n}")
    recipe(f"scipy.special.{_n}", "2d", lambda M, x, f=_f, c=_call: c(f(M), x), _x, dtypes=_dts)
    recipe(f"scipy.special.{_n}", "0d", lambda M, x, f=_f, c=_call: c(f(M), x), Arg((), _x.lo, _x.hi), dtypes=(F8,))
for _n in ("gammainc", "gammaincc"):
    recipe(f"scipy.special.{_n}", "f32", lambda M, x, n=_n: by_name(f"scipy.special.{n}")(M)(2.5, x),
           Arg(lo=0.0, hi=5.0), dtypes=(F4,), numpy=False)
recipe("scipy.special.logsumexp", "axis", lambda M, x: by_name("scipy.special.logsumexp")(M)(x, axis=1), X)
recipe("scipy.special.logsumexp", "b", lambda M, x, b: by_name("scipy.special.logsumexp")(M)(x, b=b), X, V)
recipe("scipy.special.softmax", "axis", lambda M, x: by_name("scipy.special.softmax")(M)(x, axis=1), X)
recipe("scipy.special.log_softmax", "all", lambda M, x: by_name("scipy.special.log_softmax")(M)(x), X)
# exponential integrals, hypergeometric and combinatorial functions (tests/scipy/test_special_smooth.py);
# SciPy's loops widen float32 for several of them, so those are compared in float64 only
_SPECIAL_MORE = {  # name: (call, args, dtypes)
    "exp1": (lambda f, x: f(x), (Arg(lo=0.2, hi=4),), FLOATS), "expi": (lambda f, x: f(x), (Arg(lo=-3, hi=3),), FLOATS),
    "expn": (lambda f, x: f(2.0, x), (Arg(lo=0.2, hi=4),), (F8,)),
    "sici": (lambda f, x: tuple(f(x)), (Arg(lo=0.2, hi=6),), FLOATS),
    "fresnel": (lambda f, x: tuple(f(x)), (X,), FLOATS), "dawsn": (lambda f, x: f(x), (X,), FLOATS),
    "spence": (lambda f, x: f(x), (Arg(lo=0.1, hi=3),), FLOATS),
    "hyp1f1": (lambda f, x: f(0.5, 1.5, x), (X,), (F8,)),
    "hyp2f1": (lambda f, x: f(0.5, 1.5, 2.5, x), (Arg(lo=-0.9, hi=0.9),), (F8,)),
    "zeta": (lambda f, q: f(3.0, q), (Arg(lo=0.5, hi=3),), (F8,)),
    "owens_t": (lambda f, h, a: f(h, a), (X, Arg((3,), -2, 2)), (F8,)),
    "comb": (lambda f, n, k: f(n, k), (Arg(lo=0, hi=6), Arg((3,), 0, 3)), (F8,)),
    "factorial": (lambda f, x: f(x), (Arg(lo=-1, hi=5),), (F8,)),
    "poch": (lambda f, z, m: f(z, m), (Arg(lo=0.5, hi=3), Arg((3,), -0.4, 2)), (F8,)),
    "loggamma": (lambda f, x: f(x), (Arg(lo=0.3, hi=6),), (F8,)),
    "boxcox": (lambda f, x, lm: f(x, lm), (Arg(lo=0.2, hi=3), Arg((3,), -1, 1)), FLOATS),
    "boxcox1p": (lambda f, x, lm: f(x, lm), (Arg(lo=-0.5, hi=3), Arg((3,), -1, 1)), FLOATS),
    "wofz": (lambda f, x, y: f(x + 1j * y), (X, X), (F8,)),
    "sph_harm_y": (lambda f, t, p: f(onp.array([2, 3, 1]), onp.array([1, -2, 0]), t, p), (Arg(lo=0.2, hi=3), Arg((3,), -3, 3)),
                   (F8,)),
}
# K and Airy functions and the orthogonal polynomials (tests/cases/special_more.py); SciPy's loops
# with an integer degree compute in float64, so the polynomials are compared in float64 only
_SPECIAL_MORE.update({
    **{n: (lambda f, x: f(x), (Arg(lo=0.2, hi=5),), REALS) for n in ("k0", "k1", "k0e", "k1e")},
    "kv": (lambda f, x: f(1.5, x), (Arg(lo=0.2, hi=5),), FLOATS),
    "kn": (lambda f, x: f(2.0, x), (Arg(lo=0.2, hi=5),), FLOATS),
    "kve": (lambda f, x: f(0.5, x), (Arg(lo=0.2, hi=5),), FLOATS),
    "airy": (lambda f, x: tuple(f(x)), (X,), FLOATS),
    **{n: (lambda f, x: f(3, x), (Arg(lo=-1, hi=1),), (F8,))
       for n in ("eval_chebyt", "eval_chebyu", "eval_sh_chebyt", "eval_sh_chebyu", "eval_legendre", "eval_hermite",
                 "eval_hermitenorm", "eval_laguerre")},
    "eval_gegenbauer": (lambda f, x: f(3, 0.5, x), (Arg(lo=-1, hi=1),), (F8,)),
    "eval_genlaguerre": (lambda f, x: f(3, 1.5, x), (Arg(lo=0, hi=4),), (F8,)),
})
for _n, (_call, _args, _dts) in _SPECIAL_MORE.items():
    _f = by_name(f"scipy.special.{_n}")
    recipe(f"scipy.special.{_n}", "2d", lambda M, *xs, f=_f, c=_call: c(f(M), *xs), *_args, dtypes=_dts)
_Q = Arg(lo=0.05, hi=0.95)
_LOC, _SCALE = Arg((3,), -1, 1), Arg((), 0.5, 2)
_STATS = [  # (distribution, functions, call(f, *arrays), args); SciPy computes in float64
    ("norm", "logpdf pdf cdf logcdf sf logsf", lambda f, x, m, s: f(x, m, s), (Arg(lo=-3, hi=3), _LOC, _SCALE)),
    ("norm", "ppf isf", lambda f, q, m, s: f(q, m, s), (_Q, _LOC, _SCALE)),
    ("t", "logpdf pdf", lambda f, x, df: f(x, df, 0.5, 1.5), (Arg(lo=-3, hi=3), Arg((), 1, 5))),
    ("t", "cdf logcdf sf logsf", lambda f, x, m: f(x, 3.5, m, 1.5), (Arg(lo=-3, hi=3), _LOC)),
    ("t", "ppf", lambda f, q: f(q, 3.5, 0.5, 1.5), (_Q,)),
    ("gamma", "logpdf pdf", lambda f, x, a: f(x, a, 0.1, 1.3), (Arg(lo=-0.5, hi=4), Arg((), 0.5, 3))),
    ("gamma", "cdf sf logcdf logsf", lambda f, x, s: f(x, 2.5, 0.1, s), (Arg(lo=-0.5, hi=4), _SCALE)),
    ("chi2", "logpdf pdf", lambda f, x, df: f(x, df), (Arg(lo=-0.5, hi=6), Arg((), 1, 5))),
    ("chi2", "cdf sf logcdf logsf", lambda f, x: f(x, 3.0, 0.2, 1.5), (Arg(lo=-0.5, hi=6),)),
    ("beta", "logpdf pdf", lambda f, x, a, b: f(x, a, b), (Arg(lo=-0.2, hi=1.2), Arg((), 0.5, 3), Arg((3,), 0.5, 3))),
    ("beta", "cdf sf logcdf logsf", lambda f, x: f(x, 2.5, 0.7), (Arg(lo=-0.2, hi=1.2),)),
    ("poisson", "logpmf pmf cdf sf logcdf logsf", lambda f, k, mu: f(k, mu),
     (Arg(lo=-1, hi=8, dtype=I8), Arg(lo=0.5, hi=5))),
    ("dirichlet", "logpdf pdf", lambda f, z, a: f(by_name("scipy.special.softmax")(f.M)(z, axis=0), a),
     (Arg((3, 4)), Arg((3,), 0.5, 3))),
    ("multivariate_normal", "logpdf pdf", lambda f, x, m, c: f(x, m, _SPD(f.M, c)), (Arg((4, 3)), V, Arg((3, 3)))),
    ("multivariate_normal", "entropy", lambda f, c: f(None, _SPD(f.M, c)), (Arg((3, 3)),)),
    # (tests/scipy/stats/test_distributions.py checks the supports' ends, tails and invalid parameters)
    *[(_d, "logpdf pdf cdf logcdf sf logsf", lambda f, x, m, s: f(x, m, s), (Arg(lo=-3, hi=3), _LOC, _SCALE))
      for _d in ("cauchy", "laplace", "logistic", "gumbel_r", "gumbel_l")],
    *[(_d, "ppf isf", lambda f, q, m, s: f(q, m, s), (_Q, _LOC, _SCALE))
      for _d in ("expon", "cauchy", "laplace", "logistic", "gumbel_r", "gumbel_l", "uniform")],
    ("expon", "logpdf pdf cdf logcdf sf logsf", lambda f, x, m, s: f(x, m, s), (Arg(lo=1.1, hi=4), _LOC, _SCALE)),
    ("uniform", "logpdf pdf cdf logcdf sf logsf", lambda f, x, m: f(x, m, 4.0), (Arg(lo=0.1, hi=2.5), Arg((), -1, 0))),
    ("pareto", "logpdf pdf cdf logcdf sf logsf", lambda f, x, b: f(x, b, 0.5, 1.5), (Arg(lo=2.1, hi=5), Arg((), 0.5, 3))),
    ("pareto", "ppf isf", lambda f, q, b: f(q, b, 0.5, 1.5), (_Q, Arg((), 0.5, 3))),
    ("gennorm", "logpdf pdf", lambda f, x, b: f(x, b, 0.1, 1.3), (Arg(lo=-3, hi=3), Arg((), 1.2, 3))),
    ("gennorm", "cdf sf logcdf logsf", lambda f, x, s: f(x, 1.5, 0.1, s), (Arg(lo=-3, hi=3), _SCALE)),
    ("truncnorm", "logpdf pdf cdf logcdf sf logsf", lambda f, x, a, b: f(x, a, b),
     (Arg(lo=-0.9, hi=1.9), Arg((), -3, -1), Arg((3,), 2, 4))),
    ("vonmises", "logpdf pdf", lambda f, x, k: f(x, k, 0.1, 1.2), (Arg(lo=-3, hi=3), Arg((), 0.5, 4))),
    ("wrapcauchy", "logpdf pdf", lambda f, x, c: f(x, c), (Arg(lo=0.1, hi=6), Arg((), 0.1, 0.9))),
    ("bernoulli", "logpmf pmf cdf sf logcdf logsf", lambda f, k, p: f(k, p),
     (Arg(lo=-1, hi=3, dtype=I8), Arg(lo=0.1, hi=0.9))),
    ("bernoulli", "ppf isf", lambda f, q, p: f(q, p), (_Q, Arg(lo=0.1, hi=0.9))),
    ("binom", "logpmf pmf", lambda f, k, p: f(k, 6, p), (Arg(lo=-1, hi=8, dtype=I8), Arg(lo=0.1, hi=0.9))),
    ("nbinom", "logpmf pmf", lambda f, k, n, p: f(k, n, p),
     (Arg(lo=-1, hi=8, dtype=I8), Arg((), 0.5, 4), Arg(lo=0.1, hi=0.9))),
    ("geom", "logpmf pmf", lambda f, k, p: f(k, p), (Arg(lo=0, hi=8, dtype=I8), Arg(lo=0.1, hi=0.9))),
    ("betabinom", "logpmf pmf", lambda f, k, a, b: f(k, 6, a, b),
     (Arg(lo=-1, hi=8, dtype=I8), Arg((), 0.5, 3), Arg((3,), 0.5, 3))),
    ("multinomial", "logpmf pmf", lambda f, z: f(onp.array([[1, 0, 2], [0, 3, 0]]), 3,
                                                 by_name("scipy.special.softmax")(f.M)(z, axis=-1)), (Arg(),)),
    ("poisson", "entropy", lambda f, mu: f(mu), (Arg(lo=0.5, hi=30),)),
]


def _stats_fn(name: str, call: Callable) -> Callable:
    """fn(M, *arrays) calling M's scipy.stats.<name> through `call(f, *arrays)`; f.M is M."""
    def fn(M, *arrays):
        return call(_Bound(by_name(name)(M), M), *arrays)
    return fn


class _Bound:
    """A function together with the array module of the recipe that called it."""

    def __init__(self, f: Callable, M: Any) -> None:
        self.f, self.M = f, M

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.f(*args, **kwargs)


for _d, _names, _call, _args in _STATS:
    for _n in _names.split():
        _fn = _stats_fn(f"scipy.stats.{_d}.{_n}", _call)
        recipe(f"scipy.stats.{_d}.{_n}", "f64", _fn, *_args, dtypes=(F8,))
        recipe(f"scipy.stats.{_d}.{_n}", "f32", _fn, *_args, dtypes=(F4,), numpy=False)

recipe("scipy.stats.sem", "axis", lambda M, x: by_name("scipy.stats.sem")(M)(x, axis=1), X)
recipe("scipy.stats.sem", "all_ddof0", lambda M, x: by_name("scipy.stats.sem")(M)(x, axis=None, ddof=0), X)

# --- fgrad.scipy.integrate (odeint: SciPy's signature differs, so no eager comparison here;
# tests/scipy/test_integrate.py compares the values with scipy.integrate.odeint)
recipe("scipy.integrate.odeint", "forced_decay", lambda M, y0, k: fgrad.scipy.integrate.odeint(
    lambda y, t, k: -k * y + M.sin(t), y0, onp.linspace(0.0, 1.0, 4), k, rtol=1e-6, atol=1e-6), V,
    Arg((3,), 0.5, 1.5), numpy=False)
recipe("scipy.integrate.odeint", "closure_pytree", lambda M, y0, k: fgrad.scipy.integrate.odeint(
    lambda s, t: {"x": s["v"], "v": -k[0] * s["x"]}, {"x": y0, "v": y0 * 0.5}, onp.array([0.0, 0.3, 1.0]),
    rtol=1e-6, atol=1e-6), V, Arg((1,), 0.5, 1.5), numpy=False)
recipe("scipy.integrate.trapezoid", "points", lambda M, y, x: by_name("scipy.integrate.trapezoid")(M)(
    y, M.cumsum(x), axis=0), Arg((3, 2)), Arg((3,), 0.5, 1.5))

# --- fgrad.lax control flow (no NumPy counterpart: eager fgrad against every transform, in
# float64 and float32, which also checks that Python numbers in the bodies stay weak)
_LAX = fgrad.lax
recipe("lax.cond", "operands", lambda M, p, x: _LAX.cond(M.sum(p) > 0, lambda v: M.sin(v) * 2.0,
                                                         lambda v: v - 1.0, x), X, X)
recipe("lax.switch", "argmax", lambda M, p, x: _LAX.switch(M.argmax(p[0]), [lambda v: v * 0.5, M.tanh,
                                                                          lambda v: v ** 2], x), X, X)
recipe("lax.while_loop", "halving", lambda M, x: _LAX.while_loop(
    lambda c: (M.max(M.abs(c[0])) > 0.1) & (c[1] < 20), lambda c: (c[0] * 0.5 + 0.01, c[1] + 1), (x, 0)), X)
recipe("lax.fori_loop", "static", lambda M, x: _LAX.fori_loop(0, 3, lambda i, v: M.sin(v) * i + 1.0, x), X)
recipe("lax.scan", "rows", lambda M, x: _LAX.scan(lambda c, r: (c * 0.5 + r, M.cos(c) * r), x[0] * 0.0, x), X3)
recipe("lax.scan", "reverse_length", lambda M, x: _LAX.scan(lambda c, _: (M.tanh(c) * 2.0, c), x, None,
                                                          length=3, reverse=True), X)
recipe("lax.map", "rows", lambda M, x: _LAX.map(lambda r: M.sum(r * r), x), X3)
recipe("lax.map", "batch_size", lambda M, x: _LAX.map(lambda r: r[::-1] * 2.0, x, batch_size=2), X3)

# --- fgrad.lax's primitive functions (lax's signatures, operands of one dtype: no NumPy
# counterpart, so eager fgrad against every transform)
_LAX_POS = Arg((2, 3), 0.5, 2.0)
_LAX_DIV = Arg((2, 3), 1.0, 3.0, sign=True)
for _n in ("add", "sub", "mul", "max", "min", "eq", "ne", "lt", "le", "gt", "ge"):
    recipe(f"lax.{_n}", "same", lambda M, x, y, n=_n: getattr(_LAX, n)(x, y), X, X, dtypes=REALS, numpy=False)
recipe("lax.div", "float", lambda M, x, y: _LAX.div(x, y), X, _LAX_DIV, numpy=False)
recipe("lax.div", "int_toward_zero", lambda M, x, y: _LAX.div(x, y), X, _LAX_DIV, dtypes=(I8, I4), numpy=False)
recipe("lax.pow", "float", lambda M, x, y: _LAX.pow(x, y), _LAX_POS, X, numpy=False)
recipe("lax.pow", "int_exponent", lambda M, x: _LAX.pow(x, onp.array([[1, 2, 3], [0, -1, 2]])), X, numpy=False)
for _n in ("neg", "abs", "sign", "square"):
    recipe(f"lax.{_n}", "x", lambda M, x, n=_n: getattr(_LAX, n)(x), X, dtypes=REALS, numpy=False)
for _n in ("exp", "sin", "cos", "tanh"):
    recipe(f"lax.{_n}", "x", lambda M, x, n=_n: getattr(_LAX, n)(x), X, numpy=False)
for _n in ("log", "sqrt", "rsqrt"):
    recipe(f"lax.{_n}", "positive", lambda M, x, n=_n: getattr(_LAX, n)(x), _LAX_POS, numpy=False)
for _n in ("cummax", "cummin", "cumprod"):
    recipe(f"lax.{_n}", "axis1", lambda M, x, n=_n: getattr(_LAX, n)(x, axis=1), X, dtypes=REALS, numpy=False)
    recipe(f"lax.{_n}", "reverse", lambda M, x, n=_n: getattr(_LAX, n)(x, axis=0, reverse=True), X3, numpy=False)
recipe("lax.cumlogsumexp", "axis1", lambda M, x: _LAX.cumlogsumexp(x, axis=1), X, numpy=False)
recipe("lax.cumlogsumexp", "reverse", lambda M, x: _LAX.cumlogsumexp(x, axis=0, reverse=True), X3, numpy=False)
recipe("lax.integer_pow", "cube", lambda M, x: _LAX.integer_pow(x, 3), X, dtypes=REALS, numpy=False)
recipe("lax.select", "mask", lambda M, p, x, y: _LAX.select(p > 0, x, y), X, X, X, numpy=False)
recipe("lax.clamp", "scalars", lambda M, x: _LAX.clamp(-1.0, x, 1.0), X, numpy=False)
recipe("lax.clamp", "arrays", lambda M, lo, x: _LAX.clamp(lo - 1.0, x, lo + 1.0), X, X, numpy=False)
recipe("lax.convert_element_type", "to_f32", lambda M, x: _LAX.convert_element_type(x, onp.float32), X, numpy=False)
recipe("lax.broadcast_in_dim", "middle", lambda M, x: _LAX.broadcast_in_dim(x, (2, 4, 3), (0, 2)), X,
       dtypes=ALL, numpy=False)
recipe("lax.reshape", "dimensions", lambda M, x: _LAX.reshape(x, (3, 2), dimensions=(1, 0)), X, dtypes=ALL,
       numpy=False)
recipe("lax.transpose", "perm", lambda M, x: _LAX.transpose(x, (2, 0, 1)), X3, dtypes=ALL, numpy=False)
recipe("lax.slice", "strides", lambda M, x: _LAX.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)), X3, numpy=False)
recipe("lax.dynamic_slice", "clamped", lambda M, x: _LAX.dynamic_slice(x, (1, 2), (1, 2)), X, numpy=False)
recipe("lax.dynamic_update_slice", "block", lambda M, x, u: _LAX.dynamic_update_slice(x, u, (1, 0)),
       X, Arg((1, 2)), numpy=False)
recipe("lax.concatenate", "axis1", lambda M, x, y: _LAX.concatenate([x, y], 1), X, X, dtypes=ALL, numpy=False)
recipe("lax.pad", "interior_negative", lambda M, x: _LAX.pad(x, 0.5, [(1, -1, 1), (0, 2, 0)]), X, numpy=False)
for _n in ("reduce_sum", "reduce_max", "reduce_min"):
    recipe(f"lax.{_n}", "axes", lambda M, x, n=_n: getattr(_LAX, n)(x, (0, 2)), X3, dtypes=REALS, numpy=False)
recipe("lax.dot_general", "batched", lambda M, x, y: _LAX.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
       X3, Arg((2, 4, 3)), numpy=False)
recipe("lax.dot", "matvec", lambda M, x, v: _LAX.dot(x, v), X, V, numpy=False)
recipe("lax.conv_general_dilated", "same", lambda M, x, w: _LAX.conv_general_dilated(
    x, w, (1, 1), "SAME", rhs_dilation=(1, 2)), Arg((1, 2, 4, 5)), Arg((3, 2, 2, 2)), numpy=False)
recipe("lax.conv", "1d_same", lambda M, x, w: _LAX.conv(x, w, (2,), "SAME"), Arg((2, 3, 7)), Arg((4, 3, 3)),
       numpy=False)
recipe("lax.conv_with_general_padding", "3d", lambda M, x, w: _LAX.conv_with_general_padding(
    x, w, (1, 2, 1), [(1, 0), (0, 2), (1, 1)], (2, 1, 1), (1, 1, 2)), Arg((1, 2, 4, 3, 5)), Arg((3, 2, 2, 2, 3)),
       numpy=False)
recipe("lax.conv_dimension_numbers", "nhwc", lambda M: M.asarray(_LAX.conv_dimension_numbers(
    (1, 5, 6, 3), (3, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))), dtypes=(F8,), numpy=False)
recipe("lax.ConvDimensionNumbers", "axes", lambda M: M.asarray(_LAX.ConvDimensionNumbers(
    (0, 2, 1), (2, 1, 0), (0, 1, 2))), dtypes=(F8,), numpy=False)
recipe("lax.iota", "int32", lambda M: _LAX.iota(onp.int32, 5), dtypes=(F8,), numpy=False)
recipe("lax.full", "shape", lambda M: _LAX.full((2, 3), 1.5), dtypes=(F8,), numpy=False)
recipe("lax.cumsum", "reverse", lambda M, x: _LAX.cumsum(x, 1, reverse=True), X, dtypes=REALS, numpy=False)
recipe("lax.sort", "dim0", lambda M, x: _LAX.sort(x, dimension=0), X, dtypes=REALS, numpy=False)
recipe("lax.sort", "two_operands", lambda M, k, v: _LAX.sort((k, v), num_keys=1)[1], X, X, numpy=False)
recipe("lax.argmax", "int32", lambda M, x: _LAX.argmax(x, 1, onp.int32), X, dtypes=REALS, numpy=False)
recipe("lax.stop_gradient", "x", lambda M, x: _LAX.stop_gradient(x) * x, X, numpy=False)

# --- NaN-ignoring reductions, floating-point helpers, discrete calculus, more manipulation
# (fgrad/numpy/_nanreductions.py, _math_extra.py, _calculus.py, _averages.py, _manipulation.py)
_NANS = lambda M, x: M.where(x > 1.0, M.nan, x)  # noqa: E731  (no slice is all NaN for seeds 0, 1)
for _n in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"):
    _f = by_name(_n)
    recipe(_n, "all_axes", lambda M, x, f=_f: f(M)(_NANS(M, x)), X3, dtypes=REALS)
    recipe(_n, "axis,keepdims", lambda M, x, f=_f: f(M)(_NANS(M, x), axis=1, keepdims=True), X3)
    recipe(_n, "axes", lambda M, x, f=_f: f(M)(_NANS(M, x), axis=(0, 2)), X3)
recipe("nanvar", "ddof", lambda M, x: M.nanvar(_NANS(M, x), axis=0, ddof=1), X3)
recipe("nanstd", "where", lambda M, x: M.nanstd(x, axis=1, where=_MASK), X)
recipe("nansum", "initial_where", lambda M, x: M.nansum(_NANS(M, x), axis=1, initial=1.0, where=_MASK), X)
recipe("nanmax", "initial", lambda M, x: M.nanmax(_NANS(M, x), axis=0, initial=0.5), X)
for _n in ("nanargmax", "nanargmin"):
    _f = by_name(_n)
    recipe(_n, "flat", lambda M, x, f=_f: f(M)(_NANS(M, x)), X3, dtypes=REALS)
    recipe(_n, "axis", lambda M, x, f=_f: f(M)(_NANS(M, x), axis=2), X3)
for _n in ("nancumsum", "nancumprod"):
    _f = by_name(_n)
    recipe(_n, "flat", lambda M, x, f=_f: f(M)(_NANS(M, x)), X, dtypes=REALS)
    recipe(_n, "axis", lambda M, x, f=_f: f(M)(_NANS(M, x), axis=1), X3)
for _n, (_lo, _hi) in {"sinc": (-2, 2), "deg2rad": (-200, 200), "radians": (-200, 200), "rad2deg": (-3, 3),
                       "degrees": (-3, 3), "fabs": (-2, 2), "acos": (-0.8, 0.8), "asin": (-0.8, 0.8),
                       "atan": (-2, 2), "acosh": (1.2, 3), "asinh": (-2, 2), "atanh": (-0.8, 0.8)}.items():
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, f=_f: f(M)(x), Arg(lo=_lo, hi=_hi), dtypes=REALS)
    recipe(_n, "0d", lambda M, x, f=_f: f(M)(x), Arg((), _lo, _hi))
recipe("sinc", "zero", lambda M, x: M.sinc(x * 0.0), X)
for _n in ("signbit", "trunc", "fix", "rint", "angle", "iscomplex", "isreal", "real_if_close", "nan_to_num"):
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, f=_f: f(M)(x), Arg(lo=-3, hi=3), dtypes=ALL)
recipe("angle", "deg", lambda M, x: M.angle(x, deg=True), X)
recipe("nan_to_num", "specials", lambda M, x: M.nan_to_num(M.where(x > 1.0, M.nan, M.where(x < -1.0, -M.inf, x)),
                                                         nan=0.5, neginf=-2.0), X)
recipe("iscomplexobj", "real", lambda M, x: M.iscomplexobj(x), X, dtypes=ALL)
recipe("isrealobj", "real", lambda M, x: M.isrealobj(x), X, dtypes=ALL)
for _n, _y in (("fmax", _ARITH[1]), ("fmin", _ARITH[1]), ("copysign", Arg(lo=-3, hi=3)),
               ("heaviside", Arg(lo=0, hi=1)), ("float_power", Arg(lo=-2, hi=2)), ("atan2", _ARITH[1]),
               ("pow", Arg(lo=0, hi=3))):
    _f = by_name(_n)
    _x = Arg(lo=0.5, hi=2) if _n in ("float_power", "pow") else Arg(lo=-3, hi=3)
    recipe(_n, "same_shape", lambda M, x, y, f=_f: f(M)(x, y), _x, _y, dtypes=REALS)
    recipe(_n, "broadcast", lambda M, x, y, f=_f: f(M)(x, y), _x, Arg((3,), _y.lo, _y.hi))
    recipe(_n, "x,scalar", lambda M, x, f=_f: f(M)(x, 2.0), _x, dtypes=REALS)
recipe("fmax", "nan", lambda M, x, y: M.fmax(_NANS(M, x), M.where(y < -1.0, M.nan, y)), X, X)
recipe("fmin", "nan", lambda M, x, y: M.fmin(_NANS(M, x), M.where(y < -1.0, M.nan, y)), X, X)
recipe("heaviside", "zeros", lambda M, x, y: M.heaviside(M.floor(x), y), X, X, dtypes=REALS)
recipe("copysign", "signed_zeros", lambda M, x, y: M.copysign(x, M.floor(y) * 0.0), X, X)
recipe("bitwise_invert", "2d", lambda M, x: M.bitwise_invert(x), Arg(lo=-3, hi=3), dtypes=INTEGRAL)
recipe("ldexp", "int_exponent", lambda M, x, n: M.ldexp(x, n), X, Arg(lo=-3, hi=3, dtype=I8), dtypes=REALS)
recipe("ldexp", "scalar_exponent", lambda M, x: M.ldexp(x, 3), X)
recipe("ldexp", "float_exponent", lambda M, x, n: M.ldexp(x, n), X, X, raises=True)
recipe("frexp", "2d", lambda M, x: M.frexp(x * 37.0), X, dtypes=REALS)
for _n in ("gcd", "lcm"):
    _f = by_name(_n)
    _k = Arg(lo=-12, hi=12)
    recipe(_n, "same_shape", lambda M, x, y, f=_f: f(M)(x, y), _k, _k, dtypes=(I8, I4))
    recipe(_n, "broadcast", lambda M, x, y, f=_f: f(M)(x, y), _k, Arg((3,), -12, 12), dtypes=(I8, I4))
    recipe(_n, "x,scalar", lambda M, x, f=_f: f(M)(x, 6), _k, dtypes=(I8, I4))
    recipe(_n, "float", lambda M, x, y, f=_f: f(M)(x, y), X, X, raises=True)
for _n in ("isposinf", "isneginf"):
    _f = by_name(_n)
    recipe(_n, "2d", lambda M, x, f=_f: f(M)(x), Arg(lo=-3, hi=3), dtypes=ALL)
    recipe(_n, "specials", lambda M, x, f=_f: f(M)(M.where(x > 1.0, M.inf, M.where(x < -1.0, -M.inf, x))), X)
recipe("nextafter", "same_shape", lambda M, x, y: M.nextafter(x, y), X, X, dtypes=REALS)
recipe("nextafter", "broadcast", lambda M, x, y: M.nextafter(x, y), X, Arg((3,), -2, 2))
recipe("nextafter", "x,scalar", lambda M, x: M.nextafter(x, 0.0), X)
recipe("nextafter", "zeros_infinities", lambda M, x, y: M.nextafter(M.floor(x) * 0.0, M.where(y > 1.0, M.inf, y)),
       X, X)
recipe("isclose", "near", lambda M, x, y: M.isclose(x, x + y * 1e-6), X, X, dtypes=REALS)
recipe("isclose", "specials", lambda M, x: M.isclose(M.where(x > 1.0, M.inf, x), M.where(x > 1.5, M.nan, x),
                                                     equal_nan=True), X)
recipe("allclose", "near", lambda M, x, y: M.allclose(x, x + y * 1e-6, atol=1e-3), X, X, dtypes=REALS)
recipe("partition", "kth", lambda M, x: M.partition(x, 1), X3, dtypes=ALL, numpy=False)
recipe("partition", "sorted_kth", lambda M, x: M.sort(M.partition(x, (0, 2), axis=1), axis=1)[:, 2], X3)
recipe("argpartition", "kth", lambda M, x: M.take_along_axis(x, M.argpartition(x, 2), -1)[..., 2], X3, dtypes=ALL)
recipe("rollaxis", "start", lambda M, x: M.rollaxis(x, 2, 1), X3, dtypes=ALL)
recipe("rollaxis", "end", lambda M, x: M.rollaxis(x, 0, 3), X3)
recipe("append", "flat", lambda M, x, y: M.append(x, y), X, V, dtypes=ALL)
recipe("append", "axis", lambda M, x, y: M.append(x, y, axis=0), X, X)
recipe("row_stack", "2d", lambda M, x, y: M.row_stack([x, y]), X, V, dtypes=ALL, numpy=False)
recipe("permute_dims", "axes", lambda M, x: M.permute_dims(x, (2, 0, 1)), X3, dtypes=ALL)
recipe("concat", "axis", lambda M, x, y: M.concat([x, y], axis=1), X, X, dtypes=ALL)
recipe("unstack", "axis", lambda M, x: M.unstack(x, axis=2), X3, dtypes=ALL)
recipe("select", "conditions", lambda M, x, y: M.select([x > 1.0, y < 0.0], [x, y], 0.5), X, X, dtypes=REALS)
recipe("select", "broadcast", lambda M, x, y: M.select([x > 0.0], [y]), X, V)
recipe("matrix_transpose", "3d", lambda M, x: M.matrix_transpose(x), X3, dtypes=ALL)
recipe("vecdot", "rows", lambda M, a, b: M.vecdot(a, b), X, V, dtypes=REALS)
recipe("gradient", "all_axes", lambda M, x: M.gradient(x), X3, dtypes=REALS)
recipe("gradient", "spacings", lambda M, x: M.gradient(x, 0.5, onp.array([0.0, 0.3, 1.0]), axis=(0, 1),
                                                       edge_order=2), X)
recipe("gradient", "traced_points", lambda M, x, c: M.gradient(x, M.cumsum(c), axis=-1), X3, Arg((4,), 0.5, 1.5))
recipe("trapezoid", "dx", lambda M, x: M.trapezoid(x, dx=0.5, axis=0), X3, dtypes=REALS)
recipe("trapezoid", "points", lambda M, y, x: M.trapezoid(y, M.cumsum(x)), X, Arg((3,), 0.5, 1.5))
recipe("ediff1d", "ends", lambda M, x: M.ediff1d(x, to_end=[1.0, 2.0], to_begin=0.5), X, dtypes=REALS)
recipe("cumulative_sum", "axis", lambda M, x: M.cumulative_sum(x, axis=1), X3, dtypes=ALL)
recipe("cumulative_sum", "initial", lambda M, x: M.cumulative_sum(x, include_initial=True), V, dtypes=REALS)
recipe("cumulative_prod", "axis", lambda M, x: M.cumulative_prod(x, axis=0), X3, dtypes=REALS)
recipe("cumulative_prod", "initial", lambda M, x: M.cumulative_prod(x, include_initial=True), V)
recipe("average", "weights", lambda M, x, w: M.average(x, axis=1, weights=w), X, Arg((3,), 0.5, 2), dtypes=REALS)
recipe("average", "returned", lambda M, x, w: M.average(x, weights=w, returned=True), X, Arg(lo=0.5, hi=2))
recipe("average", "plain", lambda M, x: M.average(x, axis=0, keepdims=True), X, dtypes=REALS)
recipe("ptp", "axis", lambda M, x: M.ptp(x, axis=1), X3, dtypes=REALS)
recipe("ptp", "all", lambda M, x: M.ptp(x), X)

recipe("convolve", "modes", lambda M, a, v: tuple(M.convolve(a, v, m) for m in ("full", "same", "valid")),
       Arg((5,)), V, dtypes=REALS)
recipe("convolve", "swapped", lambda M, a, v: M.convolve(v, a, "same"), Arg((5,)), V)
recipe("correlate", "modes", lambda M, a, v: tuple(M.correlate(a, v, m) for m in ("full", "same", "valid")),
       Arg((5,)), V, dtypes=REALS)
recipe("correlate", "swapped", lambda M, a, v: M.correlate(v, a, "full"), Arg((5,)), V)
recipe("polyval", "vector", lambda M, p, x: M.polyval(p, x), V, X, dtypes=REALS)
recipe("vander", "default", lambda M, x: M.vander(x), V, dtypes=REALS)
recipe("vander", "increasing", lambda M, x: M.vander(x, 4, increasing=True), V)
recipe("cov", "rows", lambda M, x: M.cov(x), Arg((3, 5)), dtypes=REALS)
recipe("cov", "weights", lambda M, x, w: M.cov(x, rowvar=False, aweights=w, ddof=2), Arg((5, 3)), Arg((5,), 0.5, 2))
recipe("cov", "two", lambda M, x, y: M.cov(x, y, bias=True), V, V)
recipe("corrcoef", "rows", lambda M, x: M.corrcoef(x), Arg((3, 5)), dtypes=REALS)
recipe("logspace", "traced", lambda M, a, b: M.logspace(a, b, 5), S0, Arg((), 1, 2))
recipe("logspace", "base", lambda M, a: M.logspace(a, 2.0, 4, endpoint=False, base=2.0), S0, dtypes=REALS)
recipe("geomspace", "traced", lambda M, a, b: M.geomspace(a, b, 5), Arg((), 0.5, 1), Arg((), 2, 3), dtypes=REALS)
recipe("geomspace", "negative", lambda M, a: M.geomspace(-a, -4.0, 4, endpoint=False), Arg((), 0.5, 1))
recipe("i0", "2d", lambda M, x: M.i0(x), X, dtypes=REALS)
recipe("modf", "2d", lambda M, x: M.modf(x * 3.0), X, dtypes=REALS)
recipe("copy", "2d", lambda M, x: M.copy(x), X, dtypes=ALL)

# --- editing functions, polynomials, functional helpers, interp & co (tests/numpy/test_editing_polynomials.py)
_MASK23 = onp.array([[True, False, True], [False, False, True]])
recipe("delete", "axis", lambda M, x: M.delete(x, [0, 2], axis=1), X, dtypes=ALL)
recipe("delete", "flat_slice", lambda M, x: M.delete(x, slice(1, 4)), X)
recipe("insert", "values", lambda M, x, v: M.insert(x, [1, 3], v), X, Arg((2,)), dtypes=ALL)
recipe("insert", "axis_scalar", lambda M, x: M.insert(x, 1, 0.5, axis=1), X, dtypes=REALS)
recipe("put", "repeated", lambda M, x, v: M.put(x, [0, 4, 4], v), X, Arg((3,)), dtypes=ALL, numpy=False)
recipe("put", "traced_indices", lambda M, x, i: M.put(x, i, 2.5), X, Distinct(2, 6), numpy=False)
recipe("put_along_axis", "rows", lambda M, x: M.put_along_axis(x, onp.array([[0], [2]]), 1.5, 1), X, dtypes=REALS,
       numpy=False)
recipe("place", "static_mask", lambda M, x, v: M.place(x, _MASK23, v), X, Arg((2,)), dtypes=ALL, numpy=False)
recipe("place", "traced_mask", lambda M, x: M.place(x, x > 0, [1.0]), X, numpy=False)
recipe("fill_diagonal", "wrap", lambda M, x, v: M.fill_diagonal(x, v, wrap=True), Arg((5, 2)), Arg((2,)), dtypes=ALL,
       numpy=False)
recipe("compress", "axis", lambda M, x: M.compress([True, False, True], x, axis=1), X, dtypes=ALL)
recipe("extract", "static", lambda M, x: M.extract(_MASK23, x), X, dtypes=ALL)
recipe("extract", "traced", lambda M, x: M.extract(M.abs(x) >= 0.0, x), X, concrete=True)  # one size for every seed
recipe("resize", "grow", lambda M, x: M.resize(x, (4, 3)), X, dtypes=ALL)
recipe("choose", "static", lambda M, x, y: M.choose(onp.array([0, 1, 1]), [x, y]), X, V, dtypes=ALL)
recipe("choose", "traced_index", lambda M, i, x, y: M.choose(i, [x, y]), Arg((3,), 0, 1, dtype=I8), X, V)
recipe("block", "2d", lambda M, x, y: M.block([[x, x], [y, y]]), X, Arg((1, 3)), dtypes=ALL)
recipe("trim_zeros", "values", lambda M, x: M.trim_zeros(x * onp.array([0.0, 1.0, 0.0, 1.0, 0.0, 0.0])),
       Arg((6,), 0.5, 2.0), concrete=True)
recipe("poly", "zeros", lambda M, z: M.poly(z), V, dtypes=REALS)
recipe("poly", "matrix", lambda M, a: M.poly(a), Arg((3, 3)))
for _n in ("polyadd", "polysub", "polymul"):
    _f = by_name(_n)
    recipe(_n, "vectors", lambda M, a, b, f=_f: f(M)(a, b), V, Arg((2,)), dtypes=REALS)
recipe("polydiv", "trimmed", lambda M, u, v: M.polydiv(u, v), Arg((5,)), Arg((2,), 1, 2), concrete=True,
       dtypes=(F8,))  # float32's long division leaves leading entries NumPy does not trim (seed-dependent sizes)
recipe("polydiv", "untrimmed", lambda M, u, v: M.polydiv(u, v, trim_leading_zeros=False), Arg((5,)), Arg((2,), 1, 2),
       numpy=False)
recipe("polyder", "m2", lambda M, p: M.polyder(p, 2), Arg((5,)), dtypes=REALS)
recipe("polyint", "k", lambda M, p, k: M.polyint(p, 2, k=k), Arg((4,)), Arg((2,)))
recipe("polyfit", "deg2", lambda M, y: M.polyfit(onp.arange(5.0), y, 2), Arg((5,)), dtypes=REALS)
recipe("roots", "strip", lambda M, p: M.roots(p), V, concrete=True)
recipe("roots", "unstripped", lambda M, p: M.roots(p, strip_zeros=False), V, numpy=False)
recipe("interp", "knots", lambda M, x, fp: M.interp(x, onp.array([-1.0, 0.0, 1.5]), fp), X, V, dtypes=REALS)
recipe("interp", "traced_xp", lambda M, x, xp: M.interp(x, M.cumsum(xp) - 2.0, onp.array([1.0, -1.0, 2.0])), X,
       Arg((3,), 0.5, 1.5))
recipe("unwrap", "rows", lambda M, x: M.unwrap(x * 3.0), X, dtypes=REALS)
recipe("percentile", "q", lambda M, x: M.percentile(x, [20.0, 70.0], axis=1), X, dtypes=REALS)
recipe("nanpercentile", "q", lambda M, x: M.nanpercentile(M.where(x > 1.5, M.nan, x), 40.0, axis=0), X)
recipe("sort_complex", "1d", lambda M, x: M.sort_complex(x), Arg((5,)), dtypes=REALS)
recipe("matvec", "batched", lambda M, a, v: M.matvec(a, v), X3, Arg((4,)), dtypes=REALS)
recipe("vecmat", "batched", lambda M, v, a: M.vecmat(v, a), V, X3, dtypes=REALS)
recipe("count_nonzero", "all", lambda M, x: M.count_nonzero(x > 0.5), X, dtypes=ALL)
recipe("count_nonzero", "axis_keepdims", lambda M, x: M.count_nonzero(x, axis=1, keepdims=True), X3, dtypes=ALL)
recipe("apply_along_axis", "rows", lambda M, x: M.apply_along_axis(lambda t: t * t[0], 1, x), X, dtypes=REALS)
recipe("apply_over_axes", "sum", lambda M, x: M.apply_over_axes(M.sum, x, [0, 2]), X3, dtypes=REALS)
recipe("piecewise", "functions", lambda M, x: M.piecewise(x, [x < 0.0, x > 1.0], [lambda t: t * t, lambda t: -t, 0.5]),
       X)

# Public names with no recipe, each with the reason calling it cannot work. Keep it short:
# a function that can be called needs a recipe instead.
SKIP: dict[str, str] = {}


# --- running ---------------------------------------------------------------------------------

def _public_callables() -> list[str]:
    """Every public function (and index-trick object) of fgrad.numpy and its submodules:
    what needs a recipe. Types (dtypes, exception classes) and constants are not called."""
    names = []

    def walk(mod: types.ModuleType, prefix: str) -> None:
        for n in sorted(dir(mod)):
            obj = getattr(mod, n)
            if n.startswith("_") or isinstance(obj, type):
                continue
            if isinstance(obj, types.ModuleType):
                if obj.__name__.startswith("fgrad.numpy.") and not prefix:
                    walk(obj, f"{n}.")
                continue
            if hasattr(mod, "__all__") and n not in mod.__all__:
                continue  # a helper the submodule imported, not part of its API
            if callable(obj) or isinstance(obj, AxisConcatenator):
                names.append(prefix + n)
    walk(fnp, "")
    return names


def _scipy_callables() -> list[str]:
    """The public functions of fgrad.scipy.special and of each fgrad.scipy.stats distribution."""
    names = [f"scipy.special.{n}" for n in fss.__all__]
    names += [f"scipy.stats.{d}.{n}" for d in fst.DISTRIBUTIONS for n in getattr(fst, d).__all__]
    return names + [f"scipy.stats.{n}" for n in fst.__all__ if n not in fst.DISTRIBUTIONS]


def _integrate_callables() -> list[str]:
    """The functions of fgrad.scipy.integrate."""
    return [f"scipy.integrate.{n}" for n in fgrad.scipy.integrate.__all__]


def _lax_callables() -> list[str]:
    """The control-flow functions of fgrad.lax."""
    return [f"lax.{n}" for n in fgrad.lax.__all__]


PUBLIC = _public_callables() + _scipy_callables() + _integrate_callables() + _lax_callables()


def _leaves(out: Any) -> list:
    return [onp.asarray(leaf) for leaf in tree_flatten(out)[0]]


def _same(want: Any, got: Any, approx: bool) -> str | None:
    """None when `got` has `want`'s structure, shapes, dtypes and values; else what differs."""
    a, b = _leaves(want), _leaves(got)
    if len(a) != len(b):
        return f"{len(b)} outputs instead of {len(a)}"
    for i, (x, y) in enumerate(zip(a, b)):
        where = f"output {i}: " if len(a) > 1 else ""
        if x.shape != y.shape:
            return f"{where}shape {y.shape} instead of {x.shape}"
        if x.dtype != y.dtype:
            return f"{where}dtype {y.dtype} instead of {x.dtype}"
        nan = x.dtype.kind in "fc"
        if approx and nan:
            tol = 1e-5 if x.dtype.itemsize <= 4 else 1e-12
            ok = onp.allclose(x, y, rtol=tol, atol=tol, equal_nan=True)
        else:
            ok = onp.array_equal(x, y, equal_nan=nan)
        if not ok:
            return f"{where}values {y.ravel()[:6]} instead of {x.ravel()[:6]}"
    return None


def _call(fn: Callable, args: tuple):
    """(result, None) or (None, exception)."""
    try:
        with onp.errstate(all="ignore"):
            return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the exception is part of what is compared
        return None, e


def _traced(transform: str, fn: Callable, args: tuple):
    """fn(*args) under `transform`, or for vmap fn over a batch of (args, args of seed 1)."""
    if transform == "grad":
        return fgrad.vjp(fn, *args)[0]
    if transform == "jvp":
        tangents = tuple(onp.ones_like(a) if a.dtype.kind == "f" else onp.zeros_like(a) for a in args)
        return fgrad.jvp(fn, args, tangents)[0]
    if transform == "jit":
        return fgrad.jit(fn)(*args)
    raise ValueError(transform)


def check_parity(fn: Callable, args: tuple, args2: tuple, concrete: bool = False) -> list[str]:
    """The disagreements between fn eagerly and fn under each transform (empty: none).
    Eager errors must be errors under the transforms too; with `concrete`, jit and vmap must
    raise ConcretizationError."""
    return _check_parity(fn, args, args2, concrete)[0]


def _check_parity(fn: Callable, args: tuple, args2: tuple, concrete: bool = False):
    """(disagreements, the eager error or None)."""
    if not args:  # trace something anyway: a dummy input the function ignores
        inner = fn
        fn, args, args2 = (lambda d: inner()), (onp.ones(2),), (onp.zeros(2),)
    eager, err = _call(fn, args)
    problems = []
    for t in TRANSFORMS:
        if t == "vmap":
            eager2, err2 = _call(fn, args2)
            err = err or err2
            if err is None:
                eager_t = tree_map_stack(eager, eager2)
            got, got_err = _call(lambda *a: fgrad.vmap(fn)(*a),
                                 tuple(onp.stack([a, b]) for a, b in zip(args, args2)))
        else:
            eager_t = eager
            got, got_err = _call(lambda *a: _traced(t, fn, a), args)
        if concrete and t in ("jit", "vmap"):
            if not isinstance(got_err, ConcretizationError):
                problems.append(f"{t}: expected ConcretizationError, got "
                                f"{type(got_err).__name__ if got_err else 'a result'}")
            continue
        if err is not None:
            if got_err is None:
                problems.append(f"{t}: gives a result where eager raises {type(err).__name__}: {err}")
            continue
        if got_err is not None:
            problems.append(f"{t}: raises {type(got_err).__name__}: {str(got_err)[:200]}")
            continue
        # jit compiles: a transcendental function may come from the C library where NumPy uses
        # its own SIMD code, an ulp or two apart (tests/interpreters/compile/test_lowerings.py checks which
        # compiled operations are bit for bit NumPy's)
        diff = _same(eager_t, got, approx=t in ("vmap", "jit"))
        if diff:
            problems.append(f"{t}: {diff}")
    return problems, err


def tree_map_stack(a: Any, b: Any) -> list:
    """The per-example results of a vmap comparison stacked leaf by leaf."""
    return [onp.stack([x, y]) for x, y in zip(_leaves(a), _leaves(b))]


def _dtype_id(dt: onp.dtype) -> str:
    return {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32", "bool": "bool"}[dt.name]


# --- the function sweep ------------------------------------------------------------------------

def test_every_public_function_has_a_recipe():
    missing = [n for n in PUBLIC if n not in RECIPES and n not in SKIP]
    assert not missing, (f"public fgrad.numpy functions without a parity recipe: {missing}. Add one "
                         "to the tables in tests/numpy/test_parity.py (or, if calling it cannot work, "
                         "to SKIP with the reason).")
    stale = sorted((set(RECIPES) | set(SKIP)) - set(PUBLIC))
    assert not stale, f"recipes for names that are not public fgrad.numpy functions: {stale}"


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_function_parity(name):
    """Eager fgrad.numpy == the same call under grad, jvp, jit and vmap (values and dtypes)."""
    failures = []
    for r in RECIPES[name]:
        fn = lambda *a, r=r: r.fn(fnp, *a)  # noqa: E731
        for dt in r.dtypes:
            problems, err = _check_parity(fn, r.make_args(dt), r.make_args(dt, seed=1), r.concrete)
            failures += [f"{r.label} {_dtype_id(dt)}: {p}" for p in problems]
            if err is not None and not _numpy_raises(name, r, dt):
                # only a call NumPy refuses too may fail eagerly (bool - bool): anything else is
                # a broken recipe, which would make every comparison pass vacuously
                failures.append(f"{r.label} {_dtype_id(dt)}: raises eagerly: {err!r}")
    assert not failures, "\n".join(failures)


def _numpy_raises(name: str, r: Recipe, dt: onp.dtype) -> bool:
    if r.numpy is False or not _numpy_has(name):
        return False
    return _call(lambda *a: r.fn(onp, *a), r.make_args(dt))[1] is not None


def _numpy_has(name: str) -> bool:
    try:
        by_name(name)(onp)
        return True
    except AttributeError:
        return False


@pytest.mark.parametrize("name", sorted(n for n in RECIPES if _numpy_has(n)))
def test_function_eager_matches_numpy(name):
    """Eagerly, fgrad.numpy gives NumPy's values and dtypes (booleans aside: NumPy computes
    float functions of booleans in float16, fgrad in float64)."""
    failures = []
    for r in RECIPES[name]:
        if r.numpy is False:
            continue
        for dt in r.dtypes:
            if dt == B:
                continue
            args = r.make_args(dt)
            want, want_err = _call(lambda *a: r.fn(onp, *a), args)
            got, got_err = _call(lambda *a: r.fn(fnp, *a), args)
            if want_err is not None or got_err is not None:
                if (want_err is None) != (got_err is None):
                    failures.append(f"{r.label} {_dtype_id(dt)}: NumPy "
                                    f"{'raises ' + repr(want_err) if want_err else 'works'}, fgrad "
                                    f"{'raises ' + repr(got_err) if got_err else 'works'}")
                continue
            diff = _same(want, got, approx=True)
            if diff:
                failures.append(f"{r.label} {_dtype_id(dt)}: {diff}")
    assert not failures, "\n".join(failures)


# --- Python operators: eager is NumPy itself ------------------------------------------------------

OPERATOR_RECIPES: dict[str, list[Recipe]] = {}


def op_recipe(symbol: str, label: str, fn: Callable, *args: Arg, dtypes: tuple = ALL,
              raises: bool = False) -> None:
    """A recipe for operator `symbol`: fn(M, *arrays) ignores M (the operator decides)."""
    OPERATOR_RECIPES.setdefault(symbol, []).append(
        Recipe(f"{symbol}[{label}]", fn, args, dtypes, raises=raises))


_BINARY_OPERATORS = {  # symbol -> (operator, x, y, dtypes, Python scalars tried on each side)
    "+": (operator.add, *_ARITH, ALL, (2.5, 2, True)),
    "-": (operator.sub, *_ARITH, ALL, (2.5, 2)),
    "*": (operator.mul, *_ARITH, ALL, (2.5, 2, True)),
    "/": (operator.truediv, *_DIV, ALL, (2.5, 2, -2)),
    "//": (operator.floordiv, *_DIV, ALL, (2.5, 2, -2)),
    "%": (operator.mod, *_DIV, ALL, (3.0, 2.5, 2, -2)),
    "divmod": (divmod, *_DIV, ALL, (2.5, -2)),
    "**": (operator.pow, Arg(lo=0.5, hi=2), Arg(lo=0, hi=3), ALL, (2, 3, 0.5, -1)),
    "<": (operator.lt, *_ARITH, ALL, (0.5, 1)),
    "<=": (operator.le, *_ARITH, ALL, (0.5, 1)),
    ">": (operator.gt, *_ARITH, ALL, (0.5, 1)),
    ">=": (operator.ge, *_ARITH, ALL, (0.5, 1)),
    "==": (operator.eq, *_ARITH, ALL, (1.0, 1)),
    "!=": (operator.ne, *_ARITH, ALL, (1.0, 1)),
    "&": (operator.and_, *_ARITH, INTEGRAL, (3, True)),
    "|": (operator.or_, *_ARITH, INTEGRAL, (3, True)),
    "^": (operator.xor, *_ARITH, INTEGRAL, (3, True)),
}
for _sym, (_op, _x, _y, _dts, _scalars) in _BINARY_OPERATORS.items():
    op_recipe(_sym, "same_shape", lambda M, x, y, op=_op: op(x, y), _x, _y, dtypes=_dts)
    op_recipe(_sym, "broadcast", lambda M, x, y, op=_op: op(x, y), _x, Arg((3,), _y.lo, _y.hi, sign=_y.sign),
              dtypes=_dts)
    op_recipe(_sym, "0d", lambda M, x, y, op=_op: op(x, y), Arg((), _x.lo, _x.hi),
              Arg((), _y.lo, _y.hi, sign=_y.sign), dtypes=_dts)
    for _other in (I8, F4) if _dts != INTEGRAL else (I8, B):
        op_recipe(_sym, f"with_{_other}", lambda M, x, y, op=_op: op(x, y), _x,
                  Arg(lo=_y.lo, hi=_y.hi, dtype=_other, sign=_y.sign), dtypes=_dts)
    # a NumPy array that is not traced on either side (ndarray % tracer goes through
    # numpy's ufunc, then Tracer.__array_ufunc__)
    _c = _y.make(onp.random.default_rng(7), F8)
    op_recipe(_sym, "x,ndarray", lambda M, x, op=_op, c=_c: op(x, c.astype(x.dtype)), _x, dtypes=_dts)
    _c = _x.make(onp.random.default_rng(7), F8)
    op_recipe(_sym, "ndarray,y", lambda M, y, op=_op, c=_c: op(c.astype(y.dtype), y), _y, dtypes=_dts)
    for _s in _scalars:  # weak Python scalars: float32 with 2.5 stays float32
        op_recipe(_sym, f"x,{_s!r}", lambda M, x, op=_op, s=_s: op(x, s), _x, dtypes=_dts)
        op_recipe(_sym, f"{_s!r},y", lambda M, y, op=_op, s=_s: op(s, y), _y, dtypes=_dts)
    # NumPy scalars are not weak: float32 array * np.int64(2) is float64
    for _s in (onp.float32(2.5), onp.int64(2)) if _dts != INTEGRAL else (onp.int64(2), onp.bool_(True)):
        op_recipe(_sym, f"x,{type(_s).__name__}", lambda M, x, op=_op, s=_s: op(x, s), _x, dtypes=_dts)
        op_recipe(_sym, f"{type(_s).__name__},y", lambda M, y, op=_op, s=_s: op(s, y), _y, dtypes=_dts)
op_recipe("@", "matrices", lambda M, a, b: a @ b, X, Arg((3, 2)))
op_recipe("@", "vectors", lambda M, a, b: a @ b, V, V)
op_recipe("@", "matrix_vector", lambda M, a, b: a @ b, X, V)
op_recipe("@", "batched", lambda M, a, b: a @ b, X3, Arg((4, 2)))
op_recipe("@", "ndarray,y", lambda M, b: onp.ones((2, 3), b.dtype) @ b, Arg((3, 2)))
op_recipe("@", "scalar", lambda M, a: a @ 2.0, X, raises=True)
for _sym, _op, _dts in (("-x", operator.neg, ALL), ("+x", operator.pos, ALL), ("abs", abs, ALL),
                        ("~", operator.invert, INTEGRAL + FLOATS)):
    op_recipe(_sym, "2d", lambda M, x, op=_op: op(x), Arg(lo=-3, hi=3), dtypes=_dts)
    op_recipe(_sym, "0d", lambda M, x, op=_op: op(x), Arg((), -3, 3), dtypes=_dts)
op_recipe("[]", "int", lambda M, x: x[1], X)
op_recipe("[]", "slices", lambda M, x: x[::-1, 1:], X)
op_recipe("[]", "none_ellipsis_negative", lambda M, x: x[None, ..., -1], X3)
op_recipe("[]", "int_array", lambda M, x, i: x[:, i], X, _IDX)
op_recipe("[]", "list", lambda M, x: x[[1, 0, 1]], X)
op_recipe("[]", "two_arrays", lambda M, x, i, j: x[i, j], X, Distinct(2, 2), _IDX)


# --- ndarray methods on traced values, and plain NumPy functions applied to them ------------

_METHODS = {  # label -> fn(x, y) with x (2, 3) and y (3, 2)
    "sum()": lambda x, y: x.sum(), "sum(axis,keepdims)": lambda x, y: x.sum(axis=0, keepdims=True),
    "sum(dtype)": lambda x, y: x.sum(dtype=onp.float32), "mean(1)": lambda x, y: x.mean(1),
    "var(ddof)": lambda x, y: x.var(ddof=1), "std(axis)": lambda x, y: x.std(axis=0),
    "max()": lambda x, y: x.max(), "max(axis,initial)": lambda x, y: x.max(axis=1, initial=0),
    "min(0)": lambda x, y: x.min(0), "prod()": lambda x, y: x.prod(), "prod(1)": lambda x, y: x.prod(1),
    "argmax()": lambda x, y: x.argmax(), "argmin(1)": lambda x, y: x.argmin(1),
    "cumsum(0)": lambda x, y: x.cumsum(0), "any()": lambda x, y: x.any(),
    "all(axis)": lambda x, y: x.all(axis=1), "round(1)": lambda x, y: x.round(1),
    "clip(lo,hi)": lambda x, y: x.clip(-1, 1), "clip(max=)": lambda x, y: x.clip(max=0.5),
    "transpose()": lambda x, y: x.transpose(), "transpose(1,0)": lambda x, y: x.transpose(1, 0),
    "transpose((1,0))": lambda x, y: x.transpose((1, 0)), "T": lambda x, y: x.T,
    "reshape(3,2)": lambda x, y: x.reshape(3, 2), "reshape((3,-1))": lambda x, y: x.reshape((3, -1)),
    "reshape(order)": lambda x, y: x.reshape(6, order="C"), "ravel()": lambda x, y: x.ravel(),
    "flatten()": lambda x, y: x.flatten(), "squeeze()": lambda x, y: x[None].squeeze(),
    "swapaxes": lambda x, y: x.swapaxes(0, 1), "repeat": lambda x, y: x.repeat(2, axis=0),
    "take": lambda x, y: x.take([0, 2], axis=1), "dot": lambda x, y: x.dot(y),
    "diagonal": lambda x, y: x.diagonal(), "trace": lambda x, y: x.trace(),
    "astype": lambda x, y: x.astype(onp.float32), "copy": lambda x, y: x.copy(),
    "shape": lambda x, y: x.shape, "ndim": lambda x, y: x.ndim, "size": lambda x, y: x.size,
    "len": lambda x, y: len(x), "iter": lambda x, y: list(x),
}
for _label, _m in _METHODS.items():
    op_recipe(f".{_label}", "2d", lambda M, x, y, m=_m: m(x, y), X, Arg((3, 2)),
              dtypes=REALS if _label in ("dot", "round(1)") else ALL)

# NumPy functions that defer to the array's method (numpy.sum(x) calls x.sum(...)): these
# must work on traced values as on arrays
_NUMPY_ON_TRACERS = {
    "sum": lambda x: onp.sum(x), "sum(axis,keepdims)": lambda x: onp.sum(x, axis=1, keepdims=True),
    "mean": lambda x: onp.mean(x), "mean(axis)": lambda x: onp.mean(x, axis=0),
    "max": lambda x: onp.max(x), "max(axis)": lambda x: onp.max(x, axis=1),
    "min": lambda x: onp.min(x), "amax": lambda x: onp.amax(x, 0), "amin": lambda x: onp.amin(x),
    "prod": lambda x: onp.prod(x), "std": lambda x: onp.std(x), "std(ddof)": lambda x: onp.std(x, ddof=1),
    "var": lambda x: onp.var(x), "var(axis)": lambda x: onp.var(x, axis=0),
    "any": lambda x: onp.any(x), "all": lambda x: onp.all(x, axis=0),
    "cumsum": lambda x: onp.cumsum(x), "cumsum(axis)": lambda x: onp.cumsum(x, axis=1),
    "transpose": lambda x: onp.transpose(x), "transpose(axes)": lambda x: onp.transpose(x, (1, 0)),
    "reshape": lambda x: onp.reshape(x, (3, 2)), "reshape(-1)": lambda x: onp.reshape(x, -1),
    "round": lambda x: onp.round(x), "round(decimals)": lambda x: onp.round(x, 1),
    "around": lambda x: onp.around(x, 1), "clip": lambda x: onp.clip(x, -1, 1),
    "argmax": lambda x: onp.argmax(x), "argmin": lambda x: onp.argmin(x, axis=1),
    "squeeze": lambda x: onp.squeeze(x[None]), "swapaxes": lambda x: onp.swapaxes(x, 0, 1),
    "repeat": lambda x: onp.repeat(x, 2), "take": lambda x: onp.take(x, [1, 0]),
    "shape": lambda x: onp.shape(x), "ndim": lambda x: onp.ndim(x), "size": lambda x: onp.size(x),
    "sin": lambda x: onp.sin(x), "mod": lambda x: onp.mod(x, 1.5), "divmod": lambda x: onp.divmod(x, 1.5),
}
for _label, _f in _NUMPY_ON_TRACERS.items():
    # not booleans for float functions: NumPy computes them in float16, fgrad in float64
    # (see test_function_eager_matches_numpy)
    op_recipe(f"numpy.{_label}", "2d", lambda M, x, f=_f: f(x), X, dtypes=REALS if "round" in _label or
              _label in ("around", "mod", "divmod", "sin") else ALL)

@pytest.mark.parametrize("symbol", sorted(OPERATOR_RECIPES))
def test_operator_parity(symbol):
    """A Python operator on traced values means what it means on NumPy arrays: the same
    values and dtypes as NumPy under grad, jvp, jit and vmap (or an error where NumPy has one)."""
    failures = []
    for r in OPERATOR_RECIPES[symbol]:
        fn = lambda *a, r=r: r.fn(None, *a)  # noqa: E731
        worked = False
        for dt in r.dtypes:
            problems, err = _check_parity(fn, r.make_args(dt), r.make_args(dt, seed=1))
            failures += [f"{r.label} {_dtype_id(dt)}: {p}" for p in problems]
            worked = worked or err is None
        if not worked and not r.raises:
            failures.append(f"{r.label}: NumPy raises for every dtype; the recipe tests nothing")
    assert not failures, "\n".join(failures)


# What cannot work must raise TracerArrayConversionError (never a bare TypeError from NumPy)
_NUMPY_REFUSED = {
    "sum(out=)": lambda x: onp.sum(x, out=onp.zeros(())),
    "cumsum(out=)": lambda x: onp.cumsum(x, out=onp.zeros(6)),
    "sin(out=)": lambda x: onp.sin(x, out=onp.zeros((2, 3))),
    "add.reduce": lambda x: onp.add.reduce(x), "spacing": lambda x: onp.spacing(x),
    "sort": lambda x: onp.sort(x), "dot": lambda x: onp.dot(x, x.T), "ravel": lambda x: onp.ravel(x),
    "concatenate": lambda x: onp.concatenate([x, x]), "asarray": lambda x: onp.asarray(x),
}


@pytest.mark.parametrize("label", sorted(_NUMPY_REFUSED))
def test_numpy_functions_that_cannot_follow_raise_tracer_array_conversion_error(label):
    x = onp.arange(6.0).reshape(2, 3)
    f = _NUMPY_REFUSED[label]
    for t in TRANSFORMS:
        run = (lambda: fgrad.vmap(f)(onp.stack([x, x]))) if t == "vmap" else (lambda: _traced(t, f, (x,)))
        with pytest.raises(TracerArrayConversionError):
            run()


# --- Python numbers passed as arguments of the transformed function ------------------------------

@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("op", ["*", "+", "%"])
def test_python_scalar_arguments_stay_weak(transform, op):
    """f(x, 2.0) with a float32 x is float32 eagerly (a Python float is weak), so it must be
    float32 when 2.0 is an argument that the transform traces too (jit, vmap with in_axes
    None, grad and jvp over x)."""
    f = {"*": operator.mul, "+": operator.add, "%": operator.mod}[op]
    x = onp.array([1.5, -2.5], onp.float32)
    want = f(x, 2.0)
    if transform == "vmap":
        got = fgrad.vmap(f, in_axes=(0, None))(x, 2.0)
    elif transform == "jit":
        got = fgrad.jit(f)(x, 2.0)
    elif transform == "grad":
        got = fgrad.vjp(f, x, 2.0)[0]
    else:
        got = fgrad.jvp(f, (x, 2.0), (onp.ones_like(x), 0.0))[0]
    assert _same(want, got, approx=False) is None, _same(want, got, approx=False)


# --- regression tests, one behaviour each ------------------------------------------------------

def test_mod_operator_is_python_remainder_under_every_transform():
    """`x % 3.0` is Python's remainder (the divisor's sign) eagerly and under every transform;
    it used to be C's fmod when traced (-1.0 % 3.0 gave -1.0 under grad and jit)."""
    f = lambda x: x % 3.0  # noqa: E731
    assert f(-1.0) == 2.0
    value, g = fgrad.value_and_grad(f)(-1.0)
    assert (value, g) == (2.0, 1.0)
    assert fgrad.jit(f)(-1.0) == 2.0
    assert fgrad.jvp(f, (-1.0,), (1.0,)) == (2.0, 1.0)
    onp.testing.assert_array_equal(fgrad.vmap(f)(onp.array([-1.0, 4.0, -3.5])), [2.0, 1.0, 2.5])
    assert fgrad.grad(lambda y: 7.0 % y)(-3.0) == 3.0  # d/dy = -floor(7 / -3) = 3
    assert fgrad.jit(lambda x: divmod(x, 3.0))(-1.0) == (-1.0, 2.0)


_DIVIDENDS = onp.array([-7.5, -7.0, -1.0, -0.0, 0.0, 0.5, 3.0, 7.25, onp.inf, onp.nan])
_DIVISORS = onp.array([3.0, -3.0, 0.75, -0.75, 0.0, onp.inf, -onp.inf])


@pytest.mark.parametrize("name", ["remainder", "mod", "fmod", "floor_divide", "divmod"])
def test_division_family_matches_numpy_including_zero_and_inf(name):
    """Values, signs of zeros and dtypes as NumPy, for every pair of special values, eagerly
    and under jit and vmap; integers stay integers (x % 0 == 0, x // 0 == 0, as NumPy)."""
    x, y = onp.meshgrid(_DIVIDENDS, _DIVISORS)
    ix, iy = onp.meshgrid(onp.array([-7, -1, 0, 5, 2 ** 62 + 1]), onp.array([3, -3, 1, 0, 7]))
    for a, b in ((x, y), (x.astype(onp.float32), y.astype(onp.float32)), (ix, iy), (ix.astype(onp.int8) % 100,
                 iy.astype(onp.int8)), (x > 0, y > 0)):
        with onp.errstate(all="ignore"):
            want = getattr(onp, name)(a, b)
        for run in (lambda f: f(a, b), lambda f: fgrad.jit(f)(a, b), lambda f: fgrad.vmap(f)(a, b)):
            got = run(getattr(fnp, name))
            assert _same(want, got, approx=False) is None, (a.dtype, _same(want, got, approx=False))
            for w, g in zip(_leaves(want), _leaves(got)):  # -0.0 and 0.0 differ in sign
                onp.testing.assert_array_equal(onp.signbit(w), onp.signbit(g))


def test_integer_remainder_is_exact_beyond_float_precision():
    """Integer % stays integer arithmetic: no detour through float64, which would round 2**62 + 1."""
    x = onp.array([2 ** 62 + 1, -(2 ** 62) - 1], onp.int64)
    assert fnp.remainder(x, 7).tolist() == [(2 ** 62 + 1) % 7, (-(2 ** 62) - 1) % 7]
    assert fgrad.jit(lambda v: v % 7)(x).tolist() == [(2 ** 62 + 1) % 7, (-(2 ** 62) - 1) % 7]
    assert fgrad.jit(lambda v: v // 7)(x).tolist() == [(2 ** 62 + 1) // 7, (-(2 ** 62) - 1) // 7]
    assert fnp.fmod(x, 7).tolist() == [(2 ** 62 + 1) % 7, -((2 ** 62 + 1) % 7)]  # C: sign of x
    assert fgrad.jit(fnp.remainder)(x, onp.int64(7)).dtype == onp.int64


@pytest.mark.parametrize("name", ["remainder", "fmod"])
def test_remainder_and_fmod_gradients(name):
    """d/dx = 1 and d/dy = -n, n the integer quotient the value used (floor(x / y) for
    remainder, trunc(x / y) for fmod), checked against finite differences to order 2 in both
    modes, for every sign combination, away from the jumps."""
    from fgrad.test_util import check_grads
    f = getattr(fnp, name)
    x = onp.array([-7.3, -2.2, 2.2, 7.3, 0.4, -0.4])
    y = onp.array([3.1, -3.1, 1.7, -1.7, 0.9, 2.5])
    check_grads(f, (x, y), order=2, modes=("fwd", "rev"))
    check_grads(lambda a: f(a, 1.3), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda b: f(5.3, b), (y,), order=2, modes=("fwd", "rev"))
    gx, gy = fgrad.grad(lambda a, b: fnp.sum(f(a, b)), argnums=(0, 1))(x, y)
    n = onp.floor(x / y) if name == "remainder" else onp.trunc(x / y)
    onp.testing.assert_array_equal(gx, onp.ones_like(x))
    onp.testing.assert_array_equal(gy, -n)
    # the quotient the value used, also where x / y rounds across an integer: fmod(1, 0.1) is
    # 1 - 9 * 0.1 (0.1 is slightly more than a tenth), although trunc(1.0 / 0.1) == 10
    assert fgrad.grad(lambda b: f(1.0, b))(0.1) == -9.0
    onp.testing.assert_allclose(fgrad.jacfwd(lambda b: f(1.0, b))(0.1), -9.0)


def test_std_gradient_at_zero_spread_is_zero():
    """std of a constant vector has a kink (a norm at 0): its gradient is 0 by the
    norm'(0) = 0 convention, not NaN, to order 2, in both modes; var is smooth there."""
    for c in (onp.ones(3), onp.full((2, 4), 0.1), onp.zeros(5)):
        onp.testing.assert_array_equal(fgrad.grad(fnp.std)(c), onp.zeros_like(c))
        onp.testing.assert_array_equal(fgrad.jacfwd(fnp.std)(c), onp.zeros_like(c))
        onp.testing.assert_array_equal(fgrad.hessian(fnp.std)(c), onp.zeros(c.shape * 2))
        onp.testing.assert_array_equal(fgrad.grad(lambda v: fnp.std(v, axis=0).sum())(c), onp.zeros_like(c))
        onp.testing.assert_array_equal(fgrad.grad(fnp.var)(c), onp.zeros_like(c))
        n = c.size
        onp.testing.assert_allclose(fgrad.hessian(fnp.var)(c).reshape(n, n),
                                    2.0 / n * (onp.eye(n) - 1.0 / n), atol=1e-15)
    assert fgrad.jvp(fnp.std, (onp.ones(3),), (onp.array([1.0, -2.0, 0.5]),)) == (0.0, 0.0)
    # away from the kink the gradient is unchanged: (x - mean) / (n * std)
    x = onp.array([1.0, 2.0, 4.0])
    onp.testing.assert_allclose(fgrad.grad(fnp.std)(x), (x - x.mean()) / (3 * x.std()))


def test_lists_of_traced_values_become_arrays():
    """np.array / asarray / mean / std / r_ / c_ of (nested) lists and tuples of traced values
    (mixed with Python numbers) stack them with fgrad ops, under grad and jvp (the autograd
    idiom), with np.array's shape and dtype."""
    g = fgrad.grad(lambda x, y: fnp.sum(fnp.array([x, y]) ** 2), argnums=(0, 1))(1.0, 2.0)
    assert g == (2.0, 4.0)
    assert fgrad.grad(lambda a: fnp.sum(fnp.asarray((a, 2.0 * a, 3))))(1.0) == 3.0
    assert fgrad.grad(lambda a: fnp.mean([a, 2.0]))(1.0) == 0.5
    onp.testing.assert_allclose(fgrad.grad(lambda a: fnp.std([a, 0.0, 1.0]))(2.0),
                                fgrad.grad(lambda a: fnp.std(fnp.stack([a, 0.0, 1.0])))(2.0))
    assert fgrad.grad(lambda a: fnp.sum(fnp.r_[a, 2.0 * a, 0:3]))(1.0) == 3.0
    onp.testing.assert_array_equal(fgrad.grad(lambda v: fnp.sum(fnp.c_[v, v * v]))(onp.ones(2)), [3.0, 3.0])
    out, tangent = fgrad.jvp(lambda a: fnp.array([[a, 1.0], [2.0, a * a]]), (3.0,), (1.0,))
    onp.testing.assert_array_equal(out, [[3.0, 1.0], [2.0, 9.0]])
    onp.testing.assert_array_equal(tangent, [[1.0, 0.0], [0.0, 6.0]])
    v = fgrad.vjp(lambda a: fnp.array([a, [1.0, 2.0]], dtype=onp.float32), onp.ones(2))[0]
    assert v.dtype == onp.float32 and v.shape == (2, 2)
    # np.array's dtype rules: a Python int beside float32 values makes float64
    want = onp.array([onp.float32(1), 2]).dtype
    assert fgrad.vjp(lambda a: fnp.array([a, 2]), onp.float32(1.0))[0].dtype == want
    with pytest.raises(TypeError, match="different shapes"):
        fgrad.grad(lambda a: fnp.sum(fnp.array([a, [1.0]])))(onp.ones(2))


def test_lists_of_tensors_are_refused_by_the_functional_door():
    """A list holding Tensors is not an array fgrad.numpy builds (its history would be lost):
    a TypeError naming fgrad.torch; torch.stack builds it through the facade."""
    a = fgrad.torch.tensor(2.0, requires_grad=True)
    b = fgrad.torch.tensor([1.0, 3.0], requires_grad=True)
    with pytest.raises(TypeError, match="fgrad.numpy.array got a fgrad.torch.Tensor"):
        fnp.array([[a, 1.0], b])
    out = (fgrad.torch.stack([fgrad.torch.stack([a, a * 0 + 1.0]), b]) ** 2).sum()
    out.backward()
    assert a.grad.item() == 4.0 and b.grad.tolist() == [2.0, 6.0]


def test_any_and_all():
    """any/all (functions and methods): NumPy's values, a bool dtype, axis/keepdims/where,
    NaN counts as true, an empty reduction is False/True, and they are constants under grad."""
    x = onp.array([[0.0, onp.nan, 0.0], [1.0, 2.0, 0.0]])
    mask = onp.array([True, False, True])
    for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"axis": 1, "where": mask}):
        for name in ("any", "all"):
            want = getattr(onp, name)(x, **kw)
            assert _same(want, getattr(fnp, name)(x, **kw), approx=False) is None
            assert _same(want, fgrad.jit(lambda v: getattr(v, name)(**kw))(x), approx=False) is None
    assert not fnp.any(onp.zeros((0, 3))) and fnp.all(onp.zeros((0, 3)))
    g = fgrad.grad(lambda v: fnp.where(fnp.any(v > 1.0), v, 0.0).sum())(onp.array([0.5, 2.0]))
    assert g.tolist() == [1.0, 1.0]


def test_item_assignment_on_traced_value_points_to_at_set():
    """x[0] = 1.0 on a traced value is a TypeError that names the functional update
    x.at[idx].set(v), under every transform; that update works."""
    def f(x):
        x[0] = 1.0
        return x.sum()
    x = onp.arange(3.0)
    for run in (lambda: fgrad.grad(f)(x), lambda: fgrad.jvp(f, (x,), (x,)), lambda: fgrad.jit(f)(x),
                lambda: fgrad.vmap(f)(onp.ones((2, 3)))):
        with pytest.raises(TypeError, match=r"x = x\.at\[idx\]\.set\(v\)"):
            run()
    onp.testing.assert_array_equal(fgrad.grad(lambda x: x.at[0].set(1.0).sum())(x), [0.0, 1.0, 1.0])


def test_out_argument_is_refused_with_a_clear_error():
    """numpy.sum(x, out=buf) on a traced x raises TracerArrayConversionError that says why."""
    with pytest.raises(TracerArrayConversionError, match="out= is not supported"):
        fgrad.grad(lambda x: onp.sum(x, out=onp.zeros(())))(onp.ones(3))
    with pytest.raises(TracerArrayConversionError, match="out= is not supported"):
        fnp.mean(onp.ones(3), out=onp.zeros(()))


@pytest.mark.xfail(strict=True, reason="known: at_set with repeated, traced index arrays (jit/vmap) "
                   "averages the updates, while eagerly the last one wins; NumPy and JAX leave the "
                   "order unspecified, and picking the last one with traced indices needs a scatter "
                   "that keeps a maximum, which fgrad does not have")
def test_at_set_repeated_traced_indices_agree_with_eager():
    x, v, i = onp.zeros(3), onp.array([1.0, 2.0]), onp.array([1, 1])
    want = fnp.at_set(x, i, v)
    got = fgrad.jit(fnp.at_set)(x, i, v)
    assert _same(want, got, approx=False) is None


def test_floor_divide_and_remainder_are_consistent():
    """x == (x // y) * y + x % y (exactly for integers, to rounding for floats), eagerly and
    traced, and divmod(x, y) is the pair (x // y, x % y), as in Python and NumPy."""
    x, y = onp.array([-7.5, -1.0, 0.5, 7.25, 1.0]), onp.array([3.0, -0.75, -3.0, 0.75, 0.1])
    i, j = onp.array([-7, -1, 5, 9]), onp.array([3, -3, -2, 4])
    for run in (lambda f, *a: f(*a), lambda f, *a: fgrad.jit(f)(*a), lambda f, *a: fgrad.vjp(f, *a)[0]):
        q, r = run(divmod, x, y)
        onp.testing.assert_array_equal(q, run(lambda a, b: a // b, x, y))
        onp.testing.assert_array_equal(r, run(lambda a, b: a % b, x, y))
        onp.testing.assert_allclose(q * y + r, x, rtol=1e-15, atol=1e-15)
        qi, ri = run(divmod, i, j)
        assert (qi * j + ri).tolist() == i.tolist() and qi.dtype == ri.dtype == onp.int64
