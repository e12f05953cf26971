"""Compare what a documentation cell printed under fgrad with what JAX printed.

Array reprs differ in their wrapper (``Array(..., dtype=float32)`` against fgrad's) and
fgrad computes in float64 where JAX defaults to float32, so outputs are compared by the
numbers they contain, in order, to a relative tolerance, and by their words, in order (a
side effect printed once more shows there); dtype and shape annotations and the words of
array reprs are dropped first, being formatting rather than values.
"""
from __future__ import annotations

import math
import re

# dtype names and jaxpr-style shape annotations (f32[3,4]) hold digits that are not values,
# and so do tracer reprs (JAX's JitTracer(~float32[]), fgrad's Traced<f32[]>with<jit#1>).
_NOISE = re.compile(r"Traced<[^>]*>with<[^>]*>|\b\w*Tracer\([^)]*\)|\b(?:bfloat16|float\d+|int\d+|uint\d+|complex\d+|[fisuc]\d+(?=\[)|bf16)"
                    r"(?:\[[\d,\s]*\])?|\bat 0x[0-9a-f]+|\bx64\b|\bdtype=\w+|\bweak_type=\w+")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?j?|[-+]?\b(?:nan|inf)\b"
                     r"|\b(?:True|False)\b")
_BOOL = {"True": 1.0, "False": 0.0}


def numbers(text: str) -> list[complex]:
    """The numeric values in ``text``, in order (a trailing ``j`` makes one imaginary;
    True and False count as 1 and 0).

    Args:
        text: printed output.
    Returns:
        One complex per number found (real ones with zero imaginary part).
    """
    out = []
    for tok in _NUMBER.findall(_NOISE.sub(" ", text)):
        tok = tok.strip()
        if tok in _BOOL:
            out.append(complex(_BOOL[tok]))
            continue
        out.append(complex(tok.replace("j", "")) * 1j if tok.endswith("j") else complex(float(tok)))
    return out


# Words of array reprs: JAX's ``Array(..., dtype=float32)``, NumPy's ``array(...)``/``np.int64(3)``.
_REPR_WORDS = {"Array", "array", "np", "dtype", "weak_type"}
_WORD = re.compile(r"[A-Za-z_]\w+")


def words(text: str) -> list[str]:
    """The words of ``text`` in order, less numbers, dtype/shape annotations and repr words.

    Args:
        text: printed output.
    Returns:
        The words, as a list.
    """
    return [w for w in _WORD.findall(_NOISE.sub(" ", text)) if w not in _REPR_WORDS]


def same_output(got: str, want: str, rtol: float = 1e-5, atol: float = 1e-6,
                compare_words: bool = True) -> bool:
    """Whether two printed outputs hold the same numbers, to ``rtol`` (and ``atol`` near 0).

    Args:
        got: fgrad's printed output.
        want: JAX's printed output.
        rtol: relative tolerance on each number.
        atol: absolute tolerance, for values printed near zero.
        compare_words: also require the same words (see ``words``).
    Returns:
        True when both hold as many numbers, each pair close, and (compare_words) the same
        words.
    """
    a, b = numbers(got), numbers(want)
    if len(a) != len(b) or (compare_words and words(got) != words(want)):
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
