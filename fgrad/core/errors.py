"""Every exception fgrad raises on purpose lives here, with a message that says
what happened, where, and how to fix it (docs/errors.md lists them)."""
from __future__ import annotations

from typing import Any


class FgradError(Exception):
    """Base class of fgrad's own exceptions."""


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
    type, which the Tensor facade promises)."""


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


def complex_intermediate_message(prim_name: str, dtype) -> str:
    return (
        f"complex differentiation is not supported yet: primitive '{prim_name}' produced a "
        f"{dtype} value that depends on a differentiated input, and fgrad's derivative rules "
        "follow no complex convention, so any derivative through it would be meaningless. Keep "
        "differentiated values real (carry real and imaginary parts as two float arrays), or "
        "wrap the complex part in fgrad.stop_gradient.")


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
            f"instead: y = {name}(x, ...) or y = x.{name}(...).")
