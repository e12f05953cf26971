"""Tensor methods that have no torch function of their own: memory layout queries (stride,
storage_offset, nbytes, ...), the legacy constructors and Python-callable fills (new,
new_empty_strided, apply_, map_, map2_), fill_diagonal_, sum_to_size, unfold, resize_ and the
shape-changing in-place views (unsqueeze_, t_, ...). They are rows of _methods.py's table.

fgrad keeps a tensor's values as a NumPy array (or a device array): the layout a method reports
is that array's, in elements, as PyTorch reports its own.
"""
from __future__ import annotations

import importlib
import math
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradTypeError
from ... import numpy as fnp
from ...core.trace import _state
from ...custom import custom_vjp
from . import _ops as O
from . import _ops_breadth as B
from . import creation
from ._boundary import call
from ._layout import strided
from .tensor import TensorBase, _acc_node, _dim, _make, _output_number, check_inplace, commit_inplace, node_class


def _root(v):
    """The array that owns `v`'s memory (v itself when it owns it)."""
    while isinstance(getattr(v, "base", None), np.ndarray):
        v = v.base
    return v


def stride(self, dim: int | None = None):
    """Tensor.stride(dim=None): the step in elements between neighbours along each dim.

    Args:
        dim: one dim (negative counts from the end), or None for all of them.

    Returns:
        An int for `dim`, else a tuple of ints.
    """
    v = self._value
    item = v.dtype.itemsize
    strides = getattr(v, "strides", None)
    if strides is None:  # a traced value: the row-major strides of its shape
        out, acc = [], 1
        for n in reversed(tuple(v.shape)):
            out.append(acc)
            acc *= max(int(n), 1)
        steps = tuple(reversed(out))
    else:
        steps = tuple(int(s) // item for s in strides)
    if dim is None:
        return steps
    return steps[_dim(dim, len(steps))] if steps else _scalar_dim_error(dim)


def _scalar_dim_error(dim):
    raise FgradRuntimeError(f"Dimension specified as {dim} but tensor has no dimensions")


def storage_offset(self) -> int:
    """Tensor.storage_offset(): the position, in elements, of this tensor's first element in
    the memory it shares with the tensor it views (0 for a tensor that owns its memory).

    Returns:
        An int.
    """
    v = self._value
    root = _root(v)
    if root is v or not isinstance(v, np.ndarray) or v.size == 0:
        return 0
    start = v.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return start // v.dtype.itemsize


def dim_order(self, *, ambiguity_check: bool = False) -> tuple:
    """Tensor.dim_order(): the dims from the outermost in memory (largest stride) to the
    innermost, ties kept in dim order.

    Args:
        ambiguity_check: accepted for PyTorch's signature.

    Returns:
        A tuple of ints.
    """
    steps = stride(self)
    return tuple(sorted(range(len(steps)), key=lambda d: -steps[d]))


def _nbytes(self) -> int:
    """Tensor.nbytes: numel() * element_size()."""
    return int(math.prod(self._value.shape)) * self._value.dtype.itemsize


def _itemsize(self) -> int:
    """Tensor.itemsize: the size of one element in bytes (element_size())."""
    return self._value.dtype.itemsize


def _is_cpu(self) -> bool:
    """Tensor.is_cpu: whether the tensor lives in host memory."""
    return self.device.type == "cpu"


def _output_nr(self) -> int:
    """Tensor.output_nr: which output of its grad_fn this tensor is (split's second chunk is
    output 1 of its SplitBackward0, aminmax's max output 1); 0 for a leaf."""
    return _output_number(self._node)


def _volatile(self) -> bool:
    """Tensor.volatile: always False (PyTorch removed volatile variables; use torch.no_grad())."""
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _name(self):
    """Tensor.name: None (fgrad tensors carry no name)."""
    return None


def _grad_dtype(self):
    """Tensor.grad_dtype: the dtype a gradient of this tensor takes (the tensor's own)."""
    return self.dtype


def is_pinned(self, device=None) -> bool:
    """Tensor.is_pinned(): False (fgrad has no page-locked host memory).

    Args:
        device: accepted for PyTorch's signature.

    Returns:
        False.
    """
    return False


def pin_memory(self, device=None):
    """Tensor.pin_memory(): pinned memory needs an accelerator; as PyTorch without one, an error.

    Args:
        device: the accelerator to pin for.

    Raises:
        RuntimeError: always (no accelerator runtime behind fgrad's host memory).
    """
    raise FgradRuntimeError("Cannot access accelerator device when none is available. (pin_memory() page-locks "
                            "host memory for an accelerator; keep the tensor as it is on the CPU)")


def const_data_ptr(self) -> int:
    """Tensor.const_data_ptr(): data_ptr() (the address of the first element).

    Returns:
        An int.
    """
    return self.data_ptr()


def dense_dim(self) -> int:
    """Tensor.dense_dim(): every dim of a strided tensor is dense.

    Returns:
        self.dim().
    """
    return self._value.ndim


def sparse_dim(self) -> int:
    """Tensor.sparse_dim(): a strided tensor has no sparse dims.

    Returns:
        0.
    """
    return 0


def reinforce(self, reward):
    """Tensor.reinforce(): removed from PyTorch; raises, naming torch.distributions.

    Args:
        reward: ignored.

    Raises:
        RuntimeError: always.
    """
    raise FgradRuntimeError("reinforce() was removed.\nUse torch.distributions instead (a distribution's "
                            "log_prob(action) * reward as the loss).")


def new(self, *args, **kwargs):
    """Tensor.new(...): the legacy constructor with this tensor's dtype and device: new()
    an empty tensor, new(*sizes) an uninitialised one (zeros), new(data) a tensor of `data`.

    Args:
        args: sizes (ints or one torch.Size), or data (a list, a number sequence, an array).
        kwargs: device= (dtype stays this tensor's).

    Returns:
        A Tensor.
    """
    device = kwargs.pop("device", None) or self.device
    if kwargs:
        raise FgradTypeError(f"new() got unexpected keyword arguments {sorted(kwargs)}; it takes sizes or data "
                             "and device=")
    if len(args) == 1 and isinstance(args[0], TensorBase):
        raise FgradTypeError(f"new(): expected sizes or data with dtype={self.dtype}, got a Tensor; use "
                             "tensor.clone() or tensor.to(dtype) to copy one")
    sizes = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
    if all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in sizes):
        shape = tuple(int(s) for s in sizes) or (0,)
        return creation.empty(*shape, dtype=self.dtype, device=device)
    if len(args) != 1:
        raise FgradTypeError(f"new() takes sizes (ints) or one sequence of data, got {args!r:.80}")
    return creation.tensor(args[0], dtype=self.dtype, device=device)


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad: bool = False,
                      layout=None, pin_memory: bool = False):
    """Tensor.new_empty_strided(size, stride): torch.empty_strided with this tensor's dtype
    and device by default.

    Args:
        size: the shape.
        stride: one stride per dim.
        dtype, device, requires_grad: as for torch.empty_strided.
        layout, pin_memory: accepted for PyTorch's signature.

    Returns:
        A Tensor.
    """
    return B.empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                           requires_grad=requires_grad)


def _python_fill(self, name: str, fn: Callable, others: Sequence) -> Any:
    """`self` filled in place with fn(self's element, others' elements...) element by element
    (apply_, map_, map2_): CPU tensors that do not require grad, as PyTorch."""
    if self._requires_grad or any(o._requires_grad for o in others):
        raise FgradRuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                                f"var.detach().{name}() instead.")
    if self.device.type != "cpu":
        raise FgradRuntimeError(f"{name}() is only implemented on CPU tensors (this one is on {self.device})")
    if not callable(fn):
        raise FgradTypeError(f"{name}() expects a callable, got {type(fn).__name__}")
    v = self._value
    shape = tuple(v.shape)
    cols = [np.broadcast_to(np.asarray(o._value), shape).ravel() for o in others]
    flat = np.asarray(v).ravel()
    out = np.empty(flat.shape, v.dtype)
    for i in range(flat.size):
        out[i] = fn(flat[i].item(), *(c[i].item() for c in cols))
    return commit_inplace(self, _make(out.reshape(shape)))


def apply_(self, callable):
    """Tensor.apply_(callable): each element replaced by callable(element), in place (CPU,
    not for tensors that require grad; slow: a Python call per element).

    Args:
        callable: a function of one number returning a number.

    Returns:
        self.
    """
    return _python_fill(self, "apply_", callable, ())


def map_(self, tensor, callable):
    """Tensor.map_(tensor, callable): each element replaced by callable(element, the matching
    element of `tensor` broadcast to this shape), in place.

    Args:
        tensor: a Tensor broadcastable to this one.
        callable: a function of two numbers.

    Returns:
        self.
    """
    return _python_fill(self, "map_", callable, (O._tensor(tensor),))


def map2_(self, x, y, callable):
    """Tensor.map2_(x, y, callable): as map_ with two other tensors: callable(element, x's, y's).

    Args:
        x, y: Tensors broadcastable to this one.
        callable: a function of three numbers.

    Returns:
        self.
    """
    return _python_fill(self, "map2_", callable, (O._tensor(x), O._tensor(y)))


def fill_diagonal_(self, fill_value, wrap: bool = False):
    """Tensor.fill_diagonal_(fill_value, wrap=False): the main diagonal (entries i, i, ..., i)
    set to `fill_value` in place; for a tall matrix with wrap=True the diagonal restarts every
    cols + 1 rows, as NumPy's fill_diagonal and PyTorch's.

    Args:
        fill_value: a number.
        wrap: whether a tall 2-d matrix's diagonal wraps around.

    Returns:
        self.
    """
    v = self._value
    if v.ndim < 2:
        raise FgradRuntimeError(f"dimensions must larger than 1 (fill_diagonal_ got a {v.ndim}-d tensor)")
    if v.ndim > 2 and len(set(v.shape)) != 1:
        raise FgradRuntimeError(f"all dimensions of input must be of equal length (got shape {list(v.shape)})")
    check_inplace(self)
    mask = np.zeros(tuple(v.shape), np.bool_)
    np.fill_diagonal(mask, True, wrap=wrap)
    if v.ndim == 2 and wrap is False:
        mask[min(v.shape):] = False
    return commit_inplace(self, O.masked_fill(self, creation.tensor(mask, device=self.device), fill_value))


def sum_to_size(self, *size):
    """Tensor.sum_to_size(*size): summed over the dims that broadcast `size` to this shape.

    Args:
        size: a shape this tensor's shape is a broadcast of (ints or one sequence).

    Returns:
        A Tensor of shape `size`.
    """
    target = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], (int, np.integer)) else tuple(size)
    shape = tuple(self._value.shape)
    if len(target) > len(shape) or any(t not in (1, s) for t, s in zip(target[::-1], shape[::-1])):
        raise FgradRuntimeError(f"size {{{list(target)}}} is not expandable to size {{{list(shape)}}}.")
    lead = len(shape) - len(target)
    dims = tuple(range(lead)) + tuple(lead + i for i, t in enumerate(target) if t == 1 and shape[lead + i] != 1)
    out = O.sum(self, dims, keepdim=True) if dims else self
    return O.reshape(out, target) if lead else out


def unfold(self, dimension: int, size: int, step: int):
    """Tensor.unfold(dimension, size, step): every window of `size` elements along `dimension`,
    `step` apart, as a new last dim (PyTorch returns a view; this is a gather with the same
    values and gradient).

    Args:
        dimension: the dim to slide along.
        size: the window's length.
        step: the distance between window starts (> 0).

    Returns:
        A Tensor with `dimension` of length (n - size) // step + 1 and a last dim of `size`.
    """
    shape = tuple(self._value.shape)
    d = _dim(dimension, max(len(shape), 1))
    n = shape[d] if shape else 1
    if step <= 0:
        raise FgradRuntimeError(f"step is {step} but must be > 0")
    if size < 0 or size > n:
        raise FgradRuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if not shape:
        return O.reshape(self, 1)
    count = (n - size) // step + 1
    index = (np.arange(count)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    picked = O.index_select(self, d, creation.tensor(index, device=self.device))
    picked = O.reshape(picked, shape[:d] + (count, size) + shape[d + 1:])
    return O.movedim(picked, d + 1, -1)


def resize_(self, *sizes, memory_format=None):
    """Tensor.resize_(*sizes): this tensor given shape `sizes`, keeping its first elements in
    row-major order (new elements are zeros); not for tensors that require grad, as PyTorch.

    Args:
        sizes: the new shape (ints or one sequence).
        memory_format: accepted for PyTorch's signature.

    Returns:
        self.
    """
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], (int, np.integer)) else tuple(sizes)
    if any(int(s) < 0 for s in shape):
        raise FgradRuntimeError(f"Trying to create tensor with negative dimension in resize_ ({list(shape)})")
    if self._requires_grad and _state.grad_enabled:
        raise FgradRuntimeError("cannot resize variables that require grad")
    if self._view is not None and tuple(self._value.shape) != shape:
        raise FgradRuntimeError("resize_ on a view of another tensor would move its memory; resize a "
                                ".clone() of it instead")
    v = self._value
    if tuple(v.shape) == shape:
        return self
    n = int(math.prod(shape))
    xp = np if isinstance(v, np.ndarray) else __import__("cupy")
    flat = xp.zeros(n, v.dtype)
    keep = min(n, v.size)
    flat[:keep] = v.reshape(-1)[:keep]
    self._value = flat.reshape(shape)
    self._vbox[0] += 1
    return self


def resize_as_(self, the_template, memory_format=None):
    """Tensor.resize_as_(other): resize_(other.shape).

    Args:
        the_template: the tensor whose shape to take.
        memory_format: accepted for PyTorch's signature.

    Returns:
        self.
    """
    return resize_(self, tuple(the_template._value.shape))


def resize(self, *sizes):
    """Tensor.resize(*sizes) (deprecated in PyTorch): a differentiable reshape to `sizes`,
    which must hold as many elements.

    Args:
        sizes: the new shape (ints or one sequence).

    Returns:
        A Tensor.
    """
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], (int, np.integer)) else tuple(sizes)
    have = tuple(self._value.shape)
    if math.prod(shape) != math.prod(have):
        raise FgradRuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({math.prod(shape)} elements in total), but the "
            f"given tensor has a size of {'x'.join(map(str, have))} ({math.prod(have)} elements). autograd's "
            "resize can only change the shape of a given tensor, while preserving the number of elements. ")
    return O.reshape(O.contiguous(self), shape)


def resize_as(self, tensor):
    """Tensor.resize_as(tensor) (deprecated in PyTorch): resize(tensor.shape).

    Args:
        tensor: the tensor whose shape to take.

    Returns:
        A Tensor.
    """
    return resize(self, tuple(tensor._value.shape))


def polygamma(self, n: int):
    """Tensor.polygamma(n): torch.polygamma(n, self).

    Args:
        n: the derivative's order of digamma (>= 0).

    Returns:
        A Tensor.
    """
    return B.polygamma(n, self)


def polygamma_(self, n: int):
    """Tensor.polygamma_(n): torch.polygamma(n, self) written into this tensor in place.

    Args:
        n: the derivative's order of digamma (>= 0).

    Returns:
        self.
    """
    check_inplace(self)
    return commit_inplace(self, B.polygamma(n, self))


def float_power_(self, exponent):
    """Tensor.float_power_(exponent): torch.float_power in place; the result is double (or
    complex double), so this tensor must have that dtype, as PyTorch requires.

    Args:
        exponent: a Tensor or a number.

    Returns:
        self.
    """
    dt = self._value.dtype
    other = exponent._value.dtype if isinstance(exponent, TensorBase) else np.result_type(exponent)
    want = np.complex128 if dt.kind == "c" or np.dtype(other).kind == "c" else np.float64
    if dt != want:
        raise FgradRuntimeError(f"the base given to float_power_ has dtype {_torch_dtype_name(dt)} but the "
                                f"operation's result requires dtype {_torch_dtype_name(np.dtype(want))}")
    check_inplace(self)
    return commit_inplace(self, O.float_power(self, exponent))


def _torch_dtype_name(dt) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "complex64": "ComplexFloat",
            "complex128": "ComplexDouble", "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
            "uint8": "Byte", "bool": "Bool"}.get(np.dtype(dt).name, np.dtype(dt).name)


def _view_inplace(name: str, fn: Callable, shift: int) -> Callable:
    """Tensor.<name>_: the view op `fn` applied to this tensor, which takes the result's shape
    and history (PyTorch's in-place view ops change a tensor's metadata, not its values)."""
    def method(self, *args, **kwargs):
        check_inplace(self)
        out = fn(self, *args, **kwargs)
        self._value = out._value
        node = self._node = out._node
        if node is not None:
            # PyTorch's in-place view ops have backward classes of their own, numbered after
            # the out-of-place overloads (UnsqueezeBackward1, SqueezeBackward3..5, TBackward1)
            cls = type(node).__name__
            if cls[-1:].isdigit():
                node.__class__ = node_class(cls[:-1] + str(int(cls[-1]) + shift))
            self._requires_grad = True
        self._vbox[0] += 1
        return self
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"Tensor.{name}(...): torch.{name[:-1]}(self, ...) as this tensor's new shape, in place "
                      "(the values are those of the view).\n\nReturns:\n    self.")
    return method


VIEW_INPLACE = {name: _view_inplace(name, fn, shift) for name, (fn, shift) in {
    "squeeze_": (O.squeeze, 3), "unsqueeze_": (O.unsqueeze, 1), "t_": (O.t, 1), "transpose_": (O.transpose, 1),
    "swapaxes_": (O.swapaxes, 1), "swapdims_": (O.swapdims, 1), "as_strided_": (B.as_strided, 1)}.items()}


def _removed(name: str) -> Callable:
    """Tensor.<name>: removed from PyTorch; calls fgrad.torch.<name> (looked up on use: it
    lives above the Tensor), which raises the error naming its torch.linalg replacement."""
    def method(self, *args, **kwargs):
        return getattr(importlib.import_module("fgrad.torch._breadth"), name)(self, *args, **kwargs)
    method.__name__, method.__qualname__ = name, f"Tensor.{name}"
    method.__doc__ = (f"Tensor.{name}(...): removed from PyTorch in 1.9; raises torch.{name}'s error, which names "
                      "the torch.linalg function to use.\n\nRaises:\n    RuntimeError: always.")
    return method


REMOVED = {name: _removed(name) for name in ("eig", "lstsq", "solve", "symeig")}


def _refusing_derivative(name: str, values: Callable) -> Callable:
    """`values` (a function of one array) whose derivative raises PyTorch's error for the
    in-place form `name`_: computing is fine, backward() through it is not."""
    @custom_vjp
    def f(x):
        return values(x)

    def fwd(x):
        return values(x), None

    def bwd(res, ct):
        raise FgradNotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented. (use "
                                       f"the out-of-place torch.{name}(x) in graphs)")
    f.defvjp(fwd, bwd)
    return f


def _no_derivative_inplace(name: str, torch_name: str, values: Callable) -> Callable:
    """Tensor.<name>: torch.<torch_name> written in place, with a grad_fn whose backward raises
    (PyTorch records <Name>Backward1 for it and has no derivative)."""
    refusing = _refusing_derivative(torch_name, values)
    node_name = f"{torch_name.capitalize()}Backward1"

    def method(self):
        check_inplace(self)
        return commit_inplace(self, call(node_name, lambda v: refusing(O._float(v)), (self,)))
    method.__name__, method.__qualname__ = name, f"Tensor.{name}"
    method.__doc__ = (f"Tensor.{name}(): torch.{torch_name} written into this tensor in place. As in PyTorch, "
                      "backward() through it raises: there is no derivative for the in-place form.\n\nReturns:\n"
                      "    self.")
    return method


NO_DERIVATIVE_INPLACE = {name: _no_derivative_inplace(name, torch_name, values) for name, (torch_name, values) in {
    "acosh_": ("acosh", fnp.arccosh), "arccosh_": ("acosh", fnp.arccosh), "asinh_": ("asinh", fnp.arcsinh),
    "arcsinh_": ("asinh", fnp.arcsinh), "atanh_": ("atanh", fnp.arctanh), "arctanh_": ("atanh", fnp.arctanh)}.items()}


class _KeepNode:
    """A no-op tensor hook holding a leaf's AccumulateGrad node, so the node (and the post hooks
    registered on it, which graph.POST_HOOKS keys weakly by node) lives as long as the leaf:
    leaf -> hook list -> this -> node -> leaf is a cycle the garbage collector frees."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node

    def __call__(self, grad):
        return None


def register_post_accumulate_grad_hook(self, hook: Callable):
    """Tensor.register_post_accumulate_grad_hook(hook): `hook(tensor)` runs after backward()
    has accumulated this leaf's gradient into .grad (torch.autograd.grad does not run it).

    Args:
        hook: a callable taking the tensor and returning None.

    Returns:
        A handle whose remove() unregisters the hook.
    """
    if not callable(hook):
        raise FgradTypeError(f"register_post_accumulate_grad_hook expects a callable, got {type(hook).__name__}")
    if self._node is not None:
        raise FgradRuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._requires_grad:
        raise FgradRuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    from . import graph  # (graph imports the Tensor class this module helps build)
    node = _acc_node(self)
    if self._hooks is None:
        self._hooks = []
    if not any(isinstance(h, _KeepNode) and h.node is node for h in self._hooks):
        self._hooks.append(_KeepNode(node))
    ref = weakref.ref(self)  # (POST_HOOKS' values must not hold its keys' leaf strongly)

    def after_accumulation(grad_inputs, grad_outputs):
        leaf = ref()
        if leaf is not None and hook(leaf) is not None:
            raise FgradRuntimeError("post accumulate grad hooks should return None (got a value from "
                                    f"{getattr(hook, '__name__', hook)!r}); write to tensor.grad instead")
    return graph._register_hook(node, after_accumulation)


def as_subclass(self, cls: type):
    """Tensor.as_subclass(cls): an instance of `cls` (a subclass of Tensor) over the same
    memory, attached to this tensor's graph (AliasBackward0); cls.__init__ is not called.

    Args:
        cls: a subclass of Tensor.

    Returns:
        A `cls` instance.
    """
    if not (isinstance(cls, type) and issubclass(cls, TensorBase)):
        raise FgradTypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                             f"possible (got {cls!r}). Make sure your class inherits from Tensor.")
    out = O.view(self, tuple(self._value.shape))
    node = out._node
    if node is not None:
        node.__class__ = node_class("AliasBackward0")
    inst = _make(out._value, node, out._requires_grad, out._vbox, into=object.__new__(cls))
    inst._view = out._view
    return inst


def sparse_mask(self, mask):
    """Tensor.sparse_mask(mask): a sparse COO tensor with this tensor's values at the
    positions `mask` (sparse COO, the same size) stores; the gradient goes to those positions.

    Args:
        mask: a sparse COO tensor of this tensor's shape.

    Returns:
        A sparse COO tensor, coalesced.
    """
    if getattr(mask, "layout", None) is strided or isinstance(mask, TensorBase):
        raise FgradNotImplementedError("Could not run 'aten::sparse_mask' with a strided mask: sparse_mask takes a "
                                       "sparse COO mask (mask.to_sparse())")
    shape = tuple(self._value.shape)
    if tuple(mask.shape) != shape:
        raise FgradRuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(shape)} "
                                f"but mask has size {list(mask.shape)}.")
    m = mask.coalesce()
    idx = m._indices()
    vals = O.getitem(self, tuple(idx[d] for d in range(idx.shape[0])))
    sparse = importlib.import_module("fgrad.torch.sparse")
    return sparse.sparse_coo_tensor(idx, vals, shape, is_coalesced=True)


def _layout_error(name: str, wants: str) -> Callable:
    """Tensor.<name>(): a sparse tensor's query; a strided tensor raises, as in PyTorch (fgrad's
    sparse COO tensors are their own class, torch.sparse)."""
    def method(self):
        raise FgradRuntimeError(f"{name} expected {wants} layout but got Strided (a dense tensor; "
                                "x.to_sparse() gives a sparse COO one)")
    method.__name__, method.__qualname__ = name, f"Tensor.{name}"
    method.__doc__ = (f"Tensor.{name}(): defined for sparse COO tensors (fgrad.torch.sparse); a dense tensor "
                      f"raises torch's error.\n\nRaises:\n    RuntimeError: always, for a dense tensor.")
    return method


SPARSE_ONLY = {name: _layout_error(name, wants) for name, wants in {
    "indices": "sparse coordinate tensor", "values": "sparse tensor", "coalesce": "sparse coordinate tensor",
    "is_coalesced": "sparse coordinate tensor"}.items()}


def _compare_inplace(name: str, fn: Callable, node_name: str) -> Callable:
    """Tensor.<name>(other): the comparison `fn` written into this tensor in its own dtype (1
    and 0). In a graph the node is PyTorch's <Op>Backward1 over (self's old history, other)
    for a Tensor `other`, <Op>Backward0 over self's alone for a number; it passes zeros."""
    scalar_node = node_name[:-1] + "0"

    def method(self, other):
        check_inplace(self)
        new = fn(self, other)
        if _state.grad_enabled and (self._requires_grad or (isinstance(other, TensorBase) and other._requires_grad)):
            if isinstance(other, TensorBase):
                new = B.overwrite(node_name, self, new, (other,))
            else:
                new = B.overwrite(scalar_node, self, new)
        return commit_inplace(self, new)
    method.__name__, method.__qualname__ = name, f"Tensor.{name}"
    method.__doc__ = (f"Tensor.{name}(other): torch.{fn.__name__}(self, other) written into this tensor in place, "
                      "as 1 and 0 of its dtype.\n\nArgs:\n    other: a Tensor or a number.\n\nReturns:\n    self.")
    return method


COMPARE_INPLACE = {name: _compare_inplace(name, fn, node) for name, (fn, node) in {
    "eq_": (O.eq, "EqBackward1"), "ne_": (O.ne, "NeBackward1"), "not_equal_": (O.ne, "NeBackward1"),
    "lt_": (O.lt, "LtBackward1"), "less_": (O.lt, "LtBackward1"), "le_": (O.le, "LeBackward1"),
    "less_equal_": (O.le, "LeBackward1"), "gt_": (O.gt, "GtBackward1"), "greater_": (O.gt, "GtBackward1"),
    "ge_": (O.ge, "GeBackward1"), "greater_equal_": (O.ge, "GeBackward1")}.items()}


def _logical_inplace(name: str, fn: Callable) -> Callable:
    """Tensor.<name>(other): the logical op `fn` written into this tensor in its own dtype.
    PyTorch records no node for it: a tensor with history keeps its grad_fn (gradients pass
    as if the values had not changed), so the values are written under it."""
    def method(self, other):
        check_inplace(self)
        new = fn(self, other)
        if self._node is None or not _state.grad_enabled or self._view is not None:
            return commit_inplace(self, new)
        v, nv = self._value, new._value
        if isinstance(v, np.ndarray) and v.flags.writeable:
            v[...] = nv.astype(v.dtype)
        else:
            self._value = nv.astype(v.dtype)
        self._vbox[0] += 1
        return self
    method.__name__, method.__qualname__ = name, f"Tensor.{name}"
    method.__doc__ = (f"Tensor.{name}(other): torch.{fn.__name__}(self, other) written into this tensor in place "
                      "(1 and 0 of its dtype; its grad_fn is kept, as PyTorch's).\n\nArgs:\n    other: a Tensor "
                      "or a number.\n\nReturns:\n    self.")
    return method


LOGICAL_INPLACE = {name: _logical_inplace(name, fn) for name, fn in {
    "logical_and_": O.logical_and, "logical_or_": O.logical_or, "logical_xor_": O.logical_xor}.items()}
