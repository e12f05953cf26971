"""torch.ops: PyTorch's operator registry by name, on fgrad.torch's functions.

`torch.ops.<namespace>.<op>` is an OpOverloadPacket and `torch.ops.<namespace>.<op>.<overload>`
an OpOverload, as in PyTorch 2.13: `torch.ops.aten.add.Tensor(x, y)` calls fgrad.torch's add,
`str(torch.ops.aten.add.Tensor)` is "aten.add.Tensor", and each object is made once, so
`torch.ops.aten.add.Tensor is torch.ops.aten.add.Tensor`. Called with an fx Proxy among the
arguments (while torch.fx traces), a packet or overload records itself as a call_function node,
as PyTorch's ops do through `__torch_function__`; torch.fx prints and generates the node's
target as `torch.ops.aten.add.Tensor`.

Two namespaces hold ops:

* `aten`: the ATen ops that fx scripts, graph rewrites and tutorials name (the table `ATEN`
  below: its op names and overload names are PyTorch's). fgrad.torch has no per-overload
  kernels: every overload of an op calls the same fgrad.torch function (or Tensor method), which
  takes all of the overloads' argument forms. ATen's `out` overloads are left out: call the
  packet with `out=` where the function takes it.
* `profiler`: `_record_function_enter` (returns a handle Tensor, PyTorch's legacy form),
  `_record_function_enter_new` (returns a `_RecordFunction`) and `_record_function_exit`, which
  open and close a `record_function` range in the running profiles. They are what a traced
  graph calls for a `record_function` block (pytorch/examples' fx/profiling_tracer.py).

The aten objects are also the op names of selective checkpoint policies
(torch.utils.checkpoint): an OpOverload here is one of that module's OpOverloads, and equals
that module's op of the same name (its ops do not tell overloads apart); two overloads taken
from here are equal only when their names are.
"""
from __future__ import annotations

import importlib
import types
import weakref
from typing import Any, Callable

from ..core.errors import FgradRuntimeError, FgradTypeError
from .utils._selective_checkpoint import OpOverload as _SacOpOverload

__all__ = ["OpOverload", "OpOverloadPacket", "ATEN"]

# Set by torch.fx when it is imported: hook(op, args, kwargs) returns the Proxy of a recorded
# call_function node when a Proxy is among the arguments, else NotImplemented.
_PROXY_HOOK: list = [None]


def set_proxy_hook(hook: Callable | None) -> None:
    """Install the function that records op calls on fx Proxies (torch.fx calls this once).

    Args:
        hook: hook(op, args, kwargs) -> a Proxy, or NotImplemented when no Proxy is among the
            arguments; None removes it.

    Returns:
        None.
    """
    _PROXY_HOOK[0] = hook


def _run(op: Any, impl: Callable, args: tuple, kwargs: dict) -> Any:
    hook = _PROXY_HOOK[0]
    if hook is not None:
        out = hook(op, args, kwargs)
        if out is not NotImplemented:
            return out
    return impl(*args, **kwargs)


class OpOverload(_SacOpOverload):
    """One overload of an op (`torch.ops.aten.add.Tensor`): callable, named as PyTorch names it.

    Args:
        packet: the op's OpOverloadPacket.
        overload: the overload's name ("default", "Tensor", ...).
    """

    def __init__(self, packet: "OpOverloadPacket", overload: str) -> None:
        super().__init__(packet._opname, overload)
        self._packet = packet
        self.__name__ = f"{packet._opname}.{overload}"
        self.__qualname__ = self.__name__

    @property
    def overloadpacket(self) -> "OpOverloadPacket":
        """The op's packet (`torch.ops.aten.add`)."""
        return self._packet

    @property
    def namespace(self) -> str:
        """The op's namespace ("aten")."""
        return self._packet._namespace

    @property
    def _opname(self) -> str:
        return self._packet._opname

    @property
    def _overloadname(self) -> str:
        return self.overload

    @property
    def _fx_impure(self) -> bool:
        """Whether torch.fx's dead-code elimination keeps a node of this op nothing reads: the
        op mutates an argument, draws random numbers, or is a profiler range op (PyTorch's rule)."""
        return (self._packet._namespace, self._packet._opname, self.overload) in _IMPURE

    def name(self) -> str:
        """PyTorch's schema name: "aten::add.Tensor", "aten::mm" for a default overload.

        Returns:
            A string.
        """
        base = self._packet._qualified_op_name
        return base if self.overload == "default" else f"{base}.{self.overload}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _run(self, self._packet._impl, args, kwargs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OpOverload):
            return other is self
        return _SacOpOverload.__eq__(self, other)

    def __hash__(self) -> int:
        return _SacOpOverload.__hash__(self)

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._packet}', overload='{self.overload}')>"

    def __str__(self) -> str:
        return f"{self._packet}.{self.overload}"

    def __reduce__(self):
        return _lookup, (self._packet._namespace, self._packet._opname, self.overload)


class OpOverloadPacket:
    """An op with all of its overloads (`torch.ops.aten.add`): callable (the overload is chosen
    by the arguments, here by fgrad.torch's function), overloads as attributes.

    Args:
        namespace: "aten" or "profiler".
        opname: the op's name.
        overloads: its overload names.
        impl: the function every overload calls.
    """

    def __init__(self, namespace: str, opname: str, overloads: tuple, impl: Callable) -> None:
        self._namespace, self._opname = namespace, opname
        self._qualified_op_name = f"{namespace}::{opname}"
        self.__name__ = self.__qualname__ = opname
        self._impl = impl
        self._overload_names = tuple(overloads)
        self._overloads: dict[str, OpOverload] = {}

    @property
    def _fx_impure(self) -> bool:
        """Whether torch.fx's dead-code elimination keeps a node of this packet nothing reads: a
        profiler range op, or an op whose default overload is impure (PyTorch's rule)."""
        if (self._namespace, self._opname) in _IMPURE_PACKETS:
            return True
        return "default" in self._overload_names and self.default._fx_impure

    def overloads(self) -> list:
        """The op's overload names.

        Returns:
            A list of strings.
        """
        return list(self._overload_names)

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__") or overload not in self._overload_names:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}' (fgrad knows its "
                                 f"overloads {list(self._overload_names)})")
        op = self._overloads.get(overload)
        if op is None:
            op = self._overloads[overload] = OpOverload(self, overload)
        return op

    def __dir__(self) -> list:
        return sorted(set(object.__dir__(self)) | set(self._overload_names))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _run(self, self._impl, args, kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self}')>"

    def __str__(self) -> str:
        return f"{self._namespace}.{self._opname}"

    def __reduce__(self):
        return _lookup, (self._namespace, self._opname, None)


class _OpNamespace(types.ModuleType):
    """`torch.ops.aten`: its ops as attributes (an unknown name raises AttributeError)."""

    def __init__(self, name: str, table: dict) -> None:
        super().__init__(f"torch.ops.{name}")
        self.name = name
        self._table = table
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op.startswith("__"):
            raise AttributeError(op)
        packet = self._packets.get(op)
        if packet is None:
            entry = self._table.get(op)
            if entry is None:
                known = f"fgrad maps {len(self._table)} ops here (fgrad.torch.ops.ATEN lists aten's)" if self._table \
                    else "fgrad registers no ops here"
                raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}' ({known}; call the "
                                     "fgrad.torch function of the same name instead)")
            overloads, impl = entry
            packet = self._packets[op] = OpOverloadPacket(self.name, op, overloads, impl)
        return packet

    def __dir__(self) -> list:
        return sorted(set(super().__dir__()) | set(self._table))

    def __repr__(self) -> str:
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"


# --- the aten table ------------------------------------------------------------------------------

def _torch() -> Any:
    return importlib.import_module("fgrad.torch")


def _fn(name: str) -> Callable:
    """fgrad.torch's function `name`, looked up when called (torch.fx may stand in for it)."""
    def call(*args, **kwargs):
        return getattr(_torch(), name)(*args, **kwargs)
    call.__name__ = name
    return call


def _nn(name: str) -> Callable:
    """torch.nn.functional's function `name`, looked up when called."""
    def call(*args, **kwargs):
        return getattr(_torch().nn.functional, name)(*args, **kwargs)
    call.__name__ = name
    return call


def _method(name: str) -> Callable:
    """The Tensor method `name` of the first argument (ops PyTorch has only as methods)."""
    def call(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    call.__name__ = name
    return call


def _softmax(self, dim: int, half_to_float: bool):
    # (half_to_float: a float16 input's result in float32, a CUDA kernel's option)
    return _torch().softmax(self, dim, dtype=_torch().float32 if half_to_float else None)


def _log_softmax(self, dim: int, half_to_float: bool):
    return _torch().log_softmax(self, dim, dtype=_torch().float32 if half_to_float else None)


def _expand(self, size, *, implicit: bool = False):
    return self.expand(size)


def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking: bool = False,
             memory_format=None):
    return self.to(dtype=dtype if dtype is not None else self.dtype,
                   device=device if device is not None else self.device, copy=True)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-05, cudnn_enable: bool = True):
    return _torch().nn.functional.layer_norm(input, normalized_shape, weight, bias, eps)


def _pow(self, exponent, **kwargs):
    # (pow.Scalar: a number raised to a Tensor, which the Tensor's __rpow__ computes)
    if isinstance(self, (bool, int, float, complex)) and not kwargs:
        return exponent.__rpow__(self)
    return _torch().pow(self, exponent, **kwargs)


def _native_batch_norm_legit(input, weight, bias, *args):
    # default: (running_mean, running_var, training, momentum, eps); no_stats: (training,
    # momentum, eps), batch statistics without running ones
    if len(args) == 3:
        args = (None, None) + args
    return _torch().native_batch_norm(input, weight, bias, *args)


def _tanh_backward(grad_output, output):
    return grad_output * (1 - output * output)


def _sigmoid_backward(grad_output, output):
    return grad_output * (output * (1 - output))


def _threshold_backward(grad_output, self, threshold):
    return _torch().where(self <= threshold, _torch().zeros_like(grad_output), grad_output)


def _creation(name: str) -> Callable:
    """A creation op: ATen passes the size as one list; fgrad.torch's functions take it so too."""
    def call(*args, layout=None, pin_memory=None, **kwargs):
        return getattr(_torch(), name)(*args, **kwargs)
    call.__name__ = name
    return call


_BINARY = ("Tensor", "Scalar")

# op name -> (overload names, implementation); names and overloads are PyTorch 2.13's
ATEN: dict[str, tuple[tuple, Callable]] = {}
for _n in ("neg", "abs", "exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "sqrt", "rsqrt", "reciprocal",
           "erf", "floor", "ceil", "sign", "relu", "exp2", "log2", "log1p", "expm1", "logical_not", "isnan",
           "t", "detach", "mm", "bmm", "addmm", "baddbmm", "matmul", "maximum", "minimum", "clone", "unsqueeze",
           "permute", "reshape", "cumsum", "sort", "topk", "gather", "index_select", "zeros_like", "ones_like",
           "empty_like", "full_like", "rand_like", "randn_like", "native_layer_norm", "embedding", "convolution",
           "dropout", "logsumexp", "cat", "stack", "amax", "amin", "argmax", "argmin",
           "chunk", "erfinv", "trunc", "atan", "asin", "acos", "sinh", "cosh", "round", "clamp_min", "clamp_max",
           "permute_copy", "view_copy", "expand_copy", "native_batch_norm"):
    ATEN[_n] = (("default",), _fn(_n))
ATEN.update({
    "add": (_BINARY, _fn("add")), "sub": (_BINARY, _fn("sub")), "mul": (_BINARY, _fn("mul")),
    "div": (("Tensor", "Scalar", "Tensor_mode", "Scalar_mode"), _fn("div")),
    "pow": (("Tensor_Tensor", "Tensor_Scalar", "Scalar"), _pow),
    "remainder": (("Tensor", "Scalar"), _fn("remainder")),
    "eq": (_BINARY, _fn("eq")), "ne": (_BINARY, _fn("ne")), "lt": (_BINARY, _fn("lt")),
    "le": (_BINARY, _fn("le")), "gt": (_BINARY, _fn("gt")), "ge": (_BINARY, _fn("ge")),
    "clamp": (("default", "Tensor"), _fn("clamp")),
    "where": (("self", "ScalarOther", "ScalarSelf", "Scalar", "default"), _fn("where")),
    "masked_fill": (("Scalar", "Tensor"), _fn("masked_fill")),
    "sum": (("default", "dim_IntList"), _fn("sum")), "mean": (("default", "dim"), _fn("mean")),
    "max": (("default", "dim", "other"), _fn("max")), "min": (("default", "dim", "other"), _fn("min")),
    "transpose": (("int",), _fn("transpose")), "select": (("int",), _fn("select")),
    "squeeze": (("default", "dim", "dims"), _fn("squeeze")), "flatten": (("using_ints",), _fn("flatten")),
    "split": (("Tensor",), _fn("split")), "split_with_sizes": (("default",), _fn("split")),
    "unbind": (("int",), _fn("unbind")),
    "softmax": (("int",), _fn("softmax")), "log_softmax": (("int",), _fn("log_softmax")),
    "_softmax": (("default",), _softmax), "_log_softmax": (("default",), _log_softmax),
    "gelu": (("default",), _nn("gelu")), "silu": (("default",), _nn("silu")),
    "hardtanh": (("default",), _nn("hardtanh")), "leaky_relu": (("default",), _nn("leaky_relu")),
    "linear": (("default",), _nn("linear")), "layer_norm": (("default",), _layer_norm),
    "view": (("default",), _method("view")), "_unsafe_view": (("default",), _method("view")),
    "expand": (("default",), _expand), "contiguous": (("default",), _method("contiguous")),
    "_to_copy": (("default",), _to_copy),
    "add_": (_BINARY, _method("add_")), "sub_": (_BINARY, _method("sub_")), "mul_": (_BINARY, _method("mul_")),
    "div_": (_BINARY, _method("div_")), "relu_": (("default",), _method("relu_")),
    "copy_": (("default",), _method("copy_")), "fill_": (("Scalar", "Tensor"), _method("fill_")),
    "zero_": (("default",), _method("zero_")),
    "zeros": (("default",), _creation("zeros")), "ones": (("default",), _creation("ones")),
    "empty": (("memory_format",), _creation("empty")), "full": (("default",), _creation("full")),
    "arange": (("default", "start", "start_step"), _creation("arange")),
    "_native_batch_norm_legit": (("default", "no_stats"), _native_batch_norm_legit),
    "tanh_backward": (("default",), _tanh_backward), "sigmoid_backward": (("default",), _sigmoid_backward),
    "threshold_backward": (("default",), _threshold_backward),
})
del _n


# --- the profiler ops ----------------------------------------------------------------------------

# id(handle Tensor) -> (weak reference to it, its open record_function)
_HANDLES: dict = {}


class _RecordFunction:
    """What `_record_function_enter_new` returns: an open `record_function` range (PyTorch's
    ScriptObject of class profiler._RecordFunction)."""

    __slots__ = ("_rf",)

    def __init__(self, rf: Any) -> None:
        self._rf = rf

    def __repr__(self) -> str:
        return "ScriptObject <__torch__.torch.classes.profiler._RecordFunction>"


def _open(name: str, args: str | None) -> Any:
    if not isinstance(name, str):
        raise FgradTypeError(f"torch.ops.profiler._record_function_enter: the range name must be a str, got "
                             f"{type(name).__name__} {name!r}")
    from . import profiler as profiler_module  # (imported on use: it imports the Tensor layer)
    rf = profiler_module.record_function(name, args)
    rf.__enter__()
    return rf


def _record_function_enter(name: str, args: str | None = None):
    """Open a `record_function` range named `name` in the running profiles.

    Args:
        name: the range's name.
        args: accepted for PyTorch's signature.

    Returns:
        A handle Tensor (an empty uint8 tensor, made inside the range as PyTorch's is: profiles
        show its `aten::empty`) for `_record_function_exit`.
    """
    rf = _open(name, args)
    from . import profiler as profiler_module  # (imported on use, as above)
    torch = _torch()
    handle = profiler_module._timed_op("aten::empty", lambda: torch.empty(0, dtype=torch.uint8))
    key = id(handle)
    _HANDLES[key] = (weakref.ref(handle, lambda _, k=key: _dropped(k)), rf)
    return handle


def _dropped(key: int) -> None:
    """A handle Tensor was freed without `_record_function_exit`: its range ends now (PyTorch's
    handle owns its range, which ends when the handle is freed)."""
    entry = _HANDLES.pop(key, None)
    if entry is not None and entry[1]._open:
        entry[1].__exit__(None, None, None)


def _record_function_enter_new(name: str, args: str | None = None) -> _RecordFunction:
    """Open a `record_function` range named `name` in the running profiles.

    Args:
        name: the range's name.
        args: accepted for PyTorch's signature.

    Returns:
        A `_RecordFunction` for `_record_function_exit`.
    """
    return _RecordFunction(_open(name, args))


def _record_function_exit(handle: Any) -> None:
    """Close the range that `_record_function_enter` (a handle Tensor) or
    `_record_function_enter_new` (a _RecordFunction) opened.

    Args:
        handle: what the enter op returned.

    Returns:
        None.

    Raises:
        RuntimeError: `handle` came from neither enter op, or its range is closed already.
    """
    if isinstance(handle, _RecordFunction):
        rf = handle._rf
    else:
        entry = _HANDLES.get(id(handle))
        if entry is None or entry[0]() is not handle:
            raise FgradRuntimeError(f"torch.ops.profiler._record_function_exit: expected the handle that "
                                    f"_record_function_enter returned, got {type(handle).__name__} (PyTorch: "
                                    "'Expected temporary cpp type wrapper'); pass that handle, once")
        rf = entry[1]
        del _HANDLES[id(handle)]
    if not rf._open:
        raise FgradRuntimeError(f"torch.ops.profiler._record_function_exit: the range {rf.name!r} is closed already; "
                                "exit each range once")
    rf.__exit__(None, None, None)


PROFILER: dict[str, tuple[tuple, Callable]] = {
    "_record_function_enter": (("default",), _record_function_enter),
    "_record_function_enter_new": (("default",), _record_function_enter_new),
    "_record_function_exit": (("default", "_RecordFunction"), _record_function_exit),
}

# what torch.fx must not drop as dead code (PyTorch 2.13's impure ops among those above): the
# overloads that mutate an argument or draw random numbers, and the profiler's range ops
_IMPURE = {("aten", op, overload) for op, overload in (
    ("add_", "Tensor"), ("add_", "Scalar"), ("sub_", "Tensor"), ("sub_", "Scalar"), ("mul_", "Tensor"),
    ("mul_", "Scalar"), ("div_", "Tensor"), ("div_", "Scalar"), ("relu_", "default"), ("copy_", "default"),
    ("fill_", "Scalar"), ("fill_", "Tensor"), ("zero_", "default"), ("_native_batch_norm_legit", "default"),
    ("rand_like", "default"), ("randn_like", "default"), ("dropout", "default"))} | {
    ("profiler", "_record_function_enter", "default"), ("profiler", "_record_function_enter_new", "default"),
    ("profiler", "_record_function_exit", "_RecordFunction")}
_IMPURE_PACKETS = {("profiler", "_record_function_enter"), ("profiler", "_record_function_enter_new"),
                   ("profiler", "_record_function_exit")}

_NAMESPACES: dict[str, _OpNamespace] = {"aten": _OpNamespace("aten", ATEN),
                                        "profiler": _OpNamespace("profiler", PROFILER)}
aten = _NAMESPACES["aten"]
profiler = _NAMESPACES["profiler"]


def _lookup(namespace: str, op: str, overload: str | None) -> Any:
    packet = getattr(_NAMESPACES[namespace], op)
    return packet if overload is None else getattr(packet, overload)


def __getattr__(name: str) -> _OpNamespace:
    """`torch.ops.<namespace>` for a namespace with no ops here (`torch.ops.mylib`): an empty
    namespace, as PyTorch makes one for any name; its ops raise AttributeError."""
    if name.startswith("__"):
        raise AttributeError(name)
    ns = _NAMESPACES.get(name)
    if ns is None:
        ns = _NAMESPACES[name] = _OpNamespace(name, {})
    return ns
