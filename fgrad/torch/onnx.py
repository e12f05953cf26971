"""`torch.onnx` under fgrad: importable, so scripts that import it run; exporting is not
supported (fgrad has no ONNX writer) and says what to do instead."""
from __future__ import annotations

from typing import Any

from ..core.errors import FgradNotImplementedError


def export(model: Any, args: Any = None, f: Any = None, *unused: Any, **kwargs: Any) -> None:
    """Raises NotImplementedError: fgrad cannot write ONNX graphs."""
    raise FgradNotImplementedError(
        "fgrad.torch.onnx.export: fgrad has no ONNX exporter (it would need an ONNX writer for fgrad's IR, "
        "which does not exist yet). Save the weights with fgrad.torch.save(model.state_dict(), path), load them "
        "into the same model under PyTorch (torch.load reads them after converting with numpy), and export "
        "there; or inspect the traced program with fgrad.make_jaxpr.")


def is_in_onnx_export() -> bool:
    """Always False: fgrad has no ONNX exporter (PyTorch's torch.onnx.is_in_onnx_export).

    Returns:
        False.
    """
    return False
