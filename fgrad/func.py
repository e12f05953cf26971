"""fgrad.func: PyTorch's torch.func idioms for running Modules functionally.

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

from .api import grad as _grad
from .api import hessian as _hessian
from .api import jacfwd as _jacfwd
from .api import jacrev as _jacrev
from .api import jvp as _jvp
from .api import value_and_grad
from .api import vjp as _vjp
from .api import vmap as _vmap
from .core.errors import FgradRuntimeError, FgradValueError

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


# torch.func names for the transforms
def grad(func, argnums=0, has_aux: bool = False):
    return _grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """torch.func.grad_and_value: (gradient, value) -- the order torch.func uses."""

    vg = value_and_grad(func, argnums, has_aux)

    def fn(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return g, value
    return fn


def vjp(func, *primals, has_aux: bool = False):
    return _vjp(func, *primals, has_aux=has_aux)


def jvp(func, primals, tangents, *, has_aux: bool = False):
    return _jvp(func, primals, tangents, has_aux=has_aux)


def hessian(func, argnums=0):
    return _hessian(func, argnums)


def jacrev(func, argnums=0, *, has_aux: bool = False):
    return _jacrev(func, argnums, has_aux=has_aux)


def jacfwd(func, argnums=0, *, has_aux: bool = False):
    return _jacfwd(func, argnums, has_aux=has_aux)


def vmap(func, in_dims=0, out_dims=0):
    """torch.func.vmap: in_dims applies to the positional arguments; keyword arguments are
    passed to func unmapped (PyTorch's rule; fgrad.vmap maps them over axis 0, as JAX)."""


    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        def call(*a):
            return func(*a, **kwargs)
        call.__name__ = getattr(func, "__name__", type(func).__name__)
        f = call if kwargs else func
        return _vmap(f, in_axes=in_dims, out_axes=out_dims)(*args)
    return wrapped
