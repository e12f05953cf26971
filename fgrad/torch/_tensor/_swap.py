"""torch.utils.swap_tensors on fgrad.torch: two Tensor objects exchange everything they hold.

A Tensor's state is its slots (value, autograd node, requires_grad, grad, version counter, hooks,
view record), its class and its `__dict__` (a subclass's attributes). Swapping all three leaves
every other reference to either object (a module's parameter dict, an optimizer's param group)
seeing the other's contents, which is how PyTorch's conversions keep parameter identities.
"""
from __future__ import annotations

import copyreg
import weakref

from ...core.errors import FgradRuntimeError, FgradTypeError
from .tensor import Tensor, live_node

__all__ = ["swap_tensors"]


def _slots(cls: type) -> set[str]:
    """Every slot of `cls` and its bases, but the weak-reference one (each object keeps its own
    weak references)."""
    names = set()
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
    names.update(copyreg._slotnames(cls))
    return names - {"__weakref__", "__dict__"}


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Exchange the contents of `t1` and `t2`: values, shapes, dtypes, autograd state, class and
    attributes; afterwards `t1` is what `t2` was and the other way round (PyTorch's
    `torch.utils.swap_tensors`).

    Args:
        t1: a Tensor.
        t2: a Tensor.

    Returns:
        None.

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: a tensor has weak references (they could not follow), the two classes
            have different slots, or a leaf is an input of a live autograd graph (its gradient
            would be delivered to the other object).
    """
    for name, t in (("t1", t1), ("t2", t2)):
        if not isinstance(t, Tensor):
            raise FgradTypeError(f"swap_tensors: {name} must be a Tensor, got {type(t).__name__}")
    if t1 is t2:
        return
    for name, t in (("t1", t1), ("t2", t2)):
        if weakref.getweakrefs(t):
            raise FgradRuntimeError(f"Cannot swap {name} because it has weakref associated with it")
        if t._node is None and live_node(t) is not None:
            raise FgradRuntimeError(
                f"Cannot swap {name}: it is a leaf that a live autograd graph uses (its AccumulateGrad node "
                f"holds it), so backward would deliver its gradient to the other tensor. Run backward or drop "
                f"the graph (del the outputs) before swapping.")
    slots1, slots2 = _slots(type(t1)), _slots(type(t2))
    if slots1 != slots2:
        raise FgradRuntimeError("Cannot swap t1 and t2 if they have different slots: "
                                f"{type(t1).__name__} has {sorted(slots1 - slots2)}, "
                                f"{type(t2).__name__} has {sorted(slots2 - slots1)}")
    cls1, cls2 = type(t1), type(t2)
    d1 = t1.__dict__ if hasattr(t1, "__dict__") else None
    d2 = t2.__dict__ if hasattr(t2, "__dict__") else None
    t1.__class__, t2.__class__ = cls2, cls1
    if d1 is not None and d2 is not None:
        t1.__dict__, t2.__dict__ = d2, d1
    missing = object()
    for slot in slots1:
        a, b = getattr(t1, slot, missing), getattr(t2, slot, missing)
        for t, v in ((t1, b), (t2, a)):
            if v is missing:
                if hasattr(t, slot):
                    delattr(t, slot)
            else:
                setattr(t, slot, v)
