"""fgrad.torch's activations and piecewise functions against real PyTorch, to the third
derivative: at each function's kinks (where a library chooses a branch) and at random points,
the values (signed zeros included), and the first, second and third derivatives taken with
torch.autograd.grad(create_graph=True) agree, and where PyTorch cannot differentiate again
(a derivative that needs no grad, or a backward with no derivative), fgrad.torch raises too.

The functions are elementwise in x, so one vector of points carries them all: the derivative
of the sum at each point is the derivative at that point. Each function is also taken squared,
f(x) * f(x): its second derivative differentiates f's backward in its incoming gradient too (where PyTorch's double-backward formulas make their own choice at a kink).

DEPARTURES names the cases where fgrad.torch knowingly differs (docs/derivative-conventions.md,
"Where fgrad.torch departs from PyTorch"); each is a strict xfail, so a fix shows.
"""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

ORDERS = {"f": 3, "f squared": 3}
# (the smooth functions compose their formulas in another order than PyTorch's kernels: the
# last bits differ; a second derivative at |x| ~ 40 can be 4e-18 against PyTorch's rounded 0)
RTOL, ATOL = 1e-12, 1e-12

KINKS = {
    "zero": [0.0, -0.0],
    "relu6": [0.0, -0.0, 6.0],
    "unit": [0.0, -0.0, 1.0, -1.0],
    "three": [0.0, -0.0, 3.0, -3.0],
    "half": [0.0, -0.0, 0.5, -0.5],
    "twenty": [0.0, -0.0, 20.0, 0.5],
}


def _f(name, **kw):
    return lambda lib, x: getattr(lib.nn.functional, name)(x, **kw)


def _weight(lib):
    return lib.tensor([0.25], dtype=lib.float64)


def _zero(lib):
    return lib.zeros((), dtype=lib.float64)


CASES = {
    "relu": (_f("relu"), "zero"),
    "torch.relu": (lambda lib, x: lib.relu(x), "zero"),
    "relu6": (_f("relu6"), "relu6"),
    "hardtanh": (_f("hardtanh"), "unit"),
    "hardtanh bounds": (_f("hardtanh", min_val=-3.0, max_val=0.5), "half"),
    "leaky_relu": (_f("leaky_relu"), "zero"),
    "leaky_relu 0.2": (_f("leaky_relu", negative_slope=0.2), "zero"),
    "rrelu eval": (_f("rrelu", training=False), "zero"),
    "prelu": (lambda lib, x: lib.nn.functional.prelu(x, _weight(lib)), "zero"),
    "elu": (_f("elu"), "zero"),
    "elu alpha 2": (_f("elu", alpha=2.0), "zero"),
    "celu": (_f("celu"), "zero"),
    "celu alpha 2": (_f("celu", alpha=2.0), "zero"),
    "selu": (_f("selu"), "zero"),
    "hardsigmoid": (_f("hardsigmoid"), "three"),
    "hardswish": (_f("hardswish"), "three"),
    "hardshrink": (_f("hardshrink"), "half"),
    "softshrink": (_f("softshrink"), "half"),
    "softshrink 1": (_f("softshrink", lambd=1.0), "unit"),
    "threshold": (lambda lib, x: lib.nn.functional.threshold(x, 0.5, -2.0), "half"),
    "glu": (lambda lib, x: lib.nn.functional.glu(lib.stack([x, x * 2]), dim=0), "zero"),
    "silu": (_f("silu"), "zero"),
    "mish": (_f("mish"), "twenty"),
    "gelu": (_f("gelu"), "zero"),
    "gelu tanh": (_f("gelu", approximate="tanh"), "zero"),
    "logsigmoid": (_f("logsigmoid"), "zero"),
    "softplus": (_f("softplus"), "twenty"),
    "softplus beta threshold": (_f("softplus", beta=2.0, threshold=1.0), "half"),
    "softsign": (_f("softsign"), "zero"),
    "tanhshrink": (_f("tanhshrink"), "zero"),
    "sigmoid": (lambda lib, x: lib.sigmoid(x), "zero"),
    "tanh": (lambda lib, x: lib.tanh(x), "zero"),
    "clamp": (lambda lib, x: lib.clamp(x, -1.0, 1.0), "unit"),
    "clamp tensor bounds": (lambda lib, x: lib.clamp(x, -lib.ones((), dtype=lib.float64),
                                                     lib.ones((), dtype=lib.float64)), "unit"),
    "clip": (lambda lib, x: lib.clip(x, -1.0, 1.0), "unit"),
    "clamp_min": (lambda lib, x: lib.clamp_min(x, 0.0), "zero"),
    "clamp_max": (lambda lib, x: lib.clamp_max(x, 0.0), "zero"),
    "maximum": (lambda lib, x: lib.maximum(x, _zero(lib)), "zero"),
    "minimum": (lambda lib, x: lib.minimum(x, _zero(lib)), "zero"),
    "where": (lambda lib, x: lib.where(x > 0, x * x, -x), "zero"),
    "abs": (lambda lib, x: lib.abs(x), "zero"),
    "sign": (lambda lib, x: lib.sign(x), "zero"),
}

DOC = "docs/derivative-conventions.md, Where fgrad.torch departs from PyTorch: "
DEPARTURES = {
    ("relu", "f"): DOC + "relu(-0.0) is +0.0 (the relu primitive both doors share; jax.nn.relu's)",
    ("torch.relu", "f"): DOC + "relu(-0.0) is +0.0 (the relu primitive both doors share; jax.nn.relu's)",
    ("abs", "f"): DOC + "abs's create_graph gradient needs no grad (fgrad's abs primitive masks with sign "
                  "alone), so abs'' raises where PyTorch's is 0",
    ("relu", "f squared"): DOC + "the third derivative of relu(x)**2 raises",
    ("torch.relu", "f squared"): DOC + "the third derivative of relu(x)**2 raises",
    ("abs", "f squared"): DOC + "the third derivative of abs(x)**2 raises",
    ("prelu", "f squared"): DOC + "PyTorch's prelu double backward passes the incoming gradient where x >= 0, "
                            "its backward where x > 0; fgrad's rule is one linear map, x > 0 in both",
    ("hardsigmoid", "f squared"): DOC + "PyTorch does not implement the derivative of hardsigmoid_backward; "
                                  "fgrad.torch differentiates it",
    ("sign", "f squared"): DOC + "sign's gradient keeps an edge to the input in fgrad.torch (zeros that "
                           "differentiate again); PyTorch's needs no grad",
}
# the sign of softshrink's zeros between -lambd and lambd is PyTorch's vectorised kernel's (+0.0),
# while its scalar loop (0-d tensors, the tail of a row) gives x * 0: not compared
UNSIGNED_VALUES = {"softshrink", "softshrink 1"}


# (after the kinks: magnitudes where an exponential overflows)
SPECIAL = [800.0, -800.0]


# PyTorch's higher derivatives of these are NaN at |x| = 800 (an infinity times 0 in its
# formulas; fgrad.torch's are 0): the doc's departures, not compared there
OVERFLOWS_IN_PYTORCH = {"mish", "gelu tanh"}


def _points(kinks: str, name: str = "") -> np.ndarray:
    rng = np.random.default_rng(7)
    special = [] if name in OVERFLOWS_IN_PYTORCH else SPECIAL
    return np.concatenate([KINKS[kinks], special, rng.standard_normal(16) * 4.0])


def _array(t) -> np.ndarray:
    # (PyTorch returns some zero derivatives as a ZeroTensor, which numpy() refuses without force)
    return t.detach().numpy(force=True).copy() if isinstance(t, torch.Tensor) else t.detach().numpy().copy()


def _orders(lib, fn, points: np.ndarray, form: str = "f") -> list:
    """[value, d1, ...] of fn (or of fn * fn) as arrays, an order the library cannot take as
    the string "raises" (and the orders after it left out)."""
    x = lib.tensor(points, dtype=lib.float64, requires_grad=True)
    y = fn(lib, x)
    if form == "f squared":
        y = y * y
    out = [_array(y)]
    for k in range(ORDERS[form]):
        try:
            (y,) = lib.autograd.grad(y.sum(), x, create_graph=k < ORDERS[form] - 1)
        except RuntimeError:
            out.append("raises")
            break
        out.append(_array(y))
    return out


def _same(got, want, signed_zeros: bool) -> bool:
    if isinstance(got, str) or isinstance(want, str):
        return isinstance(got, str) and isinstance(want, str) and got == want
    if not np.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True):
        return False
    zeros = (got == 0) & (want == 0)
    return not signed_zeros or np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def _exact_at_kinks(got, want, n: int) -> bool:
    """At the kinks a branch is chosen: the derivative is exactly PyTorch's there."""
    if isinstance(got, str) or isinstance(want, str):
        return isinstance(got, str) and isinstance(want, str) and got == want
    return np.array_equal(got[:n], want[:n], equal_nan=True) or np.allclose(got[:n], want[:n], rtol=RTOL, atol=0)


def _params():
    return [pytest.param(name, form, id=f"{name}-{form}",
                         marks=[pytest.mark.xfail(strict=True, reason=DEPARTURES[name, form])]
                         if (name, form) in DEPARTURES else [])
            for name in CASES for form in ORDERS]


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (exp(800) overflows on purpose)
@pytest.mark.parametrize("name, form", _params())
def test_values_and_derivatives_are_pytorchs(name, form):
    fn, kinks = CASES[name]
    points = _points(kinks, name)
    want, got = _orders(torch, fn, points, form), _orders(ft, fn, points, form)
    labels = ["value", "1st derivative", "2nd derivative", "3rd derivative"]
    assert len(got) == len(want), (f"{name}: PyTorch gives {len(want) - 1} derivative orders before "
                                   f"one raises, fgrad.torch {len(got) - 1}: {got[-1]!r} against {want[-1]!r}")
    n = len(KINKS[kinks])
    for k, (g, w) in enumerate(zip(got, want)):
        signed = k == 0 and name not in UNSIGNED_VALUES
        assert _same(g, w, signed), f"{name}: the {labels[k]} differs: {g!r} against PyTorch's {w!r}"
        assert _exact_at_kinks(g, w, n), (f"{name}: the {labels[k]} at the kinks {KINKS[kinks]}: {g[:n]!r} "
                                          f"against PyTorch's {w[:n]!r}")


def _second_without_graph(lib, fn, points: np.ndarray):
    x = lib.tensor(points, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(fn(lib, x).sum(), x, create_graph=True)
    try:
        (h,) = lib.autograd.grad(g.sum(), x)
    except RuntimeError:
        return "raises"
    return _array(h)


WITHOUT_GRAPH_DEPARTURES = {"relu": DOC + "relu's second derivative without create_graph raises",
                            "torch.relu": DOC + "relu's second derivative without create_graph raises",
                            "abs": DEPARTURES["abs", "f"]}


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", [
    pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=WITHOUT_GRAPH_DEPARTURES[n])]
                 if n in WITHOUT_GRAPH_DEPARTURES else []) for n in CASES])
def test_second_derivative_without_create_graph_is_pytorchs(name):
    # (the last backward pass runs on plain arrays: a rule's zero derivative must still count)
    fn, kinks = CASES[name]
    points = _points(kinks, name)
    got, want = _second_without_graph(ft, fn, points), _second_without_graph(torch, fn, points)
    assert _same(got, want, False), f"{name}: {got!r} against PyTorch's {want!r}"


def test_every_departure_names_a_case():
    assert {name for name, _ in DEPARTURES} <= set(CASES)
    assert {form for _, form in DEPARTURES} <= set(ORDERS)
