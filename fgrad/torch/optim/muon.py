"""Muon, PyTorch's update formula (torch.optim.Muon): momentum, then the update orthogonalised by
a quintic Newton-Schulz iteration run in bfloat16, as PyTorch runs it."""
from __future__ import annotations

import math

import numpy as np

from ...core.errors import FgradRuntimeError, FgradValueError
from .optimizer import Optimizer, ParamsT, _lerp_, _number, _xp

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32: the
    rounding of every bfloat16 result PyTorch's iteration produces."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32)
    rounded = ((bits + (((bits >> 16) & 1) + np.uint32(0x7FFF))) & np.uint32(0xFFFF0000)).view(np.float32)
    return np.where(np.isnan(x), x, rounded)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps: int, eps: float):
    """The approximately orthogonal factor U V^T of grad = U S V^T by ns_steps quintic
    Newton-Schulz iterations X <- a X + (b A + c A^2) X, A = X X^T, in bfloat16 arithmetic
    (each product accumulated in float32 and rounded once, as PyTorch's CPU kernels)."""
    if ns_steps >= 100:
        raise FgradValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise FgradValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise FgradValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (np.float32(v) for v in ns_coefficients)
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(np.sqrt(np.sum(x.astype(np.float64) ** 2)))
    x = _bf16(x / max(norm, _bf16(eps)))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        update = _bf16(b * gram + c * (gram @ gram))
        x = _bf16(a * x + update @ x)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: tuple) -> float:
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """PyTorch's Muon, for 2-D parameters (hidden layers' weights):

        B = lerp(B, g, 1 - momentum);  U = lerp(g, B, momentum) (nesterov) or B
        O = NewtonSchulz(U)  (bfloat16, ns_steps quintic steps)
        p *= 1 - lr * weight_decay;  p -= adjusted_lr * O

    adjusted_lr = lr * sqrt(max(1, rows/cols)) ("original", the default) or
    lr * 0.2 * sqrt(max(rows, cols)) ("match_rms_adamw"). The iteration rounds to bfloat16
    after every product as PyTorch's does, so updates agree with PyTorch's to bfloat16's
    precision (an accumulation order can flip a rounding).

    Args:
        params: 2-D parameters, or parameter groups (dicts).
        lr: learning rate.
        weight_decay: decoupled weight decay.
        momentum: momentum factor.
        nesterov: Nesterov momentum.
        ns_coefficients: (a, b, c) of the Newton-Schulz polynomial.
        eps: the normalisation's floor.
        ns_steps: Newton-Schulz steps (< 100).
        adjust_lr_fn: None, "original" or "match_rms_adamw".

    Raises:
        ValueError: an option out of range, or a parameter that is not 2-D."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                                        DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        if not 0.0 <= _number(lr):
            raise FgradValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise FgradValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise FgradValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise FgradValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise FgradValueError(f"Muon only supports 2D parameters whereas we found a parameter with "
                                          f"size: {p.size()}")

    def _update(self, group, params) -> None:
        lr, wd, mom = _number(group["lr"]), group["weight_decay"], group["momentum"]
        for p in params:
            w = p._value
            xp, f = _xp(w), w.dtype.type
            if w.dtype.kind == "c":
                raise FgradRuntimeError("Muon does not support complex parameters")
            g = self._grad_array(p)
            buf = self._buffer(p, "momentum_buffer", xp.zeros_like)
            _lerp_(buf, g, 1 - mom)
            self.state[p]["momentum_buffer"]._vbox[0] += 1
            if group["nesterov"]:
                upd = g.copy()
                _lerp_(upd, buf, mom)
            else:
                upd = buf
            o = _zeropower_via_newtonschulz(np.asarray(upd, np.float32), group["ns_coefficients"],
                                            group["ns_steps"], group["eps"])
            adjusted = _adjust_lr(lr, group["adjust_lr_fn"], w.shape)
            w *= f(1 - lr * wd)
            w += f(-adjusted) * o.astype(w.dtype)
            self._bump(p)
