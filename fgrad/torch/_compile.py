"""torch.compile of a Module: captured with fx, run as one fgrad.jit program of its
parameters, buffers and inputs.

The model is traced once with `fx.symbolic_trace` (when that fails, on data-dependent
control flow say, the model itself is traced by fgrad.jit through the boundary, which needs
no fx). The captured forward becomes a pure function `(params, buffers, *args) -> outputs`
by `torch.func.functional_call`, and that function goes through `compile_function`
(fgrad.jit on the values): parameters are inputs of the compiled program, never constants,
so an optimizer's in-place updates are seen by the next call; the jit's cache recompiles for
new shapes and dtypes. The Python branches a forward takes on `self.training` are frozen into
a trace, so one compiled program is kept per training/eval state of the modules (the guard).
A module that updates running statistics in training mode (BatchNorm with
track_running_stats) runs eagerly while in training mode, with a warning: fgrad's running
update happens on concrete values only (fgrad.torch.nn._util.update_running skips it under a
trace), so a compiled program would silently leave the statistics unchanged. In eval mode it
is compiled.

The programs compute the functions a library approximates (exp, tanh, sin, ...) with NumPy,
as eager fgrad.torch does (jit's MATH "eager", `math_as`), and fuse the rest: so a compiled
Module gives eager's values bit for bit, and float32 chains of such functions run NumPy's
float32 SIMD loops (jit's own vectorised math computes float32 in float64: a 200-op float32
sin/tanh chain ran 2.2x slower than eager that way, 0.7x this way).

When an input requires grad, the program's outputs join the autograd graph as one node (an
autograd.Function, `_CompiledFunction`) whose backward is a jitted vjp of the forward; the
forward and the backward both run as fgrad.jit's compiled programs (fused element-wise
kernels), on concrete values. Gradients are first order (the backward is not itself
recorded, so create_graph through a compiled Module is not supported).
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np

from ..core.errors import FgradError, FgradNotImplementedError, FgradTypeError
from ..api import jit as _jit
from ..api import make_jaxpr as _make_jaxpr
from ..api import vjp as _vjp
from ..core.trace import _state
from ..interpreters.compile.scalar import math_as
from ..tree_util import tree_flatten, tree_unflatten
from ._tensor import Tensor
from ._tensor.function import Function
from ._tensor.tensor import _make
from .func import functional_call
from .runtime import _Compiled


class CompiledModule:
    """A Module under `fgrad.torch.compile` (PyTorch's OptimizedModule): calling it runs the
    compiled program; attribute reads and `parameters()`, `train()`, `eval()`, `state_dict()`
    reach the original module (`_orig_mod`).

    Args:
        module: the Module to compile.
    """

    def __init__(self, module: Any) -> None:
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_programs", {})
        object.__setattr__(self, "_eager", False)
        object.__setattr__(self, "_warned_stats", False)
        object.__setattr__(self, "_captures", {})  # guard -> fx's GraphModule (or the module)
        object.__setattr__(self, "_captured", None)   # the latest capture

    # --- reaching the wrapped module ---------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._orig_mod, name, value)

    def __repr__(self) -> str:
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)".replace("\n  )", "\n)")

    def train(self, mode: bool = True) -> "CompiledModule":
        self._orig_mod.train(mode)
        return self

    def eval(self) -> "CompiledModule":
        return self.train(False)

    # --- running ----------------------------------------------------------------------------

    @property
    def capture(self) -> str:
        """'fx' when the forward was captured by fx.symbolic_trace, 'trace' when fgrad.jit
        traces the module itself."""
        if self._captured is None:
            return "none yet"
        return "fx" if self._captured is not self._orig_mod else "trace"

    def _guard(self) -> tuple:
        """What a capture freezes besides shapes and dtypes: every submodule's training flag
        (fx records `self.training` as a constant) and which parameter and buffer objects the
        module holds (a replaced submodule or parameter needs a new capture)."""
        mod = self._orig_mod
        return (tuple(m.training for m in mod.modules()), tuple(map(id, mod.parameters())),
                tuple(id(b) for b in mod.buffers() if b is not None))

    def _program(self, captured: Any, guard: tuple, leaves: list, treedef: Any) -> "_Program":
        statics = tuple((i, x) for i, x in enumerate(leaves) if not isinstance(x, Tensor))
        key = (guard, treedef, _hashable(statics))
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = _Program(_pure_forward(captured), leaves, treedef)
        return prog

    def __call__(self, *args, **kwargs):
        mod = self._orig_mod
        if self._eager:
            return mod(*args, **kwargs)
        if any(m.training and getattr(m, "track_running_stats", False) for m in mod.modules()):
            if not self._warned_stats:
                object.__setattr__(self, "_warned_stats", True)
                warnings.warn(f"fgrad.torch.compile: {type(mod).__name__} runs eagerly in training mode: it updates "
                              "running statistics (BatchNorm), which fgrad updates on concrete values only; "
                              "in eval mode it is compiled", UserWarning, stacklevel=2)
            return mod(*args, **kwargs)
        guard = self._guard()
        captured = self._captures.get(guard)
        if captured is None:
            captured = self._captures[guard] = _capture(mod)
        object.__setattr__(self, "_captured", captured)
        params = dict(captured.named_parameters())
        buffers = {k: b for k, b in captured.named_buffers() if b is not None}
        leaves, treedef = tree_flatten((params, buffers, args, kwargs))
        try:
            return self._program(captured, guard, leaves, treedef).run(leaves)
        except (FgradError, TypeError) as e:
            object.__setattr__(self, "_eager", True)
            warnings.warn(f"fgrad.torch.compile: {type(mod).__name__} runs eagerly: tracing it failed "
                          f"({type(e).__name__}: {str(e).splitlines()[0]})", UserWarning, stacklevel=2)
            return mod(*args, **kwargs)

    @property
    def stats(self) -> dict:
        """Programs kept (one per guard and call structure), and the traces of their forwards and backwards (one per
        input signature)."""
        total = {"programs": len(self._programs), "forward_traces": 0, "backward_traces": 0}
        for prog in self._programs.values():
            total["forward_traces"] += prog.forward.stats.traces + prog.forward_vjp.stats.traces
            total["backward_traces"] += prog.backward.stats.traces
        return total


def _hashable(statics: tuple) -> Any:
    """The non-Tensor leaves of a call as a cache key (their repr when unhashable)."""
    try:
        hash(statics)
        return statics
    except TypeError:
        return repr(statics)


class _Program:
    """One guarded program: the forward as a jitted function of the call's Tensor values
    (the other leaves are constants of it); with grad, a jitted forward that also returns the
    vjp's residuals (in the inputs that require grad), and a jitted backward that reads them."""

    def __init__(self, fwd: Callable, leaves: list, treedef: Any) -> None:
        self.slots = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        consts = list(leaves)
        self.out_tree: list = []

        def on_values(*vals):
            full = list(consts)
            for i, v in zip(self.slots, vals):
                full[i] = _make(v)
            params, buffers, args, kwargs = tree_unflatten(treedef, full)
            outs, tree = tree_flatten(fwd(params, buffers, args, kwargs))
            if not self.out_tree:
                self.out_tree.append(tree)
            return [o._value if isinstance(o, Tensor) else o for o in outs]
        on_values.__name__ = getattr(fwd, "__name__", "forward")
        self.on_values = on_values
        self.forward = _jit(on_values)

        def forward_vjp(diff_vals, other_vals, where):
            def of_diff(*d):
                full, it_d, it_o = [], iter(d), iter(other_vals)
                for w in where:
                    full.append(next(it_d) if w else next(it_o))
                return on_values(*full)
            return _vjp(of_diff, *diff_vals)
        # with grad: (outputs, pullback) in one program, the pullback a pytree of the residuals
        # the backward needs (fgrad.vjp's VJPFunction), so the backward does not rerun the forward
        self.forward_vjp_fn = forward_vjp
        self.forward_vjp = _jit(forward_vjp, static_argnums=2)
        self.passthrough: dict = {}  # input signature -> passed_through's answer
        # a pullback's treedef holds the pullback object itself (equal only to itself), so the
        # backward is keyed on the first pullback's treedef per input signature: the residuals
        # of later calls, laid out alike, are unflattened into it
        self.pullback_trees: dict = {}
        self.backward = _jit(lambda res, cts, key: tree_unflatten(self.pullback_trees[key], res)(cts),
                             static_argnums=2)

    def passed_through(self, key: tuple, diff: list, other: list, where: tuple, n_outs: int) -> list:
        """(position among the residuals, position among diff + other) of each residual that is
        one of forward_vjp's inputs itself (a layer's input or weight, which its vjp keeps).
        jit returns a copy of such an output (a program's outputs never alias its inputs);
        the backward is given the input array instead, as eager's vjp holds it: work cached
        per input array in the forward (an FFT convolution's transforms) is then found again,
        where a copy missed it and the backward transformed the input once more."""
        found = self.passthrough.get(key)
        if found is None:
            jaxpr = _make_jaxpr(self.forward_vjp_fn, static_argnums=2)(diff, other, where).jaxpr
            position = {id(v): k for k, v in enumerate(jaxpr.invars)}
            found = self.passthrough[key] = [(j - n_outs, position[id(o)]) for j, o in enumerate(jaxpr.outvars)
                                             if j >= n_outs and id(o) in position]
        return found

    def run(self, leaves: list) -> Any:
        tensors = [leaves[i] for i in self.slots]
        vals = [t._value for t in tensors]
        if _state.grad_enabled and any(t._requires_grad for t in tensors):
            outs = _CompiledFunction.apply(self, *tensors)
            outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        else:
            with math_as("eager"):
                outs = [_make(v) for v in self.forward(*vals)]
        return tree_unflatten(self.out_tree[0], outs)


class _CompiledFunction(Function):
    """The compiled forward as one node of the autograd graph; its backward is the jitted vjp."""

    _backward_name = "CompiledFunctionBackward"  # the node torch.compile's (AOTAutograd's) graphs hold

    @staticmethod
    def forward(ctx, prog: _Program, *tensors):
        vals = [t._value for t in tensors]
        ctx.prog = prog
        ctx.where = where = tuple(bool(n) and t._value.dtype.kind in "fc"
                                  for n, t in zip(ctx.needs_input_grad[1:], tensors))
        diff, other = [v for v, w in zip(vals, where) if w], [v for v, w in zip(vals, where) if not w]
        with math_as("eager"):
            outs, pullback = prog.forward_vjp(diff, other, where)
        ctx.residuals, tree = tree_flatten(pullback)
        ctx.key = (where, tuple((v.shape, v.dtype) for v in vals))
        prog.pullback_trees.setdefault(ctx.key, tree)
        inputs = diff + other
        for r, k in prog.passed_through(ctx.key, diff, other, where, len(outs)):
            ctx.residuals[r] = inputs[k]
        results = tuple(_make(v) for v in outs)
        ctx.out_meta = [(v.shape, v.dtype) for v in outs]
        ctx.mark_non_differentiable(*[r for r, v in zip(results, outs) if v.dtype.kind not in "fc"])
        return results

    @staticmethod
    def backward(ctx, *grads):
        if _state.grad_enabled:  # create_graph=True: the jitted vjp's results would carry no graph
            raise FgradNotImplementedError(
                "fgrad.torch.compile: a compiled Module gives first-order gradients only; for "
                "create_graph=True (higher derivatives) call the module itself, or differentiate a "
                "compiled function of the parameters (torch.func.functional_call under torch.compile)")
        cts = [np.zeros(s, d) if g is None or d.kind not in "fc" else g._value
               for g, (s, d) in zip(grads, ctx.out_meta)]
        with math_as("eager"):
            gs = iter(ctx.prog.backward(ctx.residuals, cts, ctx.key))
        return (None, *[_make(next(gs)) if w else None for w in ctx.where])


def _capture(module: Any) -> Any:
    """fx's GraphModule of `module` (sharing its parameter and buffer objects), or the module
    itself when symbolic tracing fails."""
    from . import fx  # (imported on use: fx swaps namespace attributes while it traces)
    try:
        return fx.symbolic_trace(module)
    except Exception:  # any failure of fx's tracing (control flow on a Proxy, ...): trace the module
        return module


def _pure_forward(captured: Any) -> Callable:
    """(params, buffers, args, kwargs) -> outputs: `captured`'s forward with its state passed in."""
    def forward(params: dict, buffers: dict, args: tuple, kwargs: dict):
        return functional_call(captured, (params, buffers), args, kwargs)
    forward.__name__ = f"{type(captured).__name__}_forward"
    return forward


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None, backend: Any = "inductor",
            mode: Any = None, options: Any = None, disable: bool = False) -> Any:
    """torch.compile on fgrad's compiler.

    A Module is captured with fx and compiled as one program of its parameters, buffers and
    inputs (see CompiledModule). A function is wrapped with fgrad.jit on the Tensors' values
    (fgrad.torch._tensor._func.compile_function), traced once per input signature; when
    tracing fails (data-dependent Python control flow, side effects), the call runs eagerly
    with a warning that says why, and later calls stay eager.

    Args:
        model: a Module or a function of Tensors; None gives a decorator with these options.
        fullgraph, dynamic, backend, mode, options: PyTorch's options, accepted; fgrad always
            compiles the whole captured program with its own compiler.
        disable: return `model` unchanged.

    Returns:
        a CompiledModule for a Module, a compiled callable for a function.

    Raises:
        TypeError: for a model that is neither callable nor a Module.
    """
    if model is None:  # @torch.compile(mode=...)
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if disable:
        return model
    if hasattr(model, "parameters") and hasattr(model, "forward"):
        return CompiledModule(model)
    if not callable(model):
        raise FgradTypeError(f"compile: expected a function or a Module, got {type(model).__name__}")
    return _Compiled(model)


def module_jaxpr(module: Any, *args, **kwargs) -> Any:
    """fgrad's typed IR of `module(*args, **kwargs)` (a GraphModule, or any Module): the
    ClosedJaxpr of the program torch.compile runs, whose inputs are the parameters, then the
    buffers (each group by sorted name, as fgrad's pytrees order dict keys), then the Tensor
    arguments; its outputs are the forward's Tensor outputs, flattened.

    Args:
        module: the Module.
        *args, **kwargs: example inputs (Tensors, and Python values, which become constants).

    Returns:
        the ClosedJaxpr (print it, or run it with fgrad.core's eval_jaxpr).
    """
    params = dict(module.named_parameters())
    buffers = {k: b for k, b in module.named_buffers() if b is not None}
    leaves, treedef = tree_flatten((params, buffers, args, kwargs))
    prog = _Program(_pure_forward(module), leaves, treedef)
    return _make_jaxpr(prog.on_values)(*[leaves[i]._value for i in prog.slots])
