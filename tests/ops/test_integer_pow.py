"""integer_pow's values bit for bit against JAX (lax.integer_pow) and PyTorch (x ** k): a cube
is x * x * x, rounded twice, in both, and in fgrad's eager impl and its compiled lowering."""
import numpy as np
import pytest

import fgrad


def _values(dtype):
    return np.random.default_rng(0).standard_normal(4096).astype(dtype) * 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cube_is_two_rounded_products(dtype):
    x = _values(dtype)
    want = x * x * x
    np.testing.assert_array_equal(np.asarray(fgrad.lax.integer_pow(x, 3)), want)
    np.testing.assert_array_equal(np.asarray(fgrad.jit(lambda v: fgrad.lax.integer_pow(v, 3))(x)), want)


@pytest.mark.parametrize("k", [2, 3, -1, -2])
def test_integer_pow_matches_torch(k):
    torch = pytest.importorskip("torch")
    import fgrad.torch as ftorch
    x = _values(np.float32)
    np.testing.assert_array_equal((ftorch.tensor(x) ** k).numpy(), (torch.from_numpy(x) ** k).numpy())


@pytest.mark.parametrize("k", [2, 3])
def test_integer_pow_matches_jax(k):
    jax = pytest.importorskip("jax")
    x = _values(np.float32)
    np.testing.assert_array_equal(np.asarray(fgrad.lax.integer_pow(x, k)), np.asarray(jax.lax.integer_pow(x, k)))
