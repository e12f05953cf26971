"""fgrad.scipy.signal's convolve2d, correlate2d, fftconvolve, detrend, stft, istft, welch
and csd: values and dtypes against SciPy (and jax.scipy.signal where it has the function),
derivatives against finite differences (check_grads, orders 1-2, forward and reverse; for the
complex results also through real-valued losses such as |stft|^2), and agreement under jit
and vmap."""
from __future__ import annotations

import warnings

import numpy as onp
import pytest
import scipy.signal as ss

import fgrad
import fgrad.numpy as fnp
import fgrad.scipy.signal as fsig
from fgrad.core.errors import FgradValueError, ShapeError
from fgrad.test_util import check_grads
from tests import sampled

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.signal as jsig
except ImportError:  # pragma: no cover - the JAX comparisons skip
    jax = jsig = None

R = onp.random.default_rng(1)
A, K, B = R.normal(size=(5, 6)), R.normal(size=(2, 3)), R.normal(size=(3, 3))
SIG, SIG2, Y = R.normal(size=40), R.normal(size=(2, 40)), R.normal(size=40)

CASES = {
    "convolve2d-modes": lambda M: [M.convolve2d(A, K, m) for m in ("full", "same", "valid")],
    "convolve2d-fill": lambda M: [M.convolve2d(A, K, m, "fill", 1.5) for m in ("full", "same")],
    "convolve2d-wrap": lambda M: [M.convolve2d(A, B, m, "wrap") for m in ("full", "same")],
    "convolve2d-symm": lambda M: [M.convolve2d(A, B, m, "symm") for m in ("full", "same")],
    "convolve2d-even_symm": lambda M: [M.convolve2d(A, K, m, "symm") for m in ("full", "same")],
    "convolve2d-swap": lambda M: M.convolve2d(K, A, "valid"),
    "correlate2d-modes": lambda M: [M.correlate2d(A, K, m) for m in ("full", "same", "valid")],
    "correlate2d-boundaries": lambda M: [M.correlate2d(A, B, m, b) for m in ("full", "same") for b in ("wrap", "symm")],
    "correlate2d-even_wrap": lambda M: [M.correlate2d(A, K, m, "wrap") for m in ("full", "same")],
    "correlate2d-swap": lambda M: M.correlate2d(K, A, "valid"),
    "fftconvolve-2d": lambda M: [M.fftconvolve(A, K, m) for m in ("full", "same", "valid")],
    "fftconvolve-1d": lambda M: [M.fftconvolve(SIG, Y[:7], m) for m in ("full", "same", "valid")],
    "fftconvolve-swap": lambda M: M.fftconvolve(K, A, "valid"),
    "fftconvolve-axes": lambda M: M.fftconvolve(A, K[:1], "same", axes=1),
    "fftconvolve-complex": lambda M: M.fftconvolve(A + 1j * A, K),
    "fftconvolve-float32": lambda M: M.fftconvolve(A.astype(onp.float32), K.astype(onp.float32)),
    "fftconvolve-0d": lambda M: M.fftconvolve(onp.float64(2.0), onp.float64(3.0)),
    "detrend-linear": lambda M: M.detrend(SIG2),
    "detrend-constant_axis0": lambda M: M.detrend(SIG2, type="constant", axis=0),
    "detrend-breakpoints": lambda M: M.detrend(SIG2, bp=[10, 25]),
    "detrend-ints": lambda M: M.detrend(onp.arange(10) ** 2),
    "detrend-float32": lambda M: M.detrend(SIG2.astype(onp.float32), axis=-1),
    "stft-default": lambda M: M.stft(SIG, nperseg=8),
    "stft-options": lambda M: M.stft(SIG2, nperseg=7, noverlap=3, nfft=10, boundary="even", detrend="linear"),
    "stft-odd_axis0_twosided": lambda M: M.stft(SIG2.T, nperseg=8, boundary="odd", padded=False, axis=0,
                                                return_onesided=False),
    "stft-psd_hamming": lambda M: M.stft(SIG, nperseg=8, scaling="psd", window="hamming"),
    "stft-short_input": lambda M: M.stft(SIG[:20]),
    "stft-float32": lambda M: M.stft(SIG.astype(onp.float32), nperseg=8),
    "welch-default": lambda M: M.welch(SIG, nperseg=8),
    "welch-median_spectrum": lambda M: M.welch(SIG2, fs=10.0, nperseg=9, scaling="spectrum", average="median"),
    "welch-axis0_linear": lambda M: M.welch(SIG2.T, nperseg=16, axis=0, detrend="linear"),
    "welch-nfft_twosided": lambda M: M.welch(SIG, nperseg=8, nfft=12, return_onesided=False),
    "csd-default": lambda M: M.csd(SIG, Y, nperseg=8),
    "csd-broadcast_median": lambda M: M.csd(SIG2, Y, nperseg=10, average="median"),
    "csd-unequal_lengths": lambda M: M.csd(SIG, Y[:30], nperseg=8),
    "istft-default": lambda M: M.istft(ss.stft(SIG, nperseg=8)[2], nperseg=8),
    "istft-overlap": lambda M: M.istft(ss.stft(SIG2, nperseg=8, noverlap=6)[2], noverlap=6),
    "istft-axes": lambda M: M.istft(onp.moveaxis(ss.stft(SIG2, nperseg=8)[2], 0, -1), time_axis=1, freq_axis=0),
    "istft-twosided": lambda M: M.istft(ss.stft(SIG, nperseg=8, return_onesided=False)[2], input_onesided=False),
    "istft-psd_no_boundary": lambda M: M.istft(ss.stft(SIG, nperseg=8, boundary=None, scaling="psd")[2],
                                               boundary=False, scaling="psd"),
}


def _leaves(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_scipy(name):
    want, got = _quiet(lambda: CASES[name](ss)), _quiet(lambda: CASES[name](fsig))
    want, got = _leaves(want), _leaves(got)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        w, g = onp.asarray(w), onp.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        tol = 2e-5 if w.dtype in (onp.float32, onp.complex64) else 1e-10
        onp.testing.assert_allclose(g, w, rtol=tol, atol=tol)


JAX_NAMES = [n for n in sorted(CASES) if n.split("-")[0] in ("convolve2d", "correlate2d", "fftconvolve", "stft",
                                                             "welch", "csd", "istft", "detrend")
             and n not in ("stft-psd_hamming", "stft-short_input", "stft-float32", "fftconvolve-float32",
                           "fftconvolve-0d", "detrend-breakpoints", "detrend-ints", "detrend-float32",
                           "istft-psd_no_boundary", "csd-unequal_lengths", "csd-broadcast_median",
                           "welch-median_spectrum", "convolve2d-fill", "correlate2d-even_wrap",
                           "convolve2d-even_symm",
                           # JAX supports only boundary='fill' (fillvalue 0), and equal non-convolved axes
                           "convolve2d-symm", "convolve2d-wrap", "correlate2d-boundaries", "fftconvolve-axes")]


@pytest.mark.skipif(jsig is None, reason="jax not installed")
@pytest.mark.parametrize("name", sampled(JAX_NAMES, 2))
def test_values_match_jax(name):
    """jax.scipy.signal implements these with SciPy's semantics (cases where JAX lacks an
    option or differs, e.g. no 'psd' scaling, are left to the SciPy comparison)."""
    want, got = _quiet(lambda: CASES[name](jsig)), _quiet(lambda: CASES[name](fsig))
    for w, g in zip(_leaves(want), _leaves(got)):
        onp.testing.assert_allclose(onp.asarray(g), onp.asarray(w), rtol=1e-8, atol=1e-10)


# --- derivatives ------------------------------------------------------------------------------------
S12 = R.normal(size=12)
GRADS = {
    "convolve2d": (lambda a, k: fsig.convolve2d(a, k, "same", "symm"), (A[:4, :4], K)),
    "convolve2d_fill": (lambda a, k, v: fsig.convolve2d(a, k, "full", "fill", v), (A[:3, :3], K, onp.float64(0.7))),
    "correlate2d": (lambda a, k: fsig.correlate2d(a, k, "same", "wrap"), (A[:4, :4], K)),
    "correlate2d_valid": (lambda a, k: fsig.correlate2d(a, k, "valid"), (K, A[:3, :4])),
    "fftconvolve": (lambda a, k: fsig.fftconvolve(a, k, "same"), (A, K)),
    "fftconvolve_complex": (lambda a, k: fsig.fftconvolve(a, k), (S12[:5] + 1j * S12[5:10], K[0])),
    "detrend": (lambda x: fsig.detrend(x, bp=[5]), (S12,)),
    "detrend_constant": (lambda x: fsig.detrend(x, type="constant"), (S12,)),
    "stft": (lambda x: fsig.stft(x, nperseg=4)[2], (S12,)),
    "stft_power": (lambda x: fnp.abs(fsig.stft(x, nperseg=4, boundary="even")[2]) ** 2, (S12,)),
    "istft": (lambda z: fsig.istft(z, nperseg=4)[1], (ss.stft(S12, nperseg=4)[2],)),
    "welch": (lambda x: fsig.welch(x, nperseg=4)[1], (S12,)),
    "welch_median": (lambda x: fsig.welch(x, nperseg=4, average="median")[1], (S12,)),
    "welch_window": (lambda x, w: fsig.welch(x, window=w)[1], (S12, onp.hanning(6) + 0.1)),
    "csd": (lambda x, y: fsig.csd(x, y, nperseg=4)[1], (S12, S12[::-1] * 0.5)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_check_grads(name):
    fn, args = GRADS[name]
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(GRADS))
def test_jit_agrees_and_differentiates(name):
    fn, args = GRADS[name]
    onp.testing.assert_allclose(fgrad.jit(fn)(*args), fn(*args), rtol=1e-10, atol=1e-12)
    check_grads(fgrad.jit(fn), args, order=1)


@pytest.mark.parametrize("name", sorted(GRADS))
def test_vmap_matches_loop(name):
    fn, args = GRADS[name]
    batch = [tuple(a * (1 + 0.1 * i) for a in args) for i in range(3)]
    stacked = tuple(onp.stack([b[j] for b in batch]) for j in range(len(args)))
    got = fgrad.vmap(fn)(*stacked)
    onp.testing.assert_allclose(got, onp.stack([onp.asarray(fn(*b)) for b in batch]), rtol=1e-9, atol=1e-11)


def test_welch_gradient_matches_jax():
    if jax is None:
        pytest.skip("jax not installed")
    w = onp.linspace(0.5, 1.5, 12)
    g = fgrad.grad(lambda x: fnp.sum(w[:3] * fsig.welch(x, nperseg=4)[1]))(S12)
    gj = jax.grad(lambda x: (w[:3] * jsig.welch(x, nperseg=4)[1]).sum())(S12)
    onp.testing.assert_allclose(g, gj, rtol=1e-9, atol=1e-12)


def test_stft_istft_round_trip_and_its_gradient():
    """istft(stft(x)) == x, so the Jacobian of the round trip is the identity."""
    def round_trip(x):
        return fsig.istft(fsig.stft(x, nperseg=4)[2], nperseg=4)[1][:12]
    onp.testing.assert_allclose(round_trip(S12), S12, atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacrev(round_trip)(S12), onp.eye(12), atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacfwd(round_trip)(S12), onp.eye(12), atol=1e-12)


def test_errors():
    with pytest.raises(ShapeError, match="2-D"):
        fsig.convolve2d(SIG, SIG)
    with pytest.raises(FgradValueError, match="boundary"):
        fsig.convolve2d(A, K, boundary="reflect")
    with pytest.raises(ShapeError, match="at least as large"):
        fsig.fftconvolve(onp.ones((2, 5)), onp.ones((3, 3)), "valid")
    with pytest.raises(FgradValueError, match="Trend type"):
        fsig.detrend(SIG, type="quadratic")
    with pytest.raises(FgradValueError, match="noverlap must be less than nperseg"):
        fsig.welch(SIG, nperseg=8, noverlap=8)
    with pytest.raises(FgradValueError, match="scaling"):
        fsig.stft(SIG, scaling="density")
    with pytest.raises(FgradValueError, match="at least 2d"):
        fsig.istft(SIG)
