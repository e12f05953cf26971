"""Adamax, PyTorch's update formula."""
from __future__ import annotations

from .adam import _check_adam_args
from .optimizer import Optimizer, ParamsT, _lerp_, _number, _xp


class Adamax(Optimizer):
    """PyTorch's Adamax (Adam with the infinity norm):

        g = grad (-grad when maximize) + weight_decay * p
        m = beta1 m + (1 - beta1) g;   u = max(beta2 u, |g| + eps)
        p -= lr / (1 - beta1^t) * m / u

    foreach, differentiable and capturable are accepted and change nothing (see Optimizer)."""

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, group, params) -> None:
        lr, (b1, b2), eps, wd = _number(group["lr"]), group["betas"], group["eps"], group["weight_decay"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            g = self._grad_array(p)
            if group["maximize"]:
                g = -g
            step = self._next_step(p)
            if wd != 0:
                g = g + f(wd) * w
            m = self._buffer(p, "exp_avg", xp.zeros_like)
            u = self._buffer(p, "exp_inf", xp.zeros_like)
            _lerp_(m, g, 1 - b1)
            u *= f(b2)
            xp.maximum(u, xp.abs(g) + f(eps), out=u)
            clr = lr / (1 - b1 ** step)
            w += f(-clr) * m / u
            self._bump(p)
