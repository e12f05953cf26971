"""Backends: array namespaces and kernel overrides. `numba_kernels` holds the Numba CPU
kernels (impl overrides and fused optimiser updates); it is imported by the modules that use
it and imports Numba only when a kernel is first needed."""
