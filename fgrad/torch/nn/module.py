"""Module: PyTorch's torch.nn.Module on fgrad Tensors, and the containers Sequential,
ModuleList and ModuleDict."""
from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple
from typing import Any, Iterator

import numpy as np

from .. import _tensor as T  # the facade namespace: T(data), T.zeros, T.float32, ...
from ...core.errors import (
    FgradIndexError,
    FgradNotImplementedError,
    FgradRuntimeError,
    FgradTypeError,
    FgradValueError,
)
from .._tensor import _dtypes as D
from .. import __future__ as _future
from .._tensor._swap import swap_tensors
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor
from ._backward_hooks import wrap_inputs, wrap_outputs
from .parameter import Buffer, Parameter
from .._tensor.tensor import wrap as _wrap


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """load_state_dict's result; prints `<All keys matched successfully>` when both are empty."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class Module:
    """Base class of layers and models.

    Assigning a Parameter, a Module or (for registered names) a buffer Tensor as an attribute
    registers it, so parameters(), state_dict(), to(), train()/eval() find it."""

    training: bool

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise FgradTypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())

    # --- forward -------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise FgradNotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" '
                                  "function")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in tuple(self._forward_pre_hooks.values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        hooked = bool(self.__dict__.get("_backward_hooks") or self.__dict__.get("_backward_pre_hooks"))
        if hooked:
            args, state = wrap_inputs(self, args)
        out = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            res = hook(self, args, out)
            if res is not None:
                out = res
        legacy = self.__dict__.get("_legacy_backward_hooks")
        if legacy:
            self._attach_legacy_backward_hooks(out, legacy)
        return wrap_outputs(state, out) if hooked else out

    def _attach_legacy_backward_hooks(self, out, hooks) -> None:
        """register_backward_hook's hooks go on the node that made the output's first tensor, as
        PyTorch's: they see that node's grad_inputs (parameters' included), not the module's."""
        first = _first_tensor(out)
        grad_fn = getattr(first, "grad_fn", None)
        if grad_fn is None:
            return
        for hook in tuple(hooks.values()):
            grad_fn.register_hook(lambda grad_input, grad_output, hook=hook: hook(self, grad_input, grad_output))

    def register_forward_hook(self, hook):
        return _Handle(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        return _Handle(self._forward_pre_hooks, hook)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """hook(module, grad_input, grad_output) -> new grad_input or None, run when the
        gradients w.r.t. the module's tensor inputs are computed."""
        if self.__dict__.get("_legacy_backward_hooks"):
            raise FgradRuntimeError(_MIXED_HOOKS)
        return _Handle(self._backward_hooks, hook)

    def register_backward_hook(self, hook):
        """PyTorch's deprecated backward hook: hook(module, grad_input, grad_output) -> new
        grad_input or None, registered on the autograd node that produced the first tensor of
        the module's output at each call. grad_input holds that node's input gradients (for a
        one-op layer such as Conv2d or Linear: the input's, the weight's and the bias's), which
        is all of the module's only when its forward is one op; register_full_backward_hook
        gives the module's.

        Args:
            hook: the function to call.

        Returns:
            A handle whose remove() unregisters the hook.

        Raises:
            RuntimeError: the module already has full backward hooks.
        """
        if self._backward_hooks:
            raise FgradRuntimeError(_MIXED_HOOKS)
        if "_legacy_backward_hooks" not in self.__dict__:
            object.__setattr__(self, "_legacy_backward_hooks", OrderedDict())
        return _Handle(self._legacy_backward_hooks, hook)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """hook(module, grad_output) -> new grad_output or None, run before the module's
        backward."""
        return _Handle(self._backward_pre_hooks, hook)

    # --- registration --------------------------------------------------------------------
    def _check_ready(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign to {type(self).__name__} before Module.__init__() "
                                 "call (call super().__init__() first)")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            self._check_ready()
            self._remove_from(name, keep="_parameters")
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise FgradTypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(fgrad.torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            self._check_ready()
            self._remove_from(name, keep="_modules")
            d["_modules"][name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise FgradTypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(fgrad.torch.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Buffer):
            self._check_ready()
            self.register_buffer(name, value, value.persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise FgradTypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(fgrad.torch.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove_from(self, name, keep):
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                d[store].pop(name, None)
        if keep != "_buffers":
            d["_non_persistent_buffers"].discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            s = self.__dict__.get(store)
            if s is not None and name in s:
                del s[name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def _check_name(self, name, kind):
        self._check_ready()
        if not isinstance(name, str):
            raise FgradTypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f"{kind} name can't contain \".\" or be empty, got {name!r}")
        if hasattr(self, name) and name not in getattr(self, f"_{kind}s" if kind != "module" else "_modules"):
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param) -> None:
        self._check_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise FgradTypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(fgrad.torch.nn.Parameter or None required)")
        self._remove_from(name, keep="_parameters")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise FgradTypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(fgrad.torch.Tensor or None required)")
        self._remove_from(name, keep="_buffers")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module) -> None:
        if module is not None and not isinstance(module, Module):
            raise FgradTypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        self._remove_from(name, keep="_modules")
        self._modules[name] = module

    register_module = add_module

    # --- traversal -----------------------------------------------------------------------
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, v in getattr(m, store).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + name, v

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> "Module":
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no submodule `{item}` (looking up "
                                     f"'{target}')")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target: str):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"{type(mod).__name__} has no buffer `{name}`")
        return mod._buffers[name]

    def apply(self, fn) -> "Module":
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # --- modes and gradients -------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise FgradValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None (default, as PyTorch) or to zeros."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g = g.detach()
                    p.grad = g
                g.requires_grad_(False)
                g.zero_()

    # --- state -----------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """OrderedDict name -> Tensor of every parameter and persistent buffer (detached,
        sharing storage, unless keep_vars)."""
        if args:  # PyTorch's deprecated positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values from `state_dict` into this module's parameters and buffers (in place,
        keeping dtype and device). Returns (missing_keys, unexpected_keys); with strict=True
        any mismatch raises RuntimeError listing them all."""
        if not hasattr(state_dict, "items"):
            raise FgradTypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        own = OrderedDict()
        for mod_prefix, m in self.named_modules(remove_duplicate=False):
            p = mod_prefix + "." if mod_prefix else ""
            for name, v in m._parameters.items():
                if v is not None:
                    own[p + name] = (m, "_parameters", name, v)
            for name, v in m._buffers.items():
                if v is not None and name not in m._non_persistent_buffers:
                    own[p + name] = (m, "_buffers", name, v)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        updates = []
        for key, (m, store, name, cur) in own.items():
            if key not in state_dict:
                continue
            src = state_dict[key]
            arr = src._value if isinstance(src, Tensor) else np.asarray(src)
            if tuple(arr.shape) != tuple(cur._value.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{tuple(arr.shape)} from checkpoint, the shape in current model is "
                              f"{tuple(cur._value.shape)}.")
                continue
            updates.append((m, store, name, cur, src, arr))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
        if errors:
            raise FgradRuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for m, store, name, cur, src, arr in updates:
                if assign:
                    new = src if isinstance(src, Tensor) else _tensor_of(arr)
                    if store == "_parameters" and not isinstance(new, Parameter):
                        new = Parameter(new, cur.requires_grad)
                    getattr(m, store)[name] = new
                else:
                    if cur.is_meta and not (isinstance(src, Tensor) and src.is_meta):
                        warnings.warn(f"for {name}: copying from a non-meta parameter in the checkpoint to a meta "
                                      "parameter in the current model, which is a no-op. (Did you mean to pass "
                                      "`assign=True` to assign items in the state dictionary to their "
                                      "corresponding key in the module instead of copying them in place?)",
                                      UserWarning, stacklevel=2)
                    cur.copy_(src if isinstance(src, Tensor) else _tensor_of(arr))
        return _IncompatibleKeys(missing, unexpected)

    # --- devices and dtypes ----------------------------------------------------------------
    def _apply_to_tensors(self, fn) -> "Module":
        """Replace every parameter's and buffer's value by fn(tensor) (a Tensor); gradients
        follow. Parameters stay the same objects (their storage changes), unless
        torch.__future__ says otherwise: with set_swap_module_params_on_conversion(True) each
        parameter is swapped (torch.utils.swap_tensors) with a new Parameter of the result, with
        set_overwrite_module_params_on_conversion(True) a new Parameter takes its place."""
        swap = _future.get_swap_module_params_on_conversion()
        overwrite = _future.get_overwrite_module_params_on_conversion()
        for m in self.modules():
            for store in ("_parameters", "_buffers"):
                for name, t in getattr(m, store).items():
                    if t is None:
                        continue
                    with no_grad():
                        new = fn(t)
                    if new is t:
                        continue
                    if store == "_parameters" and (swap or overwrite):
                        self._replace_parameter(m, name, t, new, fn, swap)
                        continue
                    t._value = new._value
                    t._vbox[0] += 1
                    if t._grad is not None:
                        g = fn(t._grad)
                        t._grad = g if g is not t._grad else t._grad
        return self

    @staticmethod
    def _replace_parameter(m, name, param, new, fn, swap) -> None:
        """PyTorch's conversion of one parameter under torch.__future__'s switches: swapped with
        a new Parameter of `new` (the object stays), or replaced by one in m._parameters."""
        grad = param._grad
        with no_grad():
            grad_new = fn(grad) if grad is not None else None
        out = Parameter(new, param.requires_grad)
        if swap:
            param._grad = None
            try:
                swap_tensors(param, out)
            except RuntimeError as e:
                raise FgradRuntimeError(f"_apply(): Couldn't swap {m._get_name()}.{name}") from e
            out = param
        else:
            m._parameters[name] = out
        out._grad = grad_new

    def to(self, *args, **kwargs) -> "Module":
        """Move/cast parameters and buffers: to(device), to(dtype), to(device, dtype),
        to(tensor), and memory_format= (applied to 4-d and 5-d ones: channels_last conv weights).
        Only floating-point tensors change dtype (as in PyTorch)."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        memory_format = kwargs.pop("memory_format", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise FgradTypeError(f"to() got unexpected arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif _is_dtype(a):
                dtype = a
            else:
                device = a

        def convert(t):
            out = t
            if dtype is not None and D.kind(t._value.dtype) in "fc":
                out = out.to(dtype=dtype)
            if device is not None:
                out = out.to(device=device)
            if memory_format is not None and out.ndim in (4, 5):
                out = out.to(memory_format=memory_format)
            return out
        return self._apply_to_tensors(convert)

    def to_empty(self, *, device, recurse: bool = True) -> "Module":
        """Give every parameter and buffer new storage on `device`, of its shape and dtype and
        with no values kept (PyTorch's `to_empty`; fgrad's fresh storage holds zeros): how a
        model built on the meta device is materialised before loading weights.

        Args:
            device: the device to allocate on ("cpu", "meta", ...).
            recurse: include submodules' tensors (False: this module's own only).

        Returns:
            The module itself.
        """
        def fresh(t):
            return T.empty_like(t, device=device)
        if recurse:
            return self._apply_to_tensors(fresh)
        for store in ("_parameters", "_buffers"):
            for t in getattr(self, store).values():
                if t is not None:
                    t._value = fresh(t)._value
                    t._vbox[0] += 1
        return self

    def cpu(self) -> "Module":
        return self.to("cpu")

    def cuda(self, device=None) -> "Module":
        return self.to("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device))

    def float(self) -> "Module":
        return self._cast("float32")

    def double(self) -> "Module":
        return self._cast("float64")

    def half(self) -> "Module":
        return self._cast("float16")

    def bfloat16(self) -> "Module":
        """Cast the floating-point parameters and buffers to bfloat16 (PyTorch's Module.bfloat16).

        Returns:
            self.
        """
        return self._cast("bfloat16")

    def _cast(self, name):
        return self.to(getattr(T, name))

    def type(self, dst_type) -> "Module":
        return self.to(dst_type)

    # --- printing ----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        children = []
        for name, m in self._modules.items():
            mod_str = repr(m).replace("\n", "\n  ")
            children.append(f"({name}): {mod_str}")
        lines = lines + children
        main = self._get_name() + "("
        if lines:
            if len(extra.split("\n")) == 1 and not children:
                main += extra
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)


_MIXED_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a single Module. Please "
                "use only one of them (register_full_backward_hook is the supported one).")


def _first_tensor(out):
    """The first Tensor in a module's output (a Tensor, or nested tuples/lists/dicts), or None."""
    if isinstance(out, Tensor):
        return out
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (tuple, list)) else ()
    for item in items:
        found = _first_tensor(item)
        if found is not None:
            return found
    return None


def _is_dtype(a) -> bool:
    return isinstance(a, D.dtype) or (isinstance(a, (type, np.dtype)) and not isinstance(a, str))


def _tensor_of(arr):
    return _wrap(np.asarray(arr))


class _Handle:
    _next = 0

    def __init__(self, hooks: dict, hook) -> None:
        # ids count from 0 across all hooks, as PyTorch's RemovableHandle (scripts print hook dicts)
        self.id = _Handle._next
        _Handle._next += 1
        self.hooks = hooks
        hooks[self.id] = hook

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class Sequential(Module):
    """Modules applied in order: Sequential(m1, m2, ...) or Sequential(OrderedDict(...))."""

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        n = len(keys)
        if not -n <= idx < n:
            raise FgradIndexError(f"index {idx} is out of range for a Sequential of {n} modules")
        return self._modules[keys[idx % n]]

    def __setitem__(self, idx: int, module) -> None:
        keys = list(self._modules)
        setattr(self, keys[idx % len(keys)], module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for k in (keys[idx] if isinstance(idx, slice) else [keys[idx]]):
            del self._modules[k]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules, registered (their parameters are found)."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        keys = list(self._modules)
        return self._modules[keys[idx]]

    def __setitem__(self, idx: int, module) -> None:
        keys = list(self._modules)
        setattr(self, keys[idx], module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def forward(self, *args, **kwargs):
        raise FgradNotImplementedError("ModuleList is a container; iterate over it in your forward()")

    def __repr__(self) -> str:
        """Runs of equal children print once, as `(0-1): 2 x Linear(...)` (PyTorch's format)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}").replace("\n", "\n  ")
                 for a, b, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered (their parameters are found)."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            for k, m in (modules.items() if hasattr(modules, "items") else modules):
                self[k] = m

    def __getitem__(self, key: str):
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def forward(self, *args, **kwargs):
        raise FgradNotImplementedError("ModuleDict is a container; index it in your forward()")
