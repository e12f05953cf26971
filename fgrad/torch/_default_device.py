"""torch.set_default_device / torch.get_default_device on fgrad.torch.

fgrad's factories (`torch.ones`, `torch.tensor`, ...) allocate on the default device when not
given `device=`: the CPU, or the meta device (`set_default_device("meta")`, or a
`with torch.device("meta"):` block). A GPU as the default raises, saying to pass `device=` or
call `.to(device)` instead, rather than being recorded and silently ignored by the factories.
"""
from __future__ import annotations

from ._tensor._device import CPU, DEFAULT, as_device, device, set_default

__all__ = ["get_default_device", "set_default_device"]


def set_default_device(device: device | str | int | None) -> None:
    """Set the device factories allocate on when not given one: the CPU or the meta device.

    Args:
        device: "cpu", "meta", such a `torch.device`, or None (back to the CPU).

    Returns:
        None.

    Raises:
        NotImplementedError: for a GPU (fgrad's factories allocate there only when given device=).
        RuntimeError: for a string that names no device.
    """
    set_default(CPU if device is None else as_device(device), outside=True)


def get_default_device() -> device:
    """The device factories allocate on when not given one (`device(type='cpu')` unless set).

    Returns:
        The default device.
    """
    return DEFAULT[0]
