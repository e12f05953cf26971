"""Argument handling shared by fgrad.torch.nn.functional's families: each function accepts Tensors,
tracers and arrays alike (results follow the input: Tensors with a grad_fn, or arrays or
tracers), and reports wrong dtypes or shapes with PyTorch's exception types."""
from __future__ import annotations

import functools
import inspect
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
from ...core.trace import Tracer, aval_of
from .._tensor._boundary import call, replayable
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import _EMPTY, Tensor, wrap


def val(x):
    """The value behind a Tensor (x itself otherwise)."""
    return x._value if isinstance(x, Tensor) else x


def arr(x, name: str):
    """A value fgrad can bind: Tensors, tracers and arrays pass; Python data become arrays."""
    if isinstance(x, Tensor) or isinstance(x, Tracer) or hasattr(x, "shape"):
        return x
    return fnp.asarray(x)


def shape(x) -> tuple:
    """The shape of a Tensor, tracer or array."""
    v = x._value if isinstance(x, Tensor) else x
    # (a NumPy value's own attribute: no aval is built, and layers run once per step)
    return v.shape if type(v) is np.ndarray else aval_of(v).shape


def dtype(x):
    """The NumPy dtype of a Tensor, tracer or array."""
    v = x._value if isinstance(x, Tensor) else x
    return v.dtype if type(v) is np.ndarray else aval_of(v).dtype


def float_input(name: str, x) -> None:
    d = dtype(x)
    # (ml_dtypes' floats, bfloat16 & co., are NumPy kind "V": the boundary computes them in float32)
    if not is_float(d) and d.kind != "V":
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
        if isinstance(buf, Tensor):
            with no_grad():
                buf.copy_(wrap(upd))
        else:
            a[...] = upd


def has_tensor(args, kwargs=_EMPTY) -> bool:
    """Whether a Tensor is among `args` (or inside a list/tuple argument) or `kwargs`' values."""
    for a in args:
        if isinstance(a, Tensor):
            return True
        if type(a) in (list, tuple) and any(isinstance(e, Tensor) for e in a):
            return True
    return any(isinstance(v, Tensor) for v in kwargs.values()) if kwargs else False


def torch_call(name: str, fn, args: tuple, kwargs: dict = _EMPTY, operands: tuple | None = None):
    """`fn(*args, **kwargs)`, `fn` written over plain values (arrays, tracers): through the
    facade's boundary as ONE torch op whose grad_fn is `name` when a Tensor is among the
    arguments (the result is Tensors), directly otherwise (arrays or tracers in, out).
    `operands`: the positions in `args` of PyTorch's differentiable operands, in its order
    (see `_boundary.call`; an absent one, None, is a (None, 0) entry of the node)."""
    if has_tensor(args, kwargs):
        return call(name, fn, args, kwargs, operands)
    return fn(*args, **kwargs)


def torch_op(name: str, consts: tuple = (), operands: tuple = ()):
    """Decorator: a function over plain values becomes a torch op whose grad_fn is `name`
    (PyTorch's, e.g. GeluBackward0) when called with Tensors, and stays itself on arrays and
    tracers (see torch_call). `consts` names the parameters PyTorch does not differentiate
    (a target, class weights): their Tensors enter as values, so the node has no edge for them.
    `operands`, when given, names PyTorch's differentiable Tensor parameters in the order its
    node lists them (("input", "weight", "bias")): each is one entry of next_functions, (None,
    0) where it is None, left out or needs no gradient, and every other Tensor is a constant.
    `fn` runs again for create_graph, so it must be free of side effects (random draws,
    running statistics): those stay outside it."""
    def deco(fn):
        sig = inspect.signature(fn) if consts or operands else None
        if operands:
            params = list(sig.parameters)
            positions = tuple(params.index(p) for p in operands)
            last = max(positions)
        else:
            positions, last = None, -1

        @functools.wraps(fn)
        def torch_fn(*args, **kwargs):
            if not has_tensor(args, kwargs):
                return fn(*args, **kwargs)
            if consts or len(args) <= last:  # (every operand by position: absent ones get their default)
                bound = sig.bind(*args, **kwargs)
                if positions is not None:
                    bound.apply_defaults()
                for c in consts:
                    if c in bound.arguments:
                        bound.arguments[c] = val(bound.arguments[c])
                args, kwargs = bound.args, bound.kwargs
            return call(name, fn, args, kwargs, positions)
        replayable(fn)  # (free of side effects, as create_graph already requires)
        return torch_fn
    return deco


# --- ATen's own ops inside its composites ------------------------------------------------------------
# PyTorch's composite functions (pairwise_distance, norm_except_dim, ...) call ATen overloads
# that Python code does not reach under the same node: at::norm(x, p, dim) is NormBackward1
# (Python's Tensor.norm is linalg.vector_norm). The Tensor-and-Scalar overloads (AddBackward1,
# ...) are fgrad.torch._tensor._scalar_ops.

def aten_norm(input: Tensor, p: float = 2, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """ATen's norm(Tensor, p, dim, keepdim): the p-norm along `dim` (NormBackward1), or of
    every element when dim is None (NormBackward0).

    Args:
        input: a floating-point Tensor.
        p: the order (inf and -inf: the largest and smallest magnitude; 0: the count of
            non-zeros).
        dim: one dimension, or None for all of them.
        keepdim: keep `dim` with size 1.

    Returns:
        A Tensor.
    """
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise FgradValueError(f"norm(): p must be a number, got {p!r}")
    return call("NormBackward0" if dim is None else "NormBackward1", _norm_values, (input, float(p), dim, keepdim))


@replayable
def _norm_values(v, p, dim, keepdim):
    if dim is None:
        out = fnp.linalg.norm(fnp.reshape(v, (-1,)), ord=p)
        return fnp.reshape(out, (1,) * len(shape(v))) if keepdim else out
    return fnp.linalg.norm(v, ord=p, axis=dim, keepdims=keepdim)


def on_tensors(fn):
    """Decorator for a function written with the facade's Tensor ops (a composition of torch
    ops, so its graph is PyTorch's composite graph): arrays and tracers are wrapped as
    Tensors that need no grad, and the results unwrapped, so it also runs on plain values
    (under fgrad.grad, vmap, jit)."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if has_tensor(args, kwargs):
            return fn(*args, **kwargs)
        out = fn(*[wrap(a) if isinstance(a, Tracer) or hasattr(a, "shape") else a for a in args],
                 **{k: wrap(v) if isinstance(v, Tracer) or hasattr(v, "shape") else v for k, v in kwargs.items()})
        return _unwrap(out)
    return wrapped


def _unwrap(out):
    if isinstance(out, Tensor):
        return out._value
    if isinstance(out, tuple):
        return tuple(_unwrap(o) for o in out)
    return out
