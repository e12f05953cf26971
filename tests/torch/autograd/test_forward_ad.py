"""torch.autograd.forward_ad on fgrad.torch (fgrad/torch/_tensor/forward_ad.py) against real
PyTorch: dual tensors through ops of both doors of the facade (the boundary and the
single-primitive fast path), modules, autograd.Function's jvp, in-place ops, reverse mode over
the tangents, the level's lifetime and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
T = RNG.standard_normal((4, 3))
W = RNG.standard_normal((2, 3))
B = RNG.standard_normal(2)

# functions of a dual x (and constants of the same library), each through several kinds of op
CASES = {
    "elementwise": lambda L, x: (x.sin() * 2).exp() + x ** 3 / (1 + x * x),
    "reductions": lambda L, x: L.stack([x.sum(0), x.mean(0), x.amax(0), x.logsumexp(0)]),
    "shape": lambda L, x: L.cat([x.t().reshape(-1), x[1:, :2].flatten(), x.transpose(0, 1)[0]]),
    "matmul": lambda L, x: x @ L.tensor(W).t() + x.T.matmul(x).sum(),
    "nn_functional": lambda L, x: L.nn.functional.linear(L.relu(x), L.tensor(W), L.tensor(B)).softmax(-1)
    + L.tanh(x).sum() + L.nn.functional.log_softmax(x, 1)[:, :2],
    "max_with_indices": lambda L, x: x.max(dim=1).values * 2,
    "keywords": lambda L, x: L.where(x > 0, x, L.zeros_like(x)).clamp(min=-0.5, max=0.7) + L.add(x, other=x, alpha=2),
    "scatter_of_tangent_free": lambda L, x: L.cumsum(x, 0) + L.linalg.norm(x, dim=1, keepdim=True),
    # a dual value written into a plain tensor, by indexing and through a view's in-place op
    "setitem": lambda L, x: _written(L.zeros(4, 3, dtype=L.float64), lambda z: z.__setitem__((1, slice(0, 2)), x[2, 1:])),
    "view_inplace": lambda L, x: _written(L.ones(4, 3, dtype=L.float64), lambda z: z[1:3].mul_(x[:2].exp())),
}


def _written(z, write):
    write(z)
    return z


def _dual_run(L, case, x_val, t_val):
    fwAD = L.autograd.forward_ad
    x = L.tensor(x_val)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, L.tensor(t_val))
        primal, tangent = fwAD.unpack_dual(CASES[case](L, d))
        return primal.numpy(), tangent.numpy()


def _torch_jvp(case):
    """torch's (value, J @ T) of CASES[case] by reverse mode (autograd.functional.jvp: fast
    to start, where torch's first forward-AD op imports its compiler, seconds)."""
    value, tangent = torch.autograd.functional.jvp(lambda x: CASES[case](torch, x), torch.tensor(X),
                                                   torch.tensor(T))
    return value.detach().numpy(), tangent.numpy()


@pytest.mark.parametrize("case", CASES)
def test_tangents_equal_torchs(case):
    ours = _dual_run(ftorch, case, X, T)
    for a, b in zip(ours, _torch_jvp(case)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_tangents_equal_torchs_forward_ad(case):
    ours = _dual_run(ftorch, case, X, T)
    theirs = _dual_run(torch, case, X, T)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _module_jvp(L, use_functional_call):
    """The forward-AD tutorial's two ways of pushing tangents of a Module's parameters."""
    fwAD = L.autograd.forward_ad
    model = L.nn.Linear(3, 2).double()
    with L.no_grad():
        model.weight.copy_(L.tensor(W))
        model.bias.copy_(L.tensor(B))
    params = dict(model.named_parameters())
    tangents = {"weight": L.tensor(W[::-1].copy()), "bias": L.tensor(B * 3)}
    with fwAD.dual_level():
        if use_functional_call:
            dual = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
            out = L.func.functional_call(model, dual, (L.tensor(X),))
        else:
            for name, p in params.items():
                delattr(model, name)
                setattr(model, name, fwAD.make_dual(p, tangents[name]))
            out = model(L.tensor(X))
        return fwAD.unpack_dual(out).tangent.detach().numpy()


@pytest.mark.parametrize("use_functional_call", [False, True])
def test_module_parameters_as_dual_tensors(use_functional_call):
    ours = _module_jvp(ftorch, use_functional_call)
    np.testing.assert_allclose(ours, X @ W[::-1].T + B * 3, rtol=1e-12)


# (torch's forward-AD runs, in the slow step: torch's first forward-AD op costs seconds)
@pytest.mark.slow
@pytest.mark.parametrize("use_functional_call", [False, True])
def test_module_parameters_as_dual_tensors_as_torch(use_functional_call):
    np.testing.assert_allclose(_module_jvp(ftorch, use_functional_call), _module_jvp(torch, use_functional_call),
                               rtol=1e-12)


def _custom_function(L):
    class Exp(L.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = L.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def backward(ctx, g):
            return g * ctx.result

        @staticmethod
        def jvp(ctx, g_in):
            g_out = g_in * ctx.result * 3  # (not exp's true jvp: shows that this one runs)
            del ctx.result
            return g_out
    return Exp


@pytest.mark.parametrize("libs", [pytest.param((torch, ftorch), marks=pytest.mark.slow), (ftorch,)],
                         ids=["as_torch", "fgrad"])
def test_autograd_function_jvp_staticmethod(libs):
    res = {torch: 3 * T * np.exp(X)}
    for L in libs:
        fwAD = L.autograd.forward_ad
        primal = L.tensor(X, requires_grad=True)
        with fwAD.dual_level():
            out = _custom_function(L).apply(fwAD.make_dual(primal, L.tensor(T)))
            res[L] = fwAD.unpack_dual(out).tangent.detach().numpy()
    np.testing.assert_allclose(res[ftorch], res[torch], rtol=1e-12)
    np.testing.assert_allclose(res[ftorch], 3 * T * np.exp(X), rtol=1e-12)


def test_function_without_jvp_is_refused_in_forward_mode():
    class NoJvp(ftorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    fwAD = ftorch.autograd.forward_ad
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="jvp"):
            NoJvp.apply(fwAD.make_dual(ftorch.tensor(X), ftorch.tensor(T)))


@pytest.mark.parametrize("libs", [pytest.param((torch, ftorch), marks=pytest.mark.slow), (ftorch,)],
                         ids=["as_torch", "fgrad"])
def test_in_place_op_updates_the_tangent_in_place_as_torch(libs):
    # d = sin(2 X) + X: tangent cos(2X) 2T, written into the given tangent tensor itself
    res = {torch: (np.cos(2 * X) * 2 * T,) * 2}
    for L in libs:
        fwAD = L.autograd.forward_ad
        t = L.tensor(T)
        with fwAD.dual_level():
            d = fwAD.make_dual(L.tensor(X), t)
            d.mul_(2).sin_()
            d.add_(L.tensor(X))  # a constant operand: the tangent is unchanged by it
            res[L] = (fwAD.unpack_dual(d).tangent.numpy(), t.numpy().copy())
    for a, b in zip(res[ftorch], res[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("libs", [pytest.param((torch, ftorch), marks=pytest.mark.slow), (ftorch,)],
                         ids=["as_torch", "fgrad"])
def test_reverse_mode_over_tangents_and_primals(libs):
    # (only the first factor is dual) p + tangent = sum(sin(x) x) + sum(cos(x) v x)
    res = {torch: (np.cos(X) * X + np.sin(X) + (np.cos(X) - np.sin(X) * X) * T, np.cos(X) * X)}
    for L in libs:
        fwAD = L.autograd.forward_ad
        x = L.tensor(X, requires_grad=True)
        v = L.tensor(T, requires_grad=True)
        with fwAD.dual_level():
            y = (fwAD.make_dual(x, v).sin() * x).sum()
            p, tangent = fwAD.unpack_dual(y)
            gx, gv = L.autograd.grad(tangent + p, (x, v))
        res[L] = (gx.numpy(), gv.numpy())
    for a, b in zip(res[ftorch], res[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_level_lifetime_and_plain_tensors():
    fwAD = ftorch.autograd.forward_ad
    x = ftorch.tensor(X)
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, ftorch.tensor(T))
        assert d.data_ptr() == x.data_ptr()  # an alias of the primal's storage
        y = d * 2
        assert fwAD.unpack_dual(x).tangent is None  # the primal itself carries none
        assert fwAD.unpack_dual(x * 2).tangent is None
        assert isinstance(fwAD.unpack_dual(y), fwAD.UnpackedDualTensor)
        assert fwAD.unpack_dual(fwAD.unpack_dual(y).primal).tangent is None
    # the level's tangents are gone with it
    assert fwAD.unpack_dual(y).tangent is None
    assert fwAD.unpack_dual(y).primal is y
    level = fwAD.enter_dual_level()
    try:
        assert fwAD.unpack_dual(y).tangent is None
    finally:
        fwAD.exit_dual_level(level=level)


@pytest.mark.parametrize("libs", [pytest.param((torch, ftorch), marks=pytest.mark.slow), (ftorch,)],
                         ids=["as_torch", "fgrad"])
def test_dual_of_a_tensor_that_requires_grad_is_a_view_in_the_graph(libs):
    res = {torch: 2 * np.exp(X)}
    for L in libs:
        fwAD = L.autograd.forward_ad
        x = L.tensor(X, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, L.tensor(T))
            assert d.requires_grad and d.grad_fn is not None
            (d.exp() * 2).sum().backward()
        res[L] = x.grad.numpy()
    np.testing.assert_allclose(res[ftorch], res[torch], rtol=1e-12)


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type.__name__, str(info.value)


@pytest.mark.parametrize("case", ["no_level", "nested", "shape", "int_tangent", "int_primal", "twice", "exit"])
def test_errors_match_torchs(case):
    msgs = {}
    for L in (torch, ftorch):
        fwAD = L.autograd.forward_ad
        x, t = L.tensor(X), L.tensor(T)
        if case == "no_level":
            msgs[L] = _error(lambda: fwAD.make_dual(x, t))
        elif case == "exit":
            msgs[L] = _error(lambda: fwAD.exit_dual_level())
        else:
            with fwAD.dual_level():
                fn = {"nested": lambda: fwAD.enter_dual_level(),
                      "shape": lambda: fwAD.make_dual(x, L.zeros(3)),
                      "int_tangent": lambda: fwAD.make_dual(x, L.ones(4, 3, dtype=L.long)),
                      "int_primal": lambda: fwAD.make_dual(L.ones(4, 3, dtype=L.long), t),
                      "twice": lambda: fwAD.make_dual(fwAD.make_dual(x, t), t)}[case]
                msgs[L] = _error(fn)
    assert msgs[ftorch][0] == msgs[torch][0]
    # fgrad's messages start with torch's sentence and may add the fix
    first = msgs[torch][1].split(". ")[0].rstrip(".")
    assert first in msgs[ftorch][1]


@pytest.mark.parametrize("libs", [pytest.param((torch, ftorch), marks=pytest.mark.slow), (ftorch,)],
                         ids=["as_torch", "fgrad"])
def test_gradcheck_checks_forward_mode_as_the_tutorial(libs):
    for L in libs:
        fn = _custom_function(L).apply
        primal = L.tensor(X, requires_grad=True)
        # the Function's jvp is 3x exp's true one: forward mode fails, backward mode passes
        with pytest.raises(RuntimeError, match="forward mode"):  # (GradcheckError, a RuntimeError)
            L.autograd.gradcheck(fn, (primal,), check_forward_ad=True, check_backward_ad=False,
                                 check_undefined_grad=False, check_batched_grad=False)
        assert L.autograd.gradcheck(fn, (primal,), check_undefined_grad=False)
        assert L.autograd.gradcheck(lambda x: (x.sin() * x).exp(), (primal,), check_forward_ad=True,
                                    check_undefined_grad=False)


def _seeded(L, module):
    with L.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(L.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)) / 2))
    return module


MODELS = {
    "conv_batchnorm_relu": (lambda L: L.nn.Sequential(L.nn.Conv2d(3, 4, 3), L.nn.BatchNorm2d(4), L.nn.ReLU()),
                            (2, 3, 5, 5), lambda out: out),
    "lstm": (lambda L: L.nn.LSTM(3, 4, batch_first=True), (2, 5, 3), lambda out: out[0]),
}


@pytest.mark.parametrize("name", MODELS)
def test_models_push_tangents_as_torch(name):
    make, shape, first = MODELS[name]
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal(shape), rng.standard_normal(shape)
    fm = _seeded(ftorch, make(ftorch).double())
    fw = ftorch.autograd.forward_ad
    with fw.dual_level():
        ours = fw.unpack_dual(first(fm(fw.make_dual(ftorch.tensor(x), ftorch.tensor(t))))).tangent
        # a batch norm's running statistics (updated without grad) carry no tangent, as in torch
        assert name != "conv_batchnorm_relu" or fw.unpack_dual(fm[1].running_mean).tangent is None
    tm = _seeded(torch, make(torch).double())
    theirs = torch.autograd.functional.jvp(lambda v: first(tm(v)), torch.tensor(x), torch.tensor(t))[1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
