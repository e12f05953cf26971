"""torch.nn's lazy modules: UninitializedParameter / UninitializedBuffer (placeholders whose
shape is unknown), LazyModuleMixin, and LazyLinear, LazyConv{1,2,3}d,
LazyConvTranspose{1,2,3}d, LazyBatchNorm{1,2,3}d, LazyInstanceNorm{1,2,3}d. As PyTorch's,
the first forward reads the input's feature size, materialises the placeholders, runs the
layer's reset_parameters (so a seed gives PyTorch's initial values) and turns the module
into its non-lazy class (LazyLinear becomes Linear)."""
from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from .. import _tensor as T
from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradValueError
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor, _make
from . import init
from ._modules_more import BatchNorm3d, ConvTranspose3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
from .layers import BatchNorm1d, BatchNorm2d, Linear
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .parameter import Parameter

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyConv1d", "LazyConv2d",
           "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]

_SHAPE_MESSAGE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                  "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                  "one. Call `forward` to initialize the parameters before accessing their attributes.")



class _Uninitialized:
    """The placeholder behaviour shared by UninitializedParameter and UninitializedBuffer."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the placeholder storage of `shape` (uninitialised values) and make it a
        Parameter (or Tensor).

        Args:
            shape: the shape.
            device: accepted as PyTorch's (fgrad's placeholders live on the CPU).
            dtype: the dtype (default: the placeholder's).

        Returns:
            None."""
        dt = self._value.dtype if dtype is None else T.empty(0, dtype=dtype)._value.dtype
        self._value = np.empty(tuple(int(s) for s in shape), dt)
        self._vbox[0] += 1
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise FgradRuntimeError(_SHAPE_MESSAGE)

    def size(self, dim=None):
        raise FgradRuntimeError(_SHAPE_MESSAGE)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's weight before its first
    forward); materialize(shape) turns it into a Parameter.

    Args:
        requires_grad: as Parameter's.
        device: accepted as PyTorch's.
        dtype: the dtype it will have (default: the default dtype)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        self = Parameter.__new__(cls, T.empty(0, dtype=dtype), requires_grad)
        return self

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass

    def __deepcopy__(self, memo):
        return type(self)(self._requires_grad, dtype=None)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet (a lazy BatchNorm's running statistics);
    materialize(shape) turns it into a Tensor.

    Args:
        requires_grad: whether it requires grad.
        device: accepted as PyTorch's.
        dtype: the dtype it will have (default: the default dtype)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        return _make(T.empty(0, dtype=dtype)._value, requires_grad=requires_grad, into=object.__new__(cls))

    def __init__(self, requires_grad: bool = False, device=None, dtype=None) -> None:
        pass


class LazyModuleMixin:
    """Makes a module lazy: a forward pre-hook calls initialize_parameters(*inputs) on the first
    call, checks every placeholder was materialised, removes itself, and turns the module
    into cls_to_become."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still a placeholder.

        Returns:
            bool."""
        return any(isinstance(t, _Uninitialized) for t in chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialise the placeholders from the first inputs (defined by each lazy module).

        Args:
            *args, **kwargs: the first forward's inputs."""
        raise FgradNotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")


def _infer_parameters(module, args) -> None:
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise FgradRuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module.__dict__["_initialize_hook"]
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is read from the first input's last dimension."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        # (bias False here: the placeholders below replace whatever Linear would create)
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    _transposed_lazy = False

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        n = self._n
        if input.dim() not in (n + 1, n + 2):
            raise FgradRuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                                    f"{type(self).__name__}, but got input of size: {list(input.shape)}")
        self.in_channels = input.shape[1] if input.dim() == n + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise FgradValueError("in_channels must be divisible by groups")
        if self._transposed:
            self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
        else:
            self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        with no_grad():
            self.reset_parameters()


def _lazy_conv(name: str, base: type, transposed: bool) -> type:
    if transposed:
        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                     groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                     device=None, dtype=None) -> None:
            base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                          padding_mode)
            _finish_conv(self, out_channels, bias, dtype)
    else:
        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                     bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
            base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
            _finish_conv(self, out_channels, bias, dtype)

    def lazy_init(self, *args, **kwargs):
        __init__(self, *args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    doc = (f"A {base.__name__} whose in_channels is read from the first input (dim 1, or 0 unbatched).\n\n"
           f"Args:\n    out_channels, kernel_size, ...: as {base.__name__}'s, without in_channels.")
    return type(name, (_LazyConvXdMixin, base), {"__init__": lazy_init, "cls_to_become": base, "__doc__": doc,
                                                  "__module__": __name__})


def _finish_conv(m, out_channels: int, bias: bool, dtype) -> None:
    m.weight = UninitializedParameter(dtype=dtype)
    m.out_channels = out_channels
    if bias:
        m.bias = UninitializedParameter(dtype=dtype)


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, False)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, False)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, False)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", ConvTranspose3d, True)


class _LazyNormBase(LazyModuleMixin):
    def _lazy_setup(self, affine: bool, track_running_stats: bool, bias: bool, device, dtype) -> None:
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = T(0, dtype=T.int64)

    def reset_parameters(self) -> None:
        if self.has_uninitialized_params() or self.num_features == 0:
            return
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked.zero_()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        if self.affine:
            self.weight.materialize((self.num_features,))
            if self.bias is not None:
                self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))
        with no_grad():
            self.reset_parameters()


def _lazy_norm(name: str, base: type, affine_default: bool, track_default: bool) -> type:
    # (PyTorch's lazy instance norms default to affine and tracked statistics, unlike InstanceNorm)
    def lazy_init(self, eps: float = 1e-5, momentum=0.1, affine: bool = affine_default,
                  track_running_stats: bool = track_default, device=None, dtype=None, *, bias: bool = True):
        base.__init__(self, 0, eps, momentum, False, False, bias=False)
        self._lazy_setup(affine, track_running_stats, bias, device, dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    doc = (f"A {base.__name__} whose num_features is read from the first input's dim 1.\n\n"
           f"Args:\n    eps, momentum, affine, track_running_stats, bias: as {base.__name__}'s.")
    return type(name, (_LazyNormBase, base), {"__init__": lazy_init, "cls_to_become": base, "__doc__": doc,
                                               "__module__": __name__})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d, True, True)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d, True, True)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d, True, True)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d, True, True)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d, True, True)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d, True, True)
