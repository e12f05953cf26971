"""torch.distributions.utils: broadcasting of parameters, probs <-> logits, lazy properties and
the triangular-matrix <-> vector maps the distributions share."""
from __future__ import annotations

import math
from functools import update_wrapper
from numbers import Number

import numpy as np

from ...core.errors import FgradValueError
from .. import _tensor as T
from ..nn import functional as F
from .._tensor import creation
from .._tensor.tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060  # Euler–Mascheroni constant


class _Finfo:
    def __init__(self, dtype) -> None:
        info = np.finfo(np.dtype(str(dtype).split(".")[-1]))
        self.eps, self.tiny, self.max, self.min = float(info.eps), float(info.tiny), float(info.max), float(info.min)


def finfo_of(x) -> _Finfo:
    """torch.finfo of a Tensor's (floating) dtype: eps, tiny, max, min as floats.

    Args:
        x: a floating Tensor, or a dtype.
    Returns:
        an object with eps, tiny, max and min.
    """
    return _Finfo(x.dtype if isinstance(x, Tensor) else x)


def as_float(x, like=None) -> Tensor:
    """A parameter as a floating Tensor (numbers in `like`'s dtype or the default one).

    Args:
        x: a Tensor or a number or a nested list.
        like: a Tensor whose dtype numbers take.
    Returns:
        Tensor.
    """
    if isinstance(x, Tensor):
        return x if x.is_floating_point() else x.to(T.get_default_dtype())
    dtype = like.dtype if isinstance(like, Tensor) and like.is_floating_point() else T.get_default_dtype()
    return creation.tensor(x, dtype=dtype)


def broadcast_all(*values):
    """The values broadcast to one shape (PyTorch's broadcast_all): Tensors keep their dtype,
    numbers become Tensors of the Tensors' dtype (the default dtype when there is none); a Tensor
    that has the shape already is returned as itself, so a leaf parameter gets its .grad.

    Args:
        *values: Tensors or numbers.
    Returns:
        tuple of Tensors.
    Raises:
        ValueError: an argument is neither a Tensor nor a number.
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise FgradValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                              f"implementing __torch_function__; got {[type(v).__name__ for v in values]}")
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors:
        dtype = T.get_default_dtype()
        values = tuple(creation.tensor(float(v), dtype=dtype) for v in values)
    else:
        dtype = tensors[0].dtype
        values = tuple(v if isinstance(v, Tensor) else creation.tensor(v, dtype=dtype, device=tensors[0].device)
                       for v in values)
    shape = tuple(T.broadcast_shapes(*[tuple(v.shape) for v in values]))
    return tuple(v if tuple(v.shape) == shape else v.expand(shape) for v in values)


def _standard_normal(shape, dtype, device) -> Tensor:
    return creation.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim: int):
    """value summed over its `dim` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: sigmoid when `is_binary`, else softmax over the last dim.

    Args:
        logits: Tensor.
        is_binary: Bernoulli-style logits.
    Returns:
        Tensor.
    """
    if is_binary:
        return T.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """probs clamped into [eps, 1 - eps] of their dtype (before a log).

    Args:
        probs: Tensor.
    Returns:
        Tensor.
    """
    eps = finfo_of(probs).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities (clamped first): log(p) - log1p(-p) when `is_binary`, else log(p).

    Args:
        probs: Tensor.
        is_binary: Bernoulli-style probabilities.
    Returns:
        Tensor.
    """
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return T.log(ps_clamped) - T.log1p(-ps_clamped)
    return T.log(ps_clamped)


class lazy_property:
    """A property computed once per instance on first access (then an attribute). Accessed
    on the class it is a placeholder, as PyTorch's."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with T.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower triangle (from diagonal `diag`) of the last two dims, row by row, as a vector.

    Args:
        mat: Tensor (..., n, n).
        diag: which diagonal starts the triangle (0 the main one, -1 below it).
    Returns:
        Tensor (..., m).
    """
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise FgradValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, diag)
    return mat[..., creation.tensor(rows), creation.tensor(cols)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of tril_matrix_to_vec: a vector filled row by row into a lower-triangular matrix.

    Args:
        vec: Tensor (..., m).
        diag: as in tril_matrix_to_vec.
    Returns:
        Tensor (..., n, n).
    """
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = float(np.finfo(np.float32).eps)
    if not round(n) - n < eps:
        raise FgradValueError(f"The size of last dimension is {m} which cannot be expressed as "
                              "the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, Tensor) else round(n)
    rows, cols = np.tril_indices(n, diag)
    flat_index = creation.tensor(rows * n + cols)
    mat = creation.zeros(tuple(vec.shape[:-1]) + (n * n,), dtype=vec.dtype, device=vec.device)
    index = flat_index.expand(tuple(vec.shape[:-1]) + (m,))
    mat = mat.scatter(-1, index, vec)
    return mat.reshape(tuple(vec.shape[:-1]) + (n, n))


LOG_2PI = math.log(2 * math.pi)
