"""Complex parts: real, imag, conj and complex (two reals to one complex).

Derivative convention (JAX's): a complex number is a pair of reals, and a VJP is the
transpose of the JVP under the real pairing <a, b> = Re(sum(a * b)) -- no conjugation. So for
f: C -> R, grad f(z) = df/dx - i df/dy, and the VJP of a complex-linear map is its plain
transpose. Every rule in fgrad follows it: a holomorphic function's rule is its real one
(ct * f'(z), no conjugate), and the non-holomorphic ones (abs, real, imag, conj, the casts
between real and complex) are written as real-linear maps transposed under that pairing.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FgradTypeError
from ..core.primitive import Primitive
from ..core.rules import def_linear, elementwise_shape
from ..core.trace import aval_of
from ._batching import def_vectorized
from .elementwise import convert_element_type, mul, neg, sum_to_shape
from .shape import broadcast_in_dim

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}


def real_dtype(dtype) -> np.dtype:
    """The real dtype of a complex one (complex64 -> float32); real dtypes map to themselves."""
    dtype = np.dtype(dtype)
    return _REAL_OF.get(dtype, dtype)


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype of a float one (float32 -> complex64); complex dtypes map to
    themselves, and other dtypes (integers, float16) to complex128, as NumPy's FFTs do."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return dtype
    return _COMPLEX_OF.get(dtype, np.dtype(np.complex128))


def _complex_operand(name, x):
    if x.dtype.kind != "c":
        raise FgradTypeError(f"{name}: expected a complex operand, got dtype {x.dtype} "
                        "(fgrad.numpy handles real arguments before binding)")


def _part_aval(name):
    def aval(x):
        _complex_operand(name, x)
        return ShapedArray(x.shape, _REAL_OF[x.dtype])
    return aval


real_p = Primitive("real")
imag_p = Primitive("imag")
conj_p = Primitive("conj")
complex_p = Primitive("complex")


def real(x):
    """Real part of a complex array (a float array of the matching precision)."""
    _complex_operand("real", aval_of(x))
    return real_p.bind(x)


def imag(x):
    """Imaginary part of a complex array."""
    _complex_operand("imag", aval_of(x))
    return imag_p.bind(x)


def conj(x):
    """Complex conjugate of a complex array."""
    _complex_operand("conj", aval_of(x))
    return conj_p.bind(x)


def complex(x, y):
    """x + i y from two float arrays of one dtype and shape (or 0-d beside either)."""
    _complex_aval(aval_of(x), aval_of(y))
    return complex_p.bind(x, y)


def _complex_aval(x, y):
    if x.dtype != y.dtype or x.dtype not in _COMPLEX_OF:
        raise FgradTypeError(f"complex: expected two float32 or float64 operands of one dtype, got {x.dtype} "
                        f"and {y.dtype} (fgrad.numpy promotes before binding)")
    return ShapedArray(elementwise_shape("complex", (x, y)), _COMPLEX_OF[x.dtype])


def _zeros_like(x):
    a = aval_of(x)
    return broadcast_in_dim(np.zeros((), a.dtype), a.shape, ())


def _conj_aval(x):
    _complex_operand("conj", x)
    return ShapedArray(x.shape, x.dtype)


real_p.def_impl(lambda x, *, xp: xp.real(x).copy())
real_p.def_abstract_eval(_part_aval("real"))
# <ct, Re t> = Re(ct * t) for real ct: the cotangent is ct + 0i
def_linear(real_p, lambda ct, x_aval: complex(ct, _zeros_like(ct)))

imag_p.def_impl(lambda x, *, xp: xp.imag(x).copy())
imag_p.def_abstract_eval(_part_aval("imag"))
# <ct, Im t> = Re((-i ct) * t): the cotangent is 0 - i ct
def_linear(imag_p, lambda ct, x_aval: complex(_zeros_like(ct), neg(ct)))

conj_p.def_impl(lambda x, *, xp: xp.conj(x))
conj_p.def_abstract_eval(_conj_aval)
# Re(ct * conj(t)) = Re(conj(ct) * t)
def_linear(conj_p, lambda ct, x_aval: conj(ct))


def _complex_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = complex(x, y)
    if x_dot is None and y_dot is None:
        return out, None
    x_dot = _zeros_like(x) if x_dot is None else x_dot
    y_dot = _zeros_like(y) if y_dot is None else y_dot
    return out, complex(x_dot, y_dot)


# Re(ct * (tx + i ty)) = Re(ct) tx - Im(ct) ty
complex_p.def_impl(lambda x, y, *, xp: _complex_impl(x, y, xp))
complex_p.def_abstract_eval(_complex_aval)
complex_p.def_jvp(_complex_jvp)
complex_p.def_vjp(lambda needs, ct, out, x, y: [
    sum_to_shape(real(ct), aval_of(x).shape) if needs[0] else None,
    sum_to_shape(neg(imag(ct)), aval_of(y).shape) if needs[1] else None])


def _complex_impl(x, y, xp):
    x, y = xp.asarray(x), xp.asarray(y)
    out = xp.empty(xp.broadcast_shapes(x.shape, y.shape), _COMPLEX_OF[x.dtype])
    out.real = x
    out.imag = y
    return out


def abs_squared(x):
    """|x|^2 element-wise, real (x * conj(x) for complex x, x * x for real): smooth at 0 at
    every order, unlike abs(x) ** 2, so norms and variances of complex values use it."""
    if aval_of(x).dtype.kind != "c":
        return mul(x, x)
    # the real part, by the complex-to-real cast (its rules take the real part, as JAX's)
    return convert_element_type(mul(x, conj(x)), _REAL_OF[aval_of(x).dtype])


for _p in (real_p, imag_p, conj_p, complex_p):
    def_vectorized(_p)

__all__ = ["real", "real_p", "imag", "imag_p", "conj", "conj_p", "complex", "complex_p",
           "real_dtype", "complex_dtype", "abs_squared"]
