"""fgrad.torch.func: PyTorch's torch.func idioms for running Modules functionally.

    params = {k: v.detach() for k, v in model.named_parameters()}
    def loss(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x,)), y)
    grads = torch.func.grad(loss)(params, x, y)      # same values as loss.backward()

`functional_call` runs the module with the given tensors in place of its parameters and
buffers, so grad / vjp / jvp / hessian / vmap apply to models.

The transforms here are the facade's door to fgrad's functional ones (fgrad.grad, vjp, ...),
which compute on plain values and refuse Tensors: each unboxes the Tensors among its
arguments, runs fgrad's transform on their values with the function seeing Tensors again
(Tensors around the transform's tracers), and gives its results back as Tensors wherever
the function returned Tensors and the arguments were Tensors.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np

from ..api import grad as _grad
from ..api import hessian as _hessian
from ..api import jacfwd as _jacfwd
from ..api import jacrev as _jacrev
from ..api import jit as _jit
from ..api import jvp as _jvp
from ..api import linearize as _linearize
from ..api import value_and_grad as _value_and_grad
from ..api import vjp as _vjp
from ..api import vmap as _vmap
from ..core.errors import FgradRuntimeError, FgradValueError
from ..core.trace import Tracer
from ..tree_util import dicts_in_insertion_order, tree_flatten, tree_unflatten
from ._tensor.tensor import Tensor, _make

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "hessian", "jacrev",
           "jacfwd", "vmap", "linearize"]


def _lookup(module, name):
    """(owner module, store dict, key) of the parameter or buffer called `name`."""
    *path, leaf = name.split(".")
    mod = module
    for item in path:
        if item not in mod._modules or mod._modules[item] is None:
            raise KeyError(f"functional_call: {type(module).__name__} has no submodule "
                           f"'{'.'.join(path)}' (from key '{name}')")
        mod = mod._modules[item]
    for store in (mod._parameters, mod._buffers):
        if leaf in store:
            return mod, store, leaf
    raise KeyError(f"functional_call: '{name}' is not a parameter or buffer of "
                   f"{type(module).__name__}; known names: "
                   f"{', '.join(n for n, _ in module.named_parameters())}")


@contextmanager
def _swapped(module, values: dict, strict: bool, tie_weights: bool):
    targets = []
    for name, value in values.items():
        owner, store, key = _lookup(module, name)
        targets.append((store, key, value))
    if tie_weights:
        # a tensor registered under several names (tied weights) is replaced everywhere
        by_id = {}
        for n, t in list(module.named_parameters(remove_duplicate=False)) + \
                list(module.named_buffers(remove_duplicate=False)):
            by_id.setdefault(id(t), []).append(n)
        given = set(values)
        for name, value in values.items():
            owner, store, key = _lookup(module, name)
            for other in by_id.get(id(store[key]), ()):
                if other not in given:
                    o_owner, o_store, o_key = _lookup(module, other)
                    targets.append((o_store, o_key, value))
    if strict:
        names = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
                {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(names - set(values))
        if missing:
            raise FgradRuntimeError(f"functional_call: strict=True but no value given for {missing}")
    saved = [(store, key, store[key]) for store, key, _ in targets]
    try:
        for store, key, value in targets:
            store[key] = value
        yield
    finally:
        for store, key, old in reversed(saved):
            store[key] = old


def functional_call(module, parameter_and_buffer_dicts, args=(), kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """module(*args, **kwargs) with parameters and buffers replaced by the values of
    `parameter_and_buffer_dicts` (a dict name -> value, or a tuple of such dicts), keyed as in
    module.named_parameters(). Values are Tensors (inside the transforms here, Tensors around
    their tracers); the module itself is restored afterwards."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (tuple, list)):
        merged = {}
        for d in dicts:
            dup = set(merged) & set(d)
            if dup:
                raise FgradValueError(f"functional_call: {sorted(dup)} appeared in more than one dict")
            merged.update(d)
        dicts = merged
    if not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, dict(dicts), strict, tie_weights):
        return module(*args, **(kwargs or {}))


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
            out = transform(_OnValues(func, boxed), *targs, **tkwargs)(*vals, **kw)
            return _results(out, boxed)
    return functools.wraps(func)(run)


# torch.func names for the transforms. Each runs under `dicts_in_insertion_order`, as
# torch.utils._pytree flattens: a dict comes back in its caller's key order (fgrad.grad & co.
# sort dict keys, as JAX does), and so does every function a transform returns (vjp's pullback).

def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad: the gradient of func's scalar output in the arguments `argnums`."""
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
    """torch.func.vmap: in_dims applies to the positional arguments; keyword arguments are
    passed to func unmapped (PyTorch's rule; fgrad.vmap maps them over axis 0, as JAX)."""

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
        return _results(jitted(boxed, *vals, **kw), (True,))
    compiled.stats = jitted.stats
    return compiled


# --- fgrad's functional entry points refuse Tensors, naming the door to use instead ----------

_DOORS = {
    "fgrad.grad": "fgrad.torch.func.grad", "fgrad.value_and_grad": "fgrad.torch.func.grad_and_value",
    "fgrad.vjp": "fgrad.torch.func.vjp", "fgrad.jvp": "fgrad.torch.func.jvp",
    "fgrad.vmap": "fgrad.torch.func.vmap", "fgrad.jacrev": "fgrad.torch.func.jacrev",
    "fgrad.jacfwd": "fgrad.torch.func.jacfwd", "fgrad.hessian": "fgrad.torch.func.hessian",
    "fgrad.jit": "fgrad.torch.compile", "fgrad.custom_vjp": "fgrad.torch.autograd.Function",
    "fgrad.custom_jvp": "fgrad.torch.autograd.Function",
    "fgrad.checkpoint": "fgrad.torch.utils.checkpoint.checkpoint",
    "fgrad.stop_gradient": "Tensor.detach()",
}


def _refusal(entry: str) -> str:
    """What an fgrad functional entry point says when given a Tensor (numpy._util.refuse_foreign)."""
    door = _DOORS.get(entry)
    use = f"use {door}, or pass" if door else "pass"
    return (f"{entry} got a fgrad.torch.Tensor: {use} t.detach().numpy() (fgrad's functional "
            "transforms compute on arrays; the facade's own doors unbox Tensors for them)")


Tensor.__fgrad_foreign__ = staticmethod(_refusal)
