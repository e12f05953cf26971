"""Adam and AdamW, PyTorch's update formulas."""
from __future__ import annotations

import math

from ...core.errors import FgradValueError
from .._tensor.tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_flags, _lerp_, _number, _xp


def _check_adam_args(lr, betas, eps, weight_decay) -> None:
    if not 0.0 <= lr:
        raise FgradValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise FgradValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise FgradValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise FgradValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise FgradValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """PyTorch's Adam (L2 weight decay added to the gradient, or decoupled with
    `decoupled_weight_decay=True`, which is AdamW):

        g = grad (-grad when maximize) + weight_decay * p
        m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
        v_max = max(v_max, v) (amsgrad)
        p -= lr / (1 - beta1^t) * m / (sqrt(v or v_max) / sqrt(1 - beta2^t) + eps)

    foreach, capturable, differentiable and fused are accepted and change nothing (see
    Optimizer)."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        # Adam stores betas as a tuple of numbers (Adamax, NAdam and RAdam keep what they got),
        # as PyTorch does
        betas = tuple(float(b) if isinstance(b, Tensor) else b for b in betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        _check_flags(defaults)
        super().__init__(params, defaults)

    def _update(self, group, params) -> None:
        lr, (b1, b2), eps = _number(group["lr"]), group["betas"], group["eps"]
        wd, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
        decoupled = group.get("decoupled_weight_decay", False)
        for p in params:
            w = p._value
            xp = _xp(w)
            f = w.dtype.type
            g = self._grad_array(p)
            if maximize:
                g = -g
            step = self._next_step(p)
            if wd != 0:
                if decoupled:
                    w *= f(1 - lr * wd)
                else:
                    g = g + f(wd) * w
            m = self._buffer(p, "exp_avg", xp.zeros_like)
            v = self._buffer(p, "exp_avg_sq", xp.zeros_like)
            _lerp_(m, g, 1 - b1)
            v *= f(b2)
            v += f(1 - b2) * g * g
            bc1 = 1 - b1 ** step
            bc2_sqrt = math.sqrt(1 - b2 ** step)
            step_size = lr / bc1
            if amsgrad:
                vmax = self._buffer(p, "max_exp_avg_sq", xp.zeros_like)
                xp.maximum(vmax, v, out=vmax)
                denom = xp.sqrt(vmax)
            else:
                denom = xp.sqrt(v)
            denom /= f(bc2_sqrt)
            denom += f(eps)
            w += f(-step_size) * m / denom
            self._bump(p)


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step
    (weight_decay defaults to 1e-2, as in PyTorch)."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
