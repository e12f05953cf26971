"""Compare what a documentation cell printed under fgrad with what JAX printed.

Array reprs differ in their wrapper (``Array(..., dtype=float32)`` against fgrad's) and
fgrad computes in float64 where JAX defaults to float32, so outputs are compared by the
numbers they contain, in order, to a relative tolerance; dtype and shape annotations are
dropped first, being formatting rather than values.
"""
from __future__ import annotations

import math
import re

# dtype names and jaxpr-style shape annotations (f32[3,4]) hold digits that are not values,
# and so do tracer reprs (JAX's JitTracer(~float32[]), fgrad's Traced<f32[]>with<jit#1>).
_NOISE = re.compile(r"Traced<[^>]*>with<[^>]*>|\b\w*Tracer\([^)]*\)|\b(?:bfloat16|float\d+|int\d+|uint\d+|complex\d+|[fisuc]\d+(?=\[)|bf16)"
                    r"(?:\[[\d,\s]*\])?|\bat 0x[0-9a-f]+|\bx64\b|\bdtype=\w+")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?j?|[-+]?\b(?:nan|inf)\b")


def numbers(text: str) -> list[complex]:
    """The numeric values in ``text``, in order (a trailing ``j`` makes one imaginary).

    Args:
        text: printed output.
    Returns:
        One complex per number found (real ones with zero imaginary part).
    """
    out = []
    for tok in _NUMBER.findall(_NOISE.sub(" ", text)):
        tok = tok.strip()
        out.append(complex(tok.replace("j", "")) * 1j if tok.endswith("j") else complex(float(tok)))
    return out


def same_output(got: str, want: str, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Whether two printed outputs hold the same numbers, to ``rtol`` (and ``atol`` near 0).

    Args:
        got: fgrad's printed output.
        want: JAX's printed output.
        rtol: relative tolerance on each number.
        atol: absolute tolerance, for values printed near zero.
    Returns:
        True when both hold as many numbers and each pair is close; outputs with no numbers
        at all compare equal (their text is formatting: reprs of functions, tracers).
    """
    a, b = numbers(got), numbers(want)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        for u, v in ((x.real, y.real), (x.imag, y.imag)):
            if math.isnan(u) and math.isnan(v):
                continue
            if u == v:
                continue
            if not abs(u - v) <= atol + rtol * abs(v):
                return False
    return True
