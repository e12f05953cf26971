"""Creating Tensors: fgrad.torch.tensor (PyTorch's dtype inference), factories, random numbers."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ...extend.numpy import shape_arg
from . import _dtypes as D
from . import (
    _ops,  # (a cycle: _ops makes tensors here, as_tensor converts with _ops.to; both at call time)
)
from ._policy import TORCH as P
from ._device import CPU, DEFAULT, META, _cuda_index, array_module, as_device, factory_device, is_cupy, to_device
from ._layout import contiguous_format, empty_preserving, laid_out, preserve_format
from ._layout import memory_format as memory_format_cls
from ._meta import MetaArray
from . import _random
from ._random import DEFAULT_SEED, TorchMT19937
from .tensor import Tensor, _make

REQUIRES_GRAD_DTYPE_MESSAGE = "Only Tensors of floating point and complex dtype can require gradients"


# --- random numbers ---------------------------------------------------------------------------------

class Generator:
    """A CPU random number generator with PyTorch's algorithm (MT19937 and ATen's transforms,
    see _random.py): after `manual_seed(s)` its draws equal `torch.Generator().manual_seed(s)`'s.
    Unseeded, it starts from torch's default seed, as torch's does."""

    def __init__(self, device="cpu") -> None:
        self.device = as_device(device)
        self._engine = TorchMT19937(DEFAULT_SEED)

    def manual_seed(self, seed) -> "Generator":
        """Restart the stream from `seed` (negative seeds wrap to 64 bits, as torch's)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            try:
                seed = int(seed)
            except (TypeError, ValueError):
                raise FgradTypeError(f"manual_seed expects an int seed, got {type(seed).__name__} {seed!r:.40}") \
                    from None
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise FgradRuntimeError(f"Overflow when unpacking long: manual_seed({seed}) is outside "
                                    "[-2**63, 2**64); pass a 64-bit seed")
        self._engine.manual_seed(seed % (1 << 64))
        return self

    def seed(self) -> int:
        """Seed from the OS's entropy (a 63-bit value) and return that seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % (2 ** 63)))
        return self.initial_seed()

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._engine.seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 Tensor in torch's layout (5056 bytes): the same
        bytes as torch's `get_state()` after the same seed and draws, and accepted by either."""
        return _make(self._engine.get_state())

    def set_state(self, state) -> "Generator":
        """Continue from `state` (a `get_state()` Tensor of this or of real torch's generator).

        Args:
            state: a uint8 Tensor or array of 5056 bytes.
        Returns:
            this generator."""
        value = state.detach().cpu().numpy() if isinstance(state, Tensor) else state
        if hasattr(value, "numpy") and not isinstance(value, np.ndarray):  # a real torch tensor
            value = value.numpy()
        self._engine.set_state(np.asarray(value))
        return self

    def clone_state(self) -> "Generator":
        """A new generator in this one's state (their streams then go on independently)."""
        return Generator(self.device).set_state(self.get_state())

    @property
    def engine(self) -> TorchMT19937:
        """The PyTorch-algorithm stream every fgrad.torch random function draws from."""
        return self._engine


default_generator = Generator()


def manual_seed(seed) -> Generator:
    """Seed the default generator (rand, randn, randint, randperm, dropout, nn.init, shuffling...)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from a non-deterministic source (PyTorch's torch.seed).

    Returns:
        The seed used, an int.
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with (PyTorch's torch.initial_seed).

    Returns:
        An int.
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (a uint8 Tensor, torch's bytes; see Generator.get_state)."""
    return default_generator.get_state()


def set_rng_state(state) -> None:
    """Continue the default generator from a `get_rng_state()` value (this or real torch's)."""
    default_generator.set_state(state)


def _gen(generator=None) -> Generator:
    """`generator`, else the default generator: the one place fgrad.torch resolves a generator."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise FgradTypeError(f"generator must be an fgrad.torch.Generator (torch.Generator under `import "
                             f"fgrad.torch as torch`) or None, got {type(generator).__name__}; make one with "
                             "torch.Generator().manual_seed(seed)")
    return generator


def _engine(generator=None) -> TorchMT19937:
    """The PyTorch-algorithm stream behind `generator` (the default generator's when None)."""
    return _gen(generator).engine


def _float_dtype(dtype):
    """The NumPy float dtype a random float factory makes, and the one its draws are made in
    (torch draws half precision as float32 then rounds)."""
    npd = _dtype(dtype)
    if npd.kind != "f":
        raise FgradRuntimeError(f"expected a floating point dtype for random floats, got {dtype}; pass "
                                "dtype=torch.float32 or torch.float64")
    return npd, (np.float64 if npd == np.float64 else np.float32)


# --- from data ------------------------------------------------------------------------------------

def _nested_to_numpy(data):
    """(array, only_python_scalars): nested sequences of numbers/Tensors/arrays as a NumPy array."""
    pure = [True]

    def conv(x):
        if isinstance(x, Tensor):
            pure[0] = False
            return x.detach().cpu().numpy()
        if isinstance(x, (list, tuple)):
            return [conv(y) for y in x]
        if isinstance(x, (np.ndarray, np.generic)) or is_cupy(x):
            pure[0] = False
            return x.get() if is_cupy(x) else x
        return x

    converted = conv(data)
    try:
        arr = np.asarray(converted)
    except ValueError as e:
        raise FgradValueError(f"fgrad.torch.tensor: cannot build a tensor from {type(data).__name__} {data!r:.80}: "
                         f"{e}. Nested sequences must have equal lengths.") from None
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise FgradTypeError(f"fgrad.torch.tensor: could not infer dtype of {type(data).__name__} {data!r:.80}; "
                        "pass numbers, nested lists of numbers, or arrays")
    return arr, pure[0]


def _infer_value(data):
    """A fresh NumPy array for `data` with PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        return data.detach().cpu().numpy().copy()
    if isinstance(data, (np.ndarray, np.generic)):
        if data.dtype.kind not in "biufc":
            raise FgradTypeError(f"can't convert np.ndarray of type {data.dtype} to a tensor: only numeric "
                            "and bool arrays can be (got a {type(data).__name__} {data!r:.60}).")
        return np.array(data, copy=True)
    if is_cupy(data):
        return data.copy()
    if P.scalar_dtype(data) is not None:  # Python numbers: bool, int64, the default float / complex
        return np.array(data, P.scalar_dtype(data))
    arr, pure = _nested_to_numpy(data)
    if pure:  # nested Python numbers: as those numbers, an empty list as the default float
        arr = arr.astype(P.python_dtype(arr.dtype.kind) if arr.size else P.default_float)
    return arr


def _finish(value, dtype, device, requires_grad, default=None) -> Tensor:
    """A leaf Tensor of `value` as the fgrad `dtype` (else `default`, else its own), on `device`."""
    npd = D.np_dtype(dtype) if dtype is not None else default
    if npd is not None and value.dtype != npd:
        value = value.astype(npd)
    if device is not None or DEFAULT[0] is not CPU:  # (set_default_device, `with torch.device(...)`)
        value = to_device(value, factory_device(device))
    t = _make(value)
    if requires_grad:
        if value.dtype.kind not in "fc":
            raise FgradRuntimeError(f"{REQUIRES_GRAD_DTYPE_MESSAGE} (got dtype {t.dtype}; pass a float "
                               "value such as 4.0, or dtype=torch.float32)", doc="int-requires-grad")
        t._requires_grad = True
    return t


def tensor(data, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new leaf Tensor holding a copy of `data`, as ``torch.tensor``.

    Python floats become float32 (the default dtype), ints int64, bools bool, complex
    complex64; NumPy arrays keep their dtype.

    Args:
        data: a number, a (nested) list or tuple of numbers, a NumPy or CuPy array, or a
            Tensor (copied, with PyTorch's warning to use ``clone().detach()`` instead).
        dtype: the dtype of the result (default: inferred from `data` as above).
        device: where the result lives (``"cpu"``, ``"cuda"``/``"cuda:N"`` with CuPy);
            default: the default device.
        requires_grad: make the new leaf record operations for autograd; only for floating
            point and complex dtypes.
        pin_memory: accepted for PyTorch compatibility; changes nothing.

    Returns:
        A leaf Tensor that shares no memory with `data`.

    Example:
        >>> import fgrad.torch as torch
        >>> torch.tensor([[1, 2], [3, 4]])
        tensor([[1, 2],
                [3, 4]])
        >>> x = torch.tensor(2.0, requires_grad=True)
        >>> (x ** 3).backward(); x.grad
        tensor(12.)
    """
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone()."
                      "detach() or sourceTensor.clone().detach().requires_grad_(True), rather than "
                      "fgrad.torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    if dtype is not None and not isinstance(data, (Tensor, np.ndarray, np.generic)) and not is_cupy(data):
        # Python data straight to the requested dtype (not through float32 first)
        arr, _ = _nested_to_numpy(data)
        return _finish(arr.astype(D.np_dtype(dtype)), None, device, requires_grad)
    return _finish(_infer_value(data), dtype, device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like tensor(), but shares memory with a NumPy array (or returns a Tensor as-is)
    when no conversion is needed."""
    if isinstance(data, Tensor):
        return _ops.to(data, dtype=dtype, device=device)
    if isinstance(data, np.ndarray) or is_cupy(data):
        return _ops.to(_make(data), dtype=dtype, device=device)
    return _finish(_infer_value(data), dtype, device, False)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A Tensor sharing memory with `ndarray` (writes to one show in the other)."""
    if not isinstance(ndarray, np.ndarray):
        raise FgradTypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype.kind not in "biufc":
        raise FgradTypeError(f"can't convert np.ndarray of type {ndarray.dtype}. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
    return _make(ndarray)


def is_tensor(obj) -> bool:
    """Whether `obj` is an fgrad.torch.Tensor (PyTorch's torch.is_tensor).

    Args:
        obj: any object.

    Returns:
        A bool.
    """
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    """Whether `input`'s dtype is a floating-point one (PyTorch's torch.is_floating_point).

    Args:
        input: a Tensor.

    Returns:
        A bool.
    """
    return D.kind(input._value.dtype) == "f"


def _legacy_tensor_value(data, dtype, device):
    """fgrad.torch.Tensor(...): sizes -> uninitialised float32 (zeros), data -> float32 copy."""
    npd = _dtype(dtype)
    if len(data) == 0:
        value = np.zeros((0,), npd)
    elif all(isinstance(d, int) and not isinstance(d, bool) for d in data) and not (
            len(data) == 1 and isinstance(data[0], (list, tuple))):
        value = np.zeros(tuple(data), npd)
    elif len(data) == 1:
        value = _infer_value(data[0]).astype(npd)
    else:
        raise FgradTypeError("fgrad.torch.Tensor takes sizes (ints) or one data argument")
    return to_device(value, as_device(device)) if device is not None else value


def _rebuild(arr, requires_grad, cls=Tensor) -> Tensor:
    """Unpickling: a leaf of class `cls` (Tensor or a slot-less subclass such as Parameter)."""
    return _make(arr, None, requires_grad, into=object.__new__(cls))


# --- factories ------------------------------------------------------------------------------------

def _size(size) -> tuple:
    """PyTorch's sizes: f(2, 3) or f((2, 3)), validated as fgrad.numpy validates shapes."""
    return shape_arg(size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size, "size",
                     policy=P)


def _dtype(dtype, default=None):
    """The NumPy dtype for `dtype`, else `default`, else the default float dtype."""
    return D.np_dtype(dtype) or default or P.default_float


def _meta_leaf(shape, npd, requires_grad) -> Tensor:
    """A leaf meta tensor: a shape and a dtype, nothing allocated or drawn."""
    return _finish(MetaArray(shape, npd), None, None, requires_grad)


def _factory(make_np, size, dtype, device, requires_grad, default=None, shape=None) -> Tensor:
    npd = _dtype(dtype, default)
    dev = factory_device(device)
    if dev.type == "meta":
        return _meta_leaf(size if shape is None else shape, npd, requires_grad)
    xp = array_module(dev)
    if xp is np:
        value = make_np(np, size, npd)
    else:
        with xp.cuda.Device(_cuda_index(xp, dev)):  # a bare "cuda": the current GPU, as PyTorch
            value = make_np(xp, size, npd)
    return _finish(value, None, None, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    """A tensor of zeros (PyTorch's torch.zeros).

    Args:
        *size: the sizes, as ints or one tuple.
        dtype: the dtype, or None for the default float dtype (torch.get_default_dtype()).
        device: "cpu" (default) or a CUDA device (needs CuPy).
        requires_grad: make the result a leaf that records operations.
        out: a Tensor to write the result into.

    Returns:
        A new Tensor.
    """
    return _factory(lambda xp, s, d: xp.zeros(s, d), _size(size), dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (PyTorch's torch.ones).

    Args:
        *size: the sizes, as ints or one tuple.
        dtype: the dtype, or None for the default float dtype (torch.get_default_dtype()).
        device: "cpu" (default) or a CUDA device (needs CuPy).
        requires_grad: make the result a leaf that records operations.

    Returns:
        A new Tensor.
    """
    return _factory(lambda xp, s, d: xp.ones(s, d), _size(size), dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """A tensor of the given size (PyTorch's torch.empty); unlike PyTorch's its values are
    zeros, never stale memory.

    Args:
        *size: the sizes, as ints or one tuple.
        dtype: the dtype, or None for the default float dtype (torch.get_default_dtype()).
        device: "cpu" (default) or a CUDA device (needs CuPy).
        requires_grad: make the result a leaf that records operations.
        memory_format: accepted for PyTorch's signature; ignored.

    Returns:
        A new Tensor.
    """
    # zeros (calloc: fresh pages cost what np.empty's do), never stale memory: what a script
    # prints of an empty tensor is then the same on every run
    return _factory(lambda xp, s, d: xp.zeros(s, d), _size(size), dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with `fill_value` (PyTorch's torch.full; the dtype follows the value when
    not given).

    Args:
        size: a tuple of sizes.
        fill_value: the value, a Python number.
        dtype: the dtype, or None for the value's.
        device: "cpu" (default) or a CUDA device (needs CuPy).
        requires_grad: make the result a leaf that records operations.

    Returns:
        A new Tensor.
    """
    default = _infer_value(fill_value).dtype if dtype is None else None
    return _factory(lambda xp, s, d: xp.full(s, fill_value, d), _size((size,)), dtype, device,
                    requires_grad, default)


def eye(n: int, m=None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The n x m identity matrix (PyTorch's torch.eye; m defaults to n).

    Args:
        n: the number of rows.
        m: the number of columns, or None.
        dtype: the dtype, or None for the default float dtype (torch.get_default_dtype()).
        device: "cpu" (default) or a CUDA device (needs CuPy).
        requires_grad: make the result a leaf that records operations.

    Returns:
        A new 2-D Tensor.
    """
    return _factory(lambda xp, s, d: xp.eye(n, n if m is None else m, dtype=d), (), dtype, device, requires_grad,
                    shape=(n, n if m is None else m))


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Values from start to end (excluded) by step (PyTorch's torch.arange: int64 for integer
    arguments, the default float dtype when one is a float).

    Args:
        start: the first value, or the end when end is None.
        end: the end (excluded).
        step: the step, nonzero.
        dtype: the dtype, or None for int64 or the default float dtype.
        device: "cpu" (default) or a CUDA device (needs CuPy).
        requires_grad: make the result a leaf that records operations.

    Returns:
        A new 1-D Tensor.
    """
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise FgradRuntimeError("step must be nonzero")
    floaty = any(isinstance(v, float) or getattr(getattr(v, "dtype", None), "kind", "") == "f" for v in vals)
    # computed in float64 / int64 then cast, like PyTorch's size = ceil((end - start) / step)
    base = np.arange(*vals, dtype=np.float64 if floaty else np.int64)
    return _finish(base, dtype, device, requires_grad, P.default_float if floaty else None)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from start to end, both included (PyTorch's torch.linspace).

    Args:
        start: the first value.
        end: the last value.
        steps: the number of values.
        dtype: the dtype, or None for the default float dtype (torch.get_default_dtype()).
        device: "cpu" (default) or a CUDA device (needs CuPy).
        requires_grad: make the result a leaf that records operations.

    Returns:
        A new 1-D Tensor.
    """
    return _finish(np.linspace(float(start), float(end), int(steps)), dtype, device, requires_grad, P.default_float)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """`steps` values base ** t for t evenly spaced from start to end (PyTorch's torch.logspace).

    Args:
        start: the first exponent.
        end: the last exponent.
        steps: the number of values.
        base: the base.
        dtype: the dtype, or None for the default float dtype (torch.get_default_dtype()).
        device: "cpu" (default) or a CUDA device (needs CuPy).
        requires_grad: make the result a leaf that records operations.

    Returns:
        A new 1-D Tensor.
    """
    return _finish(np.logspace(float(start), float(end), int(steps), base=base), dtype, device, requires_grad,
                   P.default_float)


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    """Uniform on [0, 1): torch's values for the same seed."""
    npd, draw = _float_dtype(dtype)
    shape = _size(size)
    if factory_device(device).type == "meta":  # (nothing drawn: the generator does not advance, as PyTorch's)
        return _meta_leaf(shape, npd, requires_grad)
    value = _engine(generator).uniform_(math.prod(shape), draw, out_dtype=npd).reshape(shape)
    return _finish(value, None, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    """Standard normal: torch's values for the same seed."""
    npd, draw = _float_dtype(dtype)
    shape = _size(size)
    if factory_device(device).type == "meta":
        return _meta_leaf(shape, npd, requires_grad)
    value = _engine(generator).normal_(math.prod(shape), draw).reshape(shape)
    return _finish(value.astype(npd, copy=False), None, device, requires_grad)


def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """randint(high, size) or randint(low, high, size): torch's values for the same seed."""
    if size is None:
        if len(args) < 2:
            raise FgradTypeError("randint() needs high and size: randint(high, size) or randint(low, high, size)")
        *bounds, size = args
    else:
        bounds = list(args)
    if len(bounds) not in (1, 2):
        raise FgradTypeError(f"randint() takes randint(high, size) or randint(low, high, size), got {len(args)} "
                             "positional arguments")
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    shape = _size((size,))
    if factory_device(device).type == "meta":
        return _meta_leaf(shape, D.np_dtype(dtype) or np.dtype(np.int64), requires_grad)
    value = _engine(generator).random_(math.prod(shape), int(low), int(high)).reshape(shape)
    return _finish(value, dtype, device, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n - 1: torch's for the same seed."""
    if factory_device(device).type == "meta":
        return _meta_leaf((int(n),), D.np_dtype(dtype) or np.dtype(np.int64), requires_grad)
    return _finish(_engine(generator).randperm_array(int(n)), dtype, device, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """normal(mean, std, size) with float mean/std, or elementwise with Tensor mean/std (torch's
    values: standard normals, times std, plus mean)."""
    engine = _engine(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._value if isinstance(mean, Tensor) else mean
        s = std._value if isinstance(std, Tensor) else std
        ref = mean if isinstance(mean, Tensor) else std
        npd = ref._value.dtype
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        if not isinstance(std, Tensor):
            # torch: output.normal_(0, std).add_(mean)
            value = engine.normal_(math.prod(shape), npd, 0.0, float(std)).reshape(shape) + np.asarray(m, npd)
        else:
            # torch: output.normal_(0, 1).mul_(std).add_(mean)
            value = engine.normal_(math.prod(shape), npd).reshape(shape) * np.asarray(s, npd) + np.asarray(m, npd)
        return _finish(np.asarray(value, npd), dtype, ref.device if device is None else device, requires_grad)
    if size is None:
        raise FgradTypeError("normal(mean: float, std: float) needs size=")
    npd, draw = _float_dtype(dtype)
    shape = _size((size,))
    if factory_device(device).type == "meta":
        return _meta_leaf(shape, npd, requires_grad)
    value = engine.normal_(math.prod(shape), draw, float(mean), float(std)).reshape(shape)
    return _finish(value.astype(npd, copy=False), None, device, requires_grad)


def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """1 with probability `input` (or p), else 0; same shape and dtype as input (torch's draws)."""
    engine = _engine(generator)
    v = input._value
    if p is None:
        probs = v.get() if is_cupy(v) else np.asarray(v)
        value = engine.bernoulli(probs)
    else:
        value = engine.bernoulli_(int(np.prod(v.shape)), float(p)).reshape(v.shape)
    return _finish(value.astype(v.dtype), None, input.device, False)


def _like(fn):
    def like(input, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None):
        if memory_format is not None and not isinstance(memory_format, memory_format_cls):
            raise FgradTypeError(f"{fn.__name__}_like(): memory_format must be a torch.memory_format, not "
                                 f"{type(memory_format).__name__}")
        out = fn(tuple(input._value.shape), dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)
        v = input._value
        if not isinstance(out._value, np.ndarray) or not isinstance(v, np.ndarray):
            return out
        if memory_format is None or memory_format is preserve_format:
            if not v.flags.c_contiguous:  # PyTorch's layout for a tensor like v (see empty_preserving)
                same = empty_preserving(v, out._value.dtype)
                same[...] = out._value
                out._value = same
        elif memory_format is not contiguous_format:
            out._value = laid_out(out._value, memory_format)
        return out
    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = (f"A tensor shaped like `input`, as {fn.__name__} makes them (PyTorch's torch.{fn.__name__}_like)."
                    "\n\nArgs:\n    input: a Tensor.\n    dtype: the dtype, or None for input's.\n    device: the "
                    "device, or None for input's.\n    requires_grad: make the result a leaf that records "
                    "operations.\n    memory_format: the result's layout; torch.preserve_format (the default) "
                    "keeps a channels-last input's.\n\nReturns:\n    A new Tensor.")
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def _random_like(input, draw, dtype, device, requires_grad: bool) -> Tensor:
    """A random tensor shaped like `input`, its draws placed as torch's empty_like(input) fills
    them (in `input`'s memory order): `draw(n, contiguous)` gives the n values in that order."""
    v = input._value
    if (device or input.device) == META:
        return _meta_leaf(v.shape, D.np_dtype(dtype or input.dtype), requires_grad)
    order = _random.memory_order(v)
    value = _random.place(np.asarray(draw(int(np.prod(v.shape)), order is None)), v.shape, order)
    return _finish(value, dtype or input.dtype, device or input.device, requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None,
              generator=None) -> Tensor:
    """Uniform on [0, 1) shaped like `input`: torch's values for the same seed (in the memory
    order of a transposed or permuted `input`, as torch's)."""
    npd, draw = _float_dtype(dtype or input.dtype)
    return _random_like(input, lambda n, contiguous: _engine(generator).uniform_(n, draw, out_dtype=npd), dtype,
                        device, requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None,
               generator=None) -> Tensor:
    """Standard normal shaped like `input`: torch's values for the same seed (a transposed or
    permuted `input` makes torch's result non-contiguous: its element-by-element path)."""
    npd, draw = _float_dtype(dtype or input.dtype)
    return _random_like(input, lambda n, contiguous: _engine(generator).normal_(n, draw, contiguous=contiguous)
                        .astype(npd), dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor shaped like `input` filled with `fill_value` (PyTorch's torch.full_like).

    Args:
        input: a Tensor.
        fill_value: the value, a Python number.
        dtype: the dtype, or None for input's.
        device: the device, or None for input's.
        requires_grad: make the result a leaf that records operations.

    Returns:
        A new Tensor.
    """
    return full(tuple(input._value.shape), fill_value, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randint_like(input, low, high=None, *, dtype=None, device=None, requires_grad: bool = False,
                 memory_format=None, generator=None) -> Tensor:
    """Integers in [low, high) (or [0, low)) shaped like `input`: torch's values for the same
    seed, in a transposed or permuted `input`'s memory order as torch's."""
    if high is None:
        low, high = 0, low
    return _random_like(input, lambda n, contiguous: _engine(generator).random_(n, int(low), int(high)), dtype,
                        device, requires_grad)


__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "tensor", "as_tensor", "asarray", "from_numpy", "is_tensor", "is_floating_point",
           "zeros", "ones", "empty", "full", "eye", "arange", "linspace", "logspace", "rand", "randn",
           "randint", "randperm", "normal", "bernoulli", "zeros_like", "ones_like", "empty_like", "rand_like",
           "randn_like", "full_like", "randint_like"]
