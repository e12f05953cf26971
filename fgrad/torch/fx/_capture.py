"""Capture of fgrad.torch function calls whose arguments hold a Proxy (see the package doc).

While a capture is held (a Tracer is tracing, or a Proxy object is alive), every public
function of the torch namespaces below is replaced, as a module attribute, by a wrapper
that records a call_function node (target: the original function) when a Proxy is among its
arguments, and calls the original otherwise. When the last holder lets go, the originals are
put back, so a program that never builds a Proxy never runs a wrapper.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import types

from .. import ops as _ops

# the namespaces a traced program reaches torch functions through, as torch.fx prints them
_NAMESPACES = (
    ("torch.nn.functional", "fgrad.torch.nn.functional"),
    ("torch.linalg", "fgrad.torch.linalg"),
    ("torch.special", "fgrad.torch.special"),
    ("torch", "fgrad.torch"),
)
_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType)

_entries: list | None = None     # (module, name, original, wrapper)
_paths: dict[int, str] = {}      # id(original) -> "torch.relu"
_holders = 0
_wrapped_ids: set[int] = set()   # functions fx.wrap made calls of (for code generation)


def is_wrapped(fn) -> bool:
    """Whether `fn` was recorded as a call because `fx.wrap` named it."""
    return id(fn) in _wrapped_ids


def _proxy_in(args, kwargs):
    """The first Proxy inside args/kwargs (lists, tuples and dicts searched), or None."""
    from .proxy import Proxy  # (imported on use: a cycle within fgrad.torch)
    stack = list(args)
    if kwargs:
        stack.extend(kwargs.values())
    while stack:
        a = stack.pop()
        if isinstance(a, Proxy):
            return a
        if type(a) in (list, tuple):
            stack.extend(a)
        elif type(a) is dict:
            stack.extend(a.values())
    return None


class _Capturing:
    """The stand-in for a torch function while a capture is held: calls the original, or
    records a call_function node when a Proxy is among the arguments. It compares and hashes
    equal to the original (`node.target == torch.relu` holds while it is installed; `is`
    cannot)."""

    def __init__(self, original, normalize: bool = False, method: str | None = None) -> None:
        functools.update_wrapper(self, original)
        self._fx_original = original
        self._fx_signature = inspect.signature(original) if normalize else None
        self._fx_method = method
        self._fx_name = getattr(original, "__name__", None)

    def __call__(self, *args, **kwargs):
        p = _proxy_in(args, kwargs)
        if p is None:
            return self._fx_original(*args, **kwargs)
        if self._fx_method is not None and len(args) == 1 and not kwargs:
            return p.tracer.create_proxy("call_method", self._fx_method, args, {})
        if self._fx_signature is not None:
            args, kwargs = _normalized(self._fx_signature, args, kwargs)
        # (a function defined once under two names, atan/arctan: the node is named as called)
        name = self._fx_name if self._fx_name != getattr(self._fx_original, "__name__", None) else None
        return p.tracer.create_proxy("call_function", self._fx_original, args, kwargs, name)

    def __eq__(self, other) -> bool:
        original = self._fx_original
        return other is original or getattr(other, "_fx_original", None) is original

    def __hash__(self) -> int:
        return hash(self._fx_original)

    def __repr__(self) -> str:
        return repr(self._fx_original)


def capturing(original, normalize: bool = False) -> _Capturing:
    """A stand-in for `original` that records a call_function node when a Proxy is among its
    arguments (used for the torch namespaces and for `fx.wrap`); with `normalize`, the node's
    arguments are the required parameters positionally and every defaulted one by keyword."""
    return _Capturing(original, normalize)


def _normalized(sig, args, kwargs):
    """The arguments as torch.nn.functional's Python functions pass them on to torch.fx:
    required parameters positionally, the others as keywords with their values or defaults."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    pos, kw = [], {}
    for name, prm in sig.parameters.items():
        if prm.kind in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD):
            return args, kwargs
        if prm.default is prm.empty and prm.kind != prm.KEYWORD_ONLY:
            pos.append(bound.arguments[name])
        else:
            kw[name] = bound.arguments.get(name, prm.default)
    return tuple(pos), kw


# torch.nn.functional's functions that are C functions in PyTorch: torch.fx records their
# arguments as given (the others are Python functions that pass defaults on by keyword)
_F_BUILTINS = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "gelu",
    "hardshrink", "linear", "logsigmoid", "one_hot", "pairwise_distance", "pdist", "pixel_shuffle",
    "pixel_unshuffle", "prelu", "scaled_dot_product_attention", "softplus", "softshrink",
    "channel_shuffle"})
# torch.nn.functional's functions that PyTorch writes as a method call on the input
_F_METHODS = frozenset({"sigmoid", "tanh"})


# Tensor operator -> the method torch.fx records when a Tensor constant is the left operand
# of a Proxy (`self.scale * x` is `scale.mul(x)`)
_TENSOR_METHODS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "pow": "pow",
                   "matmul": "matmul", "mod": "remainder", "eq": "eq", "ne": "ne", "lt": "lt",
                   "le": "le", "gt": "gt", "ge": "ge", "floordiv": "__floordiv__", "and": "__and__",
                   "or": "__or__", "xor": "__xor__", "lshift": "__lshift__", "rshift": "__rshift__"}


def _tensor_operator(orig, method_name: str):
    """A Tensor operator method that records a call_method node when the other operand is a
    Proxy, and runs `orig` otherwise."""
    from .proxy import Proxy  # (imported on use: a cycle within fgrad.torch)

    def method(self, other):
        if isinstance(other, Proxy):
            return other.tracer.create_proxy("call_method", method_name, (self, other), {})
        return orig(self, other)
    method.__name__ = orig.__name__
    return method


def _build() -> list:
    global _entries
    from .._tensor import Tensor  # (imported on use: a cycle within fgrad.torch)
    entries, seen = [], set()
    for name, method_name in _TENSOR_METHODS.items():
        orig = vars(Tensor).get(f"__{name}__")
        if orig is not None:
            entries.append((Tensor, f"__{name}__", orig, _tensor_operator(orig, method_name)))
    for path, modname in _NAMESPACES:
        mod = importlib.import_module(modname)
        for name, value in list(vars(mod).items()):
            if name.startswith("_") or not isinstance(value, _FUNCTION_TYPES):
                continue
            if (modname, name) in seen:
                continue
            seen.add((modname, name))
            _paths.setdefault(id(value), f"{path}.{name}")
            normalize = (path == "torch.nn.functional" and isinstance(value, types.FunctionType)
                         and name not in _F_BUILTINS)
            stand_in = capturing(value, normalize)
            stand_in._fx_name = name
            if path == "torch.nn.functional" and name in _F_METHODS:
                stand_in._fx_method = name
            entries.append((mod, name, value, stand_in))
    _entries = entries
    return entries


def name_target(fn, path: str) -> None:
    """Print (and generate code for) `fn` as the dotted name `path` under `torch`."""
    _paths[id(fn)] = path
    _pinned.append(fn)  # (kept alive: the table is keyed by id)


_pinned: list = []


def stand_ins() -> dict[int, "_Capturing"]:
    """id(original torch function) -> its stand-in (for names bound outside the namespaces,
    `from torch import relu`, which a trace patches in the traced code's globals)."""
    entries = _entries if _entries is not None else _build()
    return {id(orig): w for mod, _, orig, w in entries if isinstance(w, _Capturing)}


def path_of(target) -> str | None:
    """The dotted name a torch namespace function is printed under (`torch.relu`,
    `torch.ops.aten.add.Tensor`), or None."""
    if isinstance(target, (_ops.OpOverload, _ops.OpOverloadPacket)):
        return f"torch.ops.{target}"
    if _entries is None:
        _build()
    return _paths.get(id(target))


def _record_op(op, args: tuple, kwargs: dict):
    """torch.ops' hook: a call_function node for an op called with a Proxy among its arguments
    (PyTorch's ops find the Proxy through __torch_function__), else NotImplemented."""
    if not _holders:
        return NotImplemented
    p = _proxy_in(args, kwargs)
    if p is None:
        return NotImplemented
    return p.tracer.create_proxy("call_function", op, args, kwargs)


_ops.set_proxy_hook(_record_op)


def acquire() -> None:
    """Hold the capture: install the wrappers if nobody held it."""
    global _holders
    _holders += 1
    if _holders == 1:
        for mod, name, orig, wrapper in (_entries if _entries is not None else _build()):
            if vars(mod).get(name) is orig:
                setattr(mod, name, wrapper)


def release() -> None:
    """Let go of the capture: put the originals back when nobody holds it any more."""
    global _holders
    if _holders == 0:
        return
    _holders -= 1
    if _holders == 0:
        for mod, name, orig, wrapper in _entries:
            if vars(mod).get(name) is wrapper:
                setattr(mod, name, orig)
