"""custom_vjp, custom_jvp and checkpoint."""
import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.test_util import check_grads


def make_clip_gradient():
    @fgrad.custom_vjp
    def clip_gradient(x):
        return x * 1.0

    clip_gradient.defvjp(lambda x: (x * 1.0, None), lambda res, ct: (np.clip(ct, -1.0, 1.0),))
    return clip_gradient


def test_custom_vjp_rule_is_used_and_composes():
    f = make_clip_gradient()
    assert fgrad.grad(lambda x: 5.0 * f(x))(2.0) == 1.0
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(3.0 * f(x)))(onp.ones(3)), [1.0, 1.0, 1.0])

    @fgrad.custom_vjp
    def sin(x):
        return np.sin(x)
    sin.defvjp(lambda x: (np.sin(x), x), lambda x, ct: (ct * np.cos(x),))
    # the rule is written with fgrad ops, so its own derivative exists
    assert onp.isclose(fgrad.grad(fgrad.grad(sin))(0.3), -onp.sin(0.3))
    assert onp.isclose(fgrad.jvp(sin, (0.3,), (1.0,))[1], onp.cos(0.3))
    assert "custom_vjp_call" in str(fgrad.make_jaxpr(sin)(0.3))


def test_custom_jvp_serves_both_modes():
    @fgrad.custom_jvp
    def log1pexp(x):
        return np.log(1.0 + np.exp(x))

    @log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + np.exp(x)))

    assert fgrad.grad(log1pexp)(100.0) == 1.0  # the naive derivative would be nan
    assert fgrad.jvp(log1pexp, (100.0,), (2.0,))[1] == 2.0
    check_grads(log1pexp, (onp.array([0.3, -1.0]),), order=2, modes=("fwd", "rev"))


def test_checkpoint_matches_plain_grad():
    def block(x):
        for _ in range(5):
            x = np.tanh(x) * 1.5
        return x
    f = lambda x: np.sum(fgrad.checkpoint(block)(x) ** 2)
    g = lambda x: np.sum(block(x) ** 2)
    x = onp.linspace(-1, 1, 4)
    onp.testing.assert_allclose(fgrad.grad(f)(x), fgrad.grad(g)(x), rtol=1e-12)
    onp.testing.assert_allclose(fgrad.hessian(f)(x), fgrad.hessian(g)(x), rtol=1e-10)


def test_custom_rule_errors():
    @fgrad.custom_vjp
    def f(x):
        return x * 2.0
    with pytest.raises(TypeError, match="defvjp"):
        f(1.0)
    f.defvjp(lambda x: (x * 2.0, None), lambda r, ct: (ct, ct))
    with pytest.raises(ValueError, match="one per argument"):
        fgrad.grad(f)(1.0)
    f.defvjp(lambda x: (x * 2.0, None), lambda r, ct: (ct * 2.0,))
    assert fgrad.grad(f)(1.0) == 2.0
