"""Backends: array namespaces and kernel overrides. `numba_kernels` holds the Numba CPU
kernels (impl overrides and fused optimiser updates); it is imported by the modules that use
it and imports Numba only when a kernel is first needed."""

import types as _types


def _flags(name: str, doc: str, **values) -> _types.ModuleType:
    ns = _types.ModuleType(f"fgrad.torch.backends.{name}", doc)
    ns.__dict__.update(values)
    return ns


def _false() -> bool:
    """False: fgrad has no such back end (PyTorch's is_available / is_built for it).

    Returns:
        False.
    """
    return False


def _true() -> bool:
    """True: the back end is available (PyTorch's is_available for it).

    Returns:
        True.
    """
    return True


def _no_version() -> None:
    """None: fgrad does not use cuDNN, so there is no cuDNN version (PyTorch returns None
    without cuDNN too).

    Returns:
        None.
    """
    return None


def _cpu_capability() -> str:
    """The CPU capability PyTorch would report; fgrad's kernels do not dispatch on it.

    Returns:
        "DEFAULT".
    """
    return "DEFAULT"


# PyTorch's backend switches, so that scripts setting them run: fgrad has no cuDNN, MPS or
# TF32, and its CPU kernels are deterministic, so the flags are kept but change nothing.
cudnn = _flags("cudnn", "cuDNN switches (accepted; fgrad does not use cuDNN).", enabled=True, benchmark=False,
               deterministic=False, allow_tf32=True, is_available=_false, version=_no_version)
mps = _flags("mps", "Apple MPS (not a fgrad back end).", is_available=_false, is_built=_false)
cpu = _flags("cpu", "The CPU back end.", get_cpu_capability=_cpu_capability)
cuda = _flags("cuda", "CUDA switches (accepted; fgrad's GPU path is CuPy).",
              matmul=_flags("cuda.matmul", "", allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
              is_built=_false)
opt_einsum = _flags("opt_einsum", "", enabled=True, is_available=_true, strategy="auto")
