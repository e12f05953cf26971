"""Scalar helpers that lowering rules (`Primitive.def_lowering`) may call by name, for the
operations that are more than one Python expression or whose Python and Numba spellings
differ. Each is written so that it computes what NumPy's loop computes for one element.

Three runtimes use them: the scalar tier (0-d float64/bool regions run as plain Python, where a
math domain or overflow error sends the region back to the impls) calls these functions;
region kernels translate their source into LLVM IR (llvm_kernels.py); loops.py's Numba loops
embed their source (`numba_source`), or the Numba spelling in `_NUMBA` where the Python one
would not compile or would raise instead of returning inf or NaN (llvm_kernels writes those
helpers' IR itself, as Numba compiles the `_NUMBA` spelling).
"""
from __future__ import annotations

import inspect
import math

_LOGE2 = math.log(2.0)


def fg_floor(x):
    """NumPy's floor of a float (keeps -0.0; the Python spelling raises on inf and NaN)."""
    r = float(math.floor(x))
    return math.copysign(r, x) if r == 0.0 else r


def fg_ceil(x):
    """NumPy's ceil of a float (-0.5 gives -0.0)."""
    r = float(math.ceil(x))
    return math.copysign(r, x) if r == 0.0 else r


def fg_rint(x):
    """NumPy's round of a float: to the nearest integer, halves to even (-0.4 gives -0.0)."""
    r = float(round(x))
    return math.copysign(r, x) if r == 0.0 else r


def fg_fmod(x, y):
    """C's fmod of floats (NumPy's fmod): the sign of x; NaN for y == 0."""
    return math.fmod(x, y)


def fg_cbrt(x):
    """The real cube root."""
    return math.cbrt(x)


def fg_sign(x):
    """NumPy's sign of a float: -1.0, 0.0 (also for -0.0) or 1.0, NaN for NaN."""
    return 1.0 if x > 0 else (-1.0 if x < 0 else (0.0 if x == 0 else x))


def fg_logistic(x):
    """1 / (1 + exp(-x)), as fgrad's impl computes it: exp of a non-positive number only."""
    e = math.exp(-abs(x))
    return 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)


def fg_logaddexp(x, y):
    """log(exp(x) + exp(y)), NumPy's npy_logaddexp step by step."""
    if x == y:
        return x + _LOGE2  # equal infinities too
    d = x - y
    if d > 0:
        return x + math.log1p(math.exp(-d))
    if d <= 0:
        return y + math.log1p(math.exp(d))
    return d  # NaN


def fg_floordiv_i(x, y):
    """NumPy's floor_divide of signed integers: 0 for y == 0, and MIN // -1 wraps to MIN."""
    if y == 0:
        return x - x
    if y == -1:
        return -x
    return x // y


def fg_fmod_i(x, y):
    """NumPy's fmod of integers: C's truncated remainder (the sign of x), 0 for y == 0."""
    if y == 0:
        return x - x
    r = x % y  # Python's remainder has the sign of y
    if r != 0 and (r < 0) != (x < 0):
        r -= y
    return r


# Numba spellings where the Python one does not compile (math.fmod, math.cbrt) or raises
# where NumPy returns inf or NaN (math.floor of inf).
_NUMBA = {
    "fg_floor": "def fg_floor(x):\n    return np.floor(x)\n",
    "fg_ceil": "def fg_ceil(x):\n    return np.ceil(x)\n",
    "fg_rint": "def fg_rint(x):\n    return np.rint(x)\n",
    "fg_fmod": "def fg_fmod(x, y):\n    return np.fmod(x, y)\n",
    "fg_cbrt": "def fg_cbrt(x):\n    return np.cbrt(x)\n",
}

HELPERS = {name: fn for name, fn in globals().items() if name.startswith("fg_") and callable(fn)}
CONSTANTS = {"_LOGE2": _LOGE2}


def numba_source(name: str) -> str:
    """The source of helper `name` for a Numba kernel (undecorated)."""
    src = _NUMBA.get(name)
    if src is None:
        src = inspect.getsource(HELPERS[name])
    return src
