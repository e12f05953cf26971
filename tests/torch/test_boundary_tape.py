"""Taped torch ops (fgrad/interpreters/tape.py, `_boundary.replayable`): a replayable op's
computation is taped once per key (shapes, dtypes, static arguments) and rerun without its
Python. The rerun must be indistinguishable from recording the op afresh: the same values,
grad_fn graph and gradients of first and second order, bit for bit, whichever operands
require grad; and a function whose applications depend on more than its key is never taped.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad.numpy as fnp
import fgrad.torch as ftorch
from fgrad.torch._tensor import _boundary
from fgrad.torch._tensor._policy import TORCH
from tests.torch.graphs import graph_of
from tests.torch.test_graph_math import CASES as MATH
from tests.torch.test_graph_math import NOT_DIFFERENTIABLE
from tests.torch.test_graph_nn import CASES as NN


def _leaf_factory(lib):
    def L(shape, seed=0, low=0.5, high=1.5):
        v = np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)
        return lib.tensor(v, requires_grad=True)
    return L


def _tensors(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return [out] if isinstance(out, ftorch.Tensor) else []


def _bits(t):
    v = np.asarray(t.detach().numpy())
    return (v.dtype.str, v.shape, v.tobytes())


def _trace_of(run, detach_rest: bool, second: bool):
    """Everything observable of one run: values, graphs, gradients (and second ones)."""
    ftorch.manual_seed(0)
    out, inputs = run()
    inputs = [a for a in inputs if a.requires_grad]
    outs = _tensors(out)
    seen = [(_bits(o), graph_of(o, 2)) for o in outs]
    diff = [o for o in outs if o.grad_fn is not None and o.dtype.is_floating_point]
    if not diff:
        return seen
    rng = np.random.default_rng(1)
    loss = sum((o * ftorch.tensor(rng.uniform(0.5, 1.5, tuple(o.shape)).astype(np.float32))).sum()
               for o in diff)
    grads = ftorch.autograd.grad(loss, inputs, allow_unused=True, create_graph=second)
    seen.append([None if g is None else _bits(g) for g in grads])
    if second:
        again = [g for g in grads if g is not None and g.grad_fn is not None]
        if again:
            g2 = ftorch.autograd.grad(sum((g * g).sum() for g in again), inputs, allow_unused=True)
            seen.append([None if g is None else _bits(g) for g in g2])
    return seen


def _math_run(name, detach_rest):
    fn, make_args = MATH[name].values

    def run():
        args = make_args(ftorch)
        if detach_rest:
            args = (args[0], *[a.detach() if isinstance(a, ftorch.Tensor) else a for a in args[1:]])
        return fn(ftorch, *args), [a for a in args if isinstance(a, ftorch.Tensor)]
    return run


def _nn_run(name, detach_rest):
    case = NN[name]

    def run():
        made = []
        base = _leaf_factory(ftorch)

        def L(*a, **k):
            t = base(*a, **k)
            if detach_rest and made:
                t = t.detach()
            made.append(t)
            return t
        return case(ftorch, ftorch.nn.functional, L), made
    return run


def _compare(run, monkeypatch, second: bool = True):
    """The run with taping off, then twice with it on (the tape's first sight, then a rerun)."""
    for detach_rest in (False, True):
        with monkeypatch.context() as m:
            m.setattr(_boundary, "REPLAYABLE", set())
            want = _trace_of(run, detach_rest, second)
        _boundary._TAPES.clear()
        first = _trace_of(run, detach_rest, second)
        rerun = _trace_of(run, detach_rest, second)
        assert first == want
        assert rerun == want


# the composite ops the tape is for, in the default run
COMMON_MATH = ["mean", "mean dim", "var", "var dim", "std", "logsumexp", "softmax", "log_softmax", "clamp numbers",
               "clamp tensors", "x + broadcast y", "x + broadcast y (y needs no grad)", "2 / x", "exp2", "round",
               "trunc", "remainder", "maximum (other needs no grad)", "nansum", "prod dim"]
COMMON_NN = ["softmax", "mse_loss", "mse_loss_constant_target", "cross_entropy", "cross_entropy_weight", "nll_loss",
             "layer_norm", "gelu", "elu", "binary_cross_entropy_with_logits", "smooth_l1_loss", "group_norm"]


@pytest.mark.parametrize("name", COMMON_MATH)
def test_taped_math_op_is_bit_identical(name, monkeypatch):
    _compare(_math_run(name, False), monkeypatch)
    _compare(_math_run(name, True), monkeypatch, second=False)


@pytest.mark.parametrize("name", COMMON_NN)
def test_taped_nn_op_is_bit_identical(name, monkeypatch):
    _compare(_nn_run(name, False), monkeypatch)


def test_the_common_composites_are_taped():
    """Each of these ops reruns a tape (the test above could otherwise pass untaped)."""
    _boundary._TAPES.clear()
    x = ftorch.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    t = ftorch.tensor([0, 3, 1])
    F = ftorch.nn.functional
    ops = {"mean": lambda: x.mean(), "var": lambda: x.var(1), "softmax": lambda: ftorch.softmax(x, 1),
           "clamp": lambda: ftorch.clamp(x, -1.0, 1.0), "mse_loss": lambda: F.mse_loss(x, x.detach() * 2),
           "cross_entropy": lambda: F.cross_entropy(x, t), "layer_norm": lambda: F.layer_norm(x, (4,)),
           "sub broadcast": lambda: x - x.mean()}
    for name, op in ops.items():
        before = sum(tape is not None for tape in _boundary._TAPES.values())
        op()
        assert sum(tape is not None for tape in _boundary._TAPES.values()) > before, name



def test_a_rerun_under_the_eval_trace_runs_the_compiled_replay(monkeypatch):
    """From its second run for the same differentiated inputs a tape reruns as one compiled
    function (`tape._compile`); that function, not the general rerun, must give the same
    values and gradients (the sweeps above compare them bit for bit)."""
    from fgrad.interpreters import tape as tape_mod
    _boundary._TAPES.clear()
    x = ftorch.tensor(np.linspace(-2, 2, 12, dtype=np.float32), requires_grad=True)
    want = ftorch.clamp(x, -1.0, 1.0)
    (tape,) = [t for t in _boundary._TAPES.values() if t is not None]
    assert [p for p in tape.plans.values() if p is not None]

    def general_only(self, *a):
        raise AssertionError("the general rerun ran")
    with monkeypatch.context() as m:
        m.setattr(tape_mod.Tape, "_record", general_only)
        got = ftorch.clamp(x, -1.0, 1.0)
    assert _bits(got) == _bits(want)
    (g,) = ftorch.autograd.grad((got * ftorch.arange(12.0)).sum(), [x])
    (w,) = ftorch.autograd.grad((want * ftorch.arange(12.0)).sum(), [x])
    assert _bits(g) == _bits(w)


@pytest.mark.slow
@pytest.mark.parametrize("name", [k for k in MATH if k not in NOT_DIFFERENTIABLE])
def test_every_math_op_is_bit_identical(name, monkeypatch):
    _compare(_math_run(name, False), monkeypatch)
    _compare(_math_run(name, True), monkeypatch, second=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(NN))
def test_every_nn_op_is_bit_identical(name, monkeypatch):
    _compare(_nn_run(name, False), monkeypatch)
    _compare(_nn_run(name, True), monkeypatch, second=False)


# --- what is never taped ----------------------------------------------------------------------------

def _op(fn, *args, name="TestBackward0"):
    return _boundary.call(name, fn, args)


def _tapes_of(fn):
    return [tape for key, tape in _boundary._TAPES.items() if key[0] is fn]


def test_a_function_that_looks_at_a_value_is_not_taped():
    @_boundary.replayable
    def branchy(x):
        return fnp.multiply(x, 2.0) if bool(fnp.sum(x) > 0) else fnp.negative(x)

    x = ftorch.tensor([1.0, 2.0], requires_grad=True)
    y = ftorch.tensor([-1.0, -2.0], requires_grad=True)
    assert _op(branchy, x).tolist() == [2.0, 4.0]
    assert _op(branchy, y).tolist() == [1.0, 2.0]  # (a tape of the first call would double it)
    assert _tapes_of(branchy) == [None]


def test_a_function_reading_a_large_constant_is_not_taped():
    @_boundary.replayable
    def ramp(x):
        return fnp.multiply(x, np.arange(20_000, dtype=np.float32))  # (a tape would keep 80 KB)

    x = ftorch.tensor(np.ones(20_000, np.float32), requires_grad=True)
    assert _op(ramp, x)[-1].item() == 19_999.0
    assert _tapes_of(ramp) == [None]


def test_a_function_that_warns_warns_every_time():
    @_boundary.replayable
    def noisy(x):
        warnings.warn("noisy op", UserWarning)
        return fnp.exp(x)

    x = ftorch.tensor([0.0], requires_grad=True)
    for _ in range(3):
        with pytest.warns(UserWarning, match="noisy op"):
            assert _op(noisy, x).tolist() == [1.0]
    assert _tapes_of(noisy) == [None]


def test_statics_key_the_tape():
    """-0.0 and 0.0 (equal as numbers), 1 and 1.0 and True (equal hashes), and PyTorch's
    default dtype each get a tape of their own."""
    @_boundary.replayable
    def fill(x, v):
        return fnp.where(fnp.less(x, 0.0), fnp.asarray(v, dtype=TORCH.default_float), x)

    x = ftorch.tensor([-1.0, 1.0], requires_grad=True)
    assert np.signbit(_op(fill, x, 0.0).detach().numpy()[0]) == np.False_
    assert np.signbit(_op(fill, x, -0.0).detach().numpy()[0]) == np.True_
    assert _op(fill, x, 1).tolist() == _op(fill, x, True).tolist() == [1.0, 1.0]
    assert len([t for t in _tapes_of(fill) if t is not None]) == 4
    prev = ftorch.get_default_dtype()
    ftorch.set_default_dtype(ftorch.float64)
    try:
        x64 = ftorch.tensor([-1.0, 1.0], dtype=ftorch.float32, requires_grad=True)
        assert _op(fill, x64, 0.5).dtype == ftorch.float64
    finally:
        ftorch.set_default_dtype(prev)
    assert _op(fill, x64, 0.5).dtype == ftorch.float32


def test_an_input_passed_through_and_an_unrecorded_output():
    """Outputs that are an input itself, or do not depend on a differentiated input, come
    back as record_call gives them."""
    @_boundary.replayable
    def pair(x, y):
        return x, fnp.greater(y, 0.0), fnp.add(x, y)

    x = ftorch.tensor([1.0, -1.0], requires_grad=True)
    y = ftorch.tensor([2.0, -2.0])
    for _ in range(2):
        a, mask, s = _op(pair, x, y, name=None)
        assert a is x and mask.grad_fn is None and mask.tolist() == [True, False]
        s.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    assert len(_tapes_of(pair)) == 1 and _tapes_of(pair)[0] is not None
