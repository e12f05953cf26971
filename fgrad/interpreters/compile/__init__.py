"""jit's compiler: a ClosedJaxpr becomes one generated Python function in which maximal
regions of element-wise equations run as fused LLVM kernels (kernels.py, llvm_kernels.py), 0-d float64 regions
as plain Python, and every other equation as a direct call of its primitive's impl
(program.py; the partition is regions.py, the per-equation lowering scalar.py).

Element-wise primitives describe themselves with `Primitive.def_lowering`; a primitive
without a lowering (or without one for its operand dtypes) runs through its impl.
"""
from __future__ import annotations

from .kernels import STATS, cache_dir
from .program import Program
from .regions import MIN_KERNEL_EQNS

__all__ = ["MIN_KERNEL_EQNS", "STATS", "Program", "cache_dir"]
