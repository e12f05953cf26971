"""ASGD, PyTorch's update formula."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradValueError
from .optimizer import Optimizer, ParamsT, _number, _step_tensor, _wrap, _xp


class ASGD(Optimizer):
    """PyTorch's averaged stochastic gradient descent:

        g = grad (-grad when maximize) + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = p (mu = 1), else ax += mu * (p - ax)
        eta = lr / (1 + lambd * lr * t)^alpha;   mu = 1 / max(1, t - t0)

    eta and mu are kept as float32 0-d tensors in the state, as PyTorch keeps them, so the
    rates read back rounded to float32. foreach, differentiable and capturable are accepted
    and change nothing (see Optimizer).

    Args:
        params: the parameters, or parameter groups (dicts).
        lr: learning rate.
        lambd: decay term.
        alpha: power of the eta schedule.
        t0: step from which the average starts moving.
        weight_decay: L2 penalty.
        foreach, differentiable, capturable: accepted as PyTorch's; no effect.
        maximize: ascend instead of descend.

    Raises:
        ValueError: a negative lr or weight_decay."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        if not 0.0 <= _number(lr):
            raise FgradValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise FgradValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, group, params) -> None:
        lr, lambd, alpha, t0 = _number(group["lr"]), group["lambd"], group["alpha"], group["t0"]
        wd = group["weight_decay"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            g = self._grad_array(p)
            if group["maximize"]:
                g = -g
            st = self.state[p]
            if not st:
                st["step"] = _step_tensor(0.0)
                st["eta"] = _wrap(np.array(lr, np.float32))
                st["mu"] = _wrap(np.array(1.0, np.float32))
                self._buffer(p, "ax", xp.zeros_like)
            step = self._next_step(p)
            if wd != 0:
                g = g + f(wd) * w
            eta = float(st["eta"]._value)
            w *= f(1 - lambd * eta)
            w += f(-eta) * g
            ax = st["ax"]._value
            mu = float(st["mu"]._value)
            if mu != 1:
                ax += (w - ax) * f(mu)
            else:
                ax[...] = w
            st["ax"]._vbox[0] += 1
            st["eta"] = _wrap(np.array(lr / ((1 + lambd * lr * step) ** alpha), np.float32))
            st["mu"] = _wrap(np.array(1 / max(1, step - t0), np.float32))
            self._bump(p)
