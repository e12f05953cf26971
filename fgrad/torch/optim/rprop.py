"""Rprop, PyTorch's update formula."""
from __future__ import annotations

from ...core.errors import FgradValueError
from .optimizer import Optimizer, ParamsT, _number, _step_tensor, _xp


class Rprop(Optimizer):
    """PyTorch's Rprop (resilient backpropagation): each element keeps its own step size,
    grown by etaplus while the gradient keeps its sign and shrunk by etaminus when it flips:

        s = sign(g * prev);  factor = etaplus (s > 0), etaminus (s < 0), 1 (s = 0)
        step_size = clamp(step_size * factor, step_sizes[0], step_sizes[1])
        g = 0 where the sign flipped;  p -= sign(g) * step_size;  prev = g

    with g = grad (-grad when maximize); step sizes start at lr. foreach, differentiable and
    capturable are accepted and change nothing (see Optimizer).

    Args:
        params: the parameters, or parameter groups (dicts).
        lr: the initial step size of every element.
        etas: (etaminus, etaplus), with 0 < etaminus < 1 < etaplus.
        step_sizes: (minimal, maximal) step size.
        capturable, foreach, differentiable: accepted as PyTorch's; no effect.
        maximize: ascend instead of descend.

    Raises:
        ValueError: a negative lr or etas outside 0 < etaminus < 1 < etaplus."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= _number(lr):
            raise FgradValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise FgradValueError(f"Invalid eta values: {etas[0]}, {etas[1]} (Rprop needs "
                                  "0 < etaminus < 1 < etaplus)")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, group, params) -> None:
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            g = self._grad_array(p)
            if group["maximize"]:
                g = -g
            st = self.state[p]
            if not st:
                # PyTorch's state order (state_dict reads the same)
                st["step"] = _step_tensor(0.0)
                self._buffer(p, "prev", xp.zeros_like)
                self._buffer(p, "step_size", lambda a: xp.full_like(a, _number(group["lr"])))
            self._next_step(p)
            prev, size = st["prev"]._value, st["step_size"]._value
            s = xp.sign(g * prev)
            factor = xp.where(s > 0, f(etaplus), xp.where(s < 0, f(etaminus), f(1)))
            size *= factor
            xp.clip(size, f(lo), f(hi), out=size)
            g = xp.where(s < 0, f(0), g)
            w -= xp.sign(g) * size
            prev[...] = g
            st["prev"]._vbox[0] += 1
            self._bump(p)
