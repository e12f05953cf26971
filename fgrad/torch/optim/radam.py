"""RAdam, PyTorch's update formula."""
from __future__ import annotations

import math

from .adam import _check_adam_args
from .optimizer import Optimizer, ParamsT, _lerp_, _number, _xp


class RAdam(Optimizer):
    """PyTorch's RAdam (Adam with the variance of the adaptive rate rectified):

        g = grad (-grad when maximize) + weight_decay * p   (p *= 1 - lr wd when decoupled)
        m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        p -= lr m / (1 - beta1^t) * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r_t   (rho_t > 5)
        p -= lr m / (1 - beta1^t)                                                (otherwise)
        with r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))

    foreach, capturable and differentiable are accepted and change nothing (see Optimizer)."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False,
                 *, foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

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
                if group["decoupled_weight_decay"]:
                    w *= f(1 - lr * wd)
                else:
                    g = g + f(wd) * w
            m = self._buffer(p, "exp_avg", xp.zeros_like)
            v = self._buffer(p, "exp_avg_sq", xp.zeros_like)
            _lerp_(m, g, 1 - b1)
            v *= f(b2)
            v += f(1 - b2) * g * g
            bc1 = 1 - b1 ** step
            bc2 = 1 - b2 ** step
            m_hat = m / f(bc1)
            rho_inf = 2 / (1 - b2) - 1
            rho_t = rho_inf - 2 * step * (b2 ** step) / bc2
            if rho_t > 5.0:
                rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                 / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                adaptive = xp.sqrt(v)
                adaptive += f(eps)
                adaptive = f(bc2 ** 0.5) / adaptive
                w -= m_hat * f(lr) * adaptive * f(rect)
            else:
                w -= m_hat * f(lr)
            self._bump(p)
