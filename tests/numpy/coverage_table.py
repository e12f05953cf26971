"""The differentiation coverage table, docs/numpy-coverage.md: for every function of NumPy
(numpy, numpy.linalg, numpy.fft) and SciPy (scipy.special, scipy.stats, scipy.linalg,
scipy.signal, scipy.integrate) that HIPS autograd or JAX differentiates, whether fgrad, HIPS
autograd and JAX differentiate it in forward and in reverse mode.

`python tests/numpy/coverage_table.py` regenerates the page; tests/numpy/test_coverage_table.py fails
when the committed copy is stale, and when fgrad misses something HIPS autograd
differentiates (beyond the listed complex-valued functions).

How each column is found:
* fgrad: by running fgrad.jvp (forward) and fgrad.vjp (reverse) of the function on the small
  arguments of SAMPLES (the default: one vector in (0, 1)); a mode counts when it returns
  finite derivatives of the right shapes.
* HIPS autograd: from its registries, autograd.core.primitive_jvps (forward) and
  primitive_vjps (reverse), looked up for each name of autograd.numpy, autograd.scipy and
  their submodules; a name that autograd defines as a Python composition of its primitives
  (its concatenate, stack, mean, var, linalg.norm, ...) is run with autograd's make_jvp and
  make_vjp on the same sample.
* JAX: from its namespaces (jax.numpy, jax.numpy.linalg, jax.numpy.fft, jax.scipy.special,
  jax.scipy.stats.<distribution>, jax.scipy.linalg, jax.scipy.signal, jax.scipy.integrate, and
  jax.experimental.ode.odeint for scipy.integrate.odeint): a function there differentiates in
  both modes, except the ones JAX defines with custom_vjp only (reverse mode only: REVERSE_ONLY_JAX).

Only functions the reference library (NumPy/SciPy) has are listed (not its classes), and only
functions with a derivative: NONDIFF lists the names left out (integer or boolean results,
piecewise-constant functions, set operations, counting, array creation from shapes, I/O and
dtype utilities). Every other function of those namespaces gets a row, so a function JAX or
autograd adds appears in the table when it is regenerated.
"""
from __future__ import annotations

import importlib
import inspect
import pathlib
import types
import warnings
from typing import Any, Callable

import numpy as onp

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "numpy-coverage.md"

# the sections: (title, reference module, fgrad module, autograd module, jax module)
SECTIONS = [
    ("numpy", "numpy", "fgrad.numpy", "autograd.numpy", "jax.numpy"),
    ("numpy.linalg", "numpy.linalg", "fgrad.numpy.linalg", "autograd.numpy.linalg", "jax.numpy.linalg"),
    ("numpy.fft", "numpy.fft", "fgrad.numpy.fft", "autograd.numpy.fft", "jax.numpy.fft"),
    ("scipy.special", "scipy.special", "fgrad.scipy.special", "autograd.scipy.special", "jax.scipy.special"),
    ("scipy.stats", "scipy.stats", "fgrad.scipy.stats", "autograd.scipy.stats", "jax.scipy.stats"),
    ("scipy.linalg", "scipy.linalg", "fgrad.scipy.linalg", "autograd.scipy.linalg", "jax.scipy.linalg"),
    ("scipy.signal", "scipy.signal", "fgrad.scipy.signal", "autograd.scipy.signal", "jax.scipy.signal"),
    ("scipy.integrate", "scipy.integrate", "fgrad.scipy.integrate", "autograd.scipy.integrate",
     "jax.scipy.integrate"),
]
# JAX functions that live outside the namespaces above, by the reference name they implement
JAX_ELSEWHERE = {"scipy.integrate.odeint": ("jax.experimental.ode", "odeint")}
# JAX functions defined with custom_vjp alone: reverse mode only
REVERSE_ONLY_JAX = {"scipy.integrate.odeint"}
NONDIFF = {
    "numpy": """all allclose any arange argmax argmin argpartition argsort argwhere around array_equal array_equiv
        array_repr array_str bartlett bincount bitwise_and bitwise_count bitwise_invert bitwise_left_shift
        bitwise_not bitwise_or bitwise_right_shift bitwise_xor blackman broadcast_shapes can_cast ceil
        count_nonzero diag_indices diag_indices_from digitize einsum_path empty empty_like equal eye fix
        flatnonzero floor floor_divide from_dlpack frombuffer fromfile fromfunction fromiter frompyfunc
        fromstring gcd get_printoptions greater greater_equal hamming hanning histogram histogram2d
        histogram_bin_edges histogramdd identity indices intersect1d invert isclose iscomplex iscomplexobj
        isdtype isfinite isin isinf isnan isneginf isposinf isreal isrealobj isscalar issubdtype iterable ix_
        kaiser lcm left_shift less less_equal lexsort load logical_and logical_not logical_or logical_xor
        mask_indices nanargmax nanargmin ndim nextafter nonzero not_equal ones ones_like packbits printoptions
        promote_types ravel_multi_index result_type right_shift rint round save savez searchsorted
        set_printoptions setdiff1d setxor1d shape sign signbit size spacing tri tril_indices tril_indices_from
        triu_indices triu_indices_from trunc union1d unique unique_all unique_counts unique_inverse
        unique_values unpackbits unravel_index zeros zeros_like""",
    "numpy.linalg": "matrix_rank",
    "numpy.fft": "fftfreq rfftfreq",
    "scipy.special": "bernoulli",
    "scipy.stats": "rankdata mode",
    "scipy.linalg": "dft hadamard helmert hilbert invhilbert invpascal pascal",
}
NONDIFF = {k: set(v.split()) for k, v in NONDIFF.items()}
NONDIFF_REASON = ("integer or boolean results, piecewise-constant functions (rounding, signs), set operations, "
                  "counting and binning, arrays made from shapes or sizes, I/O and dtype utilities")

# --- sample arguments ------------------------------------------------------------------------------
# name -> (call(f, *arrays), arrays): f is the library's function, the arrays are what is
# differentiated (everything else is written into `call`). Default: f(VEC).

VEC = onp.array([0.3, 0.5, 0.7])
VEC2 = onp.array([0.4, 0.6, 0.9])
MAT = onp.array([[2.0, 0.5, 0.1], [0.5, 1.5, 0.3], [0.1, 0.3, 1.2]])  # symmetric positive definite
MAT2 = onp.array([[0.9, 0.2, -0.1], [0.3, 1.1, 0.4], [-0.2, 0.1, 0.8]])
X23 = onp.array([[0.3, 0.5, 0.7], [0.2, 0.4, 0.9]])
ONE = onp.float64(0.7)


def _u(f, x):
    return f(x)


def _b(f, x, y):
    return f(x, y)


SAMPLES: dict[str, tuple[Callable, tuple]] = {}
for _n in """add subtract multiply divide true_divide power pow maximum minimum fmax fmin arctan2 atan2 hypot
        logaddexp logaddexp2 copysign float_power fmod mod remainder heaviside nextafter outer inner dot vdot
        kron cross vecdot correlate convolve polyadd polysub polymul polydiv polyval""".split():
    SAMPLES[f"numpy.{_n}"] = (_b, (VEC, VEC2))
SAMPLES.update({
    "numpy.divmod": (lambda f, x, y: f(x, y)[1], (VEC, VEC2)),
    "numpy.ldexp": (lambda f, x: f(x, onp.array([1, -2, 3])), (VEC,)),
    "numpy.frexp": (lambda f, x: f(x * 37.0)[0], (VEC,)),
    "numpy.modf": (lambda f, x: f(x * 3.0)[0], (VEC,)),
    "numpy.arccosh": (lambda f, x: f(x + 1.5), (VEC,)), "numpy.acosh": (lambda f, x: f(x + 1.5), (VEC,)),
    "numpy.clip": (lambda f, x: f(x, 0.4, 0.6), (VEC,)),
    "numpy.where": (lambda f, x, y: f(onp.array([True, False, True]), x, y), (VEC, VEC2)),
    "numpy.select": (lambda f, x, y: f([onp.array([True, False, False]), onp.array([False, True, False])], [x, y], 0.5),
                     (VEC, VEC2)),
    "numpy.choose": (lambda f, x, y: f(onp.array([0, 1, 0]), [x, y]), (VEC, VEC2)),
    "numpy.piecewise": (lambda f, x: f(x, [x < 0.4, x >= 0.4], [lambda v: v * 2.0, lambda v: v * v]), (VEC,)),
    "numpy.matmul": (_b, (MAT, MAT2)), "numpy.tensordot": (lambda f, a, b: f(a, b, axes=1), (MAT, MAT2)),
    "numpy.einsum": (lambda f, a, b: f("ij,jk->ik", a, b), (MAT, MAT2)),
    "numpy.matvec": (_b, (MAT, VEC)), "numpy.vecmat": (_b, (VEC, MAT)),
    "numpy.matrix_transpose": (_u, (MAT2,)), "numpy.permute_dims": (lambda f, x: f(x, (1, 0)), (X23,)),
    "numpy.trace": (_u, (MAT,)), "numpy.diagonal": (_u, (MAT,)), "numpy.tril": (_u, (MAT,)), "numpy.triu": (_u, (MAT,)),
    "numpy.fliplr": (_u, (MAT,)), "numpy.flipud": (_u, (MAT,)), "numpy.rot90": (_u, (MAT,)),
    "numpy.swapaxes": (lambda f, x: f(x, 0, 1), (X23,)), "numpy.moveaxis": (lambda f, x: f(x, 0, 1), (X23,)),
    "numpy.rollaxis": (lambda f, x: f(x, 1), (X23,)), "numpy.transpose": (_u, (X23,)),
    "numpy.expand_dims": (lambda f, x: f(x, 0), (VEC,)), "numpy.squeeze": (lambda f, x: f(x[None]), (VEC,)),
    "numpy.reshape": (lambda f, x: f(x, (3, 1)), (VEC,)), "numpy.resize": (lambda f, x: f(x, (2, 3)), (VEC,)),
    "numpy.broadcast_to": (lambda f, x: f(x, (2, 3)), (VEC,)),
    "numpy.broadcast_arrays": (lambda f, x, y: f(x, y[:, None])[0], (VEC, VEC2)),
    "numpy.tile": (lambda f, x: f(x, 2), (VEC,)), "numpy.repeat": (lambda f, x: f(x, 2), (VEC,)),
    "numpy.roll": (lambda f, x: f(x, 1), (VEC,)), "numpy.pad": (lambda f, x: f(x, 1), (VEC,)),
    "numpy.split": (lambda f, x: f(x, 3)[1], (VEC,)), "numpy.array_split": (lambda f, x: f(x, 2)[0], (VEC,)),
    "numpy.hsplit": (lambda f, x: f(x, 3)[1], (VEC,)), "numpy.vsplit": (lambda f, x: f(x, 2)[1], (X23,)),
    "numpy.dsplit": (lambda f, x: f(x[None, None], 3)[1], (VEC,)),
    "numpy.unstack": (lambda f, x: f(x)[1], (X23,)),
    "numpy.concatenate": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.concat": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.stack": (lambda f, x, y: f([x, y]), (VEC, VEC2)), "numpy.hstack": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.vstack": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.row_stack": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.dstack": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.column_stack": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.block": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.append": (_b, (VEC, VEC2)), "numpy.array": (lambda f, x, y: f([x, y]), (VEC, VEC2)),
    "numpy.asarray": (_u, (VEC,)), "numpy.astype": (lambda f, x: f(x, onp.float32), (VEC,)),
    "numpy.full": (lambda f, x: f((2, 2), x), (ONE,)), "numpy.full_like": (lambda f, x: f(onp.zeros(3), x), (ONE,)),
    "numpy.linspace": (lambda f, a, b: f(a, b, 4), (ONE, onp.float64(1.9))),
    "numpy.geomspace": (lambda f, a, b: f(a, b, 4), (ONE, onp.float64(1.9))),
    "numpy.logspace": (lambda f, a, b: f(a, b, 4), (ONE, onp.float64(1.9))),
    "numpy.meshgrid": (lambda f, x, y: f(x, y)[0], (VEC, VEC2)),
    "numpy.diag": (_u, (VEC,)), "numpy.diagflat": (_u, (VEC,)),
    "numpy.take": (lambda f, x: f(x, onp.array([2, 0])), (VEC,)),
    "numpy.take_along_axis": (lambda f, x: f(x, onp.array([2, 0]), 0), (VEC,)),
    "numpy.put": (lambda f, x: f(x, [0], [1.0]), (VEC,)),
    "numpy.put_along_axis": (lambda f, x: f(x, onp.array([0]), 1.0, 0), (VEC,)),
    "numpy.place": (lambda f, x: f(x, x > 0.4, [1.0]), (VEC,)),
    "numpy.fill_diagonal": (lambda f, x: f(x, 0.5), (MAT,)),
    "numpy.compress": (lambda f, x: f([True, False, True], x), (VEC,)),
    "numpy.extract": (lambda f, x: f(onp.array([True, False, True]), x), (VEC,)),
    "numpy.delete": (lambda f, x: f(x, 1), (VEC,)), "numpy.insert": (lambda f, x: f(x, 1, 0.5), (VEC,)),
    "numpy.apply_along_axis": (lambda f, x: f(lambda v: v * v, 0, x), (VEC,)),
    "numpy.apply_over_axes": (lambda f, x: f(lambda v, a: v * 2.0, x, [0]), (VEC,)),
    "numpy.interp": (lambda f, x: f(x, onp.array([0.0, 0.5, 1.0]), onp.array([1.0, 2.0, 0.5])), (VEC,)),
    "numpy.polyfit": (lambda f, y: f(onp.array([0.0, 1.0, 2.0]), y, 1), (VEC,)),
    "numpy.vander": (_u, (VEC,)), "numpy.poly": (_u, (VEC,)), "numpy.roots": (_u, (VEC2,)),
    "numpy.cov": (_u, (X23,)), "numpy.corrcoef": (_u, (X23,)),
    "numpy.average": (lambda f, x, w: f(x, weights=w), (VEC, VEC2)),
    "numpy.quantile": (lambda f, x: f(x, 0.3), (VEC,)), "numpy.nanquantile": (lambda f, x: f(x, 0.3), (VEC,)),
    "numpy.percentile": (lambda f, x: f(x, 30.0), (VEC,)), "numpy.nanpercentile": (lambda f, x: f(x, 30.0), (VEC,)),
    "numpy.gradient": (_u, (onp.array([0.3, 0.5, 0.9, 1.0]),)),
    "numpy.trapezoid": (_u, (VEC,)), "numpy.ediff1d": (_u, (VEC,)),
    "numpy.cumulative_sum": (_u, (VEC,)), "numpy.cumulative_prod": (_u, (VEC,)),
    "numpy.partition": (lambda f, x: f(x, 1), (VEC,)),
    "numpy.sort_complex": (_u, (VEC,)),
    "numpy.trim_zeros": (_u, (VEC,)),
    # numpy.linalg
    **{f"numpy.linalg.{n}": (_u, (MAT,)) for n in """cholesky cond det eig eigh eigvals eigvalsh inv
        matrix_norm norm pinv qr slogdet svd svdvals trace diagonal matrix_transpose vector_norm""".split()},
    "numpy.linalg.solve": (_b, (MAT, VEC)), "numpy.linalg.lstsq": (lambda f, a, b: f(a, b)[0], (MAT2, VEC)),
    "numpy.linalg.matmul": (_b, (MAT, MAT2)), "numpy.linalg.outer": (_b, (VEC, VEC2)),
    "numpy.linalg.cross": (_b, (VEC, VEC2)), "numpy.linalg.vecdot": (_b, (VEC, VEC2)),
    "numpy.linalg.tensordot": (lambda f, a, b: f(a, b, axes=1), (MAT, MAT2)),
    "numpy.linalg.matrix_power": (lambda f, a: f(a, 2), (MAT,)),
    "numpy.linalg.multi_dot": (lambda f, a, b: f([a, b, a]), (MAT, MAT2)),
    "numpy.linalg.tensorinv": (lambda f, a: f(a, 1), (MAT,)),
    "numpy.linalg.tensorsolve": (_b, (MAT, VEC)),
    # numpy.fft
    "numpy.fft.irfft": (_u, (onp.array([1.0, 0.5, 0.25]),)), "numpy.fft.hfft": (_u, (VEC,)),
    **{f"numpy.fft.{n}": (_u, (MAT,)) for n in "fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn".split()},
    # scipy.special
    **{f"scipy.special.{n}": (_b, (VEC + 0.5, VEC2 + 0.5))
       for n in "beta betaln xlogy xlog1py rel_entr kl_div poch".split()},
    "scipy.special.betainc": (lambda f, x: f(2.0, 3.0, x), (VEC,)),
    "scipy.special.gammainc": (lambda f, x: f(2.0, x), (VEC,)),
    "scipy.special.gammaincc": (lambda f, x: f(2.0, x), (VEC,)),
    "scipy.special.polygamma": (lambda f, x: f(1, x), (VEC,)),
    "scipy.special.multigammaln": (lambda f, x: f(x + 2.0, 2), (VEC,)),
    "scipy.special.jn": (lambda f, x: f(2, x), (VEC,)), "scipy.special.yn": (lambda f, x: f(2, x), (VEC,)),
    "scipy.special.jv": (lambda f, x: f(1.5, x), (VEC,)), "scipy.special.yv": (lambda f, x: f(1.5, x), (VEC,)),
    "scipy.special.iv": (lambda f, x: f(1.5, x), (VEC,)), "scipy.special.ive": (lambda f, x: f(1.5, x), (VEC,)),
    "scipy.special.stdtr": (lambda f, x: f(3.0, x), (VEC,)), "scipy.special.stdtrit": (lambda f, x: f(3.0, x), (VEC,)),
    "scipy.special.expn": (lambda f, x: f(2, x), (VEC,)), "scipy.special.zeta": (lambda f, q: f(3.0, q + 1.0), (VEC,)),  # (JAX and fgrad: in q only)
    "scipy.special.hyp1f1": (lambda f, x: f(1.0, 2.0, x), (VEC,)),
    "scipy.special.hyp2f1": (lambda f, x: f(1.0, 2.0, 3.0, x), (VEC,)),
    "scipy.special.comb": (lambda f, x: f(x + 5.0, 2.0), (VEC,)),
    "scipy.special.boxcox": (lambda f, x: f(x, 0.5), (VEC,)),
    "scipy.special.boxcox1p": (lambda f, x: f(x, 0.5), (VEC,)),
    "scipy.special.owens_t": (lambda f, x: f(x, 0.5), (VEC,)),
    "scipy.special.sph_harm_y": (lambda f, x: f(onp.array([1]), onp.array([0]), x, x), (VEC,)),
    "scipy.special.logsumexp": (_u, (VEC,)), "scipy.special.softmax": (_u, (VEC,)),
    # scipy.linalg
    **{f"scipy.linalg.{n}": (_u, (MAT,)) for n in """cholesky cho_factor det eigh expm inv lu lu_factor polar qr
        schur sqrtm svd hessenberg funm rsf2csf""".split()},
    "scipy.linalg.cho_factor": (lambda f, a: f(a)[0], (MAT,)), "scipy.linalg.lu_factor": (lambda f, a: f(a)[0], (MAT,)),
    "scipy.linalg.cho_solve": (lambda f, a, b: f((a, True), b), (onp.linalg.cholesky(MAT), VEC)),
    "scipy.linalg.lu_solve": (lambda f, a, b: f((a, onp.array([0, 1, 2])), b), (MAT, VEC)),
    "scipy.linalg.funm": (lambda f, a: f(a, lambda v: v * v), (MAT,)),
    "scipy.linalg.rsf2csf": (lambda f, a: f(a, onp.eye(3))[0], (onp.triu(MAT),)),
    "scipy.linalg.solve": (_b, (MAT, VEC)), "scipy.linalg.solve_triangular": (_b, (onp.triu(MAT), VEC)),
    "scipy.linalg.solve_banded": (lambda f, a, b: f((1, 1), a, b), (onp.array([[0.0, 0.5, 0.3], [2.0, 1.5, 1.2],
                                                                              [0.5, 0.3, 0.0]]), VEC)),
    "scipy.linalg.solve_sylvester": (lambda f, a, c: f(a, a, c), (MAT, MAT2)),
    "scipy.linalg.expm_frechet": (lambda f, a, e: f(a, e, compute_expm=False), (MAT, MAT2)),
    "scipy.linalg.block_diag": (_b, (MAT, MAT2)), "scipy.linalg.qr_multiply": (lambda f, a, c: f(a, c)[0], (MAT, MAT2)),
    "scipy.linalg.eigh_tridiagonal": (lambda f, d, e: f(d, e, eigvals_only=True), (VEC + 1.0, VEC2[:2])),
    "scipy.linalg.companion": (_u, (onp.array([1.0, 0.5, 0.3]),)), "scipy.linalg.circulant": (_u, (VEC,)),
    "scipy.linalg.toeplitz": (_u, (VEC,)), "scipy.linalg.hankel": (_u, (VEC,)), "scipy.linalg.fiedler": (_u, (VEC,)),
    "scipy.linalg.fiedler_companion": (_u, (onp.array([1.0, 0.5, 0.3]),)),
    "scipy.linalg.convolution_matrix": (lambda f, a: f(a, 4), (VEC,)),
    "scipy.linalg.leslie": (lambda f, a, s: f(a, s[:2]), (VEC, VEC2)),
    # scipy.signal
    "scipy.signal.convolve": (_b, (VEC, VEC2)), "scipy.signal.correlate": (_b, (VEC, VEC2)),
    "scipy.signal.fftconvolve": (_b, (VEC, VEC2)), "scipy.signal.convolve2d": (_b, (MAT, MAT2)),
    "scipy.signal.correlate2d": (_b, (MAT, MAT2)), "scipy.signal.detrend": (_u, (VEC,)),
    "scipy.signal.welch": (lambda f, x: f(x, nperseg=4)[1], (onp.linspace(0.1, 0.9, 8),)),
    "scipy.signal.csd": (lambda f, x, y: f(x, y, nperseg=4)[1], (onp.linspace(0.1, 0.9, 8), onp.linspace(0.9, 0.2, 8))),
    "scipy.signal.stft": (lambda f, x: f(x, nperseg=4)[2], (onp.linspace(0.1, 0.9, 8),)),
    "scipy.signal.istft": (lambda f, x: f(x, nperseg=4)[1], (onp.ones((3, 3)),)),
    # scipy.integrate
    "scipy.integrate.odeint": (lambda f, y0, k: f(lambda y, t, k: -k * y, y0, onp.array([0.0, 0.5, 1.0]), k),
                               (VEC, VEC2)),
    # scipy.stats (module-level functions)
    "scipy.stats.sem": (_u, (VEC,)),
})

# scipy.stats distributions: (arrays, how to call) per distribution; pmf-style methods take an
# integer k written into the call
_K = onp.array([0, 2, 1])
_DIST = {
    "norm": (lambda f, x: f(x, 0.1, 1.3), (VEC,)), "t": (lambda f, x: f(x, 3.5), (VEC,)),
    "gamma": (lambda f, x: f(x, 2.5), (VEC,)), "beta": (lambda f, x: f(x, 2.0, 3.0), (VEC,)),
    "chi2": (lambda f, x: f(x, 3.0), (VEC,)), "expon": (_u, (VEC,)), "cauchy": (_u, (VEC,)),
    "laplace": (_u, (VEC,)), "logistic": (_u, (VEC,)), "uniform": (_u, (VEC,)),
    "gumbel_l": (_u, (VEC,)), "gumbel_r": (_u, (VEC,)), "gennorm": (lambda f, x: f(x, 1.5), (VEC,)),
    "pareto": (lambda f, x: f(x + 1.0, 2.0), (VEC,)), "truncnorm": (lambda f, x: f(x, -1.0, 2.0), (VEC,)),
    "vonmises": (lambda f, x: f(x, 1.5), (VEC,)), "wrapcauchy": (lambda f, x: f(x, 0.5), (VEC,)),
    "dirichlet": (lambda f, x, a: f(x / x.sum(), a), (VEC, VEC2 + 1.0)),
    "multivariate_normal": (lambda f, x, m: f(x, m, MAT), (VEC, VEC2)),
    # discrete: the derivative is in the distribution's parameter
    "poisson": (lambda f, mu: f(_K, mu), (VEC2 + 1.0,)), "bernoulli": (lambda f, p: f(onp.array([0, 1, 1]), p), (VEC,)),
    "binom": (lambda f, p: f(_K, 3, p), (VEC,)), "nbinom": (lambda f, p: f(_K, 3, p), (VEC,)),
    "geom": (lambda f, p: f(_K + 1, p), (VEC,)), "betabinom": (lambda f, a: f(_K, 3, a + 1.0, 2.0), (VEC,)),
    "multinomial": (lambda f, p: f(onp.array([1, 0, 2]), 3, p / p.sum()), (VEC,)),
}
_DIST_SPECIAL = {
    ("multivariate_normal", "entropy"): (lambda f, m: f(m, MAT), (VEC,)),
    ("poisson", "entropy"): (lambda f, mu: f(mu), (VEC2 + 1.0,)),
    ("norm", "ppf"): (lambda f, q: f(q, 0.1, 1.3), (VEC,)), ("norm", "isf"): (lambda f, q: f(q, 0.1, 1.3), (VEC,)),
    ("t", "ppf"): (lambda f, q: f(q, 3.5), (VEC,)),
}


def sample(key: str) -> tuple[Callable, tuple]:
    """The sample call of the function named `key` ("numpy.sin", "scipy.stats.norm.logpdf")."""
    if key in SAMPLES:
        return SAMPLES[key]
    parts = key.split(".")
    if key.startswith("scipy.stats.") and len(parts) == 4:
        dist, method = parts[2], parts[3]
        # ppf and isf take probabilities: VEC's entries are in (0, 1)
        return _DIST_SPECIAL.get((dist, method), _DIST.get(dist, (_u, (VEC,))))
    return _u, (VEC,)


# --- the three columns ----------------------------------------------------------------------------

def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _functions(mod: Any) -> dict[str, Any]:
    """The public callables of a module (classes excluded)."""
    out = {}
    if mod is None:
        return out
    for n in dir(mod):
        if n.startswith("_"):
            continue
        obj = getattr(mod, n, None)
        if callable(obj) and not isinstance(obj, type):
            out[n] = obj
    return out


def _stats_members(mod: Any, ref: Any) -> dict[str, Any]:
    """{'norm.logpdf': fn, 'sem': fn, ...}: the distributions' methods and the module-level
    functions of a stats namespace that scipy.stats has."""
    out = {}
    if mod is None:
        return out
    for d in dir(mod):
        if d.startswith("_") or not hasattr(ref, d):
            continue
        obj = getattr(mod, d)
        if isinstance(obj, type) or isinstance(getattr(ref, d), type):
            continue  # classes (gaussian_kde): not functions
        if isinstance(obj, types.ModuleType) or (not callable(obj) and hasattr(obj, "__all__")):
            for m, f in _functions(obj).items():
                if hasattr(getattr(ref, d), m) and callable(getattr(getattr(ref, d), m)):
                    out[f"{d}.{m}"] = f
        elif hasattr(obj, "logpdf") or hasattr(obj, "logpmf"):  # a distribution object (fgrad's)
            for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "logpmf", "pmf", "entropy"):
                if hasattr(obj, m) and hasattr(getattr(ref, d), m):
                    out[f"{d}.{m}"] = getattr(obj, m)
        elif callable(obj) and not isinstance(obj, type) and callable(getattr(ref, d)):
            out[d] = obj
    return out


def _members(section: str, modname: str | None, ref: Any) -> dict[str, Any]:
    """The functions of `modname` that the reference module has as functions (not classes)."""
    mod = _module(modname) if modname else None
    if section == "scipy.stats":
        return _stats_members(mod, ref)
    return {n: f for n, f in _functions(mod).items()
            if callable(getattr(ref, n, None)) and not isinstance(getattr(ref, n), type)}


def _autograd_modes(section: str, name: str, fn: Any) -> tuple[bool, bool]:
    """(forward, reverse) for HIPS autograd: its registries, or a run of a composition."""
    from autograd.core import primitive_jvps, primitive_vjps  # oracle: only for the table
    try:
        fwd, rev = fn in primitive_jvps, fn in primitive_vjps
    except TypeError:  # unhashable
        return False, False
    if fwd or rev:
        return fwd, rev
    if inspect.isfunction(fn) and not getattr(fn, "_is_autograd_primitive", False) \
            and (fn.__module__ or "").startswith("autograd"):
        return _run_autograd(f"{section}.{name}", fn)
    return False, False


def _run_autograd(key: str, fn: Any) -> tuple[bool, bool]:
    import autograd  # oracle: only for the table
    call, arrays = sample(key)
    g = lambda x: call(fn, x, *arrays[1:])  # noqa: E731
    out = []
    for mode in ("fwd", "rev"):
        try:
            with warnings.catch_warnings(), onp.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                if mode == "fwd":
                    r = autograd.make_jvp(g)(arrays[0])(onp.ones_like(arrays[0]))[1]
                else:
                    vjp, ans = autograd.make_vjp(g)(arrays[0])
                    r = vjp(onp.ones_like(ans))
            out.append(bool(onp.all(onp.isfinite(onp.asarray(r, dtype=float)))))
        except Exception:  # noqa: BLE001 - a failure is the answer
            out.append(False)
    return out[0], out[1]


def _finite(tree: Any) -> bool:
    from fgrad.tree_util import tree_leaves
    leaves = [onp.asarray(v) for v in tree_leaves(tree)]
    return all(v.dtype.kind not in "fc" or bool(onp.all(onp.isfinite(v))) for v in leaves)


def _fgrad_modes(key: str, fn: Any) -> tuple[bool, bool]:
    """(forward, reverse) for fgrad: jvp and vjp of the sample call."""
    import fgrad
    from fgrad.tree_util import tree_map
    call, arrays = sample(key)
    g = lambda *xs: call(fn, *xs)  # noqa: E731
    out = []
    with warnings.catch_warnings(), onp.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            _, t = fgrad.jvp(g, arrays, tuple(onp.ones_like(a) for a in arrays))
            out.append(_finite(t))
        except Exception:  # noqa: BLE001 - a failure is the answer
            out.append(False)
        try:
            y, pullback = fgrad.vjp(g, *arrays)
            cts = pullback(tree_map(lambda v: onp.ones_like(v) if onp.asarray(v).dtype.kind == "f"
                                    else onp.zeros_like(v), y))
            out.append(_finite(cts))
        except Exception:  # noqa: BLE001 - a failure is the answer
            out.append(False)
    return out[0], out[1]


def rows() -> dict[str, list]:
    """{section: [(name, fgrad (fwd, rev) or None, autograd (fwd, rev), jax (fwd, rev))]}."""
    table = {}
    for section, ref_name, fgrad_name, ag_name, jax_name in SECTIONS:
        ref = importlib.import_module(ref_name)
        fg, ag, jx = (_members(section, m, ref) for m in (fgrad_name, ag_name, jax_name))
        for key, (mod, attr) in JAX_ELSEWHERE.items():
            if key.startswith(section + "."):
                jmod = _module(mod)
                if jmod is not None and hasattr(jmod, attr):
                    jx[key[len(section) + 1:]] = getattr(jmod, attr)
        skip = NONDIFF.get(section, set())
        ag_modes = {n: _autograd_modes(section, n, f) for n, f in ag.items() if n not in skip}
        ag_modes = {n: m for n, m in ag_modes.items() if any(m)}
        names = sorted(set(ag_modes) | (set(jx) - skip))
        out = []
        for n in names:
            key = f"{section}.{n}"
            jax_modes = (key not in REVERSE_ONLY_JAX, True) if n in jx and n not in skip else (False, False)
            fgrad_modes = _fgrad_modes(key, fg[n]) if n in fg else None
            out.append((n, fgrad_modes, ag_modes.get(n, (False, False)), jax_modes))
        table[section] = out
    return table


def _version(package: str) -> str:
    from importlib.metadata import version  # only for the page's header
    return version(package)


def _cell(modes: tuple | None) -> str:
    if modes is None:
        return "missing"
    return {(True, True): "fwd, rev", (True, False): "fwd", (False, True): "rev", (False, False): "—"}[tuple(modes)]


def render(table: dict[str, list] | None = None) -> str:
    table = rows() if table is None else table
    every = [(f"{s}.{n}", f, a, j) for s, rs in table.items() for n, f, a, j in rs]
    count = lambda col, mode: sum(1 for r in every if r[col] is not None and r[col][mode])  # noqa: E731
    any_ = lambda col: sum(1 for r in every if r[col] is not None and any(r[col]))  # noqa: E731
    lines = [
        "# Differentiation coverage: NumPy and SciPy functions", "",
        "Every function of `numpy`, `numpy.linalg`, `numpy.fft`, `scipy.special`, `scipy.stats`, "
        "`scipy.linalg`, `scipy.signal` and `scipy.integrate` that HIPS autograd or JAX differentiates, "
        "and whether fgrad, HIPS autograd and JAX differentiate it in forward mode (jvp) and reverse "
        "mode (vjp/grad). Generated by `python tests/numpy/coverage_table.py`; `tests/numpy/test_coverage_table.py` "
        "fails when this page is stale.", "",
        "Generated with " + ", ".join(f"{n} {_version(n)}" for n in ("numpy", "scipy", "jax", "autograd"))
        + " (another version of one of them may add or drop rows).", "",
        "How each column is determined:", "",
        "- **fgrad**: by running `fgrad.jvp` and `fgrad.vjp` of the function on small sample arguments "
        "(`SAMPLES` in `tests/numpy/coverage_table.py`; by default one vector in (0, 1)); a mode counts when it "
        "returns finite derivatives. *missing*: fgrad has no function of that name.",
        "- **HIPS autograd**: from its registries of derivative rules, `autograd.core.primitive_jvps` "
        "(forward) and `primitive_vjps` (reverse), for the functions of `autograd.numpy`, "
        "`autograd.scipy` and their submodules; functions autograd writes as compositions of its "
        "primitives (its `concatenate`, `stack`, `mean`, `var`, `linalg.norm`, ...) are run with "
        "`autograd.make_jvp`/`make_vjp` on the same samples.",
        "- **JAX**: from its namespaces (`jax.numpy`, `jax.numpy.linalg`, `jax.numpy.fft`, `jax.scipy.special`, "
        "`jax.scipy.stats`, `jax.scipy.linalg`, `jax.scipy.signal`, `jax.scipy.integrate`, and "
        "`jax.experimental.ode.odeint` for `scipy.integrate.odeint`): a function there is differentiable "
        "in both modes, except those JAX defines with `custom_vjp` alone, which are reverse-only "
        f"({', '.join(sorted(REVERSE_ONLY_JAX))}).",
        "",
        f"Left out as having no derivative to take ({NONDIFF_REASON}): "
        + "; ".join(f"`{s}`: {', '.join(sorted(v))}" for s, v in NONDIFF.items()) + ".", "",
        "## Totals", "",
        "| | functions differentiated | forward mode | reverse mode |", "|---|---|---|---|",
        f"| fgrad | {any_(1)} | {count(1, 0)} | {count(1, 1)} |",
        f"| HIPS autograd | {any_(2)} | {count(2, 0)} | {count(2, 1)} |",
        f"| JAX | {any_(3)} | {count(3, 0)} | {count(3, 1)} |",
        f"| (rows) | {len(every)} | | |", "",
    ]
    ag_gap = autograd_gap(table)
    lines += ["Functions HIPS autograd differentiates that fgrad does not (in a mode autograd has): "
              + (", ".join(f"`{k}`" for k in ag_gap) if ag_gap else "none") + ".", ""]
    for s, rs in table.items():
        lines += [f"## {s}", "", "| function | fgrad | HIPS autograd | JAX |", "|---|---|---|---|"]
        lines += [f"| `{n}` | {_cell(f)} | {_cell(a)} | {_cell(j)} |" for n, f, a, j in rs]
        lines.append("")
    jax_gap = [k for k, f, _, j in every if any(j) and (f is None or any(y and not x for x, y in zip(f, j)))]
    lines += ["## What JAX differentiates and fgrad does not", "",
              f"{len(jax_gap)} functions (missing from fgrad, or not differentiated in a mode JAX has):", ""]
    lines += [", ".join(f"`{k}`" for k in jax_gap), ""]
    return "\n".join(lines)


def autograd_gap(table: dict[str, list]) -> list[str]:
    """The functions (and modes) HIPS autograd differentiates that fgrad does not."""
    return [f"{s}.{n}" for s, rs in table.items() for n, f, a, _ in rs
            if any(a) and (f is None or any(x and not y for x, y in zip(a, f)))]


# values only by design, as in JAX (whose namespace lists them, but whose schur and hessenberg
# primitives have no derivative rules): their factors are not unique, and fgrad raises
# DifferentiationError for them (tests/scipy/test_linalg.py); their rows read "—"
VALUES_ONLY = {"scipy.linalg.schur", "scipy.linalg.hessenberg"}


def fgrad_failures(table: dict[str, list]) -> list[str]:
    """The functions fgrad has that fail a mode on their sample (VALUES_ONLY aside)."""
    return [f"{s}.{n}" for s, rs in table.items() for n, f, _, _ in rs
            if f is not None and not all(f) and f"{s}.{n}" not in VALUES_ONLY]


if __name__ == "__main__":
    DOC.write_text(render())
    print(f"wrote {DOC}")
