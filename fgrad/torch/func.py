"""fgrad.torch.func: PyTorch's torch.func idioms for running Modules functionally.

    params = {k: v.detach() for k, v in model.named_parameters()}
    def loss(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x,)), y)
    grads = fgrad.grad(loss)(params, x, y)           # same values as loss.backward()

`functional_call` runs the module with the given tensors (or arrays, or tracers) in place of
its parameters and buffers, so fgrad.grad / vjp / jvp / hessian / vmap apply to models.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Any, Callable

from ..api import grad as _grad
from ..api import hessian as _hessian
from ..api import jacfwd as _jacfwd
from ..api import jacrev as _jacrev
from ..api import jvp as _jvp
from ..api import value_and_grad
from ..api import vjp as _vjp
from ..api import vmap as _vmap
from ..core.errors import FgradRuntimeError, FgradValueError
from ..tree_util import dicts_in_insertion_order

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "hessian", "jacrev",
           "jacfwd", "vmap"]


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
    module.named_parameters(). Values may be Tensors, NumPy arrays or tracers; the module
    itself is restored afterwards."""
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


# torch.func names for the transforms. Each runs under `dicts_in_insertion_order`, as
# torch.utils._pytree flattens: a dict comes back in its caller's key order (fgrad.grad & co.
# sort dict keys, as JAX does), and so does every function a transform returns (vjp's pullback).

def _torch_order(transformed: Callable) -> Callable:
    """`transformed` (a function a transform returned) run with torch.func's dict order."""
    @functools.wraps(transformed)
    def run(*args, **kwargs):
        with dicts_in_insertion_order():
            return transformed(*args, **kwargs)
    return run


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad: the gradient of func's scalar output in the arguments `argnums`."""
    return _torch_order(_grad(func, argnums, has_aux))


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad_and_value: (gradient, value) -- the order torch.func uses."""

    vg = value_and_grad(func, argnums, has_aux)

    def fn(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return g, value
    return _torch_order(fn)


def vjp(func: Callable, *primals, has_aux: bool = False):
    """torch.func.vjp: (output, vjp_fn[, aux])."""
    with dicts_in_insertion_order():
        res = _vjp(func, *primals, has_aux=has_aux)
    return (res[0], _torch_order(res[1])) + tuple(res[2:])


def jvp(func: Callable, primals: tuple, tangents: tuple, *, has_aux: bool = False):
    """torch.func.jvp: (output, tangent output[, aux])."""
    with dicts_in_insertion_order():
        return _jvp(func, primals, tangents, has_aux=has_aux)


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """torch.func.hessian: forward over reverse."""
    return _torch_order(_hessian(func, argnums))


def jacrev(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False) -> Callable:
    """torch.func.jacrev: the Jacobian by reverse mode."""
    return _torch_order(_jacrev(func, argnums, has_aux=has_aux))


def jacfwd(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False) -> Callable:
    """torch.func.jacfwd: the Jacobian by forward mode."""
    return _torch_order(_jacfwd(func, argnums, has_aux=has_aux))


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0) -> Callable:
    """torch.func.vmap: in_dims applies to the positional arguments; keyword arguments are
    passed to func unmapped (PyTorch's rule; fgrad.vmap maps them over axis 0, as JAX)."""

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        def call(*a):
            return func(*a, **kwargs)
        call.__name__ = getattr(func, "__name__", type(func).__name__)
        f = call if kwargs else func
        with dicts_in_insertion_order():
            return _vmap(f, in_axes=in_dims, out_axes=out_dims)(*args)
    return wrapped
