"""fgrad.numpy's eager array: a NumPy array that also offers JAX's functional updates.

JAX code writes `x.at[idx].set(v)`. Traced values have `.at`; for the same function to run
eagerly, the arrays fgrad.numpy makes (array, asarray, zeros, arange, ...) and every result
computed from them have it too. They are NumPy arrays in every other respect (they print,
compare and convert as ndarray does). A plain NumPy array has no `.at`, as in JAX: convert
it with `fgrad.numpy.asarray(x)`.

Primitive implementations never see this class: the eager interpreter hands them plain
ndarray views and wraps the results (see core.trace.EvalTrace), so kernels (Numba, BLAS)
and fast paths keyed on `type(x) is np.ndarray` are unaffected.
"""
from __future__ import annotations

import abc
from typing import Any

import numpy as np

from ..core.errors import FgradTypeError
from ..core.trace import Tracer
from . import _index


class Array(np.ndarray):
    """A NumPy array with `.at[idx].set/add/mul/min/max/get` (JAX's functional updates)."""

    __fgrad_array__ = True  # EvalTrace unwraps and rewraps arrays of classes that set this

    @property
    def at(self):
        return _index.at(self)

    def __getitem__(self, idx):
        # An index holding a traced value (x[i] inside a fori_loop body or under jit) is a
        # traced gather; NumPy's indexing would try to read the tracer's value.
        if isinstance(idx, Tracer) or (type(idx) is tuple and any(isinstance(i, Tracer) for i in idx)):
            return _index.jax_getitem(self, idx)
        try:
            return super().__getitem__(idx)
        except IndexError:  # out of bounds: JAX clamps (other index errors raise again there)
            return _index.jax_getitem(self, idx)

    def __iter__(self):
        # NumPy iterates a subclass through its __getitem__ until IndexError, which clamped
        # indexing never raises: the rows are read with NumPy's own indexing
        if not self.ndim:
            raise FgradTypeError("iteration over a 0-d array (shape ()): read its value with "
                                 "x.item() or float(x)")
        n = len(self)
        return map(np.ndarray.__getitem__, [self] * n, range(n))

    def block_until_ready(self) -> "Array":
        """JAX's x.block_until_ready(): fgrad computes eagerly on the host, so x is ready.

        Returns:
            self.
        """
        return self

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))

    def __str__(self) -> str:
        return str(self.view(np.ndarray))

    def __reduce__(self):
        # pickle as a plain ndarray view of the data, rebuilt as Array
        return (_rebuild, (self.view(np.ndarray).copy(),))


def _rebuild(base: np.ndarray) -> "Array":
    return base.view(Array)


def as_array(x: Any) -> Any:
    """`x` as an fgrad.numpy Array when it is a plain (CPU) NumPy array; anything else as is."""
    return x.view(Array) if type(x) is np.ndarray else x


class _AnyArrayMeta(abc.ABCMeta):
    def __instancecheck__(cls, x) -> bool:
        return isinstance(x, (np.ndarray, Tracer)) or super().__instancecheck__(x)


class AnyArray(metaclass=_AnyArrayMeta):
    """The type of every fgrad array, for isinstance and annotations: `fgrad.Array` and
    `fgrad.numpy.ndarray` (JAX's jax.Array and jnp.ndarray). True of concrete arrays
    (fgrad.numpy's Array and, unlike JAX, plain NumPy arrays, which fgrad computes with
    directly and jit may return) and of traced values under jit, grad and vmap."""

    def __init__(self, *args, **kwargs) -> None:
        raise FgradTypeError("fgrad.Array is an abstract type for isinstance checks; make arrays "
                        "with fgrad.numpy.array or fgrad.numpy.asarray")
