"""Adagrad, PyTorch's update formula."""
from __future__ import annotations

from ...core.errors import FgradValueError
from .._tensor.tensor import wrap as _wrap
from .optimizer import Optimizer, ParamsT, _check_flags, _number, _step_tensor, _xp


class Adagrad(Optimizer):
    """PyTorch's Adagrad:

        g = grad (-grad when maximize) + weight_decay * p
        clr = lr / (1 + (t - 1) lr_decay)
        s += g^2;   p -= clr g / (sqrt(s) + eps)

    The state (step 0, s = initial_accumulator_value) is created for every parameter when
    the optimizer is built, as in PyTorch, so state_dict() has it before the first step.
    foreach, differentiable and fused are accepted and change nothing (see Optimizer)."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= lr:
            raise FgradValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise FgradValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise FgradValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise FgradValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise FgradValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_flags(defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p) -> None:
        # a parameter added later by add_param_group starts from the constructor's value,
        # as in PyTorch
        st = self.state[p]
        if not st:
            st["step"] = _step_tensor(0.0)
            xp = _xp(p._value)
            st["sum"] = _wrap(xp.full_like(p._value, self.defaults["initial_accumulator_value"]))

    def _update(self, group, params) -> None:
        lr, lr_decay, eps, wd = _number(group["lr"]), group["lr_decay"], group["eps"], group["weight_decay"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            self._init_state(p)
            step = self._next_step(p)
            g = self._grad_array(p)
            if group["maximize"]:
                g = -g
            if wd != 0:
                g = g + f(wd) * w
            clr = lr / (1 + (step - 1) * lr_decay)
            s = self.state[p]["sum"]._value
            s += g * g
            std = xp.sqrt(s)
            std += f(eps)
            w += f(-clr) * g / std
            self._bump(p)
