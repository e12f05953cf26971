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

import functools
from contextlib import contextmanager
from typing import Callable

from ..core.errors import FgradRuntimeError, FgradValueError
from ..core.trace import Tracer
from ._tensor import stack as _stack
from ._tensor.tensor import Tensor, _make
from .nn.layers import _BatchNorm
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
           "hessian", "jacrev", "jacfwd", "vmap", "linearize", "functionalize", "replace_all_batch_norm_modules_",
           "rearrange", "debug_unwrap"]


def _lookup(module, name):
    """(owner module, store dict, key) of the parameter or buffer called `name`."""
    *path, leaf = name.split(".")
    mod = module
    for item in path:
        if item not in mod._modules or mod._modules[item] is None:
            raise AttributeError(f"{type(mod).__name__} has no attribute `{item}` (from the key '{name}' given "
                                 f"to functional_call; the module's names: "
                                 f"{', '.join(n for n, _ in module.named_parameters())})")
        mod = mod._modules[item]
    for store in (mod._parameters, mod._buffers):
        if leaf in store:
            return mod, store, leaf
    # (PyTorch sets such a name as a new attribute, so a misspelt key is silently unused)
    raise KeyError(f"functional_call: '{name}' is not a parameter or buffer of {type(module).__name__}; known "
                   f"names: {', '.join(n for n, _ in module.named_parameters())}")


def _untied(module, values: dict) -> dict:
    """`values` with each tensor the module registers under several names (tied weights) given
    under all of them (ValueError when two of those names received different values)."""
    groups: dict = {}
    for n, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        groups.setdefault(id(t), []).append(n)
    out = dict(values)
    for names in groups.values():
        given = [n for n in names if n in values]
        if not given:
            continue
        if len({id(values[n]) for n in given}) > 1:
            raise FgradValueError(f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                                  "Consider using tie_weights=False")
        for n in names:
            out.setdefault(n, values[given[0]])
    return out


@contextmanager
def _swapped(module, values: dict, strict: bool, tie_weights: bool):
    if tie_weights:
        values = _untied(module, values)
    if strict:
        names = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
                {n for n, _ in module.named_buffers(remove_duplicate=False)}
        errors = []
        unexpected = sorted(set(values) - names)
        missing = sorted(names - set(values))
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise FgradRuntimeError("Error(s) in reparametrizing for {}:\n\t{}\n(strict=True: give a value for "
                                    "every parameter and buffer, and no other name)".format(
                                        type(module).__name__, "\n\t".join(errors)))
    targets = [(*_lookup(module, name)[1:], value) for name, value in values.items()]
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
    their tracers); the module itself is restored afterwards.

    Args:
        module: the nn.Module to call.
        parameter_and_buffer_dicts: a dict from names (as in ``named_parameters()`` and
            ``named_buffers()``) to Tensors, or a tuple of such dicts with distinct keys.
        args: the positional arguments of the call (a single non-tuple value is one argument).
        kwargs: the keyword arguments of the call.
        tie_weights: a value given for one of several tied names (the same Parameter
            registered twice) replaces it under every name, as PyTorch does.
        strict: every parameter and buffer must be given, and no other name.

    Returns:
        What ``module(*args, **kwargs)`` returns with those values in place.

    Example:
        >>> import fgrad.torch as torch
        >>> from fgrad.torch.func import functional_call, grad
        >>> net = torch.nn.Linear(2, 1)
        >>> params = {"weight": torch.tensor([[1.0, 2.0]]), "bias": torch.tensor([0.5])}
        >>> x = torch.tensor([[3.0, 4.0]])
        >>> functional_call(net, params, (x,))
        tensor([[11.5000]])
        >>> loss = lambda p: functional_call(net, p, (x,)).sum()
        >>> grad(loss)(params)["weight"]
        tensor([[3., 4.]])
    """
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (tuple, list)):
        merged = {}
        for d in dicts:
            dup = set(merged) & set(d)
            if dup:
                raise FgradValueError(f"{sorted(dup)} appeared in multiple dictionaries; behavior of functional "
                                      "call is ambiguous")
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


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """`func` with its in-place operations run as out-of-place ones, so the transforms can
    differentiate and batch it (PyTorch's functionalize); mutations of its inputs are still
    visible to the caller after the call.

    fgrad.torch already runs an in-place operation on a transform's traced values as an
    out-of-place one whose result is rebound into the Tensor (see tensor.commit_inplace), and
    writes concrete values into the input's storage, so the function itself has these
    semantics: the result calls it unchanged.

    Args:
        func: a function of Tensors.
        remove: "mutations" or "mutations_and_views" (PyTorch's two modes; the values agree).

    Returns:
        A function with `func`'s signature and results.

    Raises:
        RuntimeError: for another `remove`.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise FgradRuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for "
                                f"remove={remove}. Valid options are:\n     remove='mutations': all inplace and out= "
                                "operators will be removed from the program, and replaced with their "
                                "out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
                                "above, all aliasing operators {view} will be replaced with their non-aliasing "
                                "counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)
    return functionalized


def replace_all_batch_norm_modules_(root):
    """Make every BatchNorm in `root` use batch statistics only, in place: running_mean,
    running_var and num_batches_tracked become None and track_running_stats False (PyTorch's
    way of making a model with BatchNorm vmappable: no buffer is updated in place).

    Args:
        root: a Module.

    Returns:
        `root`.
    """
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def debug_unwrap(tensor, *, recurse: bool = True):
    """The value under a transform's wrapping of `tensor`, for inspection while debugging
    (PyTorch's debug_unwrap): inside vmap the whole batch (the batch dimension where vmap keeps
    it), inside grad/jvp/vjp the primal; `tensor` itself outside any transform.

    Args:
        tensor: a Tensor (anything else is returned as it is).
        recurse: unwrap every transform (True) or the innermost one only.

    Returns:
        A Tensor without the transform's tracking; computing with it inside the transformed
        function breaks the transform's results.
    """
    if not isinstance(tensor, Tensor) or not isinstance(tensor._value, Tracer):
        return tensor
    v = tensor._value
    while isinstance(v, Tracer):
        inner = getattr(v, "val", None)  # vmap's tracer: the batched value
        if inner is None:
            inner = getattr(v, "primal", None)  # forward and reverse mode's tracers
        if inner is None:  # a staged (jit) value has no concrete one under it
            break
        v = inner
        if not recurse:
            break
    return _make(v)


def rearrange(tensor, pattern: str, **axes_lengths: int):
    """einops-style rearrangement (PyTorch's torch.func.rearrange): `pattern` "left -> right"
    names the axes, groups them with parentheses (a group on the left is split, one on the
    right is merged), `...` stands for the remaining axes and `1` or `()` for a unit axis;
    `axes_lengths` gives the sizes a split cannot infer.

    Args:
        tensor: a Tensor, or a list/tuple of Tensors (stacked along a new first axis).
        pattern: e.g. "b (h w) c -> b h w c".
        **axes_lengths: sizes of named axes, e.g. h=2.

    Returns:
        A Tensor: a reshape, permute and reshape of the input.

    Raises:
        ValueError: for a malformed pattern, axes on one side only, or a rank mismatch.
        RuntimeError: when sizes cannot be inferred or do not divide.
    """
    if isinstance(tensor, (list, tuple)):
        tensor = _stack(list(tensor))
    if pattern.count("->") != 1:
        raise FgradValueError(f"rearrange: the pattern needs one '->' between its two sides: {pattern!r}")
    left, right = (_einops_side(part, pattern) for part in pattern.split("->"))
    names_l = {n for g in left for n in g if n not in ("...", "1")}
    names_r = {n for g in right for n in g if n not in ("...", "1")}
    if names_l != names_r:
        raise FgradValueError(f"Identifiers only on one side of rearrange expression (should be on both): "
                              f"{(names_l ^ names_r)}")
    shape = tuple(tensor.shape)
    ellipsis = [i for i, g in enumerate(left) if g == ["..."]]
    if any("..." in g and g != ["..."] for g in left + right) or len(ellipsis) > 1:
        raise FgradValueError(f"rearrange: '...' must stand alone, at most once per side: {pattern!r}")
    if ellipsis:
        n_rest = len(shape) - (len(left) - 1)
        if n_rest < 0:
            raise FgradValueError(f"Number of dimensions in pattern ({len(left) - 1} and '...') exceeds the number "
                                  f"of dimensions in the tensor ({len(shape)})")
        k = ellipsis[0]
        rest = [f"...{i}" for i in range(n_rest)]
        left = left[:k] + [[r] for r in rest] + left[k + 1:]
        right = [g2 for g in right for g2 in ([[r] for r in rest] if g == ["..."] else [g])]
    elif len(left) != len(shape):
        raise FgradValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the number of "
                              f"dimensions in the tensor ({len(shape)})")
    sizes = dict(axes_lengths)
    elementary = []
    for group, dim in zip(left, shape):
        names = [n for n in group if n != "1"]
        unknown = [n for n in names if n not in sizes]
        known = 1
        for n in names:
            if n in sizes:
                known *= sizes[n]
        if len(unknown) > 1:
            raise FgradRuntimeError(f"cannot infer the sizes of two dimensions at once {unknown[0]} and {unknown[1]}: "
                                    f"give one of them as a keyword argument, e.g. {unknown[0]}=...")
        if unknown:
            if known == 0 or dim % known:
                raise FgradRuntimeError(f"inferred dimension does not evenly fit into larger dimension: {dim} vs "
                                        f"{tuple(sizes[n] for n in names if n in sizes) + ('?',)}")
            sizes[unknown[0]] = dim // known
        elif known != dim:
            raise FgradRuntimeError(f"rearrange: the axes {group} have sizes multiplying to {known}, but the "
                                    f"tensor's dimension is {dim}")
        elementary.extend(names)
    out = tensor.reshape(tuple(sizes[n] for n in elementary)) if elementary else tensor.reshape(())
    order = [n for g in right for n in g if n != "1"]
    out = out.permute(tuple(elementary.index(n) for n in order)) if order else out
    final = []
    for g in right:
        size = 1
        for n in g:
            if n != "1":
                size *= sizes[n]
        final.append(size)
    return out.reshape(tuple(final))


def _einops_side(side: str, pattern: str) -> list:
    """One side of an einops pattern as groups of axis names ("1" a unit axis, "..." the rest)."""
    groups, current = [], None
    for tok in side.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            if current is not None:
                raise FgradValueError(f"rearrange: nested parentheses in {pattern!r}")
            current = []
        elif tok == ")":
            if current is None:
                raise FgradValueError(f"rearrange: unbalanced ')' in {pattern!r}")
            groups.append(current or ["1"])
            current = None
        elif tok == "..." or tok == "1" or tok.isidentifier():
            if current is not None:
                current.append(tok)
            else:
                groups.append([tok])
        else:
            raise FgradValueError(f"rearrange: {tok!r} in {pattern!r} is not an axis name, '...', '1' or a group")
    if current is not None:
        raise FgradValueError(f"rearrange: unbalanced '(' in {pattern!r}")
    return groups
