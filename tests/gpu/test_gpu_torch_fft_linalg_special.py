"""torch.fft, torch.linalg's factorizations and torch.special's functions on the GPU: each result
lies on the input's device and equals the CPU result, and gradients come back on the device
(the LAPACK codes and factors that the host computes included; Python-number operands of
binary functions move to the tensor operand's device)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gpu._support import host, is_gpu, require_gpu

cp = require_gpu()

import fgrad.torch as T  # noqa: E402

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
B = RNG.standard_normal((2, 3, 2))
S = A @ np.swapaxes(A, -1, -2)

CASES = {
    "cholesky_ex": lambda L, a, b, s: L.linalg.cholesky_ex(s),
    "inv_ex_singular": lambda L, a, b, s: L.linalg.inv_ex(a * L.tensor([1.0, 0.0], dtype=a.dtype,
                                                                       device=a.device)[:, None, None]),
    "solve_ex": lambda L, a, b, s: L.linalg.solve_ex(a, b),
    "eig": lambda L, a, b, s: L.linalg.eigvals(a),
    "matrix_exp": lambda L, a, b, s: L.linalg.matrix_exp(a),
    "householder_product": lambda L, a, b, s: L.linalg.householder_product(a, a[:, 0, :2]),
    "ldl_solve": lambda L, a, b, s: L.linalg.ldl_solve(*L.linalg.ldl_factor(s), b),
    "vander": lambda L, a, b, s: L.linalg.vander(a[0, 0]),
    "tensorinv": lambda L, a, b, s: L.linalg.tensorinv(a[0], ind=1),
    "fft": lambda L, a, b, s: L.fft.fft(a).abs(),
    "hfft2": lambda L, a, b, s: L.fft.hfft2(a),
    "fftshift": lambda L, a, b, s: L.fft.fftshift(a),
    "sinc": lambda L, a, b, s: L.special.sinc(a),
    "modified_bessel_k0": lambda L, a, b, s: L.special.modified_bessel_k0(a.abs()),
    "airy_ai": lambda L, a, b, s: L.special.airy_ai(a),
    "chebyshev_polynomial_t": lambda L, a, b, s: L.special.chebyshev_polynomial_t(a, 3),
    "zeta": lambda L, a, b, s: L.special.zeta(2.5, a.abs() + 1.0),
}


def _first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_and_gradients_stay_on_the_device(name):
    fn = CASES[name]
    cpu = [T.tensor(v, requires_grad=True) for v in (A, B, S)]
    gpu = [T.tensor(v).cuda().requires_grad_() for v in (A, B, S)]
    want, got = _first(fn(T, *cpu)), _first(fn(T, *gpu))
    assert is_gpu(got._value) and got.device.type == "cuda"
    np.testing.assert_allclose(host(got.detach()._value), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    if want.requires_grad:
        part = (lambda t: t.real) if want.is_complex() else (lambda t: t)
        g_cpu = T.autograd.grad(part(want).sum(), cpu[0], allow_unused=True)[0]
        g_gpu = T.autograd.grad(part(got).sum(), gpu[0], allow_unused=True)[0]
        assert (g_cpu is None) == (g_gpu is None)
        if g_gpu is not None:
            assert g_gpu.device.type == "cuda"
            np.testing.assert_allclose(host(g_gpu._value), g_cpu.numpy(), rtol=1e-9, atol=1e-12)
