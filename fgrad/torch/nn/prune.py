"""torch.nn.utils.prune on fgrad.torch: masking a module's parameters to zero, as PyTorch does.

Pruning `module.weight` moves the parameter to `module.weight_orig`, registers the mask as the
buffer `module.weight_mask`, and sets `module.weight = weight_mask * weight_orig` (a plain
attribute, recomputed before each forward by the pruning method, which is registered as a
forward pre-hook). Pruning the same tensor again combines the masks through a
`PruningContainer`; `remove` makes the pruned values permanent. The random methods draw from
fgrad.torch's generator, whose stream is PyTorch's, so they choose the same entries.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from .. import _tensor as T  # the facade namespace: T.ones_like, T.rand_like, T.topk, ...
from ...core.errors import FgradIndexError, FgradTypeError, FgradValueError
from .._tensor.tensor import Tensor
from .module import Module

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]

# the name this module is imported under (torch.nn.utils.prune's place; fgrad.torch.nn registers it)
PUBLIC_NAME = "fgrad.torch.nn.utils.prune"


class BasePruningMethod(ABC):
    """A way of pruning a tensor: subclasses define `compute_mask` and `PRUNING_TYPE`
    ("unstructured", "structured" with a `dim`, or "global").

    The method is also the forward pre-hook that recomputes the pruned tensor from its original
    and mask before each forward.
    """

    PRUNING_TYPE: str
    _tensor_name: str

    def __call__(self, module: Module, inputs) -> None:
        """Recompute `module.<name>` from `<name>_orig` and `<name>_mask` (the forward pre-hook)."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask (1: keep, 0: prune) for `t`, given the mask already applied.

        Args:
            t: the tensor to prune (or its importance scores).
            default_mask: the mask from earlier pruning, of t's shape.

        Returns:
            A Tensor of t's shape.
        """

    def apply_mask(self, module: Module) -> Tensor:
        """`<name>_mask * <name>_orig` of `module`: the pruned tensor.

        Args:
            module: a module pruned by this method.

        Returns:
            The pruned tensor (differentiable with respect to the original).
        """
        if getattr(self, "_tensor_name", None) is None:
            raise FgradValueError(f"Module {module} has to be pruned: this pruning method was never applied to it")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores: Tensor | None = None, **kwargs):
        """Prune `module.<name>` with a new `cls(*args, **kwargs)`, combined with any pruning
        already on it.

        Args:
            module: the module owning the tensor.
            name: the parameter's name.
            *args, **kwargs: the method's constructor arguments.
            importance_scores: a tensor of the parameter's shape ranking its entries (default:
                the parameter itself).

        Returns:
            The method now registered on the module (a PruningContainer after the first).
        """
        old_method, old_keys = None, []
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                old_keys.append(k)
        if len(old_keys) > 1:
            raise FgradValueError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                                  f"{module}. Use a PruningContainer.")
        for k in old_keys:
            del module._forward_pre_hooks[k]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:
            if isinstance(old_method, PruningContainer):
                old_method.add_pruning_method(method)
                method = old_method
            else:
                container = PruningContainer(old_method)
                container.add_pruning_method(method)
                method = container

        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise FgradValueError(f"importance_scores should have the same shape as parameter {name} of "
                                      f"{module}: got {tuple(importance_scores.shape)}, the parameter has "
                                      f"{tuple(orig.shape)}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = T.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):  # put the parameter back as it was
                orig = getattr(module, name + "_orig")
                module.__dict__.pop(name, None)
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """`t` with this method's mask applied (the module is left alone).

        Args:
            t: the tensor to prune.
            default_mask: the mask from earlier pruning (default: all ones).
            importance_scores: a tensor of t's shape ranking its entries (default: t).

        Returns:
            The pruned tensor.
        """
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(t.shape):
                raise FgradValueError(f"importance_scores should have the same shape as tensor t: got "
                                      f"{tuple(importance_scores.shape)} and {tuple(t.shape)}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else T.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: `module.<name>` becomes a parameter again (the `_orig`
        one, now holding the pruned values), and `_orig`, `_mask` go.

        Args:
            module: the pruned module.

        Returns:
            None.
        """
        if getattr(self, "_tensor_name", None) is None:
            raise FgradValueError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        module.__dict__.pop(self._tensor_name, None)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig._value = weight.detach()._value
        orig._vbox[0] += 1
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one tensor; its mask is the last method's,
    computed on the entries the earlier ones kept.

    Args:
        *args: pruning methods (or one iterable of them), all acting on the same tensor name.
    """

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1 and not isinstance(args[0], Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        elif len(args) == 1 and isinstance(args[0], BasePruningMethod):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            methods = list(args[0]) if len(args) == 1 else list(args)
            if methods:
                self._tensor_name = methods[0]._tensor_name
            for method in methods:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append `method` to the sequence.

        Args:
            method: a pruning method acting on the container's tensor.

        Returns:
            None.

        Raises:
            TypeError: `method` is not a BasePruningMethod.
            ValueError: it acts on another tensor.
        """
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise FgradTypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and getattr(self, "_tensor_name", None) != method._tensor_name:
            raise FgradValueError(f"Can only add pruning methods acting on the parameter named "
                                  f"'{getattr(self, '_tensor_name', None)}' to PruningContainer {self}. "
                                  f"Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask computed on the slice of `t` the earlier masks kept (all of
        it for unstructured and global methods; the kept channels along `dim` for structured
        ones), written into the earlier mask.

        Args:
            t: the tensor (or importance scores).
            default_mask: the combined mask of the earlier methods.

        Returns:
            The new combined mask.
        """
        method = self._pruning_methods[-1]
        mask = default_mask
        new_mask = mask.to(dtype=t.dtype)
        n_dims = t.dim()
        if method.PRUNING_TYPE == "unstructured":
            slc = mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute "
                                     "`dim` defined.")
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise FgradIndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = [slice(None)] * n_dims
            slc[dim] = keep_channel
            slc = tuple(slc)
        elif method.PRUNING_TYPE == "global":
            slc = (slice(None),) * n_dims
        else:
            raise FgradValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[slc], default_mask=mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (a way to set up the reparametrisation)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str):
        """Reparametrise `module.<name>` without pruning.

        Args:
            module: the module.
            name: the parameter's name.

        Returns:
            The registered method.
        """
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` entries chosen uniformly at random.

    Args:
        amount: a fraction in [0, 1] of the entries, or their number (a non-negative int).
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """default_mask with `amount` random entries set to 0."""
        return _entries_mask(t, self.amount, default_mask, lambda: T.rand_like(t), largest=True)

    @classmethod
    def apply(cls, module: Module, name: str, amount):
        """Prune `module.<name>` at random.

        Args:
            module: the module.
            name: the parameter's name.
            amount: a fraction or a number of entries.

        Returns:
            The registered method.
        """
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of smallest absolute value.

    Args:
        amount: a fraction in [0, 1] of the entries, or their number (a non-negative int).
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """default_mask with the `amount` smallest |t| entries set to 0."""
        return _entries_mask(t, self.amount, default_mask, lambda: T.abs(t), largest=False)

    @classmethod
    def apply(cls, module: Module, name: str, amount, importance_scores: Tensor | None = None):
        """Prune the smallest entries of `module.<name>` (or of importance_scores).

        Args:
            module: the module.
            name: the parameter's name.
            amount: a fraction or a number of entries.
            importance_scores: ranks the entries instead of the parameter.

        Returns:
            The registered method.
        """
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`, chosen at random.

    Args:
        amount: a fraction in [0, 1] of the channels, or their number.
        dim: the channel dimension.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """Zeros over `amount` random channels along dim, times default_mask."""
        def kept(n_channels: int, n_pruned: int):
            if n_pruned == 0:  # (nothing drawn: the generator does not advance, as in PyTorch)
                return None
            prob = T.rand(n_channels)
            return prob > prob.kthvalue(n_pruned).values
        return _channels_mask(t, self.dim, self.amount, default_mask, kept)

    @classmethod
    def apply(cls, module: Module, name: str, amount, dim: int = -1):
        """Prune random channels of `module.<name>`.

        Args:
            module: the module.
            name: the parameter's name.
            amount: a fraction or a number of channels.
            dim: the channel dimension.

        Returns:
            The registered method.
        """
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm.

    Args:
        amount: a fraction in [0, 1] of the channels, or their number.
        n: the norm's order (as `torch.norm`'s p: an int, a float, inf, -inf, "fro", "nuc").
        dim: the channel dimension.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """Ones over the channels of largest norm, times default_mask."""
        def kept(n_channels: int, n_pruned: int):
            # (the norms are taken even when nothing is pruned, so a bad `n` fails as in PyTorch)
            dims = list(range(t.dim()))
            dims.remove(dims[self.dim])
            return T.topk(t.norm(p=self.n, dim=dims), k=n_channels - n_pruned, largest=True).indices
        return _channels_mask(t, self.dim, self.amount, default_mask, kept)

    @classmethod
    def apply(cls, module: Module, name: str, amount, n, dim: int, importance_scores: Tensor | None = None):
        """Prune the channels of smallest norm of `module.<name>`.

        Args:
            module: the module.
            name: the parameter's name.
            amount: a fraction or a number of channels.
            n: the norm's order.
            dim: the channel dimension.
            importance_scores: ranks the entries instead of the parameter.

        Returns:
            The registered method.
        """
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0.

    Args:
        mask: a tensor of the parameter's shape.
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """default_mask times the given mask."""
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise FgradValueError(f"CustomFromMask: the mask has shape {tuple(self.mask.shape)}, the tensor "
                                  f"{tuple(default_mask.shape)}; give a mask of the parameter's shape")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor):
        """Prune `module.<name>` where `mask` is 0.

        Args:
            module: the module.
            name: the parameter's name.
            mask: a tensor of the parameter's shape.

        Returns:
            The registered method.
        """
        return super().apply(module, name, mask=mask)


def _entries_mask(t: Tensor, amount, default_mask: Tensor, scores, largest: bool) -> Tensor:
    """Unstructured pruning: default_mask with `amount` entries of t set to 0, those with the
    largest (or smallest) `scores()` (called only when something is pruned).

    Args:
        t: the tensor (or importance scores).
        amount: a fraction in [0, 1] of t's entries, or their number.
        default_mask: the mask so far, of t's shape.
        scores: () -> a Tensor of t's shape ranking its entries.
        largest: prune the largest scores (True) or the smallest.

    Returns:
        The new mask.
    """
    tensor_size = t.nelement()
    nparams_toprune = _compute_nparams_toprune(amount, tensor_size)
    _validate_pruning_amount(nparams_toprune, tensor_size)
    mask = default_mask.clone()
    if nparams_toprune != 0:
        topk = T.topk(scores().view(-1), k=nparams_toprune, largest=largest)
        mask.view(-1)[topk.indices] = 0
    return mask


def _channels_mask(t: Tensor, dim: int, amount, default_mask: Tensor, kept) -> Tensor:
    """Structured pruning: zeros of t's shape with ones over the channels along `dim` that
    `kept(n_channels, n_pruned)` keeps, times default_mask; default_mask itself when nothing
    is pruned.

    Args:
        t: the tensor (or importance scores), at least 2-D.
        dim: the channel dimension.
        amount: a fraction in [0, 1] of the channels, or their number.
        default_mask: the mask so far, of t's shape.
        kept: (n_channels, n_pruned) -> the kept channels, a boolean mask or indices (called
            also when nothing is pruned; its result is then unused).

    Returns:
        The new mask.
    """
    _validate_structured_pruning(t)
    _validate_pruning_dim(t, dim)
    tensor_size = t.shape[dim]
    nparams_toprune = _compute_nparams_toprune(amount, tensor_size)
    _validate_pruning_amount(nparams_toprune, tensor_size)
    keep = kept(tensor_size, nparams_toprune)
    if nparams_toprune == 0:
        return default_mask
    mask = T.zeros_like(t)
    slc = [slice(None)] * t.dim()
    slc[dim] = keep
    mask[tuple(slc)] = 1
    mask *= default_mask.to(dtype=mask.dtype)
    return mask


def identity(module: Module, name: str) -> Module:
    """Reparametrise `module.<name>` as pruned by an all-ones mask (PyTorch's `prune.identity`).

    Args:
        module: the module.
        name: the parameter's name.

    Returns:
        The module, modified in place.
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Prune `amount` random entries of `module.<name>`.

    Args:
        module: the module.
        name: the parameter's name.
        amount: a fraction in [0, 1] or a non-negative number of entries.

    Returns:
        The module, modified in place.
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores: Tensor | None = None) -> Module:
    """Prune the `amount` entries of `module.<name>` of smallest absolute value.

    Args:
        module: the module.
        name: the parameter's name.
        amount: a fraction in [0, 1] or a non-negative number of entries.
        importance_scores: ranks the entries instead of the parameter.

    Returns:
        The module, modified in place.
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    """Prune `amount` random channels of `module.<name>` along `dim`.

    Args:
        module: the module.
        name: the parameter's name.
        amount: a fraction in [0, 1] or a non-negative number of channels.
        dim: the channel dimension.

    Returns:
        The module, modified in place.
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Prune the `amount` channels of `module.<name>` along `dim` of smallest L`n` norm.

    Args:
        module: the module.
        name: the parameter's name.
        amount: a fraction in [0, 1] or a non-negative number of channels.
        n: the norm's order.
        dim: the channel dimension.
        importance_scores: ranks the entries instead of the parameter.

    Returns:
        The module, modified in place.
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores: dict | None = None, **kwargs) -> None:
    """Prune the entries of several parameters ranked together (e.g. the 20% smallest of a whole
    model's weights), with an unstructured method.

    Args:
        parameters: (module, name) pairs.
        pruning_method: an unstructured pruning method class (L1Unstructured, RandomUnstructured,
            or one of your own).
        importance_scores: {(module, name): tensor} ranking entries instead of the parameters.
        **kwargs: the method's arguments (amount=...).

    Returns:
        None (the modules are modified in place).

    Raises:
        TypeError: parameters is not iterable, importance_scores is not a dict, or the method is
            not unstructured.
    """
    if not isinstance(parameters, Iterable):
        raise FgradTypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise FgradTypeError("global_unstructured(): importance_scores must be of type dict")
    scores = T.cat([importance_scores.get((module, name), getattr(module, name)).reshape(-1)
                    for module, name in parameters])
    default_mask = T.cat([getattr(module, name + "_mask", None).reshape(-1)
                          if getattr(module, name + "_mask", None) is not None
                          else T.ones_like(getattr(module, name)).reshape(-1) for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise FgradTypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                             f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores.detach(), default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + num].view_as(param))
        pointer += num


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune `module.<name>` where `mask` is 0.

    Args:
        module: the module.
        name: the parameter's name.
        mask: a tensor of the parameter's shape.

    Returns:
        The module, modified in place.
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of `module.<name>` permanent and take off its reparametrisation.

    Args:
        module: the pruned module.
        name: the pruned parameter's name.

    Returns:
        The module, modified in place.

    Raises:
        ValueError: `module.<name>` is not pruned.
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise FgradValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether `module` or any of its submodules is pruned.

    Args:
        module: a Module.

    Returns:
        True or False.
    """
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real) or isinstance(amount, bool):
        raise FgradTypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise FgradValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
                              "integer")


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise FgradValueError(f"amount={amount} should be smaller than the number of parameters to "
                              f"prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    if len(t.shape) <= 1:
        raise FgradValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor "
                              f"of shape {t.shape} with {len(t.shape)} dims")


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    return amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise FgradIndexError(f"Invalid index {dim} for tensor of size {t.shape}")


for _cls in (BasePruningMethod, PruningContainer, Identity, RandomUnstructured, L1Unstructured, RandomStructured,
             LnStructured, CustomFromMask):
    _cls.__module__ = PUBLIC_NAME
