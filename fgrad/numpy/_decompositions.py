"""The decompositions of fgrad.numpy.linalg: eigh, eigvalsh, eig, eigvals, svd, svdvals, qr,
with NumPy's signatures and result types (EighResult, SVDResult, QRResult, EigResult).

Derivatives (fgrad.ops.decompositions): where eigenvalues (singular values) repeat, the
derivative of the vectors is undefined and comes out inf/NaN; functions of the values alone
stay finite there. eig and eigvals are always complex (as in JAX). All of them take complex
matrices (eigh and eigvalsh: Hermitian ones), with JAX's derivatives (tests/numpy/test_linalg_complex.py).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..core.avals import float_dtype
from ..core.errors import FgradValueError, ShapeError
from ..ops import decompositions as dec
from ..ops import elementwise as ew
from ..ops import linalg as la
from ._util import as_value, aval_of, cast, dtype_of

__all__ = ["eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "EighResult", "EigResult",
           "SVDResult", "QRResult"]

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = namedtuple("QRResult", ["Q", "R"])


def _float_matrix(x, name: str, square: bool):
    """x as a floating-point (real or complex) matrix or stack, checked for shape."""
    x = as_value(x, name)
    x = cast(x, float_dtype(dtype_of(x)))
    shape = aval_of(x).shape
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        want = "a square matrix or a stack of them (shape (..., n, n))" if square else \
            "a matrix or a stack of them (shape (..., m, n))"
        raise ShapeError(f"{name}: expected {want}, got shape {shape}")
    return x


def _uplo(UPLO: str, name: str) -> bool:
    if UPLO not in ("L", "U"):
        raise FgradValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


def _symmetrized(a):
    """(a + a^H) / 2: the Hermitian (real: symmetric) part, as JAX's symmetrize_input."""
    return ew.mul(ew.add(a, la.matrix_adjoint(a)), ew.const(a, 0.5))


def eigh(a: Any, UPLO: str = "L", *, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending, real) and orthonormal eigenvectors (columns) of a real symmetric
    or complex Hermitian matrix (or stack). As in JAX, the input is symmetrised,
    (a + a^H) / 2, so the gradient is Hermitian; with symmetrize_input=False only the UPLO
    triangle is read, as NumPy reads it (and, as LAPACK, the real part of the diagonal).
    Complex eigenvectors are unique up to a phase each: only functions invariant under it
    (|v|, v v^H, ...) have a derivative that does not depend on LAPACK's choice."""
    lower = _uplo(UPLO, "eigh")
    a = _float_matrix(a, "eigh", square=True)
    w, v = dec.eigh(_symmetrized(a) if symmetrize_input else a, lower)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str = "L", *, symmetrize_input: bool = True) -> Any:
    """Eigenvalues (ascending, real) of a real symmetric or complex Hermitian matrix (or
    stack); see eigh. Their gradient is finite also where eigenvalues repeat."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def eig(a: Any) -> EigResult:
    """Eigenvalues and unit-norm eigenvectors of a general square matrix (or stack), always
    complex (NumPy returns real arrays when every eigenvalue is real, a dtype that depends on
    the values and so cannot be traced; JAX returns complex, as here)."""
    x = as_value(a, "eig")
    x = cast(x, float_dtype(dtype_of(x)))
    shape = aval_of(x).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"eig: expected a square matrix or a stack of them (shape (..., n, n)), got shape {shape}")
    w, v = dec.eig(x)
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """Eigenvalues of a general square matrix (or stack), complex (see eig)."""
    return eig(a).eigenvalues


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """Singular value decomposition a = U @ diag(S) @ Vh of a real or complex matrix (or
    stack), S real and descending; with compute_uv=False only S. With full_matrices (NumPy's
    default) and a non-square matrix, U or Vh holds extra columns spanning the orthogonal
    complement, whose derivative keeps them orthogonal to the rest and is otherwise zero (the
    complement has no unique basis: only functions of its span, like U_perp @ U_perp^H, have a
    derivative). Complex singular vectors are unique up to a phase per pair (u_i, v_i): the
    derivative follows JAX's gauge (V^H dV has a zero diagonal), and only gauge-invariant
    functions (|U|, U diag(S) Vh, projections) have derivatives independent of it.
    `hermitian` is accepted for NumPy's signature; the general algorithm serves both."""
    a = _float_matrix(a, "svd", square=False)
    if not compute_uv:
        return dec.svd(a, False)[1]
    u, s, vh = dec.svd(a, bool(full_matrices))
    return SVDResult(u, s, vh)


def svdvals(x: Any) -> Any:
    """The singular values (real, descending) of a real or complex matrix (or stack). Their
    gradient is finite also where they repeat."""
    return svd(x, compute_uv=False)


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition of a real or complex matrix (or stack; R's diagonal is real, as
    LAPACK's): mode 'reduced' (Q (m, k), R (k, n),
    k = min(m, n)), 'complete' (Q (m, m), R (m, n)) or 'r' (R alone). The derivative needs the
    leading min(m, n) columns linearly independent; with 'complete' and m > n the extra
    columns of Q move only as much as staying orthogonal to the rest requires."""
    if mode not in ("reduced", "complete", "r"):
        raise FgradValueError(f"qr: mode {mode!r} is not supported; use 'reduced', 'complete' or 'r' "
                              "('raw' returns LAPACK's Householder reflectors, which fgrad does not expose)")
    a = _float_matrix(a, "qr", square=False)
    q, r = dec.qr(a, mode == "complete")
    return r if mode == "r" else QRResult(q, r)
