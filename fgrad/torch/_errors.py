"""The PyTorch door's own error classes: PyTorch's names for errors only fgrad.torch raises
(the functional core's classes, which these derive from, are in fgrad/core/errors.py, which
knows nothing of PyTorch)."""
from __future__ import annotations

from ..core.errors import FgradError, FgradRuntimeError, FgradValueError


class CheckpointError(FgradRuntimeError):
    """torch.utils.checkpoint.CheckpointError: a recomputation did not reproduce the forward
    pass (raised by fgrad.torch.utils.checkpoint)."""


class TraceError(FgradValueError):
    """torch.fx.proxy.TraceError: a symbolically traced program did something a symbolic
    value cannot stand for (control flow on it, iterating it); raised by fgrad.torch.fx."""


class OutOfMemoryError(FgradRuntimeError):
    """torch.OutOfMemoryError (also torch.cuda.OutOfMemoryError): a device could not allocate
    memory; scripts catch it to retry with smaller batches."""


class AcceleratorError(FgradRuntimeError):
    """torch.AcceleratorError: an accelerator (GPU) reported a failure."""


class FatalError(FgradError):
    """torch.FatalError: an unrecoverable internal error (an Exception, not a RuntimeError, as
    PyTorch's)."""
