"""The public torch.* function around an op: PyTorch's argument check at the API boundary
(`require_tensor`, `argument_check`) and its `out=` keyword (the result is computed as without
it, then written into the given tensor, which is returned).

As in PyTorch: `out` is resized to the result's shape (with a warning when it held elements of
another shape), the result is cast to `out`'s dtype when that loses no kind (float into an
integer tensor is refused), and a call whose result needs gradients is refused (out= writes are
not differentiable).
"""
from __future__ import annotations

import functools
import inspect
import linecache
import warnings
from typing import Any, Callable

from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
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


def require_tensor(name: str, x: Any, position: int = 1, arg: str = "input", sparse: bool = False) -> Any:
    """`x` when it is a Tensor (or, with `sparse`, a sparse tensor); else PyTorch's TypeError
    naming the function, the argument and the fix.

    Args:
        name: the torch function's name.
        x: the argument.
        position: its position (1-based), for the message.
        arg: its name ("input"; "" for an argument PyTorch's message does not name).
        sparse: a sparse tensor is accepted too (mm, matmul).

    Returns:
        `x`.
    """
    if isinstance(x, Tensor) or (sparse and getattr(x, "is_sparse", False)):
        return x
    named = f"'{arg}' " if arg else ""
    raise FgradTypeError(f"torch.{name}(): argument {named}(position {position}) must be Tensor, not "
                         f"{type(x).__name__}. Wrap data with fgrad.torch.tensor(...) first.")


def argument_check(name: str, first: bool = True, second: bool = False,
                   number_first: bool = False) -> Callable | None:
    """The check `torch_function` runs on torch.`name`'s positional arguments: the first
    (`input`) must be a Tensor, and with `second` the second operand too (the two-tensor
    products); a sparse tensor passes (mm, matmul take one). With `number_first`, a Python
    number may stand first when a Tensor comes second (torch.add(5, t), torch.pow(2, t): the
    arithmetic functions PyTorch binds to a Scalar `self`).

    Args:
        name: the torch function's name.
        first: check the first argument.
        second: check the second argument.
        number_first: a number first is accepted beside a Tensor second.

    Returns:
        The check (a function of the positional-argument tuple), or None when nothing is checked.
    """
    if not (first or second):
        return None

    def check(args: tuple) -> None:
        if first and args and not (number_first and isinstance(args[0], (bool, int, float, complex))
                                   and len(args) > 1 and isinstance(args[1], Tensor)):
            require_tensor(name, args[0], sparse=True)
        if second and len(args) > 1:
            require_tensor(name, args[1], 2, "", sparse=True)
    return check


def _overflow(name: str, e: OverflowError) -> Exception:
    """An integer that does not fit 64 bits: a ValueError naming the torch function, not
    NumPy's OverflowError."""
    return FgradValueError(f"torch.{name}(): an integer argument does not fit in 64 bits ({e})")


def torch_function(name: str, fn: Callable, check: Callable | None = None, creation: bool = False) -> Callable:
    """The public torch.`name`: `fn` with PyTorch's keyword `out=` and, if given, the argument
    check `check(args)` at the API boundary, written as one function with fn's own parameters
    (as collections.namedtuple writes its methods) so a call costs one extra frame and no
    packing of *args/**kwargs; `with_out` where fn's signature cannot be written out.

    Args:
        name: the torch function's name.
        fn: the function computing the result.
        check: called with the positional arguments before fn (raises on bad input).
        creation: a factory: with no dtype given, the result takes out's dtype.

    Returns:
        The public function.
    """
    signature = _with_out_keyword(fn)
    if signature is None or any(p.kind is p.POSITIONAL_ONLY for p in signature.parameters.values()):
        return with_out(name, fn, creation)
    defs, args, namespace = [], [], {"_fn": fn, "_write": write_out, "_check": check, "_Tensor": Tensor,
                                      "_name": name}
    star = False
    positional = []
    for i, p in enumerate(signature.parameters.values()):
        default = ""
        if p.default is not p.empty:
            namespace[f"_d{i}"] = p.default
            default = f"=_d{i}"
        if p.kind is p.VAR_POSITIONAL:
            defs.append(f"*{p.name}")
            args.append(f"*{p.name}")
            positional.append(f"*{p.name}")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            defs.append(f"**{p.name}")
            args.append(f"**{p.name}")
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                defs.append("*")
                star = True
            defs.append(p.name + default)
            if p.name != "out":
                args.append(f"{p.name}={p.name}")
        else:
            defs.append(p.name + default)
            args.append(p.name)
            positional.append(p.name)
    takes_dtype = creation and "dtype" in signature.parameters
    fname = fn.__name__ if fn.__name__.isidentifier() else name
    lines = [f"def {fname}({', '.join(defs)}):"]
    if check is not None:
        lines.append(f"    _check(({', '.join(positional)}{',' if positional else ''}))")
    if takes_dtype:
        lines.append("    if out is not None and dtype is None and isinstance(out, _Tensor):")
        lines.append("        dtype = out.dtype")
    lines.append("    try:")
    lines.append(f"        result = _fn({', '.join(args)})")
    lines.append("    except OverflowError as e:")
    lines.append("        raise _overflow(_name, e) from None")
    lines.append("    return result if out is None else _write(_name, result, out)")
    src = "\n".join(lines) + "\n"
    # a file name under fgrad's directory: error messages point past this frame to the
    # user's line (core/errors.py); linecache shows the source in tracebacks
    filename = f"{__file__}:torch.{name}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace["_overflow"] = _overflow
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102  (fn's own signature)
    op = namespace[fname]
    functools.update_wrapper(op, fn)
    del op.__wrapped__  # the signature is op's own (with out=), not one fn declares
    op.__dict__.pop("__signature__", None)
    return op


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
