"""fgrad.numpy: NumPy's API over fgrad primitives, so `import fgrad.numpy as np`
code differentiates as-is. Functions normalise arguments (dtype promotion,
broadcasting) and bind primitives; all derivative rules live in fgrad.ops."""
from typing import Any as _Any

from numpy import (bool_, complex64, complex128, dtype, e, euler_gamma, float16, float32,  # noqa: F401
                   float64, inf, int8, int16, int32, int64, nan, newaxis, pi, uint8)

from ._elementwise import *  # noqa: F401,F403
from ._elementwise import abs, round  # noqa: F401
from ._reductions import all, amax, amin, any, argmax, argmin, max, mean, min, std, sum, var  # noqa: F401
from ._shape import *  # noqa: F401,F403
from ._index import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._linalg import *  # noqa: F401,F403
from ._complex import *  # noqa: F401,F403
from ._cumulative import *  # noqa: F401,F403
from ._counting import *  # noqa: F401,F403
from ._setops import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._products import *  # noqa: F401,F403
from ._indices import *  # noqa: F401,F403
from ._math_extra import *  # noqa: F401,F403
from ._nanreductions import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._calculus import *  # noqa: F401,F403
from ._averages import *  # noqa: F401,F403
from ._series import *  # noqa: F401,F403
from ._insertion import *  # noqa: F401,F403
from ._polynomial import *  # noqa: F401,F403
from ._functional import *  # noqa: F401,F403
from ._more import *  # noqa: F401,F403
from ._index_tricks import c_, r_, _ndmin  # noqa: F401
from ._util import as_value as _as_value, cast as _cast, dtype_arg as _dtype_arg, fresh as _fresh, int_arg as _int_arg
import sys as _sys

import numpy as _np

from ..core.trace import aliases as _aliases
from ._layout import laid_out as _laid_out, order_arg as _order_arg

from ..core.array_methods import array_api as _array_api
from ._array import Array, as_array as _as_array  # noqa: F401
from ._array import AnyArray as ndarray  # noqa: F401 (JAX's jnp.ndarray: isinstance of any fgrad array)
from ._util import register_fast_type as _register_fast_type
from ..interpreters.jvp import JVPTracer as _JVPTracer
from ..interpreters.record import RecordTracer as _RecordTracer
from ..interpreters.staging import StagingTracer as _StagingTracer

# Types whose .shape and .dtype promote() may trust (the weak tracer subclasses are not among
# them: their promotion depends on their aval)
for _t in (Array, _JVPTracer, _RecordTracer, _StagingTracer):
    _register_fast_type(_t)
from . import linalg, fft  # noqa: F401,E402


def asarray(a: _Any, dtype: _Any = None, order: _Any = None, *, copy: _Any = None) -> _Any:
    """`a` as a value fgrad computes with: numeric arrays and tracers pass unchanged,
    Python numbers and nested lists become NumPy arrays, and nested lists or tuples holding
    traced values are stacked into one traced array (np.array's shape and dtype rules);
    cast to `dtype` when given. With copy=True the result is always a new array; otherwise
    `a` itself where it already is one of that dtype (NumPy's asarray). `order` ('C', 'F',
    'A', 'K'; None is 'K') lays concrete arrays out as NumPy does; an ndarray subclass
    (np.matrix, a masked array) becomes a plain array of its data, as in NumPy."""
    v = _as_value(a, "asarray")
    tv = type(v)
    if tv is not _np.ndarray and tv is not Array and isinstance(v, _np.ndarray):
        v = _np.asarray(v)  # (np.matrix, a masked array: their data as a plain array)
    out = v if dtype is None else _cast(v, _dtype_arg(dtype, "asarray"))
    if order is None and not copy:  # (NumPy's 'K' without a copy: the layout as it is)
        return _as_array(out)
    order = _order_arg(order, "asarray")
    if isinstance(out, _np.ndarray):
        return _as_array(_laid_out(out, order, bool(copy) and _aliases(out, (a,))))
    out = _as_array(out)
    return _fresh(out, a) if copy else out


def array(object: _Any, dtype: _Any = None, *, copy: _Any = True, order: _Any = "K", ndmin: int = 0) -> _Any:
    """asarray(object, dtype, order) with at least `ndmin` dimensions (leading axes of size 1),
    as np.array: lists of traced values become one traced array; a new array unless copy=False
    (or None) and `object` already is an array of that dtype and layout."""
    v = asarray(object, dtype, order, copy=copy)
    if ndmin:
        v = _ndmin(v, _int_arg(ndmin, "array", "ndmin"))
    return v

# traced values' operators and methods (fgrad.core.array_methods) compute with this namespace
_array_api.module = _sys.modules[__name__]

# What the star imports above bring in from modules whose __all__ is computed, re-exported by
# name for static checkers (mypy reads no names from such a star import); the stub is generated
# by tools/gen_type_stubs.py and never imported at run time.
import typing as _typing  # noqa: E402
if _typing.TYPE_CHECKING:
    from ._numpy_names import *  # noqa: F401,F403
