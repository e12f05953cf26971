"""torch.nn.utils.parametrizations on fgrad.torch: orthogonal, spectral_norm and weight_norm
written as parametrizations (torch.nn.utils.parametrize), as PyTorch's newer API has them.

weight_norm keeps the magnitude `original0` (g) and the direction `original1` (v) of the weight;
spectral_norm divides the weight by its largest singular value, estimated by power iteration
on the buffers `_u`, `_v` (drawn from the default generator as PyTorch draws them); orthogonal
maps an unconstrained matrix to an orthogonal one (matrix exponential, Cayley map or Householder
product), with a `base` that assignment moves.
"""
from __future__ import annotations

from enum import Enum, auto

import numpy as np

from .. import _tensor as T  # the facade namespace: T.eye, T.cat, T.linalg ops, ...
from ...core.errors import FgradIndexError, FgradNotImplementedError, FgradValueError
from .._tensor._boundary import call
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor
from ... import numpy as fnp
from . import functional as F
from . import parametrize
from .module import Module

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eye = T.eye(k, dtype=q.dtype)
    eps = 10.0 * n * float(np.finfo(q._value.dtype).eps)
    return bool(T.allclose(q.mH @ q, eye, atol=eps))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of a = QR (a tall), with R's diagonal made non-negative."""
    x, tau = a.geqrf()
    q = x.orgqr(tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """The orthogonal parametrization of a matrix (or a batch of them) of `weight`'s shape."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise FgradValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        """The orthogonal matrix X stands for."""
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # embed the tall matrix into a square one
                X = T.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = A.matrix_exp()
            else:  # the Cayley retraction (I + A/2)(I - A/2)^-1
                eye = T.eye(n, dtype=A.dtype)
                Q = call("LinalgSolveExBackward0", fnp.linalg.solve,
                         (T.add(eye, A, alpha=-0.5), T.add(eye, A, alpha=0.5)))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = A.orgqr(tau)
            # X's diagonal holds the signs (+-1) of Q's columns; not differentiated
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        """An X that forward maps to Q (Q orthogonalised first when it is not orthogonal)."""
        with no_grad():
            if tuple(Q.shape) != tuple(self.shape):
                raise FgradValueError(f"Expected a matrix or batch of matrices of shape {tuple(self.shape)}. Got a "
                                      f"tensor of shape {tuple(Q.shape)}.")
            q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise FgradNotImplementedError("It is not possible to assign to the matrix exponential or the "
                                                   "Cayley parametrizations when use_trivialization=False.")
                A, tau = Q.geqrf()
                # R's diagonal positive (LAPACK's exact zero tau: no reflection there)
                diag = A.diagonal(dim1=-2, dim2=-1)
                signs = diag.sign()
                signs = T.where(tau == 0.0, -signs, signs)
                diag.copy_(signs)
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete Q to a square orthogonal matrix
                N = T.randn(*(tuple(Q.size()[:-2]) + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(T.cat([Q, N], dim=-1))
            self.base = Q
            # -Id: householder(zeros) is eye, and the diagonal holds the column signs
            neg_id = T.zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain `module.<name>` (a matrix, or a batch of them) to be orthogonal (unitary for
    complex ones); PyTorch's `torch.nn.utils.parametrizations.orthogonal`.

    Args:
        module: the module.
        name: the parameter's or buffer's name.
        orthogonal_map: "matrix_exp", "cayley" or "householder" (default: matrix_exp for square
            or complex matrices, householder otherwise).
        use_trivialization: keep a base the map is applied relative to (lets assignment work for
            every map).

    Returns:
        The module, with the parametrization registered.

    Raises:
        ValueError: no such tensor, fewer than 2 dimensions, or an unknown map.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise FgradValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise FgradValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise FgradValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                              f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def _weight_norm_values(v, g, dim: int):
    """v * (g / ||v||), the norm over every dimension but `dim` (all of them for dim = -1)."""
    if dim == -1:
        norm = fnp.sqrt(fnp.sum(v * v))
    else:
        axes = tuple(d for d in range(v.ndim) if d != dim)
        norm = fnp.sqrt(fnp.sum(v * v, axis=axes, keepdims=True)) if axes else fnp.abs(v)
    return v * (g / norm)


class _WeightNorm(Module):
    """weight = original1 * (original0 / ||original1||), the norm taken over all dims but `dim`."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        """The weight from its magnitude g and direction v."""
        # (PyTorch's fused kernel, one node, serves the first and the last dim; other dims and
        # the whole-tensor norm are its composite formula, whose last op is a product)
        fused = self.dim in (0, weight_v.dim() - 1)
        return call("WeightNormInterfaceBackward0" if fused else "MulBackward0", _weight_norm_values,
                    (weight_v, weight_g), {"dim": self.dim})

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        """(g, v) for a weight: its norm over all dims but `dim`, and itself."""
        if self.dim == -1:
            weight_g = weight.norm(2)
        else:
            axes = [d for d in range(weight.dim()) if d != self.dim]
            weight_g = weight.pow(2).sum(axes, keepdim=True).sqrt() if axes else weight.abs()
        return weight_g, weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split `module.<name>` into a magnitude (`parametrizations.<name>.original0`, g) and a
    direction (`original1`, v): weight = g * v / ||v||; PyTorch's
    `torch.nn.utils.parametrizations.weight_norm`.

    Args:
        module: the module.
        name: the parameter's name.
        dim: the dimension the norm is not taken over (None: the whole tensor's norm).

    Returns:
        The module, with the parametrization registered.

    Raises:
        ValueError: the module has no tensor `name`.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma its largest singular value estimated by power iteration (one step
    per forward in training mode, 15 at creation)."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise FgradIndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but "
                                  f"got {dim})")
        if n_power_iterations <= 0:
            raise FgradValueError("Expected n_power_iterations to be positive, but got "
                                  f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            with no_grad():
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(T.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(T.mv(weight_mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        """The weight divided by its estimated spectral norm."""
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(T.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        """The weight itself (assigning a weight stores it unnormalised)."""
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide `module.<name>` by its spectral norm, estimated by power iteration on the buffers
    `parametrizations.<name>[0]._u` and `_v`; PyTorch's
    `torch.nn.utils.parametrizations.spectral_norm`.

    Args:
        module: the module.
        name: the parameter's name.
        n_power_iterations: power iterations per forward in training mode (> 0).
        eps: the normalisation's floor.
        dim: the output dimension (None: 1 for ConvTranspose modules, else 0).

    Returns:
        The module, with the parametrization registered.

    Raises:
        ValueError: no tensor `name`, or n_power_iterations <= 0.
        IndexError: dim out of range.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise FgradValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if parametrize.type_before_parametrizations(module).__name__ in (
            "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
