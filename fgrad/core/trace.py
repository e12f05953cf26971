"""The trace context: which interpreter handles `bind` right now.

Each thread has a current trace; a transform pushes a new trace (`new_trace`) whose
parent is the one it found, and its rules run under that parent (`Trace.run`); every
interpreter splits a primitive's arguments with `Trace.partition`. A tracer is tagged with
the trace that made it, so a tracer of an enclosing transform is a constant to
an inner one (no perturbation confusion), and a tracer whose trace has ended is
caught as a leak.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

import numpy as np

from . import errors
from .array_methods import ArrayMethods, array_api
from .avals import ShapedArray
from .errors import FgradFloatingPointError, FgradTypeError

_NO_KWARGS: dict = {}  # the default of Trace.run's kwargs (never written)


class Trace:
    """An interpreter of primitives. `level` is its depth in the stack.
    `differentiates` marks traces whose tracers carry derivatives (grad, jvp): turning one
    into a Python number would drop its derivative silently, so float()/int()/.item() refuse."""

    name = "trace"
    differentiates = False

    def __init__(self, parent: "Trace | None") -> None:
        self.parent = parent
        self.level = 0 if parent is None else parent.level + 1
        self.active = True

    # For `partition`: (value, extra) of one of this trace's own tracers, e.g.
    # attrgetter("primal", "tangent"). An attrgetter runs in C, so partitioning stays cheap.
    unpack: Callable[["Tracer"], tuple] | None = None

    def process_primitive(self, prim, args, params):
        """Interpret one application of `prim` (the body of `bind` while this trace is current)."""
        raise NotImplementedError

    def partition(self, args: Sequence) -> tuple[list, list, bool]:
        """Split a primitive's arguments into (values, extras, live), one entry per argument.

        An argument that is one of this trace's tracers gives `self.unpack(tracer)` (its value
        for the parent, e.g. the primal, and its extra, e.g. the tangent). Any other argument
        is passed on as is with extra None: a tracer of an enclosing (live, outer) trace is a
        constant here -- what keeps nested transforms apart -- and any other tracer is a leak
        (`check_foreign` raises). `live` says whether some argument is this trace's own, i.e.
        whether this trace has anything to do. Called for every bind: a plain loop, no generator.
        """
        values = []
        extras = []
        live = False
        unpack = self.unpack
        for a in args:
            if isinstance(a, Tracer):
                if a._trace is self:
                    v, e = unpack(a)
                    values.append(v)
                    extras.append(e)
                    live = True
                    continue
                self.check_foreign(a)
            values.append(a)
            extras.append(None)
        return values, extras, live

    def run(self, fn: Callable, args: tuple = (), kwargs: dict = _NO_KWARGS):
        """`fn(*args, **kwargs)` with this trace as the current one.

        How an interpreter runs its rules under its parent:
        `self.parent.run(prim.jvp, (primals, tangents), params)`. The ops a rule binds then
        reach the parent (and the traces above it), never the trace that runs the rule, so a
        rule is interpreted by every enclosing transform -- which is what makes rules
        differentiable -- and no trace sees its own work. Also how user code runs eagerly
        (`EVAL_TRACE.run(...)`). A function taking the arguments as a tuple and a dict, not a
        contextmanager nor *args/**kwargs: it is on the path of every transformed bind, and
        repacking the arguments would double its cost."""
        state = _state
        prev = state.trace
        state.trace = self
        try:
            return fn(*args, **kwargs)
        finally:
            state.trace = prev

    def concrete(self, tracer):
        """The concrete value behind `tracer`, or a ConcretizationError."""
        raise errors.TracerBoolConversionError(
            errors.concretization_message("This operation", tracer.aval, self.name))

    def weaken(self, tracer):
        """Mark `tracer` weakly typed (only staging tracks weak types; see WeakShapedArray)."""
        return tracer

    def check_foreign(self, tracer: "Tracer") -> None:
        """A tracer not of this trace must belong to a live enclosing trace."""
        t = tracer._trace
        if not t.active or t.level >= self.level:
            raise errors.UnexpectedTracerError(errors.leaked_tracer_message(tracer))

    def __repr__(self) -> str:
        return f"{self.name}#{self.level}"


class EvalTrace(Trace):
    """The root: runs each primitive's implementation on concrete arrays."""

    name = "eval"

    def process_primitive(self, prim, args, params):
        xp = np
        wrap = None
        for a in args:
            t = type(a)
            if t is not _ndarray and t not in _PLAIN_TYPES:
                if isinstance(a, Tracer):
                    raise errors.UnexpectedTracerError(errors.leaked_tracer_message(a), doc="leaked-tracer")
                if t.__module__.startswith("cupy"):
                    xp = xp_of((a,))
                elif getattr(t, "__fgrad_array__", False):
                    wrap = t
                elif getattr(t, "__fgrad_foreign__", None) is not None:
                    # an object of a layer above (a Tensor) computes through its own door,
                    # which unboxes it: never silently as an array without its history
                    raise FgradTypeError(t.__fgrad_foreign__(prim.name), doc="foreign-input")
                else:  # a NumPy scalar or Python number: remembered, so the next one costs a lookup
                    _PLAIN_TYPES.add(t)
        if wrap is not None:  # fgrad.numpy's Array: impls see plain ndarrays, results are Arrays
            args = [a.view(np.ndarray) if type(a) is wrap else a for a in args]
        if xp is not np:  # NumPy constants beside GPU arrays (0-d ones, e.g. from rules, as scalars)
            args = [(a[()] if a.ndim == 0 else xp.asarray(a)) if type(a) is np.ndarray else a for a in args]
        call = prim.np_call
        out = call(*args) if call is not None and xp is np and not params else prim.raw_impl(*args, xp=xp, **params)
        if type(out) is not _ndarray and not hasattr(out, "__cuda_array_interface__"):
            out = xp.asarray(out)  # NumPy returns scalars for 0-d results; keep arrays
        else:
            # An impl may hand back an operand when it has nothing to do (an astype to the
            # same dtype, a concatenation of one array): cheap inside jit's programs, but
            # an eager result is new storage unless the primitive is a view (prim.view)
            # (the identity loop first: on this per-op path most results own new memory)
            for a in args:
                if out is a:
                    out = out.view() if prim.view else out.copy()
                    break
            else:
                if out.base is not None and not prim.view and aliases(out, args):
                    out = out.copy()
        if wrap is not None and type(out) is _ndarray:
            out = out.view(wrap)
        # (a module global first: reading the thread-local flag on every op costs more)
        if _debug_nans_threads and _state.debug_nans:
            _check_nans(prim, out)
        return out


def aliases(out, others) -> bool:
    """Whether the array `out` is one of `others` or may share memory with an array among
    them (NumPy or CuPy arrays of the same kind; anything else never does). The one test
    behind every "new storage" guarantee: the eval trace's results, fgrad.numpy's public
    functions (`numpy._util.fresh`) and jit's outputs (`compile.program`). An array that owns
    its memory and is not among `others` is new: only a view can share."""
    if out.base is None:
        for x in others:
            if x is out:
                return True
        return False
    xp = xp_of((out,))
    for x in others:
        if x is out or (hasattr(x, "base") and isinstance(x, np.ndarray) == isinstance(out, np.ndarray)
                        and xp.may_share_memory(out, x)):
            return True
    return False


_ndarray = np.ndarray
# Argument types the eval trace hands to impls as they are (NumPy scalars, Python numbers),
# learned on first sight: the checks for tracers, CuPy and fgrad.numpy arrays run once a type.
_PLAIN_TYPES: set = set()
# How many threads have debug_nans on (the flag itself is per thread, in _state).
_debug_nans_threads = 0


def _check_nans(prim, out) -> None:
    if getattr(out.dtype, "kind", "") in "fc" and bool(out.size) and bool(xp_of((out,)).isnan(out).any()):
        raise FgradFloatingPointError(
            f"debug_nans: primitive '{prim.name}' produced NaN (output {out.dtype}{list(out.shape)}). "
            "Look at its inputs: a log or sqrt of a negative number, 0/0, or inf - inf are the usual causes.", doc="debug-nans")


class _State(threading.local):
    def __init__(self) -> None:
        self.trace: Trace = EVAL_TRACE
        self.grad_enabled = True
        self.debug_nans = False


EVAL_TRACE = EvalTrace(None)
_state = _State()


@contextmanager
def new_trace(cls: type, *args) -> Iterator[Trace]:
    """Push a fresh trace of class `cls` over the current one (its parent), make it current
    for the body, and retire it on exit: tracers of a retired trace that escaped (stored in
    a global, returned inside an unknown container) are caught as leaks by `check_foreign`.
    The one way to enter a transform; rules and eager sub-computations use `Trace.run`."""
    trace = cls(_state.trace, *args)
    prev = _state.trace
    _state.trace = trace
    try:
        yield trace
    finally:
        _state.trace = prev
        trace.active = False


@contextmanager
def debug_nans(enabled: bool = True):
    """Raise FloatingPointError at the first primitive whose output holds a NaN."""
    global _debug_nans_threads
    prev = _state.debug_nans
    delta = int(bool(enabled)) - int(bool(prev))
    _state.debug_nans = enabled
    _debug_nans_threads += delta
    try:
        yield
    finally:
        _state.debug_nans = prev
        _debug_nans_threads -= delta


def xp_of(args):
    """The array namespace of the arguments: cupy if any is a CuPy array, else numpy."""
    for a in args:
        if type(a) is not np.ndarray and type(a).__module__.startswith("cupy"):
            # optional dependency (GPU arrays): imported only when a CuPy array is seen
            import cupy
            return cupy
    return np


class Tracer(ArrayMethods):
    """A value seen by a trace. Subclasses add what their trace needs; operators and array
    methods come from ArrayMethods."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def __len__(self) -> int:
        if not self.shape:
            raise FgradTypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise FgradTypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def _concrete(self, what: str, drops_derivative: bool = False):
        """The concrete value behind this tracer. With `drops_derivative` (float(), int(),
        .item(): a Python number cannot carry a derivative) a differentiating trace refuses."""
        v = self
        while isinstance(v, Tracer):
            if drops_derivative and v._trace.differentiates:
                raise errors.ConcretizationError(errors.derivative_drop_message(what, self.aval, v._trace),
                                                 doc="number-of-differentiated-value")
            try:
                v = v._trace.concrete(v)
            except errors.ConcretizationError:
                origin = getattr(v._trace, "origin_of", lambda t: None)(v)
                raise type_for(what)(errors.concretization_message(what, self.aval, v._trace.name, origin),
                                     doc="tracer-bool") from None
        return v

    def __bool__(self) -> bool:
        return bool(self._concrete("Python control flow (bool()) on a traced value"))

    def __float__(self) -> float:
        return float(self._concrete("float() of a traced value", True))

    def __int__(self) -> int:
        return int(self._concrete("int() of a traced value", True))

    def __complex__(self) -> complex:
        return complex(self._concrete("complex() of a traced value", True))

    def __index__(self) -> int:
        return int(self._concrete("Using a traced value as an index"))

    def item(self, *args):
        return self._concrete(".item() of a traced value", True).item(*args)

    def tolist(self):
        return self._concrete(".tolist() of a traced value", True).tolist()

    def __array__(self, *args, **kwargs):
        raise errors.TracerArrayConversionError(
            f"A traced value of type {self.aval} was passed to plain NumPy (np.asarray or a "
            "NumPy function without a ufunc). NumPy cannot follow derivatives through it, so the "
            "result would be silently wrong. Use `import fgrad.numpy as np` for array code "
            "that is differentiated.", doc="tracer-to-numpy")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """A NumPy ufunc on a traced value (numpy.sin(x), ndarray % x) runs as the fgrad.numpy
        function of the same name. What fgrad cannot follow (a ufunc it lacks, out=, methods
        such as numpy.add.reduce) raises TracerArrayConversionError, never NumPy's bare
        "operand type(s) all returned NotImplemented"."""
        fn = getattr(array_api.module, ufunc.__name__, None)
        # arguments at NumPy's defaults change nothing (np.sin(x, out=None) is np.sin(x))
        extra = sorted(k for k, v in kwargs.items() if not (
            v is None or (k == "out" and isinstance(v, tuple) and all(o is None for o in v))
            or (k == "where" and v is True)))
        if method == "__call__" and fn is not None and not extra:
            return fn(*inputs)
        if any(not isinstance(a, (Tracer, np.ndarray, np.generic, bool, int, float, complex))
               and hasattr(type(a), "__array_ufunc__") for a in inputs):
            return NotImplemented  # another array type (a Tensor) may handle it
        call = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        why = (f"{', '.join(extra)}= cannot be followed" if fn is not None and method == "__call__" else
               "has no fgrad.numpy counterpart")
        raise errors.TracerArrayConversionError(
            f"{call} was applied to a traced value of type {self.aval}, and {why}: NumPy cannot "
            "follow derivatives. Use `import fgrad.numpy as np` for array code that is "
            "differentiated (e.g. fgrad.numpy.sum instead of numpy.add.reduce, and the "
            "returned value instead of out=).", doc="numpy-ufunc-missing")

    def __repr__(self) -> str:
        return f"Traced<{self.aval}>with<{self._trace!r}>"


def concrete_value(x, what: str = ".item() of a traced value"):
    """The concrete array behind `x` through every trace that has one, ignoring derivatives
    (the Tensor facade's .item() keeps PyTorch's semantics: a number without gradient)."""
    return x._concrete(what) if isinstance(x, Tracer) else x


def type_for(what: str):
    return errors.TracerBoolConversionError if "bool" in what else errors.ConcretizationError


def snapshot(x):
    """`x`, or a private read-only copy of it when `x` is a NumPy array whose values can still
    change under the transform that keeps it: a writable array, or a view of another array
    (which its base's owner may write). What a transform keeps past the moment it read a
    value (a node's saved constant, a jit constant, a linearized function's residual) is a
    snapshot, so the user's later writes never change a result (docs/architecture.md,
    "Values kept across calls"). fgrad's own read-only constants and every non-array value
    come back as they are, at no cost."""
    if isinstance(x, np.ndarray) and (x.flags.writeable or x.base is not None):
        x = np.array(x, subok=True)  # (an fgrad.numpy Array stays one)
        x.flags.writeable = False
    return x


def aval_of(x) -> ShapedArray:
    """Shape and dtype of any value fgrad handles (array, tracer, Python number)."""
    if type(x) is np.ndarray:
        return ShapedArray.of_array(x)
    if isinstance(x, Tracer):
        return x.aval
    hook = getattr(type(x), "__fgrad_foreign__", None)
    if hook is not None:  # an object of a layer above (a Tensor): its own door unboxes it
        raise FgradTypeError(hook("fgrad"), doc="foreign-input")
    if isinstance(x, np.generic) or type(x).__module__.startswith("cupy"):
        return ShapedArray.of_array(x)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapedArray(x.shape, x.dtype)
    return ShapedArray((), np.asarray(x).dtype)
