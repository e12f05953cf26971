"""torch.set_default_device / torch.get_default_device on fgrad.torch.

fgrad's factories (`torch.ones`, `torch.tensor`, ...) make CPU tensors unless given `device=`,
so the CPU is the one default device fgrad honours: `set_default_device("cpu")` (what scripts
call when no accelerator is found) and `set_default_device(None)` work, and any other device
raises, saying to pass `device=` or call `.to(device)` instead, rather than being recorded and
silently ignored by the factories.
"""
from __future__ import annotations

from ..core.errors import FgradNotImplementedError
from ._tensor._device import CPU, as_device, device

__all__ = ["get_default_device", "set_default_device"]

_STATE = {"device": CPU}


def set_default_device(device: device | str | int | None) -> None:
    """Set the device factories allocate on when not given one (fgrad: the CPU only).

    Args:
        device: "cpu", a cpu `torch.device`, or None (back to the CPU).

    Returns:
        None.

    Raises:
        NotImplementedError: for any device other than the CPU.
        RuntimeError: for a string that names no device.
    """
    d = CPU if device is None else as_device(device)
    if d.type != "cpu":
        raise FgradNotImplementedError(
            f"set_default_device({str(d)!r}): fgrad's factories allocate on the CPU unless given "
            f"a device; pass device={str(d)!r} to them or move tensors and modules with "
            f".to({str(d)!r}) instead.")
    _STATE["device"] = d


def get_default_device() -> device:
    """The device factories allocate on when not given one: `device(type='cpu')`.

    Returns:
        The default device.
    """
    return _STATE["device"]
