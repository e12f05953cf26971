"""Eager sine and cosine of float64 arrays with jit's vectorised kernels.

NumPy computes float64 sin and cos one element at a time with the C library (about ten
times the cost of its SIMD exp, tanh or float32 sin), while jit's element-wise kernels over
`vmath.LARGE` elements or more compute them with vmath's vectorisable versions. `install`
(called by fgrad.ops.elementwise) gives `sin` and `cos` impls that run those same kernels on
NumPy float64 arrays of at least `EAGER_MIN` elements, so that eager, replayed and
jit-compiled programs compute the same bits there (a function of dtype and size only; smaller
arrays, other dtypes and other array modules keep NumPy's functions). Each kernel is built once per process, from LLVM IR and
the on-disk object cache like every jit kernel (no Numba), on the first call that needs it.
"""
from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.ir import Jaxpr, Eqn, Var
from . import vmath
from .kernels import kernel_spec, load_kernel
from .regions import plan

_F64 = np.dtype(np.float64)
# The first such call of a process builds or links the kernel (tens of milliseconds, once);
# from this size on a call saves enough over NumPy's scalar loop to repay that within a few
# hundred calls, while a program whose arrays are all smaller never waits for it.
EAGER_MIN = 8192
_KERNELS: dict = {}  # primitive -> its compiled one-equation kernel


def _kernel(prim):
    """The compiled kernel `kernel(x, out)` computing `prim` element-wise over float64 (any
    length at or above vmath.LARGE: it reads the length from `out`)."""
    fn = _KERNELS.get(prim)
    if fn is None:
        aval = ShapedArray((vmath.INLINE,), _F64)  # (a length that inlines vmath's functions)
        x, y = Var(aval), Var(aval)
        (step,) = plan(Jaxpr([], [x], [Eqn(prim, [x], [y], {})], [y]), 1)
        fn = _KERNELS[prim] = load_kernel(kernel_spec(step))
    return fn


def _vectorised(prim, impl):
    """An impl of `prim` that runs the kernel on a float64 NumPy array of at least
    EAGER_MIN elements and the primitive's own `impl` on anything else. The result has
    the layout NumPy's function would give it (the operand's order of strides)."""
    def vectorised(x, *, xp):
        if xp is not np or type(x) is not np.ndarray or x.dtype != _F64 or x.size < EAGER_MIN:
            return impl(x, xp=xp)
        out = np.empty_like(x)
        if x.flags.c_contiguous or x.flags.f_contiguous:  # (then x and out share an order)
            _kernel(prim)(x.ravel("K"), out.ravel("K"))
        else:
            out[...] = vectorised(np.ascontiguousarray(x), xp=xp)
        return out
    vectorised.__name__ = vectorised.__qualname__ = f"{prim.name}_impl"
    return vectorised


def install(*prims) -> None:
    """Give each of `prims` (sine and cosine: their lowerings must be vmath's functions) the
    impl above (jit's programs then call the impl, not NumPy's function, for a lone one)."""
    for prim in prims:
        if prim.np_function is not None:
            prim.def_impl(_vectorised(prim, prim.raw_impl))
            prim.np_function = None
