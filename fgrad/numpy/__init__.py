"""fgrad.numpy: NumPy's API over fgrad primitives, so `import fgrad.numpy as np`
code differentiates as-is. Functions normalise arguments (dtype promotion,
broadcasting) and bind primitives; all derivative rules live in fgrad.ops."""
from numpy import (bool_, complex64, complex128, dtype, e, euler_gamma, float16, float32,  # noqa: F401
                   float64, inf, int8, int16, int32, int64, nan, newaxis, pi, uint8)

from ._elementwise import *  # noqa: F401,F403
from ._elementwise import abs, round  # noqa: F401
from ._reductions import amax, amin, argmax, argmin, max, mean, min, std, sum, var  # noqa: F401
from ._shape import *  # noqa: F401,F403
from ._index import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._linalg import *  # noqa: F401,F403
from ._util import as_value as _as_value, cast as _cast, dtype_arg as _dtype_arg
from . import _operators  # noqa: F401  (installs Tracer operators)
from . import linalg  # noqa: F401,E402


def asarray(a, dtype=None):
    """`a` as a value fgrad computes with: numeric arrays, tracers and Tensors pass unchanged,
    Python numbers and nested lists become NumPy arrays; cast to `dtype` when given."""
    v = _as_value(a, "asarray")
    return v if dtype is None else _cast(v, _dtype_arg(dtype, "asarray"))


array = asarray
