"""What jit keeps per input signature: the traced ClosedJaxpr, how to box its outputs, and the
compiled Program, built on the first call that can run it and reused by every later one."""
from __future__ import annotations

import numpy as np

from ...core.ir import eval_jaxpr
from ...core.trace import EVAL_TRACE, _state
from ...tree_util import _DICT_ORDER, tree_flatten, tree_unflatten
from .program import Program, fresh_arrays
from .regions import MIN_KERNEL_EQNS


class JitStats:
    """How often a jitted function traced (one per new signature) and compiled (one per
    signature first run outside any transform)."""

    __slots__ = ("compiles", "traces")

    def __init__(self) -> None:
        self.traces = 0
        self.compiles = 0

    def __repr__(self) -> str:
        return f"JitStats(traces={self.traces}, compiles={self.compiles})"


def _plain(v) -> bool:
    """A value the compiled program takes as it is: a NumPy array or scalar (not a tracer, a
    CuPy array or an fgrad.numpy Array)."""
    return type(v) is np.ndarray or isinstance(v, np.generic)


def _host(v) -> bool:
    """A NumPy array (of any subclass) or scalar: a constant the program can hold."""
    return isinstance(v, (np.ndarray, np.generic))


class Executable:
    """One signature of a jitted function. Calling it with the flattened input values runs
    the compiled program when no transform is active (and no debug_nans check), else the
    traceable `eval_jaxpr`, so jit inside grad or vmap is differentiated and batched."""

    __slots__ = (
        "_finish",
        "closed",
        "compilable",
        "min_kernel_eqns",
        "out_tree",
        "program",
        "stats",
    )

    def __init__(self, closed, out_tree, stats: JitStats,
                 min_kernel_eqns: int = MIN_KERNEL_EQNS) -> None:
        self.closed = closed
        self.out_tree = out_tree
        self.stats = stats
        self.program: Program | None = None
        self.min_kernel_eqns = min_kernel_eqns
        # constants that are tracers (of an enclosing transform) or GPU arrays: never compiled
        self.compilable = all(_host(c) for c in closed.consts)
        if out_tree == _LEAF:
            self._finish = _first
        else:
            self._finish = self._unflatten

    def lower(self) -> Program:
        """The program (generated source; kernels are compiled on its first run)."""
        if self.program is None:
            self.program = Program(self.closed, self.min_kernel_eqns)
        return self.program

    def compiled(self):
        """The loaded program function, built (and counted) on first use."""
        program = self.lower()
        if program._fn is None:
            program.load()
            self.stats.compiles += 1
        return program._fn

    def can_compile(self, vals) -> bool:
        """Whether `vals` may run through the compiled program now."""
        return (self.compilable and _state.trace is EVAL_TRACE and not _state.debug_nans
                and all(_plain(v) for v in vals))

    def __call__(self, vals):
        if self.can_compile(vals):
            return self._finish(self.compiled()(*vals))
        wrap = next((type(v) for v in vals if getattr(type(v), "__fgrad_array__", False)), None)
        if wrap is not None and self.compilable and _state.trace is EVAL_TRACE and not _state.debug_nans:
            # fgrad.numpy arrays: compute on plain views, give Arrays back (as eager does)
            plain = [v.view(np.ndarray) if type(v) is wrap else v for v in vals]
            if all(_plain(v) for v in plain):
                outs = self.compiled()(*plain)
                return self._finish([o.view(wrap) if type(o) is np.ndarray else o for o in outs])
        outs = eval_jaxpr(self.closed.jaxpr, self.closed.consts, *vals)
        if _state.trace is EVAL_TRACE:  # concrete results (debug_nans, ...): new arrays, as compiled
            outs = fresh_arrays(outs, [*vals, *self.closed.consts])
        return self._finish(outs)

    def fast(self):
        """`run(*leaves)` for the leaves `fast_args` gives (what jit's fast path admits): the
        compiled program and the output's structure, nothing else."""
        fn, finish = self.compiled(), self._finish
        if finish is _first:
            def run(*args):
                return fn(*args)[0]
        else:
            def run(*args):
                return finish(fn(*args))
        return run

    def _unflatten(self, outs):
        return tree_unflatten(self.out_tree, list(outs))


def _first(outs):
    return outs[0]


_LEAF = tree_flatten(0)[1]  # the structure of a single array


# NumPy's numeric scalar types (each names one dtype): the program takes them as they are, as
# jit's general path passes them
_NP_SCALARS = frozenset(t for t in set(np.sctypeDict.values())
                        if issubclass(t, np.generic) and np.dtype(t).kind in "biufc")
_INT64_MIN, _INT64_END = -2 ** 63, 2 ** 63
_TREE = object()  # the first item of a key made by _tree_key, unlike any flat key's


def fast_args(args: tuple) -> tuple[tuple, tuple | list] | None:
    """The key of jit's fast path for the positional arguments `args`, and the flattened
    inputs to pass the compiled program; None for arguments that take the general path.

    Admitted: NumPy arrays (exactly np.ndarray) and numeric scalars, Python bools, ints (in
    int64's range), floats and complex numbers, and tuples, lists, dicts and None holding
    them. A key determines the general path's signature (structure, shapes, dtypes and weak
    typing) and so the compiled program; the inputs are those the general path would pass
    (Python ints and complex numbers as 0-d arrays, which is what it makes of them).

    Args:
        args: the positional arguments of a call of a jitted function.

    Returns:
        `(key, leaves)`, or None.
    """
    # the common case (arrays and scalars the program takes as they are) in one loop
    # without calls; anything else is walked as a pytree
    key = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key.append(a.shape)
            key.append(a.dtype)
        elif t is float or t is bool or t in _NP_SCALARS:
            key.append(t)
        else:
            return _tree_key(args)
    return tuple(key), args


def _tree_key(args: tuple) -> tuple[tuple, list] | None:
    """`fast_args` for arguments with containers, Python ints or complex numbers."""
    key: list = [_TREE]
    leaves: list = []
    if not _walk(args, key, leaves):
        return None
    return tuple(key), leaves


def _walk(x, key: list, leaves: list) -> bool:
    """Append the key items and the leaves of pytree `x` in tree_flatten's order (False: a
    node or leaf the fast path does not admit). Each item says what it is (a shape, then its
    dtype; a scalar's type; a container's type and size or keys; None), so the key is
    unambiguous."""
    t = type(x)
    if t is np.ndarray:
        key.append(x.shape)
        key.append(x.dtype)
        leaves.append(x)
    elif t is float or t is bool or t in _NP_SCALARS:
        key.append(t)
        leaves.append(x)
    elif t is int:
        if not _INT64_MIN <= x < _INT64_END:  # (uint64 or an error on the general path)
            return False
        key.append(t)
        leaves.append(np.asarray(x))
    elif t is complex:
        key.append(t)
        leaves.append(np.asarray(x))
    elif t is tuple or t is list:
        key.append((t, len(x)))
        for c in x:
            if not _walk(c, key, leaves):
                return False
    elif t is dict:
        if _DICT_ORDER.insertion:  # (the facade's torch.func order: the general path)
            return False
        try:
            names = sorted(x)
        except TypeError:  # keys that do not sort: tree_flatten's error, on the general path
            return False
        key.append((dict, tuple(x)))
        for k in names:
            if not _walk(x[k], key, leaves):
                return False
    elif x is None:
        key.append(None)
    else:
        return False
    return True
