"""`torch.autograd.functional` on fgrad's transforms: jacobian, hessian, vjp, jvp, hvp and
vhp of a function of Tensors. Without create_graph they run torch.func's jacrev/jacfwd/
hessian/jvp/grad (fgrad's transforms on the Tensors' values; one batched pass, whatever
`vectorize` says) and return results outside any graph,
as PyTorch does; with create_graph=True the results are computed with the Tensor graph
(autograd.grad with create_graph), so they can be differentiated again."""
from __future__ import annotations

from typing import Any, Callable

from ..core.errors import (
    FgradNotImplementedError,
    FgradRuntimeError,
    FgradTypeError,
    FgradValueError,
)
from ._tensor import _func as torch_func
from ._tensor import _ops as ops
from ._tensor import autograd as tensor_autograd
from ._tensor import creation
from ._tensor.tensor import Tensor


def _inputs(inputs, fname: str) -> tuple[tuple, bool]:
    is_tuple = isinstance(inputs, (tuple, list))
    xs = tuple(inputs) if is_tuple else (inputs,)
    for i, x in enumerate(xs):
        if not isinstance(x, Tensor):
            raise FgradTypeError(f"The inputs given to {fname} must be either a Tensor or a tuple of Tensors but the "
                            f"value at index {i} has type {type(x).__name__}.")
    return xs, is_tuple


def _detached(xs) -> tuple:
    return tuple(x.detach() for x in xs)


def _check_scalar(out, fname: str):
    if not isinstance(out, Tensor) or out.numel() != 1:
        raise FgradRuntimeError(f"The function given to {fname} should return a single Tensor with a single element, "
                           f"got {type(out).__name__} of shape {tuple(getattr(out, 'shape', ()))}")


def _with_graph(xs) -> tuple:
    return tuple(x.detach().requires_grad_(True) if not x.requires_grad else x for x in xs)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """d func / d inputs, shaped output.shape + input.shape, nested like PyTorch's: a Tensor
    for one input and one output, else tuples (outputs outer, inputs inner)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise FgradValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise FgradNotImplementedError("torch.autograd.functional.jacobian: `strategy='forward-mode'` requires "
                                  "`vectorize=True`; pass it (fgrad's forward mode is batched anyway).")
    xs, in_tuple = _inputs(inputs, "jacobian")
    if create_graph:
        return _jacobian_graph(func, xs, in_tuple)
    argnums = tuple(range(len(xs)))
    transform = torch_func.jacfwd if strategy == "forward-mode" else torch_func.jacrev
    jac = transform(func, argnums=argnums)(*_detached(xs))
    out = func(*_detached(xs))
    if isinstance(out, (tuple, list)):
        return tuple(tuple(j) if in_tuple else j[0] for j in jac)
    return tuple(jac) if in_tuple else jac[0]


def _jacobian_graph(func, xs, in_tuple):
    xs = _with_graph(xs)
    out = func(*xs)
    outs, out_tuple = (tuple(out), True) if isinstance(out, (tuple, list)) else ((out,), False)
    rows = []
    for o in outs:
        flat = ops.reshape(o, (-1,))
        per_input = [[] for _ in xs]
        for k in range(flat.numel()):
            gs = tensor_autograd.grad(flat[k], xs, retain_graph=True, create_graph=True, allow_unused=True)
            for i, (g, x) in enumerate(zip(gs, xs)):
                per_input[i].append(g if g is not None else creation.zeros_like(x))
        blocks = []
        for i, x in enumerate(xs):
            stacked = ops.stack(per_input[i]) if per_input[i] else creation.zeros((0,) + tuple(x.shape))
            blocks.append(ops.reshape(stacked, tuple(o.shape) + tuple(x.shape)))
        rows.append(tuple(blocks) if in_tuple else blocks[0])
    return tuple(rows) if out_tuple else rows[0]


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: a Tensor for one input, else a tuple of tuples."""
    xs, in_tuple = _inputs(inputs, "hessian")
    _check_scalar(func(*_detached(xs)), "hessian")
    if create_graph:
        def grads(*ys):
            out = func(*ys)
            return tensor_autograd.grad(ops.reshape(out, ()), ys, create_graph=True)
        jac = _jacobian_graph(grads, xs, True)
        return jac if in_tuple else jac[0][0]
    h = torch_func.hessian(lambda *ys: ops.reshape(func(*ys), ()), argnums=tuple(range(len(xs))))(*_detached(xs))
    return tuple(tuple(r) for r in h) if in_tuple else h[0][0]


def _v_tuple(v, xs_like, fname: str, what: str) -> tuple:
    vs = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if len(vs) != len(xs_like):
        raise FgradRuntimeError(f"The given `v` to {fname} has {len(vs)} entries but {what} has {len(xs_like)}.")
    for a, b in zip(vs, xs_like):
        if tuple(a.shape) != tuple(b.shape):
            raise FgradRuntimeError(f"Mismatch in shape: the entry of `v` has shape {tuple(a.shape)} but the matching "
                               f"{what} has shape {tuple(b.shape)}.")
    return vs


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), vᵀ J); v may be omitted when func returns a single element."""
    xs, in_tuple = _inputs(inputs, "vjp")
    ys = _with_graph(xs)
    out = func(*ys)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if v is None:
        if len(outs) != 1 or outs[0].numel() != 1:
            raise FgradRuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
        vs = (creation.ones_like(outs[0]),)
    else:
        vs = _v_tuple(v, outs, "vjp", "the output")
    gs = tensor_autograd.grad(outs, ys, grad_outputs=vs, create_graph=create_graph, allow_unused=True)
    gs = tuple(g if g is not None else creation.zeros_like(x) for g, x in zip(gs, xs))
    if not create_graph:
        gs, outs = _detached(gs), _detached(outs)
    result_out = outs if isinstance(out, (tuple, list)) else outs[0]
    return result_out, (gs if in_tuple else gs[0])


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v) by forward mode."""
    xs, in_tuple = _inputs(inputs, "jvp")
    if v is None:
        if len(xs) != 1 or xs[0].numel() != 1:
            raise FgradRuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        v = creation.ones_like(xs[0])
    vs = _v_tuple(v, xs, "jvp", "input")
    out, tangent = torch_func.jvp(func, _detached(xs), tuple(t.detach() for t in vs))
    return out, tangent


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) of a scalar function."""
    xs, in_tuple = _inputs(inputs, "hvp")
    out = func(*_detached(xs))
    _check_scalar(out, "hvp")
    vs = _v_tuple(v, xs, "hvp", "input")
    argnums = tuple(range(len(xs)))
    g = torch_func.grad(lambda *ys: ops.reshape(func(*ys), ()), argnums=argnums)
    _, hv = torch_func.jvp(g, _detached(xs), tuple(t.detach() for t in vs))
    return out.detach(), (tuple(hv) if in_tuple else hv[0])


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), vᵀ H) of a scalar function (H is symmetric: equal to hvp's)."""
    return hvp(func, inputs, v, create_graph, strict)
