"""Registry cases (format: tests/ops/test_primitives.py) for fgrad.numpy.fft and the complex parts
(real, imag, conj).

The transforms produce complex values, and fgrad's transforms do not yet differentiate
through complex values (DifferentiationError), so these cases check values, dtypes, jit,
abstract_eval and vmap ("grad": False); the derivative rules of the fft, rfft, irfft, real,
imag, conj and complex primitives are checked on their own in tests/ops/test_fft.py. fftshift
and ifftshift of real arrays are differentiated here."""
import numpy as np

import fgrad.numpy as fnp
from tests.cases.linalg import normal

NO_GRAD = {"grad": False, "rtol": 1e-9}
NO_GRAD_F32 = {"grad": False, "rtol": 1e-9, "f32": True}


def complex_normal(*shapes):
    """args maker: complex arrays (complex128, or complex64 for the float32 check)."""
    def make(rng, dt):
        cdt = np.complex64 if np.dtype(dt) == np.float32 else np.complex128
        return tuple((rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(cdt) for s in shapes)
    return make


def _both(name, **kw):
    """(fgrad.numpy.fft.<name>, numpy.fft.<name>) with the same keyword arguments."""
    return (lambda x: getattr(fnp.fft, name)(x, **kw)), (lambda x: getattr(np.fft, name)(x, **kw))


def case(label, name, args, options=NO_GRAD, **kw):
    fn, ref = _both(name, **kw)
    return (f"fft.{name}[{label}]", fn, ref, args, options)


CASES = [
    case("real_input", "fft", normal((3, 8)), NO_GRAD_F32),
    case("complex_n_axis_ortho", "fft", complex_normal((4, 5)), n=7, axis=0, norm="ortho"),
    case("crop_forward", "ifft", complex_normal((2, 6)), NO_GRAD_F32, n=4, norm="forward"),
    case("all_axes", "fftn", complex_normal((2, 3, 4))),
    case("s_axes", "ifftn", complex_normal((3, 4, 5)), s=(5, 2), axes=(2, 0)),
    case("default", "fft2", normal((2, 4, 6))),
    case("s", "ifft2", complex_normal((3, 5)), s=(4, 4), norm="ortho"),
    case("even", "rfft", normal((3, 8)), NO_GRAD_F32),
    case("odd_n_axis", "rfft", normal((7, 2)), n=9, axis=0),
    case("default", "irfft", complex_normal((2, 5)), NO_GRAD_F32),
    case("odd_n_ortho", "irfft", complex_normal((4, 3)), n=7, axis=0, norm="ortho"),
    case("real_input", "irfft", normal((3, 5))),
    case("axes", "rfftn", normal((4, 3, 6)), axes=(2, 0)),
    case("s", "irfftn", complex_normal((3, 4, 4)), s=(2, 4, 6), axes=(0, 1, 2), norm="forward"),
    case("default", "rfft2", normal((2, 6, 5))),
    case("s", "irfft2", complex_normal((4, 3)), s=(4, 5)),
    case("default", "hfft", complex_normal((2, 5))),
    case("n_ortho", "ihfft", normal((3, 6)), n=5, norm="ortho"),
    ("fft.fftshift", fnp.fft.fftshift, np.fft.fftshift, normal((3, 4))),
    ("fft.ifftshift[axes]", lambda x: fnp.fft.ifftshift(x, axes=(0, 2)), lambda x: np.fft.ifftshift(x, axes=(0, 2)),
     normal((3, 2, 5))),
    ("fft.fftshift[complex]", fnp.fft.fftshift, np.fft.fftshift, complex_normal((5,)), NO_GRAD),
    ("real[complex]", fnp.real, np.real, complex_normal((2, 3)), NO_GRAD_F32),
    ("imag[complex]", fnp.imag, np.imag, complex_normal((2, 3)), NO_GRAD_F32),
    ("conj[complex]", fnp.conj, np.conj, complex_normal((2, 3)), NO_GRAD_F32),
    ("conjugate[complex]", fnp.conjugate, np.conjugate, complex_normal((4,)), NO_GRAD),
    ("real", fnp.real, np.real, normal((2, 3))),
    ("imag", fnp.imag, np.imag, normal((2, 3)), {"grad": False}),
]
