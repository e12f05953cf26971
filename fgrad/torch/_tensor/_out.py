"""PyTorch's `out=` keyword on torch.* functions: the result is computed as without it, then
written into the given tensor, which is returned.

As in PyTorch: `out` is resized to the result's shape (with a warning when it held elements of
another shape), the result is cast to `out`'s dtype when that loses no kind (float into an
integer tensor is refused), and a call whose result needs gradients is refused (out= writes are
not differentiable).
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable

from ...core.errors import FgradRuntimeError, FgradTypeError
from .grad_mode import no_grad
from .tensor import Tensor

# numpy dtype kinds, from narrowest: a result may be written into an out of its kind or a later one
_KIND_ORDER = "biufc"


def _castable(source_kind: str, target_kind: str) -> bool:
    if source_kind == "u" and target_kind == "i":
        return True
    return _KIND_ORDER.find(source_kind) <= _KIND_ORDER.find(target_kind)


def write_out(name: str, result: Any, out: Any) -> Any:
    """Write `result` (a Tensor or a tuple of them) into `out` as PyTorch's out= does.

    Args:
        name: the function's name, for error messages.
        result: what the function returned without out=.
        out: a Tensor, or a tuple/list of Tensors for a function returning a tuple.

    Returns:
        `out` (a tuple of the outs, of `result`'s named-tuple type if it has one).

    Raises:
        TypeError: `out` is not a Tensor (or not as many Tensors as the results).
        RuntimeError: the result requires grad, or its dtype cannot be cast to out's.
    """
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise FgradTypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors, got "
                                 f"{type(out).__name__}")
        written = [write_out(name, r, o) for r, o in zip(result, out)]
        return type(result)(*written) if hasattr(result, "_fields") else tuple(written)
    if not isinstance(out, Tensor):
        raise FgradTypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not isinstance(result, Tensor):
        raise FgradTypeError(f"{name}(): out= is not supported here: the result is a "
                             f"{type(result).__name__}, not a Tensor")
    if result.requires_grad:
        raise FgradRuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                                "differentiation, but one of the arguments requires grad. Call it under "
                                "torch.no_grad(), or without out=.")
    source, target = result._value.dtype, out._value.dtype
    if source != target and not _castable(source.kind, target.kind):
        raise FgradRuntimeError(f"{name}(): result type {result.dtype} can't be cast to the desired output "
                                f"type {out.dtype}: pass an out of a wider kind, or cast the result instead")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape "
                          f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                          "release outputs will not be resized unless they have zero elements. You can "
                          "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                          "with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(tuple(result.shape))
    if out.requires_grad:
        out.copy_(result)  # a leaf that requires grad: copy_ raises PyTorch's in-place error
    else:
        with no_grad():
            out.copy_(result)
    return out


def with_out(name: str, fn: Callable, creation: bool = False) -> Callable:
    """`fn` taking PyTorch's keyword `out=` (fn's own `out` parameter, if any, is never passed on).

    Args:
        name: the torch function's name.
        fn: the function computing the result.
        creation: a factory (rand, zeros, ...): with no dtype given, the result takes out's dtype.

    Returns:
        The wrapped function.
    """
    takes_dtype = creation and "dtype" in _parameters(fn)

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if takes_dtype and kwargs.get("dtype") is None and isinstance(out, Tensor):
            kwargs["dtype"] = out.dtype
        return write_out(name, fn(*args, **kwargs), out)
    signature = _with_out_keyword(fn)
    if signature is not None:
        call.__signature__ = signature  # help() and type checkers (tools/gen_type_stubs.py) show out=
    return call


def _with_out_keyword(fn: Callable) -> inspect.Signature | None:
    """fn's signature with a keyword-only `out=None` added (before **kwargs); None when fn has
    no readable signature or already takes `out`."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(signature.parameters.values())
    if "out" in signature.parameters:
        return None
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return signature.replace(parameters=params)


def _parameters(fn: Callable) -> dict:
    try:
        return dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {}
