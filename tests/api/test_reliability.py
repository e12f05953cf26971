"""Threads, NaN debugging and the SPEC 3b convention table."""
import threading

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np


def test_eight_threads_compute_different_gradients():
    errors, barrier = [], threading.Barrier(8)

    def work(k):
        try:
            barrier.wait()
            f = lambda x: np.sum(np.sin(k * x) * x ** 2)
            for _ in range(30):
                x = onp.linspace(-1, 1, 5) + k
                g = fgrad.grad(f)(x)
                want = k * onp.cos(k * x) * x ** 2 + 2 * x * onp.sin(k * x)
                onp.testing.assert_allclose(g, want, rtol=1e-12)
                h = fgrad.grad(fgrad.grad(lambda s: np.sin(k * s)))(0.3)
                onp.testing.assert_allclose(h, -k * k * onp.sin(k * 0.3), rtol=1e-12)
        except Exception as e:  # pragma: no cover - reported below
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_debug_nans_names_the_primitive_and_recovers():
    with fgrad.debug_nans():
        with pytest.raises(FloatingPointError, match="'log'"):
            fgrad.grad(lambda x: np.log(x - 2.0))(1.0)
        with pytest.raises(FloatingPointError, match="'div'"):
            np.divide(np.zeros(2), np.zeros(2))
    assert onp.isnan(np.log(-1.0))  # off again: NaN propagates silently
    assert fgrad.grad(np.log)(2.0) == 0.5


def test_nan_and_inf_propagate_not_masked():
    assert onp.isnan(fgrad.grad(np.sqrt)(-1.0))
    assert onp.isinf(fgrad.grad(np.sqrt)(0.0))
    assert onp.isnan(fgrad.grad(lambda x: x * np.nan)(1.0))


@pytest.mark.parametrize("f, x, want", [
    (np.abs, 0.0, 0.0),
    (np.abs, -0.0, 0.0),
    (lambda x: np.maximum(x, 1.0), 1.0, 0.5),
    (lambda x: np.minimum(x, 1.0), 1.0, 0.5),
    (np.sqrt, 0.0, onp.inf),
])
def test_convention_table(f, x, want):
    assert fgrad.grad(f)(x) == want
    assert fgrad.jvp(f, (x,), (1.0,))[1] == want


def test_max_reduction_ties_split_evenly():
    g = fgrad.grad(lambda v: np.max(v))(onp.array([1.0, 3.0, 3.0]))
    onp.testing.assert_array_equal(g, [0.0, 0.5, 0.5])
