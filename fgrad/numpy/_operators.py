"""Python operators and array methods on tracers, all routed to fgrad.numpy."""
from __future__ import annotations

from ..core.trace import Tracer


_module = []


def _fnp():
    if not _module:
        from .. import numpy
        _module.append(numpy)
    return _module[0]


def _binop(name, reverse=False):
    if reverse:
        return lambda self, other: getattr(_fnp(), name)(other, self)
    return lambda self, other: getattr(_fnp(), name)(self, other)


_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "fmod", "pow": "power", "matmul": "matmul"}
for dunder, fn in _BINARY.items():
    setattr(Tracer, f"__{dunder}__", _binop(fn))
    setattr(Tracer, f"__r{dunder}__", _binop(fn, reverse=True))
for dunder, fn in {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                   "eq": "equal", "ne": "not_equal", "and": "logical_and", "or": "logical_or",
                   "xor": "logical_xor"}.items():
    setattr(Tracer, f"__{dunder}__", _binop(fn))
Tracer.__hash__ = object.__hash__
Tracer.__neg__ = lambda self: _fnp().negative(self)
Tracer.__pos__ = lambda self: self
Tracer.__abs__ = lambda self: _fnp().abs(self)
Tracer.__invert__ = lambda self: _fnp().logical_not(self)
Tracer.__getitem__ = lambda self, idx: _fnp().getitem(self, idx)
Tracer.T = property(lambda self: _fnp().transpose(self))


def _method(name):
    return lambda self, *args, **kwargs: getattr(_fnp(), name)(self, *args, **kwargs)


for _name in ("sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin", "cumsum",
              "transpose", "squeeze", "ravel", "clip", "dot", "swapaxes", "repeat", "take", "flatten"):
    setattr(Tracer, _name, _method(_name))
Tracer.reshape = lambda self, *shape: _fnp().reshape(self, shape[0] if len(shape) == 1 else shape)
Tracer.astype = lambda self, dtype: _fnp().astype(self, dtype)
