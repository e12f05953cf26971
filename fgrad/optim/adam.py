"""Adam and AdamW, PyTorch's update formulas."""
from __future__ import annotations

import math

import numpy as np

from ..core.trace import facade
from .optimizer import Optimizer


def _xp(a):
    return np if isinstance(a, np.ndarray) else __import__("cupy")


class Adam(Optimizer):
    """PyTorch's Adam (L2 weight decay added to the gradient):

        g = grad + weight_decay * p
        m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
        v_max = max(v_max, v) (amsgrad)
        p -= lr / (1 - beta1^t) * m / (sqrt(v or v_max) / sqrt(1 - beta2^t) + eps)
    """

    _decoupled = False

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0 or not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameters: {betas}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _update(self, group, params) -> None:
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        wd, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
        for p in params:
            w = p._value
            xp = _xp(w)
            f = w.dtype.type
            g = self._grad_array(p)
            if maximize:
                g = -g
            st = self.state[p]
            if "step" not in st:
                st["step"] = _scalar(0.0)
            step = float(st["step"]._value) + 1.0
            st["step"] = _scalar(step)
            if self._decoupled:
                if wd != 0:
                    w *= f(1 - lr * wd)
            elif wd != 0:
                g = g + f(wd) * w
            m = self._buffer(p, "exp_avg", lambda v: xp.zeros_like(v))
            v = self._buffer(p, "exp_avg_sq", lambda v: xp.zeros_like(v))
            m += f(1 - b1) * (g - m)          # lerp(m, g, 1 - beta1)
            v *= f(b2)
            v += f(1 - b2) * (g * g)
            bc1 = 1 - b1 ** step
            bc2_sqrt = math.sqrt(1 - b2 ** step)
            step_size = lr / bc1
            if amsgrad:
                vmax = self._buffer(p, "max_exp_avg_sq", lambda v: xp.zeros_like(v))
                xp.maximum(vmax, v, out=vmax)
                denom = xp.sqrt(vmax)
            else:
                denom = xp.sqrt(v)
            denom /= f(bc2_sqrt)
            denom += f(eps)
            w -= f(step_size) * (m / denom)
            self._bump(p)


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step
    (weight_decay defaults to 1e-2, as in PyTorch)."""

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


def _scalar(x):
    return facade.wrap(np.array(x, np.float32))
