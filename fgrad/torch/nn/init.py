"""fgrad.torch.nn.init: in-place initialisers with PyTorch's names, formulas and random draws. After
the same `manual_seed`, uniform_, normal_, xavier_*, kaiming_*, trunc_normal_ and sparse_ give
torch's values bit for bit; orthogonal_ draws torch's normals but its QR is NumPy's (LAPACK), equal
to torch's to rounding."""
from __future__ import annotations

import functools
import math
import warnings
from typing import Callable

import numpy as np

from ...core.errors import FgradValueError
from .._tensor.creation import _gen
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor
from .._tensor.tensor import wrap as _wrap

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_", "_calculate_fan_in_and_fan_out"]


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Write `values` into tensor (in place, no grad), keeping its dtype and device (a meta tensor
    has nothing to write into)."""
    if tensor.is_meta:
        return tensor
    with no_grad():
        tensor.copy_(_wrap(np.asarray(values, dtype=tensor._value.dtype)))
    return tensor


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's nn.init.calculate_gain): 1 for linear
    layers and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope**2)) for
    leaky_relu, 3/4 for selu.

    Args:
        nonlinearity: the function's name.
        param: leaky_relu's negative slope (0.01 when None).

    Returns:
        A float.

    Raises:
        ValueError: an unknown nonlinearity.
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise FgradValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor):
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel): in and out times the kernel's
    size (PyTorch's private helper, which scripts call).

    Args:
        tensor: a Tensor of at least 2 dimensions.

    Returns:
        A pair of ints.
    """
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise FgradValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _fan(tensor, mode):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise FgradValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    return fan_in if mode == "fan_in" else fan_out


def _draw_dtype(tensor: Tensor):
    """torch draws float64 tensors in float64 and other float dtypes in float32."""
    return np.float64 if tensor._value.dtype == np.float64 else np.float32


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """U(a, b): torch's draws (`tensor.uniform_(a, b, generator=generator)`)."""
    n = tensor.numel()
    return _fill(tensor, _gen(generator).engine.uniform_(n, _draw_dtype(tensor), a, b).reshape(tuple(tensor.shape)))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """N(mean, std**2): torch's draws (`tensor.normal_(mean, std, generator=generator)`)."""
    n = tensor.numel()
    values = _gen(generator).engine.normal_(n, _draw_dtype(tensor), mean, std)
    return _fill(tensor, values.reshape(tuple(tensor.shape)))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """N(mean, std**2) truncated to [a, b] by torch 2.13's rejection sampling: when [a, b] holds
    more than 0.3 of the mass, whole-tensor normal_ redraws replace the values outside it
    (torch's values bit for bit); otherwise uniform proposals on [a, b] are accepted by a
    log-uniform test (torch's draws; NumPy's log may decide a borderline test differently)."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    engine = _gen(generator).engine
    dt = tensor._value.dtype
    draw = _draw_dtype(tensor)
    n, shape = tensor.numel(), tuple(tensor.shape)
    if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
        lo, hi = dt.type(a), dt.type(b)
        result = engine.normal_(n, draw, mean, std).astype(dt)
        while True:
            reject = (result < lo) | (result > hi)
            if not reject.any():
                return _fill(tensor, result.reshape(shape))
            result = np.where(reject, engine.normal_(n, draw, mean, std).astype(dt), result)
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

    def log_pdf(x):  # torch's in-place chain, rounded in the tensor's dtype at each step
        y = (x - dt.type(mean)) / dt.type(std)
        return (y * y) * dt.type(-0.5) - dt.type(log_peak)

    result = engine.uniform_(n, draw, a, b).astype(dt)
    with np.errstate(divide="ignore"):
        pending = np.log(engine.uniform_(n, draw).astype(dt)) > log_pdf(result)
        while pending.any():
            candidates = engine.uniform_(n, draw, a, b).astype(dt)
            result = np.where(pending, candidates, result)
            pending = np.where(pending, np.log(engine.uniform_(n, draw).astype(dt)) > log_pdf(candidates), pending)
    return _fill(tensor, result.reshape(shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill `tensor` with `val` (PyTorch's nn.init.constant_).

    Args:
        tensor: the Tensor to fill in place (without recording it for autograd).
        val: the value.

    Returns:
        tensor.
    """
    return _fill(tensor, np.full(tuple(tensor.shape), val))


def zeros_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with zeros (PyTorch's nn.init.zeros_).

    Args:
        tensor: the Tensor to fill in place (without recording it for autograd).

    Returns:
        tensor.
    """
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with ones (PyTorch's nn.init.ones_).

    Args:
        tensor: the Tensor to fill in place (without recording it for autograd).

    Returns:
        tensor.
    """
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D `tensor` with the identity matrix (PyTorch's nn.init.eye_).

    Args:
        tensor: the Tensor to fill in place (without recording it for autograd).

    Returns:
        tensor.
    """
    if tensor.dim() != 2:
        raise FgradValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tuple(tensor.shape)))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (PyTorch's
    nn.init.xavier_uniform_, torch's values for the same seed).

    Args:
        tensor: the Tensor to fill in place (without recording it for autograd).
        gain: the scale.
        generator: the Generator to draw from, or None for the default one.

    Returns:
        tensor.
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std  # torch's expression (its rounding decides the last bits)
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)) (PyTorch's
    nn.init.xavier_normal_, torch's values for the same seed).

    Args:
        tensor: the Tensor to fill in place (without recording it for autograd).
        gain: the scale.
        generator: the Generator to draw from, or None for the default one.

    Returns:
        tensor.
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan); with a = sqrt(5) (PyTorch's
    default for Linear and Conv weights) bound = 1 / sqrt(fan_in)."""
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std  # torch's expression (its rounding decides the last bits)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: N(0, std**2) with std = gain / sqrt(fan) (PyTorch's nn.init.kaiming_normal_,
    torch's values for the same seed).

    Args:
        tensor: the Tensor to fill in place (without recording it for autograd).
        a: the negative slope for leaky_relu's gain.
        mode: "fan_in" or "fan_out".
        nonlinearity: the name given to calculate_gain.
        generator: the Generator to draw from, or None for the default one.

    Returns:
        tensor.
    """
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one, the tensor
    viewed as rows x (the product of the other dims), times `gain`."""
    if tensor.ndim < 2:
        raise FgradValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    dt = tensor._value.dtype
    flat = _gen(generator).engine.normal_(rows * cols, _draw_dtype(tensor)).astype(dt).reshape(rows, cols)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))  # the Haar-uniform orthogonal matrix (QR's signs fixed)
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tuple(tensor.shape)))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The identity of a convolution (3-5 dims): in each of `groups` groups, output channel
    d of the group takes input channel d at the kernel's centre."""
    shape = tuple(tensor.shape)
    if len(shape) not in (3, 4, 5):
        raise FgradValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if shape[0] % groups:
        raise FgradValueError("dim 0 must be divisible by groups")
    out_per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, shape[1])):
            values[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-D N(0, std) matrix with ceil(sparsity * rows) zeros in each column."""
    if tensor.ndim != 2:
        raise FgradValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tuple(tensor.shape)
    gen = _gen(generator)
    values = gen.engine.normal_(rows * cols, _draw_dtype(tensor), 0.0, std).reshape(rows, cols)
    zeros = int(math.ceil(sparsity * rows))
    for c in range(cols):
        values[gen.engine.randperm(rows)[:zeros], c] = 0
    return _fill(tensor, values)


__all__ += ["orthogonal_", "dirac_", "sparse_"]


def _skip_meta(init: Callable) -> Callable:
    """`init` leaving a meta tensor as it is: it has no values to fill, and nothing is drawn from
    the generator for it (PyTorch's in-place random fills are no-ops on the meta device)."""
    @functools.wraps(init)
    def on_values(tensor, *args, **kwargs):
        if isinstance(tensor, Tensor) and tensor.is_meta:
            return tensor
        return init(tensor, *args, **kwargs)
    return on_values


# (the initialisers that draw; the others write through _fill, which skips meta tensors, and
# the composite ones, xavier_* and kaiming_*, check their fans and then call these)
uniform_, normal_, trunc_normal_, orthogonal_, sparse_ = (
    _skip_meta(uniform_), _skip_meta(normal_), _skip_meta(trunc_normal_), _skip_meta(orthogonal_),
    _skip_meta(sparse_))


def _deprecated(init: Callable) -> Callable:
    """PyTorch's pre-0.4 name for an in-place initializer (`normal` for `normal_`): the same call,
    with the FutureWarning PyTorch gives."""
    new_name = init.__name__
    old_name = new_name[:-1]

    @functools.wraps(init)
    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return init(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"Deprecated: use `nn.init.{new_name}` (same arguments)."
    return deprecated_init


uniform, normal, constant, eye, dirac = map(_deprecated, (uniform_, normal_, constant_, eye_, dirac_))
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal, sparse = _deprecated(orthogonal_), _deprecated(sparse_)
__all__ += ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
            "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]
