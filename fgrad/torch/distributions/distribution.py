"""The Distribution base class of `fgrad.torch.distributions` (PyTorch's API): shapes, sampling
shapes and argument checks shared by every distribution."""
from __future__ import annotations

import math

import numpy as np

from ...core.errors import FgradNotImplementedError, FgradValueError
from .._tensor import _ops as ops
from .._tensor import creation, no_grad
from .._tensor.tensor import Size, Tensor

LOG_2PI = math.log(2 * math.pi)


def as_param(x, like=None) -> Tensor:
    """A parameter as a floating Tensor (Python numbers in the default float dtype)."""
    if isinstance(x, Tensor):
        return x if x.is_floating_point() else x.float()
    dtype = like.dtype if isinstance(like, Tensor) and like.is_floating_point() else None
    return creation.tensor(x, dtype=dtype)


def broadcast_all(*values) -> list[Tensor]:
    """The parameters as Tensors of one broadcast shape; one that has it already is itself
    (PyTorch's broadcast_tensors), so a leaf parameter stays the leaf that gets .grad."""
    ts = [as_param(v) for v in values]
    shape = ops.broadcast_shapes(*[tuple(t.shape) for t in ts])
    return [t if tuple(t.shape) == tuple(shape) else ops.expand(t, shape) for t in ts]


class Distribution:
    """batch_shape/event_shape, sample()/rsample() shapes, validation (validate_args)."""

    has_rsample = False
    arg_constraints: dict = {}

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (), validate_args: bool | None = None) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate = bool(validate_args) if validate_args is not None else True

    @property
    def batch_shape(self):
        return Size(self._batch_shape)

    @property
    def event_shape(self):
        return Size(self._event_shape)

    def _extended_shape(self, sample_shape=()) -> tuple:
        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def sample(self, sample_shape=()) -> Tensor:
        """A sample, outside any graph (rsample's value where there is one)."""
        with no_grad():
            return self.rsample(sample_shape).detach()

    def rsample(self, sample_shape=()) -> Tensor:
        raise FgradNotImplementedError(f"{type(self).__name__} has no reparameterised sample (rsample); use sample()")

    def _check_value(self, value, support: str) -> None:
        if not self._validate or not isinstance(value, Tensor):
            return
        v = value.detach().numpy()
        ok = {"real": True, "boolean": np.all((v == 0) | (v == 1)),
              "nonnegative_integer": np.all((v >= 0) & (v == np.floor(v)))}.get(support, True)
        if not ok:
            raise FgradValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support}) of the distribution {self!r}, but found invalid "
                             "values")

    def __repr__(self) -> str:
        params = ", ".join(f"{k}: {getattr(self, k).shape if isinstance(getattr(self, k), Tensor) else getattr(self, k)}"
                           for k in self.arg_constraints if k in self.__dict__)
        return f"{type(self).__name__}({params})"

    @property
    def stddev(self) -> Tensor:
        return ops.sqrt(self.variance)

    def log_prob(self, value) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return ops.exp(self.entropy())
