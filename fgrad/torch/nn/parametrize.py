"""torch.nn.utils.parametrize on fgrad.torch: a parameter or buffer computed by a chain of
modules from an unconstrained original.

`register_parametrization(module, "weight", P())` moves `module.weight` to
`module.parametrizations.weight.original` and makes `module.weight` a property of a class made
for that module (`ParametrizedLinear`, a subclass of its class, as PyTorch does): reading it runs
the chain on the original, assigning to it runs the chain's `right_inverse`s backwards and
stores the result in the original. `remove_parametrizations` puts a plain parameter back and the
module's own class with it.
"""
from __future__ import annotations

import copy
import copyreg
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Iterator

from .. import __future__ as _future
from ...core.errors import FgradRuntimeError, FgradValueError
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor
from .._tensor._swap import swap_tensors
from .module import Module, ModuleDict, ModuleList
from .parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList", "type_before_parametrizations", "transfer_parametrizations_and_params"]

# (nested `cached()` blocks share one cache, emptied when the outermost one exits)
_CACHE_STATE = {"depth": 0}
_CACHE: dict = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside the block, each parametrized tensor is computed once, at its first read, and that
    value is returned by later reads (PyTorch's `parametrize.cached`).

    Returns:
        A context manager; the cache is emptied when the outermost block exits.
    """
    _CACHE_STATE["depth"] += 1
    try:
        yield
    finally:
        _CACHE_STATE["depth"] -= 1
        if not _CACHE_STATE["depth"]:
            _CACHE.clear()


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """dest takes src's values (and shape) in place, keeping its identity: PyTorch's `dest.set_(src)`,
    or `swap_tensors` under `torch.__future__.set_swap_module_params_on_conversion(True)`."""
    if _future.get_swap_module_params_on_conversion():
        swap_tensors(dest, src)
        return
    dest._value = src._value
    dest._vbox[0] += 1


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor of a module, and its original.

    `self.original` (or `original0`, `original1`, ... when the first `right_inverse` returns a
    sequence) holds the unconstrained tensor; calling the list computes the parametrized one.

    Args:
        modules: the parametrizations, applied first to last.
        original: the parameter or buffer being parametrized.
        unsafe: skip the checks that the chain keeps the tensor's shape and dtype.
    """

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise FgradValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise FgradValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                  f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise FgradValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                      f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise FgradValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                          f"(list, tuple...). Got element {i} of the sequence with type "
                                          f"{type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise FgradValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original_dtype:
                raise FgradValueError("Registering a parametrization may not change the dtype of the tensor, "
                                      "unless `unsafe` flag is enabled.\n"
                                      f"unparametrized dtype: {original_dtype}\nparametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise FgradValueError("Registering a parametrization may not change the shape of the tensor, "
                                      "unless `unsafe` flag is enabled.\n"
                                      f"unparametrized shape: {original_shape}\nparametrized shape: {z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Store in the original(s) what the chain's `right_inverse`s, last to first, make of
        `value`, so that reading the tensor gives `value` back (for a right inverse).

        Args:
            value: the new value of the parametrized tensor.

        Returns:
            None.

        Raises:
            RuntimeError: a parametrization of the chain has no `right_inverse`.
            ValueError: the result is not what the originals hold (a tensor of their dtype, or a
                sequence of as many tensors).
        """
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise FgradRuntimeError(f"parametrization {type(module).__name__} does not implement "
                                            "right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise FgradValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise FgradValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                          f"`original` has dtype {self.original.dtype}")
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, Sequence):
                    raise FgradValueError("'right_inverse' must return a sequence of tensors. "
                                          f"Got {type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise FgradValueError("'right_inverse' must return a sequence of tensors of length "
                                          f"{self.ntensors}. Got a sequence of length {len(value)}.")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise FgradValueError(f"`right_inverse` must return a sequence of tensors. "
                                              f"Got element {i} of type {type(tensor).__name__}")
                    if original_i.dtype != tensor.dtype:
                        raise FgradValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                                              f"while `original{i}` has dtype {original_i.dtype}")
                    _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: the chain applied to the original(s).

        Returns:
            A Tensor.
        """
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in mods[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    """Give `module` a class of its own, `Parametrized<Class>`, to hold the properties."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self))
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise FgradRuntimeError("Serialization of parametrized modules is only supported through state_dict(): "
                                "save module.state_dict() and load it into a module parametrized the same way.")

    namespace = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), namespace)
    module.__class__ = param_cls


def _inject_property(module: Module, tensor_name: str) -> None:
    """Make `module.<tensor_name>` read through its parametrizations and assign through their
    right inverses."""
    assert not hasattr(module, tensor_name)

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _CACHE_STATE["depth"]:
            key = (id(self), tensor_name)
            tensor = _CACHE.get(key)
            if tensor is None:
                tensor = _CACHE[key] = parametrization()
            return tensor
        return parametrization()

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize `module.<tensor_name>` by `parametrization` (PyTorch's
    `torch.nn.utils.parametrize.register_parametrization`).

    The first parametrization of a tensor moves it to
    `module.parametrizations[tensor_name].original`; `module.<tensor_name>` is then
    `parametrization(original)`. Later ones are appended to the chain.

    Args:
        module: the module owning the parameter or buffer.
        tensor_name: its name.
        parametrization: a Module; its forward maps the original to the tensor, and an optional
            `right_inverse` maps a tensor to an original (used at registration and on assignment).
        unsafe: skip the checks that the parametrization keeps the shape and dtype.

    Returns:
        The module, modified in place.

    Raises:
        ValueError: the module has no parameter, buffer or parametrized tensor of that name, or
            the parametrization changes its shape or dtype (without unsafe=True).
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise FgradValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype:
                raise FgradValueError("Registering a parametrization may not change the dtype of the tensor, "
                                      "unless the `unsafe` flag is enabled.\n"
                                      f"module.{tensor_name}.dtype: {y.dtype}\n"
                                      f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if x.shape != y.shape:
                raise FgradValueError("Registering a parametrization may not change the shape of the tensor, "
                                      "unless the `unsafe` flag is enabled.\n"
                                      f"module.{tensor_name}.shape: {y.shape}\n"
                                      f"parametrization(module.{tensor_name}).shape: {x.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise FgradValueError(f"parametrization.right_inverse must return a tensor. Got: "
                                              f"{type(z).__name__}")
                    if z.dtype != y.dtype or z.shape != y.shape:
                        raise FgradValueError("The tensor returned by parametrization.right_inverse must have "
                                              f"the same shape and dtype as module.{tensor_name}, unless the "
                                              f"`unsafe` flag is enabled.\nmodule.{tensor_name}: {y.shape} "
                                              f"{y.dtype}\nreturned: {z.shape} {z.dtype}")
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = chain
    else:
        raise FgradValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
                              f"with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization (on `tensor_name`, when given).

    Args:
        module: a Module.
        tensor_name: a parameter's or buffer's name, or None for any.

    Returns:
        True or False.
    """
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Take off the parametrizations of `module.<tensor_name>`; it becomes a plain parameter (or
    buffer) again, the same object as the original.

    Args:
        module: the parametrized module.
        tensor_name: the parametrized tensor's name.
        leave_parametrized: keep the current parametrized value (True) or the original's (False).

    Returns:
        The module, modified in place.

    Raises:
        ValueError: the module has no parametrization on `tensor_name`, or the tensor is
            parametrized by several originals and leave_parametrized=False.
    """
    if not is_parametrized(module, tensor_name):
        raise FgradValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            if t.dtype != original.dtype:
                raise FgradValueError(f"Cannot leave {tensor_name} parametrized: its parametrized dtype "
                                      f"{t.dtype} differs from the original's {original.dtype}.")
            with no_grad():
                _maybe_set(original, t.detach())
    else:
        if not leave_parametrized:
            raise FgradValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                                  "parametrized in terms of a sequence of tensors.")
        with no_grad():
            t = getattr(module, tensor_name)
        if chain.original0.requires_grad:
            original = Parameter(t.detach(), True)
        else:
            original = t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations gave it one of its own.

    Args:
        module: a Module.

    Returns:
        Its class, or the class it had before being parametrized.
    """
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Copy the parametrizations of `from_module` (of `tensor_name`, or all) and their originals
    onto `to_module`.

    Args:
        from_module: a parametrized module.
        to_module: a module with tensors of the same names (or none of them).
        tensor_name: one parametrized tensor's name, or None for all of them.

    Returns:
        to_module, modified in place.

    Raises:
        ValueError: from_module has no parametrization of `tensor_name`.
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not is_parametrized(from_module, name):
            raise FgradValueError(f"{name} is not parametrized on {from_module}: nothing to transfer")
        chain = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for param_func in chain:
            register_parametrization(to_module, name, param_func)
        with no_grad():
            if chain.is_tensor:
                to_module.parametrizations[name].original.copy_(chain.original)
            else:
                for i in range(chain.ntensors):
                    getattr(to_module.parametrizations[name], f"original{i}").copy_(getattr(chain, f"original{i}"))
    return to_module
