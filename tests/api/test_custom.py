"""custom_vjp, custom_jvp, checkpoint (and autograd.Function, built on custom_vjp)."""
import types
from functools import partial

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core import errors
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
    # forward mode refuses a reverse-only rule (as JAX); forward over reverse uses it
    with pytest.raises(TypeError, match="forward-mode"):
        fgrad.jvp(sin, (0.3,), (1.0,))
    assert onp.isclose(fgrad.jvp(fgrad.grad(sin), (0.3,), (1.0,))[1], -onp.sin(0.3))
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


# --- state between applications: residuals belong to one application ---------------------------
#
# jit replays one equation (with its params) on every call and vmap's loop binds the same params
# once per example: a rule that kept anything of one application in the params (or anywhere
# shared) gave every application the last one's values. Each kind below is sin with a custom
# rule; every transform combination must give cos at each application's own input.

def _custom_vjp_sin():
    @fgrad.custom_vjp
    def sin(x):
        return np.sin(x)
    sin.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda cos_x, ct: (ct * cos_x,))
    return sin


def _custom_jvp_sin():
    @fgrad.custom_jvp
    def sin(x):
        return np.sin(x)
    sin.defjvp(lambda p, t: (np.sin(p[0]), np.cos(p[0]) * t[0]))
    return sin


class _FunctionSin(fgrad.torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()


# The transforms each kind runs under: fgrad's on arrays; for autograd.Function, which takes
# Tensors, the facade's doors (torch.func's, and torch.compile's engine for jit), which run
# fgrad's transforms on the Tensors' values (fgrad's own refuse Tensors).
_FGRAD = types.SimpleNamespace(grad=fgrad.grad, vmap=fgrad.vmap, jit=fgrad.jit, vjp=fgrad.vjp,
                               jvp=fgrad.jvp, sum=np.sum)
_TORCH = types.SimpleNamespace(grad=fgrad.torch.func.grad, vmap=fgrad.torch.func.vmap,
                               jit=fgrad.torch.func.compile_function, vjp=fgrad.torch.func.vjp,
                               jvp=fgrad.torch.func.jvp, sum=lambda x: x.sum())

KINDS = {
    "custom_vjp": (_custom_vjp_sin, lambda x: x, _FGRAD),
    "custom_jvp": (_custom_jvp_sin, lambda x: x, _FGRAD),
    "checkpoint": (lambda: fgrad.checkpoint(np.sin), lambda x: x, _FGRAD),
    "autograd.Function": (lambda: _FunctionSin.apply, fgrad.torch.tensor, _TORCH),
}


def _val(x):
    return onp.asarray(x.detach().numpy() if isinstance(x, fgrad.torch.Tensor) else x)


@pytest.mark.parametrize("kind", list(KINDS))
def test_residuals_belong_to_one_application(kind):
    make, box, T = KINDS[kind]
    g = make()
    jg = T.jit(g)
    xs = onp.array([0.1, 0.5, 1.0, 2.0])
    close = lambda got, want: onp.testing.assert_allclose(_val(got), want, rtol=1e-12, atol=1e-15)  # noqa: E731

    # vmap's loop applies the rule once per example: each needs its own residuals
    close(T.grad(lambda x: T.sum(T.vmap(g)(x)))(box(xs)), onp.cos(xs))
    close(T.grad(lambda x: T.sum(T.vmap(jg)(x)))(box(xs)), onp.cos(xs))
    close(T.vmap(T.grad(g))(box(xs)), onp.cos(xs))
    close(T.vmap(T.grad(jg))(box(xs)), onp.cos(xs))
    close(T.jit(T.vmap(T.grad(g)))(box(xs)), onp.cos(xs))
    # two applications of one jitted function (one equation, two nodes)
    two = lambda h: lambda x: T.sum(h(x) + h(2.0 * x))  # noqa: E731
    want = onp.cos(xs) + 2 * onp.cos(2 * xs)
    close(T.grad(two(jg))(box(xs)), want)
    close(T.grad(two(g))(box(xs)), want)
    # two vjps of the same function, pulled back after both forwards ran
    for h in (g, jg):
        _, f1 = T.vjp(h, box(xs))
        _, f2 = T.vjp(h, box(xs + 1.0))
        close(f1(box(onp.ones(4)))[0], onp.cos(xs))
        close(f2(box(onp.ones(4)))[0], onp.cos(xs + 1.0))
    # one trace of jit(grad), replayed at different points
    jgrad = T.jit(T.grad(lambda x: T.sum(jg(x) * jg(x + 1.0))))
    for x0 in (xs, xs + 0.7):
        close(jgrad(box(x0)), onp.cos(x0) * onp.sin(x0 + 1) + onp.sin(x0) * onp.cos(x0 + 1))
    # second order: grad of grad and forward over reverse
    prod = lambda h: lambda x: T.sum(h(x) * h(2.0 * x))  # noqa: E731
    want2 = fgrad.vmap(fgrad.grad(fgrad.grad(lambda x: np.sin(x) * np.sin(2.0 * x))))(xs)
    close(T.vmap(T.grad(T.grad(lambda x: g(x) * g(2.0 * x))))(box(xs)), want2)
    close(T.jvp(T.grad(prod(g)), (box(xs),), (box(onp.ones(4)),))[1], want2)
    t = fgrad.torch.tensor(xs, requires_grad=True)
    if T is _FGRAD:  # fgrad's own custom rules take arrays: a Tensor is refused, naming the door
        with pytest.raises(TypeError, match=r"got a fgrad\.torch\.Tensor: use fgrad\.torch\."):
            g(t)
        return
    # the Tensor facade: two applications, and second order through create_graph
    (g(t) + g(2.0 * t)).sum().backward()
    close(t.grad, want)
    t = fgrad.torch.tensor(xs, requires_grad=True)
    (gt,) = fgrad.torch.autograd.grad(prod(g)(t), t, create_graph=True)
    gt.sum().backward()
    close(t.grad, want2)


def test_custom_vjp_fwd_runs_once_per_application_and_fun_not_at_all():
    calls = {"fun": 0, "fwd": 0}

    @fgrad.custom_vjp
    def f(x):
        calls["fun"] += 1
        return np.sin(x)

    def f_fwd(x):
        calls["fwd"] += 1
        return np.sin(x), np.cos(x)
    f.defvjp(f_fwd, lambda c, ct: (ct * c,))
    assert onp.isclose(fgrad.grad(lambda x: f(x) + f(2.0 * x))(0.3), onp.cos(0.3) + 2 * onp.cos(0.6))
    assert calls == {"fun": 0, "fwd": 2}
    f(onp.ones(2))  # no transform: the primal only
    assert calls == {"fun": 1, "fwd": 2}


def test_custom_call_params_are_immutable():
    from fgrad.custom import custom_vjp_call_p
    f = _custom_vjp_sin()
    eqn = fgrad.make_jaxpr(f)(0.3).eqns[0]
    assert eqn.primitive is custom_vjp_call_p
    with pytest.raises(AttributeError, match="immutable"):
        eqn.params["call"].residuals = 1.0


class _Threshold(fgrad.torch.autograd.Function):
    """Outputs of every kind: a float, a bool mask marked non-differentiable, an int64 count
    and a Python value; the custom gradient (2x where the mask holds, else 0) needs the mask."""

    @staticmethod
    def forward(ctx, x, limit):
        mask = x > limit
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(x, mask)
        return x * x, mask, mask.sum(), "tag"

    @staticmethod
    def backward(ctx, gy, gmask, gcount, gtag):
        x, mask = ctx.saved_tensors
        # the outputs without a gradient get zeros of their own shape and dtype (materialize_grads)
        assert gmask.dtype == fgrad.torch.bool and gmask.shape == mask.shape
        assert gcount.dtype == fgrad.torch.int64 and gcount.shape == () and gtag is None
        return gy * 2.0 * x * mask, None


def test_function_outputs_of_every_kind_belong_to_their_own_application():
    # Each example of vmap's loop, each replay of a jit trace and each backward sees the outputs
    # (float, bool, int64, Python) of its own forward run, as when it runs alone. (The
    # transforms are the facade's: fgrad's own refuse Tensors.)
    tf, jit = fgrad.torch.func, fgrad.torch.func.compile_function
    xs = onp.array([[0.1, 0.2, 0.3], [0.9, 0.2, 0.7], [0.6, 0.8, 0.95], [0.0, 0.55, 0.1]])

    def f(x):
        y, mask, count, tag = _Threshold.apply(x, 0.5)
        assert tag == "tag"
        return y, mask, count

    def loss(x):
        return (f(x)[0] * fgrad.torch.tensor([1.0, 2.0, 3.0])).sum()

    want = []
    for row in xs:  # per example, eagerly through the facade (forward and backward)
        t = fgrad.torch.tensor(row, requires_grad=True)
        y, mask, count, tag = _Threshold.apply(t, 0.5)
        assert tag == "tag" and y.requires_grad and not mask.requires_grad and not count.requires_grad
        (y * fgrad.torch.tensor([1.0, 2.0, 3.0])).sum().backward()
        want.append((y.detach().numpy(), mask.numpy(), count.numpy(), t.grad.numpy()))
    y_w, mask_w, count_w, grad_w = (onp.stack(c) for c in zip(*want))
    onp.testing.assert_array_equal(mask_w, xs > 0.5)
    onp.testing.assert_array_equal(count_w, (xs > 0.5).sum(1))
    onp.testing.assert_allclose(grad_w, 2 * xs * (xs > 0.5) * [1.0, 2.0, 3.0])

    def check(out, rows=slice(None)):
        y, mask, count = (_val(o) for o in out)
        onp.testing.assert_allclose(y, y_w[rows], rtol=1e-15)
        assert mask.dtype == bool and count.dtype == onp.int64
        onp.testing.assert_array_equal(mask, mask_w[rows])
        onp.testing.assert_array_equal(count, count_w[rows])

    check(tf.vmap(f)(fgrad.torch.tensor(xs)))
    check(jit(tf.vmap(f))(fgrad.torch.tensor(xs)))
    jf = jit(f)
    for i in range(len(xs)):  # one trace, replayed on every example
        check(jf(fgrad.torch.tensor(xs[i])), i)
    check(tf.vmap(jf)(fgrad.torch.tensor(xs)))

    close = lambda got: onp.testing.assert_allclose(_val(got), grad_w, rtol=1e-15)  # noqa: E731
    close(tf.vmap(tf.grad(loss))(fgrad.torch.tensor(xs)))
    close(jit(tf.vmap(tf.grad(loss)))(fgrad.torch.tensor(xs)))
    close(tf.grad(lambda x: tf.vmap(loss)(x).sum())(fgrad.torch.tensor(xs)))
    jgrad = jit(tf.grad(loss))
    close(onp.stack([_val(jgrad(fgrad.torch.tensor(row))) for row in xs]))
    # the facade: several applications in one graph, each backward with its own mask
    t = fgrad.torch.tensor(xs, requires_grad=True)
    outs = [_Threshold.apply(t[i], 0.5) for i in range(len(xs))]
    sum((o[0] * fgrad.torch.tensor([1.0, 2.0, 3.0])).sum() for o in outs).backward()
    close(t.grad)
    for i, (y, mask, count, _) in enumerate(outs):
        check((y.detach(), mask, count), i)


# --- fwd / bwd calling the decorated function itself -------------------------------------------

def test_fwd_calling_the_decorated_function_runs_its_primal():
    """JAX's documented pattern `def f_fwd(x): return f(x), cos(x)` (it recursed forever)."""
    calls = {"fun": 0}

    @fgrad.custom_vjp
    def f(x):
        calls["fun"] += 1
        return np.sin(x)

    def f_fwd(x):
        return f(x), np.cos(x)

    def f_bwd(cos_x, g):
        return (g * cos_x * f(onp.float64(0.0) + 1.0) / onp.sin(1.0),)  # bwd may call f too
    f.defvjp(f_fwd, f_bwd)
    x = onp.array([0.3, 1.1])
    onp.testing.assert_allclose(f(x), onp.sin(x))
    assert calls["fun"] == 1
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(f(x)))(x), onp.cos(x))
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(x), onp.cos(x))
    onp.testing.assert_allclose(fgrad.jit(fgrad.grad(lambda x: np.sum(f(x))))(x), onp.cos(x))
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(fgrad.grad(f)))(x), -onp.sin(x))

    @fgrad.custom_jvp
    def h(x):
        return np.sin(x)
    h.defjvp(lambda p, t: (h(p[0]), np.cos(p[0]) * t[0]))
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(h(x)))(x), onp.cos(x))


# --- the API: nondiff_argnums, defjvps, keyword arguments, pytree outputs -----------------------

def _clip_gradient(lib, jnp):
    """JAX's documented example."""
    @partial(lib.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    def clip_gradient_fwd(lo, hi, x):
        return x, None

    def clip_gradient_bwd(lo, hi, _, g):
        return (jnp.clip(g, lo, hi),)
    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)
    return clip_gradient


def test_custom_vjp_nondiff_argnums_clip_gradient():
    clip = _clip_gradient(fgrad, np)
    f = lambda x: np.sum(5.0 * clip(-1.0, 1.0, x))  # noqa: E731
    x = onp.array([2.0, -3.0])
    assert clip(-1.0, 1.0, 2.0) == 2.0
    onp.testing.assert_allclose(fgrad.grad(f)(x), [1.0, 1.0])
    onp.testing.assert_allclose(fgrad.jit(fgrad.grad(f))(x), [1.0, 1.0])
    onp.testing.assert_allclose(fgrad.grad(fgrad.jit(f))(x), [1.0, 1.0])
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(lambda x: 5.0 * clip(-1.0, 1.0, x)))(x), [1.0, 1.0])
    # a traced bound is passed to bwd too, and gets no gradient
    g_x, g_hi = fgrad.grad(lambda x, hi: np.sum(5.0 * clip(-1.0, hi, x)), argnums=(0, 1))(x, 2.0)
    onp.testing.assert_allclose(g_x, [2.0, 2.0])
    assert g_hi == 0.0
    # Python bounds stay Python values: static in the IR, not inputs
    assert str(fgrad.make_jaxpr(lambda x: clip(-1.0, 1.0, x))(x)).count("f64[]") == 0


def test_custom_jvp_nondiff_argnums():
    @partial(fgrad.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    @app.defjvp
    def app_jvp(f, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(f, x), 3.0 * t  # a deliberately "wrong" rule, to see that it is used
    assert fgrad.grad(lambda x: app(np.sin, x))(0.2) == 3.0
    assert fgrad.jvp(lambda x: app(np.sin, x), (0.2,), (2.0,))[1] == 6.0
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(lambda x: app(np.sin, x)))(onp.ones(2)), [3.0, 3.0])


def test_custom_jvp_defjvps():
    @fgrad.custom_jvp
    def f(x, y):
        return np.sin(x) * y
    f.defjvps(lambda g, ans, x, y: np.cos(x) * g * y, lambda g, ans, x, y: np.sin(x) * g)
    gx, gy = fgrad.grad(f, (0, 1))(0.3, 2.0)
    onp.testing.assert_allclose([gx, gy], [2 * onp.cos(0.3), onp.sin(0.3)])
    onp.testing.assert_allclose(fgrad.jvp(f, (0.3, 2.0), (1.0, 0.5))[1], 2 * onp.cos(0.3) + 0.5 * onp.sin(0.3))
    f.defjvps(None, lambda g, ans, x, y: np.sin(x) * g)  # None: no dependence on x
    gx, gy = fgrad.grad(f, (0, 1))(0.3, 2.0)
    assert gx == 0.0 and onp.isclose(gy, onp.sin(0.3))

    @partial(fgrad.custom_jvp, nondiff_argnums=(0,))
    def g(n, x):
        return x ** n
    with pytest.raises(TypeError, match="nondiff_argnums"):
        g.defjvps(lambda t, ans, n, x: t)


def test_keyword_arguments_bind_to_positions():
    @fgrad.custom_vjp
    def scale(x, y=2.0):
        return x * y
    # bwd gives y's cotangent 10x too large, to see which argument got which
    scale.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1], 10.0 * g * r[0]))
    assert scale(3.0, y=4.0) == 12.0
    assert fgrad.grad(lambda x: scale(x, y=3.0))(1.0) == 3.0
    assert fgrad.grad(lambda x: scale(x))(1.0) == 2.0  # the default is filled in for fwd/bwd
    assert fgrad.grad(lambda y: scale(3.0, y=y))(1.0) == 30.0
    assert fgrad.grad(lambda x: scale(y=5.0, x=x))(1.0) == 5.0

    @fgrad.custom_jvp
    def f(x, *, k):
        return x * k
    f.defjvp(lambda p, t: (p[0] * 2.0, t[0] * 2.0))
    with pytest.raises(TypeError, match="could not be resolved to positions"):
        fgrad.grad(lambda x: f(x, k=2.0))(1.0)
    with pytest.raises(TypeError, match="scale"):
        fgrad.grad(lambda x: scale(x, z=1.0))(1.0)

    # checkpoint takes keyword arguments as part of its inputs; flags stay Python values
    def block(x, *, scale=1.0, square=False):
        y = np.tanh(x) * scale
        return y * y if square else y
    c = fgrad.checkpoint(block)
    x = onp.array([0.3, -0.4])
    for kw in ({}, {"scale": 2.0}, {"scale": 2.0, "square": True}):
        onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(c(x, **kw)))(x),
                                    fgrad.grad(lambda x: np.sum(block(x, **kw)))(x), rtol=1e-12)
    onp.testing.assert_allclose(fgrad.grad(lambda s: np.sum(c(x, scale=s)))(2.0), onp.sum(onp.tanh(x)))


def _tree_sum(tree):
    return sum(np.sum(leaf) for leaf in fgrad.tree_util.tree_leaves(tree) if leaf.dtype.kind == "f")


def test_pytree_outputs():
    @fgrad.custom_vjp
    def polar(x):
        return {"s": np.sin(x), "rest": (x * 2.0, x ** 2)}

    def polar_bwd(x, g):  # the true derivative, scaled 2x on the sin part to see the rule is used
        return (2.0 * np.cos(x) * g["s"] + 2.0 * g["rest"][0] + 2.0 * x * g["rest"][1],)
    polar.defvjp(lambda x: (polar(x), x), polar_bwd)

    @fgrad.custom_jvp
    def trig(x):
        return np.sin(x), np.cos(x).astype(np.float32)

    @trig.defjvp
    def _(p, t):
        (x,), (tx,) = p, t
        return trig(x), (2.0 * np.cos(x) * tx, (-np.sin(x) * tx).astype(np.float32))

    ckpt = fgrad.checkpoint(lambda x: {"t": np.tanh(x), "i": np.argmax(x), "q": x ** 3})

    x = onp.array([0.3, 0.9, -0.2])
    out = polar(x)
    assert set(out) == {"s", "rest"} and len(out["rest"]) == 2
    want = {
        "polar": 2.0 * onp.cos(x) + 2.0 + 2.0 * x,
        "trig": 2.0 * onp.cos(x) - onp.sin(x),
        "ckpt": 1.0 - onp.tanh(x) ** 2 + 3.0 * x ** 2,
    }
    for name, f in (("polar", polar), ("trig", trig), ("ckpt", ckpt)):
        total = lambda x: _tree_sum(f(x))  # noqa: E731
        for grad in (fgrad.grad(total), fgrad.jit(fgrad.grad(total)), fgrad.grad(fgrad.jit(total))):
            onp.testing.assert_allclose(grad(x), want[name], rtol=1e-6, err_msg=name)
        onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(total))(x), want[name], rtol=1e-6, err_msg=name)
        # structure, dtypes and values agree with the plain call under jit and vmap
        plain = fgrad.tree_util.tree_leaves(f(x))
        for other in (fgrad.jit(f)(x), fgrad.vmap(f)(onp.stack([x, x]))):
            leaves = fgrad.tree_util.tree_leaves(other)
            assert len(leaves) == len(plain)
            for a, b in zip(plain, leaves):
                b = b[0] if onp.ndim(b) > onp.ndim(a) else b
                assert onp.asarray(a).dtype == onp.asarray(b).dtype, name
                onp.testing.assert_allclose(onp.asarray(a), onp.asarray(b), rtol=1e-6, err_msg=name)
    assert trig(x)[1].dtype == onp.float32
    onp.testing.assert_allclose(fgrad.jvp(lambda x: trig(x)[0] + trig(x)[1], (x,), (onp.ones(3),))[1],
                                want["trig"], rtol=1e-6)
    # integer leaves travel exactly, 64-bit ones too
    big = fgrad.checkpoint(lambda x: (np.sin(x), np.argmax(x) + 2 ** 53 + 1))
    assert int(fgrad.jit(big)(x)[1]) == 2 ** 53 + 2
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(big(x)[0]))(x), onp.cos(x))


@pytest.mark.slow  # (XLA's compiles for each JAX reference dominate; CI's slow step runs it)
def test_pytree_outputs_match_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)

    def build(lib, xnp):
        @lib.custom_vjp
        def two(x, y):
            return {"a": xnp.sin(x) * y, "b": (x * y, x ** 2)}

        def two_bwd(res, g):
            x, y = res
            return (xnp.cos(x) * y * g["a"] + y * g["b"][0] + 2.0 * x * g["b"][1] * 0.5,
                    xnp.sin(x) * g["a"] + x * g["b"][0])
        two.defvjp(lambda x, y: (two(x, y), (x, y)), two_bwd)

        @partial(lib.custom_jvp, nondiff_argnums=(1,))
        def pw(x, n):
            return (x ** n, {"log": xnp.log(x)})

        @pw.defjvp
        def _(n, p, t):
            (x,), (tx,) = p, t
            return pw(x, n), (2.0 * n * x ** (n - 1) * tx, {"log": tx / x})

        @lib.custom_jvp
        def k(x, y):
            return xnp.sin(x) * y
        k.defjvps(lambda g, ans, x, y: 3.0 * xnp.cos(x) * g * y, lambda g, ans, x, y: xnp.sin(x) * g)
        blk = lib.checkpoint(lambda x, scale=1.0: (xnp.tanh(x) * scale, {"q": x ** 2}))
        return {
            "custom_vjp": lambda x: two(x, x * 0.5 + 1.0)["a"] + two(x, x * 0.0 + 2.0)["b"][1],
            "custom_jvp": lambda x: pw(x, 3)[0] + pw(x, 2)[1]["log"],
            "defjvps": lambda x: k(x, x * x),
            "checkpoint": lambda x: blk(x, scale=1.5)[0] + blk(x)[1]["q"],
        }

    J, F = build(jax, jnp), build(fgrad, np)
    x = onp.array([0.3, 0.7, 1.1])
    for name in J:
        fj = lambda v: jnp.sum(J[name](v))  # noqa: E731
        ff = lambda v: np.sum(F[name](v))  # noqa: E731
        onp.testing.assert_allclose(fgrad.vmap(F[name])(x), jax.vmap(J[name])(x), rtol=1e-12, err_msg=name)
        onp.testing.assert_allclose(fgrad.grad(ff)(x), jax.grad(fj)(x), rtol=1e-12, err_msg=name)
        onp.testing.assert_allclose(fgrad.jit(fgrad.grad(ff))(x), jax.grad(fj)(x), rtol=1e-12, err_msg=name)
        onp.testing.assert_allclose(fgrad.jacrev(fgrad.jacrev(ff))(x), jax.jacrev(jax.jacrev(fj))(x),
                                    rtol=1e-10, err_msg=name)
        if name != "custom_vjp":  # JAX has no forward mode through custom_vjp
            onp.testing.assert_allclose(fgrad.jvp(ff, (x,), (x,))[1], jax.jvp(fj, (x,), (x,))[1],
                                        rtol=1e-12, err_msg=name)
    clip = _clip_gradient(fgrad, np)
    clip_j = _clip_gradient(jax, jnp)
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(5.0 * clip(-1.0, 1.0, x)))(x),
                                jax.grad(lambda x: jnp.sum(5.0 * clip_j(-1.0, 1.0, x)))(x))


# --- malformed rules: a clear error on every path ----------------------------------------------

def _paths(f, forward: bool):
    x = onp.array([0.3, 0.5])
    paths = {
        "grad": lambda: fgrad.grad(lambda x: np.sum(f(x)))(x),
        "jit(grad)": lambda: fgrad.jit(fgrad.grad(lambda x: np.sum(f(x))))(x),
        "grad(jit)": lambda: fgrad.grad(lambda x: np.sum(fgrad.jit(f)(x)))(x),
        "vmap(grad)": lambda: fgrad.vmap(fgrad.grad(lambda x: np.sum(f(x))))(onp.stack([x, x])),
        "grad(vmap)": lambda: fgrad.grad(lambda x: np.sum(fgrad.vmap(f)(x)))(onp.stack([x, x])),
    }
    if forward:
        paths.update({
            "jvp": lambda: fgrad.jvp(f, (x,), (x,)),
            "jit(jvp)": lambda: fgrad.jit(lambda x: fgrad.jvp(f, (x,), (x,)))(x),
            "jvp(jit)": lambda: fgrad.jvp(fgrad.jit(f), (x,), (x,)),
            "vmap(jvp)": lambda: fgrad.vmap(lambda x: fgrad.jvp(f, (x,), (x,)))(x),
        })
    return paths


def _jvp_not_pair():
    @fgrad.custom_jvp
    def f(x):
        return np.sin(x)
    f.defjvp(lambda p, t: np.cos(p[0]) * t[0])
    return f


def _jvp_one_tuple():
    @fgrad.custom_jvp
    def f(x):
        return np.sin(x)
    f.defjvp(lambda p, t: (np.cos(p[0]) * t[0],))
    return f


def _jvp_tangent_shape():
    @fgrad.custom_jvp
    def f(x):
        return np.sin(x)
    f.defjvp(lambda p, t: (np.sin(p[0]), np.sum(t[0]) * onp.ones(3)))
    return f


def _vjp(fwd, bwd):
    @fgrad.custom_vjp
    def f(x):
        return np.sin(x)
    f.defvjp(fwd, bwd)
    return f


MALFORMED = {
    "jvp rule returns an array": (_jvp_not_pair, True, TypeError, r"must return a pair.*got an array"),
    "jvp rule returns a 1-tuple": (_jvp_one_tuple, True, TypeError, r"must return a pair.*length 1"),
    "jvp tangent of the wrong shape": (_jvp_tangent_shape, True, TypeError, r"tangent of shape \(3,\)"),
    "fwd returns an array": (lambda: _vjp(lambda x: np.sin(x), lambda r, g: (g,)), False, TypeError,
                             r"fwd of f must return a pair \(output, residuals\)"),
    "bwd returns an array": (lambda: _vjp(lambda x: (np.sin(x), x), lambda r, g: g), False, TypeError,
                             r"must return a tuple with one cotangent"),
    "bwd returns two cotangents": (lambda: _vjp(lambda x: (np.sin(x), x), lambda r, g: (g, g)), False,
                                   ValueError, r"returned 2 cotangents for 1 .*one per argument"),
    "bwd cotangent of the wrong shape": (lambda: _vjp(lambda x: (np.sin(x), x),
                                                      lambda r, g: (np.sum(g) * onp.ones(3),)),
                                         False, ValueError, r"cotangent shape \(3,\)"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_rule_is_a_clear_error_on_every_path(case):
    make, forward, exc, pattern = MALFORMED[case]
    f = make()
    assert onp.allclose(f(onp.array([0.3])), onp.sin(0.3))  # no transform: no rule runs
    for path, run in _paths(f, forward).items():
        with pytest.raises(exc, match=pattern):
            run()
        assert fgrad.grad(lambda x: x * x)(3.0) == 6.0, path  # and fgrad keeps working


def test_closed_over_traced_value_is_a_clear_error():
    w0 = onp.array([1.0, 2.0])
    with pytest.raises(errors.UnexpectedTracerError, match="not one of its arguments"):
        fgrad.grad(lambda w: np.sum(fgrad.checkpoint(lambda x: x * w)(w * 2.0)))(w0)
    # a Tensor is refused (fgrad.torch.utils.checkpoint is the facade's door)
    w = fgrad.torch.tensor(w0, requires_grad=True)
    with pytest.raises(TypeError, match=r"fgrad\.checkpoint got a fgrad\.torch\.Tensor: use "
                                        r"fgrad\.torch\.utils\.checkpoint\.checkpoint"):
        fgrad.checkpoint(lambda x: x * w)(fgrad.torch.tensor(w0, requires_grad=True))
    # with no traced argument the function just runs, so closures differentiate normally
    onp.testing.assert_allclose(fgrad.grad(lambda w: np.sum(fgrad.checkpoint(lambda x: x * w)(onp.ones(2))))(w0),
                                [1.0, 1.0])
    # passed as an argument instead, it works
    onp.testing.assert_allclose(fgrad.grad(lambda w: np.sum(fgrad.checkpoint(lambda x, w: x * w)(w * 2.0, w)))(w0),
                                4.0 * w0)
