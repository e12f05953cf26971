"""PyTorch's legacy typed constructors: `fgrad.torch.FloatTensor(2, 3)`, `fgrad.torch.LongTensor([1, 2])`,
`isinstance(x, fgrad.torch.FloatTensor)` and `x.type(fgrad.torch.DoubleTensor)`. Each is a Tensor
subclass whose constructor makes a plain Tensor of its dtype and whose isinstance check
tests the dtype, as PyTorch's are."""
from __future__ import annotations

from ._tensor import _dtypes as D
from ._tensor.tensor import Tensor


class _LegacyType(type(Tensor)):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype and obj.device.type == "cpu"


def _legacy(name: str, dt) -> type:
    def __new__(cls, *data, device=None):
        """Sizes give an uninitialised (zero-filled) tensor, data a copy in this dtype."""
        return Tensor(*data, dtype=dt, device=device)
    return _LegacyType(name, (Tensor,), {"__slots__": (), "__new__": __new__, "_dtype": dt,
                                         "__doc__": f"Legacy constructor of {dt} tensors."})


FloatTensor = _legacy("FloatTensor", D.float32)
DoubleTensor = _legacy("DoubleTensor", D.float64)
HalfTensor = _legacy("HalfTensor", D.float16)
LongTensor = _legacy("LongTensor", D.int64)
IntTensor = _legacy("IntTensor", D.int32)
ShortTensor = _legacy("ShortTensor", D.int16)
CharTensor = _legacy("CharTensor", D.int8)
ByteTensor = _legacy("ByteTensor", D.uint8)
BoolTensor = _legacy("BoolTensor", D.bool)
BFloat16Tensor = _legacy("BFloat16Tensor", D.bfloat16)

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
           "ByteTensor", "BoolTensor", "BFloat16Tensor"]
