"""The Distribution base class of `fgrad.torch.distributions` (PyTorch's API): batch and event
shapes, sample shapes, expand, and argument/sample validation with PyTorch's error messages."""
from __future__ import annotations

import warnings

from ...core.errors import ConcretizationError, FgradNotImplementedError, FgradValueError
from .. import _tensor as T
from .._tensor.tensor import Size, Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _all_true(valid) -> bool:
    """Whether a constraint check passed; True when the values are traced (under vmap or
    torch.func transforms that stage the function, fgrad knows no values to check: validation
    is skipped there)."""
    if not isinstance(valid, Tensor):
        return bool(valid)
    try:
        return bool(valid.all())
    except ConcretizationError:
        return True


class Distribution:
    """The base of every distribution: `batch_shape` (independent, not identically
    distributed copies) and `event_shape` (the shape of one draw), `sample`/`rsample`
    (`sample_shape + batch_shape + event_shape`), `log_prob`, `cdf`, `icdf`, `entropy`,
    `mean`/`mode`/`variance`/`stddev`, `support` and `arg_constraints`.

    With validation on (`validate_args=True`, the default as in PyTorch when Python runs
    without -O), the constructor checks each parameter against `arg_constraints` and
    log_prob checks values against `support`, raising ValueError with PyTorch's messages.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on or off for distributions built without `validate_args`.

        Args:
            value: True or False.
        """
        if value not in (True, False):
            raise FgradValueError(f"set_default_validate_args expects True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None) -> None:
        self._batch_shape = Size(tuple(batch_shape))
        self._event_shape = Size(tuple(event_shape))
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not _all_true(valid):
                    raise FgradValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its batch dims expanded to `batch_shape` (parameters are
        expanded views, not copies).

        Args:
            batch_shape: the new batch shape (the old one must broadcast to it).
        Returns:
            Distribution.
        """
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single draw (no batch dims)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Parameter name -> Constraint each must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint a sample satisfies."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise FgradNotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise FgradNotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise FgradNotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation (square root of the variance)."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> Tensor:
        """Draws of shape `sample_shape + batch_shape + event_shape`, outside any graph.

        Args:
            sample_shape: leading shape of independent draws.
        Returns:
            Tensor.
        """
        with T.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """Reparameterised draws: gradients flow to the parameters (where `has_rsample`).

        Args:
            sample_shape: leading shape of independent draws.
        Returns:
            Tensor.
        """
        raise FgradNotImplementedError(f"{type(self).__name__} has no reparameterised sample (has_rsample is False); "
                                  "use sample()")

    def sample_n(self, n: int) -> Tensor:
        """n draws (deprecated, as in PyTorch: use sample((n,)))."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample((n,))

    def log_prob(self, value) -> Tensor:
        """The log density (or mass) at `value`.

        Args:
            value: Tensor broadcastable with batch_shape + event_shape.
        Returns:
            Tensor.
        """
        raise NotImplementedError

    def cdf(self, value) -> Tensor:
        """The cumulative distribution function at `value`."""
        raise NotImplementedError

    def icdf(self, value) -> Tensor:
        """The inverse cdf at probability `value`."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support along dim 0 (batch dims after it).

        Args:
            expand: expand over the batch shape (else size-1 batch dims).
        Returns:
            Tensor.
        """
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, over the batch shape."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return T.exp(self.entropy())

    def _extended_shape(self, sample_shape=()) -> Size:
        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value) -> None:
        if not isinstance(value, Tensor):
            raise FgradValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise FgradValueError(f"The right-most size of value must match event_shape: "
                                  f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(tuple(actual_shape)), reversed(tuple(expected_shape))):
            if i != 1 and j != 1 and i != j:
                raise FgradValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                      f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        valid = support.check(value)
        if not _all_true(valid):
            raise FgradValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise FgradNotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a "
                                           "custom __init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, _instance, names, keep=()):
        """expand() for a distribution whose parameters `names` are batch-shaped attributes
        (each expanded if present) and `keep` attributes are copied as they are."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(tuple(batch_shape))
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                setattr(new, name, value.expand(tuple(batch_shape) + tuple(value.shape[len(self._batch_shape):])))
        for name in keep:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name])
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        def show(v):
            # (an f-string of a 0-d torch.Tensor formats its number)
            return (v.item() if v.dim() == 0 else v) if v.numel() == 1 else v.size()
        args_string = ", ".join(f"{p}: {show(self.__dict__[p])}" for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"
