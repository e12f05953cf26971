"""Optimizer base class: parameter groups, per-parameter state, zero_grad, state_dict, and the
helpers the optimisers share (array module, step counter, PyTorch's lerp)."""
from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from collections.abc import Iterable
from typing import Union

import numpy as np

from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from .._tensor.grad_mode import enable_grad, no_grad
from .._tensor.tensor import Tensor
from .._tensor.tensor import wrap as _wrap


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def _xp(a):
    """The array module of `a`: NumPy for host arrays, CuPy for device arrays."""
    if isinstance(a, np.ndarray):
        return np
    import cupy  # optional dependency: only a device array reaches here
    return cupy


def _lerp_(a, end, weight: float) -> None:
    """a.lerp_(end, weight) as PyTorch computes it: a + w (end - a) for |w| < 0.5, else
    end - (end - a)(1 - w), which keeps the result exact at w = 1."""
    f = a.dtype.type
    w = f(weight)
    if abs(w) < 0.5:
        a += w * (end - a)
    else:
        a[...] = end - (end - a) * (f(1) - w)


def _fma(a, x, y):
    """a + x * y rounded once, as PyTorch's CPU kernels compute add(alpha=), sub(alpha=) and
    addcmul (a fused multiply-add). For float32 the product and sum are taken in float64, where
    the float32 product is exact, and rounded back once; other dtypes round twice.

    Args:
        a: an array.
        x, y: arrays or scalars of a's dtype, broadcasting against a.

    Returns:
        A new array of a's dtype and shape.
    """
    if a.dtype != np.float32:
        return a + x * y
    wide = np.float64
    x64 = x.astype(wide) if hasattr(x, "astype") else wide(x)
    y64 = y.astype(wide) if hasattr(y, "astype") else wide(y)
    return (a.astype(wide) + x64 * y64).astype(np.float32)


def _fma_(a, x, y) -> None:
    """a += x * y in place, rounded once as `_fma` rounds it."""
    if a.dtype != np.float32:
        a += x * y
    else:
        a[...] = _fma(a, x, y)


def _number(x):
    """A hyperparameter as a Python number: a 1-element Tensor lr (PyTorch accepts one) reads
    as its value."""
    return float(x) if isinstance(x, Tensor) else x


def _check_flags(defaults: dict) -> None:
    """PyTorch's checks on the implementation flags, so a script that PyTorch rejects is
    rejected here too."""
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise FgradRuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise FgradRuntimeError("`fused` and `foreach` cannot be `True` together.")


ParamsT = Union[Iterable[Tensor], Iterable[dict], Iterable[tuple[str, Tensor]]]


class Optimizer:
    """Base class. Subclasses define `_update(group, params)`, which updates the
    parameters' arrays in place (the facade's version counters are bumped, so a graph that
    saved a parameter before the step refuses to backward through it, as in PyTorch).

    The implementation flags PyTorch's optimisers take (`foreach`, `fused`, `capturable`,
    `differentiable`) are accepted by the same optimisers as in PyTorch and kept in the
    parameter groups, so repr() and state_dict() read as PyTorch's; they change nothing:
    fgrad has one implementation of each update (PyTorch's single-tensor formula, which is
    what PyTorch runs on CPU), no CUDA graphs to capture, and the step itself is never
    recorded for autograd (`differentiable=True` does not make it differentiable).
    `fused` and `foreach` both True, or `fused` with `differentiable`, raise RuntimeError
    as in PyTorch. `maximize=True` is implemented (gradient ascent) wherever PyTorch has it.

    The first backward pass of a process tunes glibc's malloc for training loops
    (FGRAD_TUNE_MALLOC=0 opts out; see fgrad.torch.nn.utils.tune_malloc)."""

    def __init__(self, params: ParamsT, defaults: dict) -> None:
        self.defaults = dict(defaults)
        self.state: dict = defaultdict(dict)
        self.param_groups: list = []
        if isinstance(params, Tensor):
            raise FgradTypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise FgradValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group {"params": tensors or (name, tensor) pairs, option: value, ...}; options
        it does not set take the optimizer's defaults. Named parameters (as
        model.named_parameters() gives) are kept, with their names in group["param_names"]."""
        if not isinstance(param_group, dict):
            raise FgradTypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise FgradTypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use a "
                            "list instead.")
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        if names:
            if len(names) != len(params):
                raise FgradValueError("all optimizer params should be with/without names. Some param names "
                                 "are missing: pass every parameter as a (name, tensor) pair, or none")
            params = [p[1] for p in params]
            group["param_names"] = names
        if any(("param_names" in group) != ("param_names" in g) for g in self.param_groups):
            kind = "with names" if "param_names" in group else "without names"
            raise FgradValueError(f"all optimizer param groups should be with/without names. cannot add "
                             f"param group {kind} to the optimizer")
        for p in params:
            if not isinstance(p, Tensor):
                raise FgradTypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise FgradValueError("can't optimize a non-leaf Tensor")
        group["params"] = params
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise FgradValueError(f"parameter group didn't specify a value of required optimization "
                                 f"parameter {k}")
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise FgradValueError("some parameters appear in more than one parameter group")
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, "
                          "this will cause an error", UserWarning, stacklevel=3)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's .grad: to None (the default, as PyTorch) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    g = p._grad
                    if g._node is not None:
                        g = p._grad = g.detach()
                    g.zero_()

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p._grad is not None]
            if params:
                self._update(group, params)
        return loss

    def _update(self, group, params) -> None:
        raise NotImplementedError

    # --- helpers for subclasses ---
    @staticmethod
    def _grad_array(p):
        g = p._grad._value
        if g.dtype != p._value.dtype:
            g = g.astype(p._value.dtype)
        return g

    @staticmethod
    def _bump(p) -> None:
        p._vbox[0] += 1

    def _buffer(self, p, name, init):
        """The state Tensor `name` of parameter p, created by init(value_array) on first use."""
        st = self.state[p]
        buf = st.get(name)
        if buf is None:
            buf = st[name] = _wrap(init(p._value))
        return buf._value

    def _next_step(self, p) -> float:
        """Count one more step in p's state["step"] (a float32 0-d Tensor, as PyTorch keeps
        it) and return the new count."""
        st = self.state[p]
        step = float(st["step"]) + 1.0 if "step" in st else 1.0
        st["step"] = _step_tensor(step)
        return step

    # --- state ---
    def state_dict(self) -> dict:
        """{"state": {index: {name: Tensor | number}}, "param_groups": [{..., "params": [index]}]}:
        parameters are replaced by their position across groups, as in PyTorch."""
        index, groups, n = {}, [], 0
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                if id(p) not in index:
                    index[id(p)] = n
                    n += 1
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state_dict() (this library's or PyTorch's layout): the state is matched to
        the parameters by position, floating state takes each parameter's dtype, and the
        groups' options (lr, initial_lr, ...) replace the current ones."""
        state_dict = copy.deepcopy(state_dict)
        groups, saved = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved):
            raise FgradValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise FgradValueError("loaded state dict contains a parameter group that doesn't match the "
                             "size of optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved):
            for i, p in zip(s["params"], g["params"]):
                id_map[i] = p
        self.state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            k = int(k)
            if k not in id_map:
                continue
            p = id_map[k]
            self.state[p] = {name: _cast_state(val, p, name == "step") for name, val in v.items()}
        for g, s in zip(groups, saved):
            for k, v in s.items():
                if k != "params":
                    g[k] = v

    def __getstate__(self):
        # a scheduler's wrapper of `step` (see lr_scheduler) belongs to this process only
        return {k: v for k, v in self.__dict__.items() if k not in ("step", "_opt_called")}

    def __repr__(self) -> str:
        # PyTorch's layout, blank line between groups included
        out = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            out += "".join(f"    {k}: {g[k]}\n" for k in sorted(g) if k != "params")
        return out + ")"


def _step_tensor(step: float) -> Tensor:
    return _wrap(np.array(step, np.float32))


def _cast_state(val, p, keep_dtype: bool):
    """One loaded state value: floating arrays take the parameter's dtype (the step counter
    keeps its own), lists and tuples (LBFGS's history) are cast item by item, as in PyTorch."""
    if isinstance(val, (list, tuple)):
        return type(val)(_cast_state(v, p, keep_dtype) for v in val)
    if isinstance(val, dict):
        return {k: _cast_state(v, p, keep_dtype) for k, v in val.items()}
    if isinstance(val, Tensor):
        arr = val._value
    elif isinstance(val, np.ndarray):
        arr = val
    else:
        return val
    if not keep_dtype and arr.dtype.kind == "f" and arr.dtype != p._value.dtype:
        arr = arr.astype(p._value.dtype)
    return _wrap(np.array(arr) if isinstance(arr, np.ndarray) else arr)
