"""Argument handling shared by fgrad.torch.nn.functional's families: each function accepts Tensors,
tracers and arrays alike (results follow the input: Tensors with a grad_fn, or arrays or
tracers), and reports wrong dtypes or shapes with PyTorch's exception types."""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ... import numpy as fnp
from ...core.avals import is_float
from ...core.errors import (
    ConcretizationError,
    FgradIndexError,
    FgradRuntimeError,
    FgradValueError,
)
from ...core.trace import Tracer, aval_of, facade, is_tensor
from .._tensor._ops import named
from .._tensor.grad_mode import no_grad


def val(x):
    """The value behind a Tensor (x itself otherwise)."""
    return x._value if is_tensor(x) else x


def arr(x, name: str):
    """A value fgrad can bind: Tensors, tracers and arrays pass; Python data become arrays."""
    if is_tensor(x) or isinstance(x, Tracer) or hasattr(x, "shape"):
        return x
    return fnp.asarray(x)


def shape(x) -> tuple:
    return aval_of(val(x)).shape


def dtype(x):
    """The NumPy dtype of a Tensor, tracer or array."""
    return aval_of(val(x)).dtype


def float_input(name: str, x) -> None:
    if not is_float(dtype(x)):
        raise FgradRuntimeError(f"{name}: expected a floating-point input, got dtype {dtype(x)} "
                           "(convert it with .float())")


def same_dtype(name: str, *xs) -> None:
    dts = {dtype(x) for x in xs if x is not None}
    if len(dts) > 1:
        raise FgradRuntimeError(f"{name}: expected all arguments to have the same dtype, got "
                           f"{', '.join(sorted(str(d) for d in dts))}; convert with .float() or "
                           ".to(dtype)")


def softmax_dim(name: str, ndim: int, dim):
    """PyTorch's dim for softmax-like functions (the deprecated implicit choice included)."""
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                      "to include dim=X as an argument.", UserWarning, stacklevel=4)
        dim = 0 if ndim in (0, 1, 3) else 1
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise FgradIndexError(f"{name}: dim {dim} is out of range for an input with {ndim} dimensions")
    return dim


def concrete_or_none(x):
    """The array behind x (NumPy or CuPy), or None while x is traced (jit, vmap, make_jaxpr)."""
    v = val(x)
    while isinstance(v, Tracer):
        try:
            v = v._trace.concrete(v)
        except ConcretizationError:
            return None
        v = val(v)
    return v if hasattr(v, "shape") and not isinstance(v, np.generic) else np.asarray(v)


def reduction_mode(size_average, reduce, reduction: str) -> str:
    """The reduction from PyTorch's legacy size_average/reduce flags, or `reduction`."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def reduce_loss(name: str, loss, reduction: str):
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    if reduction == "none":
        return loss
    raise FgradValueError(f"{reduction} is not a valid value for reduction (in {name}: use 'mean', 'sum' or 'none')")


def update_running(running_mean, running_var, mean, var, momentum: float, n: int) -> None:
    """running = (1 - momentum) running + momentum * batch statistic, in place and outside any
    graph; var is the biased variance over n values per channel (stored unbiased, as
    PyTorch). Skipped while staging (jit/vmap), where the statistics are abstract."""
    m, v = concrete_or_none(mean), concrete_or_none(var)
    if m is None or v is None:
        return
    m, v = m.reshape(-1), v.reshape(-1) * (n / (n - 1))
    for buf, new in ((running_mean, m), (running_var, v)):
        if buf is None:
            continue
        a = val(buf)
        if isinstance(a, Tracer):
            continue
        upd = ((1.0 - momentum) * a + momentum * new.astype(a.dtype, copy=False)).astype(a.dtype, copy=False)
        if is_tensor(buf):
            with no_grad():
                buf.copy_(facade.wrap(upd))
        else:
            a[...] = upd


def grad_fn(name: str):
    """Decorator: a Tensor result's grad_fn is named `name` (PyTorch's, e.g. GeluBackward0)
    although the function is a composition of several primitives."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            out = fn(*args, **kwargs)
            return named(out, name, *args) if is_tensor(out) else out
        return wrapped
    return deco
