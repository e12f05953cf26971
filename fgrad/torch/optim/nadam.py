"""NAdam, PyTorch's update formula."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradValueError
from .._tensor.tensor import wrap as _wrap
from .adam import _check_adam_args
from .optimizer import Optimizer, ParamsT, _lerp_, _number, _xp


class NAdam(Optimizer):
    """PyTorch's NAdam (Adam with Nesterov momentum and momentum decay):

        g = grad (-grad when maximize) + weight_decay * p   (p *= 1 - lr wd when decoupled)
        mu_t = beta1 (1 - 0.5 * 0.96^(t momentum_decay));   P_t = mu_1 ... mu_t
        m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
        denom = sqrt(v / (1 - beta2^t)) + eps
        p -= lr (1 - mu_t) / (1 - P_t) g / denom + lr mu_{t+1} / (1 - P_t mu_{t+1}) m / denom

    The product P_t is kept in float32 in state["mu_product"], as PyTorch keeps it.
    foreach, capturable and differentiable are accepted and change nothing (see Optimizer)."""

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise FgradValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, group, params) -> None:
        lr, (b1, b2), eps = _number(group["lr"]), group["betas"], group["eps"]
        wd, psi = group["weight_decay"], group["momentum_decay"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            g = self._grad_array(p)
            if group["maximize"]:
                g = -g
            st = self.state[p]
            step = self._next_step(p)
            if "mu_product" not in st:
                st["mu_product"] = _wrap(np.array(1.0, np.float32))
            bc2 = 1 - b2 ** step
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    w *= f(1 - lr * wd)
                else:
                    g = g + f(wd) * w
            mu = b1 * (1.0 - 0.5 * 0.96 ** (step * psi))
            mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
            # float32 product, rounded each step as PyTorch's float32 state tensor is
            mu_product = float(np.float32(st["mu_product"]._value) * np.float32(mu))
            st["mu_product"] = _wrap(np.array(mu_product, np.float32))
            mu_product_next = mu_product * mu_next
            m = self._buffer(p, "exp_avg", xp.zeros_like)
            v = self._buffer(p, "exp_avg_sq", xp.zeros_like)
            _lerp_(m, g, 1 - b1)
            v *= f(b2)
            v += f(1 - b2) * g * g
            denom = xp.sqrt(v / f(bc2))
            denom += f(eps)
            w += f(-lr * (1.0 - mu) / (1.0 - mu_product)) * g / denom
            w += f((-lr * mu_next) / (1.0 - mu_product_next)) * m / denom
            self._bump(p)
