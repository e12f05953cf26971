"""torch functions built from table rows: a PyTorch signature mapped onto an fgrad.numpy function.

Most of PyTorch's functions are an fgrad.numpy function under other argument names: `dim` is
`axis`, `keepdim` is `keepdims`, a dtype is an fgrad dtype, errors and promotion are PyTorch's
(`policy=TORCH`), and the result's grad_fn has PyTorch's name. `adapt` writes that function
from one row -- the torch name, the fgrad.numpy function, the torch parameters (Python syntax)
and the grad_fn name -- as real Python source (as collections.namedtuple does), so it has the
torch signature (inspect.signature, help(), IDEs) and costs one call, no argument parsing at
run time. Functions with PyTorch-specific semantics stay hand-written in _ops*.py.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable

from ... import numpy as fnp
from ...core.errors import FgradValueError
from ._policy import TORCH
from . import _dtypes as D
from ._boundary import call as call_op, replayable

# torch parameter -> (fgrad.numpy keyword, how its value is mapped)
RENAMES = {
    "dim": ("axis", "_axis({})"),      # None, () and [] all mean every dimension
    "dims": ("axis", "{}"),
    "keepdim": ("keepdims", "{}"),
    "dtype": ("dtype", "_np_dtype({})"),  # fgrad dtype -> NumPy dtype
}


def _axis(dim):
    """PyTorch's dim as fgrad.numpy's axis: None, () and [] mean every dimension."""
    return None if dim is None or isinstance(dim, (tuple, list)) and not dim else dim


def _doc_head(fn: Callable) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.split("\n\n")[0]


def _grad_fn_doc(grad_fn: str) -> str:
    if grad_fn.endswith("*"):
        return f"{grad_fn[:-1]}Backward0 (every dim) or {grad_fn[:-1]}Backward1"
    return f"{grad_fn}Backward0"


def adapt(name: str, fn: Callable, params: str, grad_fn: str | None = None) -> Callable:
    """The function torch.`name`(`params`) that calls `fn` with the parameters renamed by
    RENAMES (keyword-only ones and those `fn` has under the same name passed by name, the
    others positionally, in order), `policy=TORCH`
    where `fn` takes a policy, and names the result's grad_fn `grad_fn` ("Sum*" means
    SumBackward0 over every dim, SumBackward1 over some) with `named`."""
    sig = inspect.signature(eval(f"lambda {params}: None"))  # noqa: S307  (the table's own text)
    fn_params = list(inspect.signature(fn).parameters)
    positional, keywords = [], []
    for p in sig.parameters.values():
        if p.name in RENAMES:
            kw, expr = RENAMES[p.name]
            keywords.append(f"{kw}={expr.format(p.name)}")
        elif p.kind is p.KEYWORD_ONLY or p.name in fn_params[1:]:  # the same name in both: by name
            keywords.append(f"{p.name}={p.name}")
        else:
            if keywords:
                raise FgradValueError(f"adapt({name!r}): positional parameter {p.name!r} after a renamed one; "
                                      "the torch parameters must list the renamed ones (dim, keepdim...) last")
            positional.append(p.name)
    if "policy" in fn_params:
        keywords.append("policy=_P")
    names = list(sig.parameters)
    call = f"_fn({', '.join(positional + keywords)})"
    if grad_fn is None:
        label = "None"
    elif grad_fn.startswith("="):  # an expression of the torch parameters giving the name's stem
        label = f"({grad_fn[1:]}) + 'Backward0'"
    elif grad_fn.endswith("*"):
        label = f"'{grad_fn[:-1]}Backward' + ('0' if dim is None else '1')"
    else:
        label = repr(grad_fn + "Backward0")
    # the functional computation over plain values, and the torch op that runs it through the
    # boundary (one node named `label`; None: the node of the one primitive `fn` binds)
    src = (f"def _impl({', '.join(names)}):\n    return {call}\n"
           f"def {name}({params}):\n    return _call({label} or _default, _impl, ({', '.join(names)},))\n")
    namespace = {"_fn": fn, "_P": TORCH, "_call": call_op, "_axis": _axis, "_np_dtype": D.np_dtype,
                 "_default": default_name(name)}
    exec(src, namespace)  # noqa: S102  (the table's own text, as collections.namedtuple does)
    op = namespace[name]
    replayable(namespace["_impl"])  # (fgrad.numpy's functions: no random numbers, no captured arrays)
    mapping = ", ".join(positional + keywords).replace("_P", "TORCH")
    op.__doc__ = (f"torch.{name}: fgrad.numpy.{fn.__name__}({mapping})"
                  + (f"; grad_fn {_grad_fn_doc(grad_fn)}" if grad_fn else "") + ".\n\n" + _doc_head(fn))
    op.__module__ = "fgrad"
    return op


def default_name(name: str) -> str:
    """PyTorch's grad_fn name for the torch function `name`: log2 -> Log2Backward0."""
    return "".join(w[:1].upper() + w[1:] for w in name.split("_")) + "Backward0"


def adapt_table(table: str) -> dict:
    """`adapt` for each row of `table`, one a line: `torch name | fgrad.numpy function |
    torch parameters | grad_fn` (the grad_fn's stem, e.g. Sum for SumBackward0; "Sum*":
    SumBackward0 over every dim, SumBackward1 over some; "=expr": a Python expression of the
    parameters giving the stem; empty: the torch name's, Log2 for log2)."""
    out = {}
    for line in table.strip().splitlines():
        name, fn, params, grad_fn = (c.strip() for c in line.split("|"))
        out[name] = adapt(name, getattr(fnp, fn), params, grad_fn or None)
    return out
