"""Backends: array namespaces and kernel overrides. `numba_kernels` holds the Numba CPU
kernels (impl overrides and fused optimiser updates); it is imported by the modules that use
it and imports Numba only when a kernel is first needed."""

import contextlib as _contextlib
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


@_contextlib.contextmanager
def _cudnn_flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
                 deterministic: bool = False, allow_tf32: bool = True, fp32_precision: str = "none",
                 depthwise_kernel: str = "auto"):
    """torch.backends.cudnn.flags: set the cuDNN switches for the `with` block, then restore them
    (they change nothing in fgrad, which has no cuDNN; scripts set them around GPU-free code too).

    Args:
        enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision,
            depthwise_kernel: the values of torch.backends.cudnn's switches inside the block.

    Returns:
        A context manager.
    """
    new = dict(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
               deterministic=deterministic, allow_tf32=allow_tf32, fp32_precision=fp32_precision,
               depthwise_kernel=depthwise_kernel)
    saved = {k: getattr(cudnn, k) for k in new}
    cudnn.__dict__.update(new)
    try:
        yield
    finally:
        cudnn.__dict__.update(saved)


cudnn.flags = _cudnn_flags
cudnn.benchmark_limit, cudnn.fp32_precision, cudnn.depthwise_kernel = 10, "none", "auto"
mps = _flags("mps", "Apple MPS (not a fgrad back end).", is_available=_false, is_built=_false)
cpu = _flags("cpu", "The CPU back end.", get_cpu_capability=_cpu_capability)
cuda = _flags("cuda", "CUDA switches (accepted; fgrad's GPU path is CuPy).",
              matmul=_flags("cuda.matmul", "", allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
              is_built=_false)


def _opt_einsum_module():
    """The opt_einsum package when it is installed, else None (PyTorch's get_opt_einsum).

    Returns:
        The module, or None.
    """
    try:
        import opt_einsum as module  # optional dependency: einsum paths for 3+ operands where installed
    except ImportError:
        return None
    return module


def _opt_einsum_available() -> bool:
    """Whether the opt_einsum package is installed (PyTorch's opt_einsum.is_available).

    Returns:
        True when it imports.
    """
    return _opt_einsum_module() is not None


# torch.einsum of three or more operands contracts along opt_einsum's path when the package
# is installed and `enabled` (left to right otherwise); fgrad.torch.einsum follows the same switch
opt_einsum = _flags("opt_einsum", "", enabled=True, is_available=_opt_einsum_available,
                    get_opt_einsum=_opt_einsum_module,
                    strategy="auto" if _opt_einsum_available() else None)
