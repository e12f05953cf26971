"""Every exception fgrad raises on purpose lives here, with a message that says
what happened, where, and how to fix it (docs/errors.md lists them)."""
from __future__ import annotations

import functools
import linecache
import os
import sys
import sysconfig
from typing import Any

DOCS_PAGE = "docs/errors.md"

_FGRAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Frames in these folders are never "the user's line": fgrad itself, Python's standard library
# (functools.partial/wraps, contextlib) and installed packages such as NumPy, whose Python-level
# wrappers (numpy.sum -> x.sum) sit between the user's call and fgrad.
_SKIP_DIRS = tuple(sorted({os.path.abspath(d) + os.sep for d in (
    _FGRAD_DIR, sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib"),
    sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib")) if d}))


@functools.lru_cache(maxsize=4096)  # the stack walk runs per error; paths repeat
def _is_internal(filename: str) -> bool:
    if filename.startswith("<"):          # <frozen ...>, <string>: not a file the user can open
        return filename.startswith("<frozen")
    return os.path.abspath(filename).startswith(_SKIP_DIRS)


def user_frame():
    """The innermost frame of the current stack outside fgrad, the standard library and installed
    packages: the user's own line. None when there is none (fgrad called from site-packages only)."""
    frame = sys._getframe(1)
    while frame is not None:
        if not _is_internal(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def user_location() -> str | None:
    """'path:LINE: source' for the user's line (see user_frame), path relative to the working
    directory when it lies inside it."""
    frame = user_frame()
    if frame is None:
        return None
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    path = filename
    try:
        rel = os.path.relpath(filename)
        if not rel.startswith(".."):
            path = rel
    except ValueError:                    # another drive on Windows
        pass
    source = linecache.getline(filename, lineno).strip()
    return f"{path}:{lineno}: {source}" if source else f"{path}:{lineno}"


class FgradError(Exception):
    """Base class of fgrad's own exceptions.

    Its message is the text it was raised with, then the user's own line (the innermost frame
    outside fgrad, found when the error is created, so only on error) and, when the error has an
    entry in docs/errors.md, a link to it:

        raise FgradValueError("what happened. How to fix it.", doc="argnums-range")

    gives ``str(e)`` = "what happened. How to fix it.\n  at user.py:12: f(x)\nSee
    docs/errors.md#argnums-range". ``doc`` may also be a class attribute of a subclass.
    """

    doc: str | None = None

    def __init__(self, *args, doc: str | None = None):
        super().__init__(*args)
        if doc is not None:
            self.doc = doc
        try:
            self.location = user_location()
        except Exception:  # noqa: BLE001  (a message decoration must never mask the error)
            self.location = None

    def __str__(self) -> str:
        message = super().__str__()
        extra = []
        if self.location and f"  at {self.location}" not in message:
            extra.append(f"  at {self.location}")
        if self.doc and f"{DOCS_PAGE}#{self.doc}" not in message:
            extra.append(f"See {DOCS_PAGE}#{self.doc}")
        return "\n".join([message, *extra]) if extra else message

    def __reduce__(self):
        cls = type(self)
        # the builtin-named classes (below) are found by their own name, not the one they show
        return (_rebuild, (cls.__dict__.get("_fgrad_name", cls), self.args, self.__dict__))


def _rebuild(cls, args, state):
    if isinstance(cls, str):
        cls = globals()[cls]
    e = cls.__new__(cls, *args)
    Exception.__init__(e, *args)
    e.__dict__.update(state)
    return e


class FgradTypeError(FgradError, TypeError):
    """A TypeError raised by fgrad's own checks."""


class FgradValueError(FgradError, ValueError):
    """A ValueError raised by fgrad's own checks."""


class FgradIndexError(FgradError, IndexError):
    """An IndexError raised by fgrad's own checks."""


class FgradRuntimeError(FgradError, RuntimeError):
    """A RuntimeError raised by fgrad's own checks (fgrad.torch's PyTorch-style errors)."""


class FgradNotImplementedError(FgradError, NotImplementedError):
    """A NotImplementedError raised by fgrad: a feature fgrad does not support (the message says
    what to use instead), or a method a subclass must define."""


class FgradFloatingPointError(FgradError, FloatingPointError):
    """A FloatingPointError raised by fgrad's checks (debug_nans)."""


# These five are the builtin errors as fgrad raises them. They show the builtin's name
# (type(e).__name__ == "ValueError", tracebacks print "ValueError: ..."), as PyTorch's and
# NumPy's errors do, so a ported script that prints or compares exception names behaves the
# same; `except ValueError` catches them and `except FgradError` tells fgrad's apart.
for _cls in (FgradTypeError, FgradValueError, FgradIndexError, FgradRuntimeError, FgradNotImplementedError):
    _cls._fgrad_name = _cls.__name__
    _cls.__name__ = _cls.__qualname__ = _cls.__mro__[2].__name__
    _cls.__module__ = "builtins"
del _cls


class ConcretizationError(FgradError, TypeError):
    """A traced value was used where a concrete Python value is needed."""


class TracerBoolConversionError(ConcretizationError):
    pass


class TracerArrayConversionError(ConcretizationError):
    pass


class UnexpectedTracerError(FgradError, RuntimeError):
    """A tracer escaped the transform that created it."""


class DifferentiationError(FgradError, TypeError):
    """A derivative was asked for something that has none."""


class ShapeError(FgradError, ValueError, RuntimeError):
    """Operand shapes do not fit. A ValueError (NumPy's type) and a RuntimeError (PyTorch's
    type, which fgrad.torch promises)."""


def concretization_message(what: str, aval, trace_name: str, origin: str | None = None) -> str:
    return (
        f"{what} needs a concrete value, but got a traced value of type {aval} "
        f"while staging with {trace_name}. Its value is not known until the function runs."
        f"{' ' + origin if origin else ''}\n"
        "Fixes: mark the argument static (jit(f, static_argnums=...)), replace Python "
        "control flow with fgrad.numpy.where, or run without jit/vmap/make_jaxpr "
        "(grad, vjp and jvp keep values concrete)."
    )


def derivative_drop_message(what: str, aval, trace) -> str:
    return (
        f"{what} (type {aval}) is being differentiated by {trace.name}: a Python number cannot "
        "carry its derivative, so the result would be silently wrong.\n"
        "Fixes: keep it an array and use fgrad.numpy functions (fgrad.numpy.sin instead of "
        "math.sin, x * x instead of x * float(x)); or, if you want a constant, convert "
        "fgrad.stop_gradient(x) instead."
    )


def leaked_tracer_message(tracer) -> str:
    return (
        f"A value traced by {tracer._trace!r} was used after that transform finished "
        f"(type {tracer.aval}). A tracer leaked out of its function, usually through a global, "
        "a closure stored for later, or a side effect such as list.append. Return the value "
        "from the transformed function instead."
    )


def reject_out(out: Any, name: str) -> None:
    """NumPy's out= cannot work in fgrad: values are immutable, and a result written into a
    buffer could not carry its derivative. None (NumPy's default, which numpy.sum(x) passes
    on to x.sum) is accepted."""
    if out is not None:
        raise TracerArrayConversionError(
            f"{name}: out= is not supported (got {type(out).__name__} {out!r:.60}). fgrad computes new arrays, and a "
            "result written into a buffer could not carry its derivative. Use the returned value "
            f"instead: y = {name}(x, ...) or y = x.{name}(...).", doc="numpy-out")


# --- errors of the layers above the core (re-exported where users look for them) ---

class GradcheckError(FgradRuntimeError):
    """A Jacobian from backward() differs from the finite-difference one."""


class NonConcreteBooleanIndexError(ConcretizationError, IndexError):
    """A boolean mask (or nonzero) was applied to a value known only by shape. An IndexError
    as well as a TypeError: JAX's is an IndexError, code catching either catches it."""


class DataAssertionError(FgradValueError, AssertionError):
    """A bad argument that PyTorch reports with AssertionError (a tensor dataset's size mismatch,
    an empty ConcatDataset). Being a ValueError too, it is caught as either."""


class GraphvizNotFoundError(FgradRuntimeError):
    """Rendering needs the `graphviz` Python package and the Graphviz binaries (`dot`), and
    one of them is missing. `Graph.source` (the DOT text) works without either."""


class DistributedError(FgradRuntimeError):
    """A collective failed: the ranks disagree (different trees, shapes or models), or the
    process group is not initialised or no longer usable."""


class DistributedTimeoutError(DistributedError):
    """A collective did not complete within the timeout: another rank died, hangs, or called a
    different collective. The MPI job is aborted when this process exits."""


class OneDNNError(FgradRuntimeError):
    """A call into oneDNN's library (the optional `onednn` extra) failed: its status code and
    the call are in the message. fgrad's own kernels take over the product that failed."""


class LinAlgError(FgradRuntimeError):
    """A numerical failure of a linear-algebra function: a singular matrix where an inverse
    or a solution is needed, a matrix that is not positive-definite for cholesky."""
