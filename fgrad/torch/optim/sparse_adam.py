"""SparseAdam: PyTorch's lazy Adam for sparse gradients (nn.Embedding(sparse=True)).

PyTorch's SparseAdam updates only the rows a sparse gradient names. fgrad's autograd makes
dense gradients only (nn.Embedding(sparse=True) included: its weight's gradient is a dense
Tensor, zero in the rows the batch did not use), so this optimizer takes PyTorch's arguments
and checks them as PyTorch does, and its step refuses a dense gradient with PyTorch's error;
Adam is the optimizer for fgrad's gradients.
"""
from __future__ import annotations

from ...core.errors import FgradRuntimeError, FgradValueError
from .._tensor.tensor import Tensor
from .optimizer import Optimizer, ParamsT


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam (see the module docstring: fgrad's gradients are dense, so `step`
    raises for any parameter that has one).

    Args:
        params: the parameters (dense; complex ones are refused, as in PyTorch).
        lr: the learning rate (> 0; a one-element Tensor is accepted).
        betas: the moving averages' coefficients, each in [0, 1).
        eps: added to the denominator (> 0).
        maximize: ascend instead of descend.

    Raises:
        ValueError: an argument out of range, a sparse or complex parameter.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise FgradValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise FgradValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise FgradValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise FgradValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise FgradValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse, complex_ = [], []
        for i, group in enumerate(self.param_groups):
            for j, p in enumerate(group["params"]):
                if getattr(p, "is_sparse", False):
                    sparse.append([i, j])
                if p.is_complex():
                    complex_.append([i, j])
        if sparse:
            raise FgradValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        if complex_:
            raise FgradValueError(f"Complex params at indices {complex_}: SparseAdam does not support complex "
                                  "parameters")

    def _update(self, group, params) -> None:
        raise FgradRuntimeError("SparseAdam does not support dense gradients, please consider Adam instead (fgrad's "
                                "gradients are all dense, nn.Embedding(sparse=True)'s too)")
