"""RMSprop, PyTorch's update formula."""
from __future__ import annotations

from ...core.errors import FgradValueError
from .optimizer import Optimizer, ParamsT, _fma, _fma_, _lerp_, _number, _xp


class RMSprop(Optimizer):
    """PyTorch's RMSprop:

        g = grad (-grad when maximize) + weight_decay * p
        v = alpha v + (1 - alpha) g^2
        avg = sqrt(v - g_avg^2) + eps, with g_avg = alpha g_avg + (1 - alpha) g (centered)
              sqrt(v) + eps                                                     (otherwise)
        buf = momentum buf + g / avg;  p -= lr buf      (momentum > 0)
        p -= lr g / avg                                 (otherwise)

    capturable, foreach and differentiable are accepted and change nothing (see Optimizer)."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise FgradValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise FgradValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise FgradValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise FgradValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise FgradValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def _update(self, group, params) -> None:
        lr, alpha, eps = _number(group["lr"]), group["alpha"], group["eps"]
        wd, mom, centered = group["weight_decay"], group["momentum"], group["centered"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            g = self._grad_array(p)
            if group["maximize"]:
                g = -g
            self._next_step(p)
            # PyTorch's add(alpha=) and addcmul_ are fused multiply-adds: (1 - alpha) * g, times g
            if wd != 0:
                g = _fma(g, f(wd), w)
            sq = self._buffer(p, "square_avg", xp.zeros_like)
            sq *= f(alpha)
            _fma_(sq, f(1 - alpha) * g, g)
            if centered:
                g_avg = self._buffer(p, "grad_avg", xp.zeros_like)
                _lerp_(g_avg, g, 1 - alpha)
                avg = xp.sqrt(sq - g_avg * g_avg)
            else:
                avg = xp.sqrt(sq)
            avg += f(eps)
            if mom > 0:
                buf = self._buffer(p, "momentum_buffer", xp.zeros_like)
                buf *= f(mom)
                buf += g / avg
                w -= f(lr) * buf
            else:
                w += f(-lr) * g / avg
            self._bump(p)
