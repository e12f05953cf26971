"""Adadelta, PyTorch's update formula."""
from __future__ import annotations

from ...core.errors import FgradValueError
from .optimizer import Optimizer, ParamsT, _number, _xp


class Adadelta(Optimizer):
    """PyTorch's Adadelta:

        g = grad (-grad when maximize) + weight_decay * p
        v = rho v + (1 - rho) g^2
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho u + (1 - rho) delta^2;   p -= lr delta

    foreach, capturable and differentiable are accepted and change nothing (see Optimizer)."""

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise FgradValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise FgradValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise FgradValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise FgradValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    def _update(self, group, params) -> None:
        lr, rho, eps, wd = _number(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            self._next_step(p)
            g = self._grad_array(p)
            if group["maximize"]:
                g = -g
            if wd != 0:
                g = g + f(wd) * w
            sq = self._buffer(p, "square_avg", xp.zeros_like)
            acc = self._buffer(p, "acc_delta", xp.zeros_like)
            sq *= f(rho)
            sq += f(1 - rho) * g * g
            std = xp.sqrt(sq + f(eps))
            delta = xp.sqrt(acc + f(eps))
            delta /= std
            delta *= g
            acc *= f(rho)
            acc += f(1 - rho) * delta * delta
            w += f(-lr) * delta
            self._bump(p)
