"""fgrad.torch.func: PyTorch's torch.func idioms for running Modules functionally.

    params = {k: v.detach() for k, v in model.named_parameters()}
    def loss(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x,)), y)
    grads = torch.func.grad(loss)(params, x, y)      # same values as loss.backward()

`functional_call` runs the module with the given tensors in place of its parameters and
buffers, so grad / vjp / jvp / hessian / vmap apply to models.

The transforms (defined in fgrad.torch._tensor._func) are the facade's door to fgrad's
functional ones (fgrad.grad, vjp, ...), which compute on plain values and refuse Tensors: each
unboxes the Tensors among its arguments, runs fgrad's transform on their values with the
function seeing Tensors again (Tensors around the transform's tracers), and gives its results
back as Tensors.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..core.errors import FgradRuntimeError, FgradValueError
from ._tensor import stack as _stack
from ._tensor._func import (  # noqa: F401  (torch.func's transforms, and torch.compile's engine)
    compile_function,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
    vmap,
)

__all__ = ["functional_call", "stack_module_state", "grad", "grad_and_value", "vjp", "jvp",
           "hessian", "jacrev", "jacfwd", "vmap", "linearize"]


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


def stack_module_state(models) -> tuple[dict, dict]:
    """Stack the parameters and buffers of same-class models along a new first axis, for running
    an ensemble with `vmap` over `functional_call` (PyTorch's model-ensembling recipe).

    Args:
        models: a non-empty sequence of Modules of one class, all in training or all in eval mode.

    Returns:
        (params, buffers): dicts keyed as `named_parameters()` / `named_buffers()`, each value the
        models' tensors stacked; stacked parameters that require grad are new leaves (detached
        from the models) that require grad.

    Raises:
        RuntimeError: for no models, mixed modes or classes, or a name whose tensors disagree on
            requires_grad.
    """
    models = list(models)
    if not models:
        raise FgradRuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise FgradRuntimeError("stack_module_state: Expected all models to have the same "
                                "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise FgradRuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named: list[dict]) -> dict:
        out = {}
        for name in named[0]:
            tensors = [d[name] for d in named]
            flags = {t.requires_grad for t in tensors}
            if len(flags) > 1:
                raise FgradRuntimeError(f"Expected {name} from each model to have the same "
                                        ".requires_grad")
            value = _stack(tensors)
            out[name] = value.detach().requires_grad_() if flags == {True} else value
        return out

    return (stacked([dict(m.named_parameters()) for m in models]),
            stacked([dict(m.named_buffers()) for m in models]))
