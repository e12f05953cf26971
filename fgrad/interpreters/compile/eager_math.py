"""Eager element-wise primitives on large arrays with jit's vectorised kernels.

NumPy computes float64 sin and cos one element at a time with the C library (about ten
times the cost of its SIMD exp, tanh or float32 sin), while jit's element-wise kernels over
`vmath.LARGE` elements or more compute them with vmath's vectorisable versions (and the
fused gradients of sine and cosine, ct cos(x) and ct (-sin(x)), one pass where the two ops
take two); the fused gradients of tanh and the logistic function (ct (1 + y)(1 - y),
ct y (1 - y)) take NumPy four passes over blocks of memory, a kernel one. `install` (called
by fgrad.ops.elementwise) gives such primitives impls that run jit's kernels on NumPy arrays
of the given dtypes:
- vmath's functions (other bits than NumPy's) from `EAGER_MIN` elements, jit's own
  threshold, so that eager, replayed and jit-compiled programs compute the same bits at every
  size (a function of dtype and size only);
- kernels that do NumPy's arithmetic in NumPy's order (tanh's and the logistic function's
  gradients: NumPy's bits at every size) from `SAME_BITS_AT_ONCE` elements, and from
  `SAME_BITS_MIN` once they have run `SAME_BITS_CALLS` times, in a process that has loaded
  LLVM for something else (an eager-only program keeps NumPy's code for them).
Smaller arrays, other dtypes and other array modules keep the primitive's own impl.
Each kernel is built once per process and dtype, from LLVM IR and the on-disk object cache
like every jit kernel (no Numba), on the first call that needs it.
"""
from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.ir import Jaxpr, Eqn, Var
from . import native, vmath
from .kernels import kernel_spec, load_kernel
from .regions import plan

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
# vmath's functions from jit's threshold: the first such call of a process links the kernel
# from the on-disk cache (or builds it once, tens of milliseconds); from this size on a call
# saves a few microseconds over NumPy's scalar loop.
EAGER_MIN = vmath.LARGE
# Kernels that compute the impl's own bits replace several NumPy calls on blocks, which cost
# microseconds whatever the size; below SAME_BITS_MIN elements the kernel's own fixed cost
# (the checks, the output, the call) is the larger. They take over at once from
# SAME_BITS_AT_ONCE elements, and from SAME_BITS_MIN only once the primitive has run
# SAME_BITS_CALLS times in the process on such arrays (a count, never a time; the bits are
# the same either way), so a program that calls it a few times (a small jitted program's
# lone tanh gradient) never waits for the build.
SAME_BITS_MIN, SAME_BITS_CALLS, SAME_BITS_AT_ONCE = 2048, 64, 8192
SMALL_CALLS: dict = {}  # primitive -> its calls so far on arrays from SAME_BITS_MIN to SAME_BITS_AT_ONCE
INSTALLED: dict = {}  # primitive -> whether its kernel computes its impl's bits (install's same_bits)
_KERNELS: dict = {}  # (primitive, dtype) -> its compiled one-equation kernel


def _kernel(prim, dtype, arity: int):
    """The compiled kernel `kernel(*operands, out)` computing `prim` element-wise over
    `dtype` (any length at or above vmath.LARGE: it reads the length from `out`)."""
    fn = _KERNELS.get((prim, dtype))
    if fn is None:
        aval = ShapedArray((vmath.INLINE,), dtype)  # (a length that inlines vmath's functions)
        xs, y = [Var(aval) for _ in range(arity)], Var(aval)
        (step,) = plan(Jaxpr([], xs, [Eqn(prim, xs, [y], {})], [y]), 1)
        fn = _KERNELS[prim, dtype] = load_kernel(kernel_spec(step))
    return fn


def _vectorised(prim, impl, dtypes, same_bits: bool):
    """An impl of `prim` that runs the kernel on NumPy arrays of one shape and one of
    `dtypes`, with at least EAGER_MIN elements, laid out alike (C or Fortran order), and the
    primitive's own `impl` on anything else. The result has the layout NumPy's function
    would give it (the operands' order of strides). With `same_bits` (the kernel computes
    the impl's bits) the kernel runs only in a process that has loaded LLVM already (jit, a
    replayed backward pass, eager sines): an eager-only program keeps NumPy's code and never
    maps LLVM's tens of MiB for it; and from SAME_BITS_AT_ONCE elements, or from
    SAME_BITS_MIN after SAME_BITS_CALLS calls on such arrays. The bits are the same either way."""
    at_least = SAME_BITS_AT_ONCE if same_bits else EAGER_MIN
    # (the checks run on every call, on arrays whose kernel call takes about a microsecond:
    # no generators, one read of each operand's flags)

    def vectorised(*xs, xp):
        x = xs[0]
        if type(x) is not np.ndarray or xp is not np:
            return impl(*xs, xp=xp)
        if x.size < at_least:
            if not same_bits or x.size < SAME_BITS_MIN:
                return impl(*xs, xp=xp)
            calls = SMALL_CALLS.get(prim, 0)
            if calls < SAME_BITS_CALLS:
                SMALL_CALLS[prim] = calls + 1
                return impl(*xs, xp=xp)
        dtype = x.dtype
        if dtype not in dtypes or (same_bits and not native.started()):
            return impl(*xs, xp=xp)
        if len(xs) == 1:
            flags = x.flags
            if not (flags.c_contiguous or flags.f_contiguous):
                out = np.empty_like(x)
                out[...] = vectorised(np.ascontiguousarray(x), xp=xp)
                return out
        else:
            shape = x.shape
            c = f = True  # whether every operand is C-contiguous (Fortran-contiguous)
            for o in xs:
                if type(o) is not np.ndarray or o.dtype != dtype or o.shape != shape:
                    return impl(*xs, xp=xp)
                flags = o.flags
                c = c and flags.c_contiguous
                f = f and flags.f_contiguous
            if not (c or f):  # (operands laid out differently, or broadcast: the primitive's own)
                return impl(*xs, xp=xp)
        fn = _KERNELS.get((prim, dtype)) or _kernel(prim, dtype, len(xs))
        out = np.empty_like(x)
        if x.ndim == 1:
            fn(*xs, out)
        else:
            fn(*[o.ravel("K") for o in xs], out.ravel("K"))
        return out
    vectorised.__name__ = vectorised.__qualname__ = f"{prim.name}_impl"
    return vectorised


def install(prims, dtypes=(_F64,), same_bits: bool = False) -> None:
    """Give each of `prims` (element-wise primitives whose lowerings compute what their impls
    do, or vmath's versions of sine and cosine) the impl above for `dtypes` (jit's programs
    then call that impl, not NumPy's function, for a lone one).

    Args:
        prims: the primitives.
        dtypes: the NumPy dtypes whose large arrays run the kernels.
        same_bits: the kernels compute the impls' own bits (NumPy's arithmetic in NumPy's
            order): then only a process with LLVM loaded already runs them.
    """
    dtypes = frozenset(np.dtype(d) for d in dtypes)
    for prim in prims:
        INSTALLED[prim] = same_bits
        prim.def_impl(_vectorised(prim, prim.raw_impl, dtypes, same_bits))
        prim.np_function = None
