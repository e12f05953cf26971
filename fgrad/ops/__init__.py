"""Primitives by family (shape, elementwise, reduce, cumulative, index, linalg, decompositions,
matrix_functions, complex, fft, convolve, special_* (SciPy's special functions), nn), each
defined in one block with its implementation, shape rule, derivative rules and batching rule.

Layers, bottom up: shape.py (shape primitives and the axis moves batching rules use), then
_batching.py (the loop and elementwise batching rules), elementwise.py (with the rule helpers
written with add and mul), reduce.py, and the rest. Two imports run inside a function because
the cycle is real: broadcast_in_dim's transpose and elementwise cotangents of 0-d operands need
reduce_sum, while reduce.py is built on shape.py and elementwise.py."""
