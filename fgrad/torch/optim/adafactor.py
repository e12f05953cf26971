"""Adafactor, PyTorch's update formula (torch.optim.Adafactor)."""
from __future__ import annotations

import math

from ...core.errors import FgradRuntimeError, FgradValueError
from .optimizer import Optimizer, ParamsT, _lerp_, _number, _step_tensor, _xp


class Adafactor(Optimizer):
    """PyTorch's Adafactor: the second moment of a matrix gradient is kept factored, as
    row and column means over the last two dimensions; vectors keep it whole.

        t += 1;  beta2 = t^beta2_decay;  rho = min(lr, 1/sqrt(t))
        alpha = max(eps2, ||p|| / sqrt(numel)) * rho
        p *= 1 - lr * weight_decay
        row = lerp(row, mean(g^2, -1), beta2);  col = lerp(col, mean(g^2, -2), beta2)
        v = row @ col / max(mean(row, -2), eps1)            (matrices; vectors: lerp(v, g^2))
        u = g / sqrt(max(v, eps1^2));  p -= alpha / max(1, rms(u) / d) * u

    eps1 None means the parameter dtype's machine epsilon. foreach is accepted and changes
    nothing (see Optimizer).

    Args:
        params: the parameters, or parameter groups (dicts).
        lr: learning rate (the cap of the relative step size rho).
        beta2_decay: exponent of the second-moment decay (<= 0).
        eps: (eps1, eps2): the floor of the variance estimate, and of the parameter scale.
        d: the clipping threshold of the update's RMS (>= 1).
        weight_decay: decoupled weight decay.
        foreach: accepted as PyTorch's; no effect.
        maximize: ascend instead of descend.

    Raises:
        ValueError: an option outside its range (lr < 0, beta2_decay > 0, eps < 0, d < 1,
            weight_decay < 0).
        RuntimeError: a complex parameter."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if not 0.0 <= _number(lr):
            raise FgradValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise FgradValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise FgradValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise FgradValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise FgradValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise FgradValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def _update(self, group, params) -> None:
        lr, decay, d, wd = _number(group["lr"]), group["beta2_decay"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            if w.dtype.kind == "c":
                raise FgradRuntimeError("Adafactor does not support complex parameters")
            g = self._grad_array(p)
            if group["maximize"]:
                g = -g
            st = self.state[p]
            if not st:
                st["step"] = _step_tensor(0.0)
                if g.ndim > 1:
                    self._buffer(p, "row_var", lambda a: xp.zeros(a.shape[:-1] + (1,), a.dtype))
                    self._buffer(p, "col_var",
                                 lambda a: xp.zeros(a.shape[:-2] + (1,) + a.shape[-1:], a.dtype))
                else:
                    self._buffer(p, "variance", xp.zeros_like)
            step = self._next_step(p)
            e1 = float(xp.finfo(w.dtype).eps) if eps1 is None else eps1
            beta2 = step ** decay
            rho = min(lr, 1 / step ** 0.5)
            alpha = max(eps2, float(xp.sqrt(xp.sum(w * w))) / math.sqrt(w.size)) * rho
            if wd != 0:
                w *= f(1 - lr * wd)
            if g.ndim > 1:
                row, col = st["row_var"]._value, st["col_var"]._value
                _lerp_(row, xp.mean(g * g, axis=-1, keepdims=True), beta2)
                _lerp_(col, xp.mean(g * g, axis=-2, keepdims=True), beta2)
                v = row @ col
                v /= xp.maximum(xp.mean(row, axis=-2, keepdims=True), f(e1))
                st["row_var"]._vbox[0] += 1
                st["col_var"]._vbox[0] += 1
            else:
                var = st["variance"]._value
                _lerp_(var, g * g, beta2)
                st["variance"]._vbox[0] += 1
                v = var.copy()
            u = g / xp.sqrt(xp.maximum(v, f(e1 * e1)))
            denom = max(1.0, float(xp.sqrt(xp.sum(u * u))) / (math.sqrt(u.size) * d))
            w += f(-alpha / denom) * u
            self._bump(p)
