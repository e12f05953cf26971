"""The facade's door to fgrad's functional transforms: torch.func's transforms (grad, vjp,
jvp, vmap, jacobians, hessian, linearize) and torch.compile's engine for functions of Tensors.

fgrad's transforms compute on plain values and refuse Tensors (with the message the Tensor's
`__fgrad_foreign__` hook gives, _methods.py; numpy._util.refuse_foreign reads it). Each transform
here unboxes the Tensors among its arguments, runs fgrad's transform on their values with the
function seeing Tensors again (Tensors around the transform's tracers), and gives its results
back as Tensors. fgrad.torch.func re-exports these under torch.func's names; they live in
_tensor so that every other facade module (autograd.functional, torch.compile) can use them.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ...api import grad as _grad
from ...api import hessian as _hessian
from ...api import jacfwd as _jacfwd
from ...api import jacrev as _jacrev
from ...api import jit as _jit
from ...api import jvp as _jvp
from ...api import linearize as _linearize
from ...api import value_and_grad as _value_and_grad
from ...api import vjp as _vjp
from ...api import vmap as _vmap
from ...core.trace import Tracer, _state
from ...tree_util import dicts_in_insertion_order, tree_flatten, tree_unflatten
from ._boundary import call
from .tensor import TRANSFORMS, Tensor, _make

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "hessian", "jacrev", "jacfwd", "vmap",
           "compile_function"]


# --- Tensors in, values through fgrad's transform, Tensors out ----------------------------------

def _unbox(tree) -> tuple:
    """(`tree` with each Tensor leaf replaced by its value, per leaf whether it was a Tensor)."""
    leaves, treedef = tree_flatten(tree)
    boxed = tuple(isinstance(x, Tensor) for x in leaves)
    if not any(boxed):
        return tree, boxed
    return tree_unflatten(treedef, [x._value if b else x for x, b in zip(leaves, boxed)]), boxed


def _rebox(tree, boxed: tuple):
    """`tree` with the leaves marked in `boxed` wrapped as Tensors (around the tracers of the
    transform that calls the function)."""
    if not any(boxed):
        return tree
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [_make(x) if b else x for x, b in zip(leaves, boxed)])


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, Tracer)) or type(x).__module__.startswith("cupy")


def _results(tree, boxed: tuple):
    """A transform's results as torch.func gives them: every array leaf a Tensor (no graph),
    when the arguments held Tensors (`boxed`); as they are for arguments of plain arrays."""
    if not any(boxed):
        return tree
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [_make(x) if _is_array(x) else _make(np.asarray(x)) if isinstance(x, np.generic)
                                    else x for x in leaves])


class _OnValues:
    """`func`, a function of Tensors, as a function of values for fgrad's transforms: the
    argument leaves that were Tensors (`boxed`, over the (args, kwargs) pytree, whose
    structure the transforms keep) reach `func` as Tensors again, and the Tensors among its
    outputs are unboxed (aux's too: fgrad's transforms take only values)."""

    def __init__(self, func: Callable, boxed: tuple) -> None:
        self.func, self.boxed = func, boxed
        self.__name__ = getattr(func, "__name__", type(func).__name__)

    def __call__(self, *args, **kwargs):
        args, kwargs = _rebox((args, kwargs), self.boxed)
        return _unbox(self.func(*args, **kwargs))[0]


def _on_values(transform: Callable, func: Callable, *targs, **tkwargs) -> Callable:
    """`transform(func, ...)` (fgrad's grad, jacrev, hessian, ...) for a function of Tensors:
    the transformed function takes Tensors and gives Tensors."""
    def run(*args, **kwargs):
        with dicts_in_insertion_order():
            (vals, kw), boxed = _unbox((args, kwargs))
            if not tkwargs.get("has_aux") and _records(args, kwargs):
                return _recorded(lambda a, k: transform(_OnValues(func, boxed), *targs, **tkwargs)(*a, **k),
                                 args, kwargs)
            out = transform(_OnValues(func, boxed), *targs, **tkwargs)(*vals, **kw)
            return _results(out, boxed)
    return functools.wraps(func)(run)


def _records(args, kwargs) -> bool:
    """Whether a Tensor among the arguments requires grad, with grad mode on: then the
    transform's results join the autograd graph, as torch.func's do."""
    return _state.grad_enabled and any(isinstance(x, Tensor) and x._requires_grad
                                       for x in tree_flatten((args, kwargs))[0])


def _recorded(run: Callable, args: tuple, kwargs: dict):
    """`run(args, kwargs)` on values as one torch op (the boundary's `call`): its results are
    Tensors whose grad_fn pulls back through the transform, so `loss.backward()` after a
    vmapped model or a torch.func.grad reaches the parameters (to any order: the transforms
    compose with the recorder)."""
    leaves, treedef = tree_flatten((args, kwargs))

    def on_values(*vals):
        TRANSFORMS[0] += 1
        try:
            with dicts_in_insertion_order():  # (also when create_graph reruns it)
                a, k = tree_unflatten(treedef, list(vals))
                return run(a, k)
        finally:
            TRANSFORMS[0] -= 1
    return call(None, on_values, tuple(leaves))


# torch.func names for the transforms. Each runs under `dicts_in_insertion_order`, as
# torch.utils._pytree flattens: a dict comes back in its caller's key order (fgrad.grad & co.
# sort dict keys, as JAX does), and so does every function a transform returns (vjp's pullback).

def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """The gradient of `func`'s scalar output with respect to its arguments `argnums`, as
    ``torch.func.grad`` (fgrad.grad on the Tensors' values; no graph is recorded).

    Args:
        func: a function of Tensors (or pytrees of Tensors) returning a scalar Tensor, or
            (scalar, aux) with `has_aux`.
        argnums: the position, or a tuple of positions, of the arguments to differentiate.
        has_aux: func returns (value, aux); the gradient function then returns
            (gradient, aux).

    Returns:
        A function of func's arguments returning the gradient, shaped like
        args[argnums] (a tuple of gradients when argnums is a tuple).

    Example:
        >>> import fgrad.torch as torch
        >>> from fgrad.torch.func import grad
        >>> grad(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
        tensor([ 3., 12.])
        >>> grad(grad(lambda x: x ** 3))(torch.tensor(2.0))
        tensor(12.)
    """
    return _on_values(_grad, func, argnums, has_aux)


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad_and_value: (gradient, value) -- the order torch.func uses."""
    vg = _on_values(_value_and_grad, func, argnums, has_aux)

    @functools.wraps(func)
    def fn(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return g, value
    return fn


def vjp(func: Callable, *primals, has_aux: bool = False):
    """torch.func.vjp: (output, vjp_fn[, aux])."""
    with dicts_in_insertion_order():  # (results rebuilt in it too: dicts in their caller's order)
        vals, boxed = _unbox(primals)
        if not has_aux and _records(primals, {}):
            # the output and each cotangent's pullback join the autograd graph, as torch.func's
            # (the pullback reruns the function's vjp on values, as one torch op of primals and ct)
            out = _recorded(lambda a, k: _OnValues(func, boxed)(*a), primals, {})

            def recorded_vjp_fn(ct):
                return _recorded(lambda a, k: _vjp(_OnValues(func, boxed), *a[0])[1](a[1]), (primals, ct), {})
            return out, recorded_vjp_fn
        res = _vjp(_OnValues(func, boxed), *vals, has_aux=has_aux)
        out = _results(res[0], boxed)
        aux = _results(res[2], boxed) if has_aux else None
    pullback = res[1]

    def vjp_fn(ct):
        with dicts_in_insertion_order():
            return _results(pullback(_unbox(ct)[0]), boxed)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(func: Callable, primals: tuple, tangents: tuple, *, has_aux: bool = False):
    """torch.func.jvp: (output, tangent output[, aux])."""
    with dicts_in_insertion_order():
        vals, boxed = _unbox(tuple(primals))
        if not has_aux and _records((primals, tangents), {}):  # (results in the autograd graph)
            return _recorded(lambda a, k: _jvp(_OnValues(func, boxed), a[0], a[1]), (tuple(primals), tuple(tangents)),
                             {})
        res = _jvp(_OnValues(func, boxed), vals, _unbox(tuple(tangents))[0], has_aux=has_aux)
        return _results(res, boxed)


def linearize(func: Callable, *primals) -> tuple:
    """torch.func.linearize: (output, jvp_fn), jvp_fn(*tangents) the tangent output."""
    with dicts_in_insertion_order():
        vals, boxed = _unbox(primals)
        out, f_jvp = _linearize(_OnValues(func, boxed), *vals)
        out = _results(out, boxed)

    def jvp_fn(*tangents):
        with dicts_in_insertion_order():
            return _results(f_jvp(*_unbox(tangents)[0]), boxed)
    return out, jvp_fn


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """torch.func.hessian: forward over reverse."""
    return _on_values(_hessian, func, argnums)


def jacrev(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False) -> Callable:
    """torch.func.jacrev: the Jacobian by reverse mode."""
    return _on_values(_jacrev, func, argnums, has_aux=has_aux)


def jacfwd(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False) -> Callable:
    """torch.func.jacfwd: the Jacobian by forward mode."""
    return _on_values(_jacfwd, func, argnums, has_aux=has_aux)


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0) -> Callable:
    """Map `func` over a batch dimension of its arguments, as ``torch.func.vmap``.

    `in_dims` applies to the positional arguments; keyword arguments are passed to func
    unmapped (PyTorch's rule; fgrad.vmap maps them over axis 0, as JAX does).

    Args:
        func: a function of Tensors (or pytrees of Tensors).
        in_dims: the batch dimension of each positional argument: an int for all, or a
            tuple (or pytree prefix) with an int or None (not mapped) per argument.
        out_dims: where the batch dimension goes in each output (an int or a tuple).

    Returns:
        A function taking batched arguments and returning func's outputs stacked along
        `out_dims`.

    Example:
        >>> import fgrad.torch as torch
        >>> from fgrad.torch.func import vmap
        >>> rows_dot_w = vmap(torch.dot, in_dims=(0, None))
        >>> rows_dot_w(torch.ones(3, 2), torch.tensor([1.0, 2.0]))
        tensor([3., 3., 3.])
    """

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        with dicts_in_insertion_order():
            vals, boxed = _unbox(args)
            f = func
            if kwargs:  # not mapped: closed over, as they are
                def f(*a):
                    return func(*a, **kwargs)
            inner = _OnValues(f, boxed)
            inner.__name__ = getattr(func, "__name__", type(func).__name__)
            if _records(args, kwargs):
                return _recorded(lambda a, k: _vmap(inner, in_axes=in_dims, out_axes=out_dims)(*a), args, {})
            return _results(_vmap(inner, in_axes=in_dims, out_axes=out_dims)(*vals), boxed)
    return wrapped


def compile_function(fn: Callable) -> Callable:
    """fgrad.jit of `fn`, a function of Tensors (torch.compile's engine): which argument
    leaves are Tensors keys the trace beside their shapes (a static argument of the jitted
    function of values), and every array the traced function returns comes back a Tensor."""
    def on_values(boxed, *args, **kwargs):
        return _OnValues(fn, boxed)(*args, **kwargs)
    on_values.__name__ = getattr(fn, "__name__", type(fn).__name__)
    jitted = _jit(on_values, static_argnums=0)

    @functools.wraps(fn)
    def compiled(*args, **kwargs):
        (vals, kw), boxed = _unbox((args, kwargs))
        if _records(args, kwargs):  # the compiled program's results join the autograd graph
            return _recorded(lambda a, k: jitted(boxed, *a, **k), args, kwargs)
        return _results(jitted(boxed, *vals, **kw), (True,))
    compiled.stats = jitted.stats
    return compiled
