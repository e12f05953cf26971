"""Stochastic gradient descent with momentum, dampening, weight decay and Nesterov."""
from __future__ import annotations

import numpy as np

from ...extend import kernels as numba_kernels
from ...core.errors import FgradValueError
from .optimizer import Optimizer, ParamsT, _check_flags, _fma, _fma_, _number


class SGD(Optimizer):
    """PyTorch's SGD, update for update:

        g = grad + weight_decay * p      (g = -grad first when maximize)
        buf = g (first step) | momentum * buf + (1 - dampening) * g
        g = g + momentum * buf (nesterov) | buf
        p -= lr * g

    lr defaults to 1e-3 as in PyTorch 2.x. foreach, differentiable and fused are accepted and
    change nothing (see Optimizer).

    Args:
        params: the Tensors to optimise, or a list of parameter-group dicts ({"params": [...],
            plus any of the options below for that group}).
        lr: the learning rate.
        momentum: the momentum factor (0: plain SGD).
        dampening: the dampening of the momentum buffer's update.
        weight_decay: the L2 penalty added to each gradient.
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend the objective instead of descending it.
        foreach: accepted for PyTorch compatibility.
        differentiable: accepted for PyTorch compatibility.
        fused: accepted for PyTorch compatibility.

    Example:
        >>> import fgrad.torch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> for _ in range(2):
        ...     opt.zero_grad()
        ...     (w ** 2).sum().backward()
        ...     opt.step()
        >>> w.detach()
        tensor([ 0.4600, -0.9200])
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        if lr < 0.0:
            raise FgradValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise FgradValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise FgradValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise FgradValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        _check_flags(defaults)
        super().__init__(params, defaults)

    def _update(self, group, params) -> None:
        lr, mom, damp = _number(group["lr"]), group["momentum"], group["dampening"]
        wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        for p in params:
            w = p._value
            g = self._grad_array(p)
            if mom != 0 and numba_kernels.usable(w, g):
                st = self.state[p]
                first = st.get("momentum_buffer") is None
                buf = self._buffer(p, "momentum_buffer", lambda v: np.empty_like(v))
                f = w.dtype.type
                numba_kernels.kernels()["sgd_momentum"](w, g, buf, f(lr), f(mom), f(1 - damp), f(wd),
                                                        bool(nesterov), bool(maximize), first)
                self._bump(p)
                continue
            if maximize:
                g = -g
            # PyTorch's single-tensor SGD: add(alpha=) steps, each a fused multiply-add
            f = w.dtype.type
            if wd != 0:
                g = _fma(g, f(wd), w)
            if mom != 0:
                st = self.state[p]
                if st.get("momentum_buffer") is None:
                    buf = self._buffer(p, "momentum_buffer", lambda v, g=g: g.copy())
                else:
                    buf = st["momentum_buffer"]._value
                    buf *= f(mom)
                    _fma_(buf, f(1 - damp), g)
                g = _fma(g, f(mom), buf) if nesterov else buf
            if lr == 1:
                w -= g
            else:
                _fma_(w, f(-lr), g)
            self._bump(p)
