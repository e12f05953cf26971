"""fgrad.experimental.jet on every primitive of the registry (issue 25, item 3).

For each differentiable primitive of fgrad.core.primitive.ALL_PRIMITIVES, a case of the
primitive suite (tests/cases/*.py) that binds it is pushed through `jet` along the path
x(t) = x0 + sum_k h_k t^k / k! (every term random, so every coefficient of every rule is
exercised), and the k-th output term must equal d^k/dt^k f(x(t)) at 0, computed by nesting
fgrad.jvp k times (one nested program gives every order up to K). The case's function is
used where it binds the primitive, else its jvp or its vjp (the primitives only derivative
programs bind: relu_grad, max_pool2d_grad, ...). Order 3 runs by default, order 8 in the slow
run; the tolerance grows with the order (each order sums more rounded terms).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.core.errors import DifferentiationError
from fgrad.core.primitive import ALL_PRIMITIVES
from fgrad.experimental.jet import jet, jet_rules
from tests.ops.test_primitives import CASES, _eqns, _is_float, _random_like
from tests.ops.test_primitives import _coverage as _suite_coverage


def _views(case, args):
    """(kind, f) for the case's function, its jvp and its vjp, each a function of the float
    arguments alone (integer arguments, indices, stay fixed)."""
    floats = [i for i, a in enumerate(args) if _is_float(a)]

    def on_floats(g):
        def h(*xs):
            full = list(args)
            for i, x in zip(floats, xs):
                full[i] = x
            return g(*full)
        return h

    views = [("fn", on_floats(case.fn))]
    rng = np.random.default_rng(2)
    v = tuple(_random_like(a, rng) for a in args)
    if case.opt["fwd"]:
        views.append(("jvp", on_floats(lambda *a: fgrad.jvp(case.fn, a, v)[1])))
    u = _random_like(case.fn(*args), rng)

    def vjp(*a):
        cts = fgrad.vjp(case.fn, *a)[1](u)
        return fnp.concatenate([fnp.ravel(c) for c, x in zip(cts, a) if _is_float(x)])
    views.append(("vjp", on_floats(vjp)))
    return views


@functools.lru_cache(maxsize=None)
def _coverage() -> dict:
    """primitive name -> (case, kind): the first usable case whose function (or jvp, or vjp)
    binds it."""
    covered: dict = {}
    # first the cases whose derivatives the suite checks, then, for primitives only other cases
    # bind (the transforms of complex values, eig), those cases' functions alone
    for case in sorted(CASES, key=lambda c: not c.opt["grad"]):
        if not case.opt["jit"]:
            continue
        args = case.make_args()
        if not any(_is_float(a) for a in args):
            continue
        try:
            views = _views(case, args) if case.opt["grad"] else [("fn", _views(case, args)[0][1])]
        except Exception:
            continue
        floats = [a for a in args if _is_float(a)]
        for kind, f in views:
            try:
                closed = fgrad.make_jaxpr(f)(*floats)
            except Exception:
                continue
            eqns = list(_eqns(closed.jaxpr))
            for e in eqns:
                # the smallest program that binds the primitive: it isolates the rule under test
                best = covered.get(e.primitive.name)
                if best is None or (best[2] and not case.opt["grad"]) or \
                        (best[2] == (not case.opt["grad"]) and best[3] > len(eqns)):
                    covered[e.primitive.name] = (case.name, kind, not case.opt["grad"], len(eqns))
    return covered


def _taylor_by_nested_jvp(f, primals, series, order):
    """f(x(0)) and d^k/dt^k f(x(t)) at t = 0 for k = 1..order, by nesting fgrad.jvp."""
    def path(t):
        xs = [x + sum(h * (t ** (k + 1) / math.factorial(k + 1)) for k, h in enumerate(hs))
              for x, hs in zip(primals, series)]
        return (f(*xs),)

    def deeper(g):
        def h(t):
            p, tn = fgrad.jvp(g, (t,), (np.float64(1.0),))
            return (*p, tn[-1])
        return h
    g = path
    for _ in range(order):
        g = deeper(g)
    out = g(np.float64(0.0))
    return out[0], list(out[1:])


# jvp refuses these (no derivative defined), and jet must refuse them the same way
_NO_DERIVATIVE = {"schur", "hessenberg", "riemann_zeta"}
# a custom_vjp function refuses forward mode, so nested jvp gives no reference; jet runs its
# body, checked against JAX in tests/experimental/test_jet.py::test_custom_vjp_function_goes_through_its_own_body
_NO_FORWARD_REFERENCE = {"custom_vjp_call"}
# The series of a primitive without a direct rule comes from its jvp rule at one order lower,
# recursively (fgrad.experimental.jet), and nested jvp's reference costs about 2^K the
# function: for the loops (whose jvp rule is a loop over the jvp of the body, so each order
# of the reference, and of a derived series, nests the body once more) and the
# factorizations whose rules bind several derived primitives, one order-8 check takes
# minutes, so these run to the order given. (scan's and while's own jet rules run the body's
# jet in the loop: tests/experimental/test_jet.py checks them at order 8 against the unrolled loop.)
_ORDER_8_CAP = {"scan": 6, "while": 6, "deferred": 4, "expm": 6, "lu_packed": 6, "qr": 6,
                "triangular_solve": 6, "cholesky": 6, "rnn_scan_bwd": 6, "rnn_scan": 6}
_DIFFERENTIABLE = sorted(p.name for p in ALL_PRIMITIVES if not p.nondiff)
_CHECKED = [n for n in _DIFFERENTIABLE if n not in _NO_DERIVATIVE | _NO_FORWARD_REFERENCE]


def check_primitive(name: str, order: int) -> None:
    """jet's terms 1..order on the smallest case binding `name` equal nested jvp's."""
    if name not in _coverage():
        if name not in _suite_coverage():
            # a primitive with no case at all: tests/ops/test_primitives.py's
            # test_primitive_is_exercised fails for it, and this check runs once it has one
            pytest.skip(f"no case in tests/cases/*.py exercises '{name}' (test_primitives reports it)")
        pytest.fail(f"no case in tests/cases/*.py binds the primitive '{name}' in a function jet can "
                    "take (see test_every_exercised_primitive_reaches_jet)")
    case_name, kind = _coverage()[name][:2]
    case = next(c for c in CASES if c.name == case_name)
    args = case.make_args()
    f = dict(_views(case, args))[kind]
    primals = [a for a in args if _is_float(a)]
    rng = np.random.default_rng(3)
    # small terms keep the path inside each case's domain (|x| < 1, x > 0, ...)
    series = [[0.3 * _random_like(p, rng) for _ in range(order)] for p in primals]
    fp, fs = jet(f, tuple(primals), tuple(map(tuple, series)))
    rp, rs = _taylor_by_nested_jvp(f, primals, series, order)
    np.testing.assert_allclose(np.asarray(fp), np.asarray(rp), rtol=1e-10, atol=1e-10)
    for k in range(order):
        tol = 1e-9 * 10 ** (k / 2)
        scale = max(1.0, float(np.max(np.abs(np.asarray(rs[k])), initial=0.0)))
        np.testing.assert_allclose(np.asarray(fs[k]), np.asarray(rs[k]), rtol=tol, atol=tol * scale,
                                   err_msg=f"{name} via case {case_name} ({kind}), term {k + 1}")


def test_every_exercised_primitive_reaches_jet() -> None:
    # every differentiable primitive that the primitive suite's cases exercise is bound by one
    # (the function, its jvp or its vjp, staged) that this class test can push through jet
    missing = [n for n in _DIFFERENTIABLE if n in _suite_coverage() and n not in _coverage()]
    assert not missing, f"no case in tests/cases/*.py binds {missing} in a staged function: jet's class " \
        "test cannot reach them"


@pytest.mark.parametrize("name", _CHECKED)
def test_jet_matches_nested_jvp_order_3(name: str) -> None:
    check_primitive(name, 3)


@pytest.mark.slow
@pytest.mark.parametrize("name", _CHECKED)
def test_jet_matches_nested_jvp_order_8(name: str) -> None:
    check_primitive(name, _ORDER_8_CAP.get(name, 8))


@pytest.mark.parametrize("name", sorted(_NO_DERIVATIVE))
def test_jet_refuses_what_jvp_refuses(name: str) -> None:
    case_name, kind = _coverage()[name][:2]
    case = next(c for c in CASES if c.name == case_name)
    args = case.make_args()
    f = dict(_views(case, args))[kind]
    primals = [a for a in args if _is_float(a)]
    with pytest.raises(DifferentiationError) as from_jvp:
        fgrad.jvp(f, tuple(primals), tuple(np.ones_like(p) for p in primals))
    with pytest.raises(DifferentiationError) as from_jet:
        jet(f, tuple(primals), tuple((np.ones_like(p),) for p in primals))
    assert str(from_jet.value).split(":")[0] == str(from_jvp.value).split(":")[0]



# --- fgrad.jet / fgrad.derivatives, and jets through derived rules under the transforms ------

def _f(x):
    return fnp.sin(x) * fnp.exp(-x ** 2)


def _bessel_mix(x):
    # bessel_j1 and digamma have no direct rule: their series come from their jvp rules
    import fgrad.scipy.special as sp
    return sp.j1(x) * sp.digamma(x + 2.0)


def _nested_grads(f, x, k):
    out, g = [f(x)], f
    for _ in range(k):
        g = fgrad.grad(g)
        out.append(g(x))
    return out


@pytest.mark.parametrize("f", [_f, _bessel_mix], ids=["sin_exp", "bessel_digamma"])
def test_derivatives_equal_nested_grad(f) -> None:
    got = fgrad.derivatives(f, order=5)(0.7)
    assert len(got) == 6
    for a, b in zip(got, _nested_grads(f, 0.7, 5)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f", [_f, _bessel_mix], ids=["sin_exp", "bessel_digamma"])
def test_derivatives_compose_with_jit_vmap_grad(f) -> None:
    d = fgrad.derivatives(f, order=4)
    want = d(0.7)
    for a, b in zip(fgrad.jit(d)(0.7), want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    xs = np.array([0.3, 0.7, 1.1])
    batched = fgrad.vmap(d)(xs)
    for k in range(5):
        np.testing.assert_allclose(np.asarray(batched[k]), [np.asarray(d(x)[k]) for x in xs], rtol=1e-12)
    # grad of the 4th derivative is the 5th
    np.testing.assert_allclose(np.asarray(fgrad.grad(lambda x: d(x)[4])(0.7)),
                               np.asarray(fgrad.derivatives(f, order=5)(0.7)[5]), rtol=1e-10)


def test_jet_through_a_derived_rule_under_jit_vmap_grad() -> None:
    def terms(x, v):
        return fgrad.jet(_bessel_mix, (x,), ((v, v, v),))[1][2]
    x, v = np.array([0.4, 0.9, 1.3]), np.array([1.0, -0.5, 0.25])
    eager = terms(x, v)
    np.testing.assert_allclose(np.asarray(fgrad.jit(terms)(x, v)), np.asarray(eager), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fgrad.vmap(terms)(x, v)), np.asarray(eager), rtol=1e-12)
    # d/dx of the third term, against nested grad of the scalar function along v: the third
    # term of (1, 1, 1) is f''' + 3 f'' + f', so its derivative is f'''' + 3 f''' + f''
    g = fgrad.grad(lambda x: fgrad.jet(_bessel_mix, (x,), ((1.0, 1.0, 1.0),))[1][2])(0.9)
    d = _nested_grads(_bessel_mix, 0.9, 4)
    np.testing.assert_allclose(np.asarray(g), np.asarray(d[4] + 3 * d[3] + d[2]), rtol=1e-10)


def test_top_level_names() -> None:
    import fgrad.experimental.jet as jet_module
    assert fgrad.jet is jet_module.jet is jet
    assert fgrad.derivatives is jet_module.derivatives
    assert fgrad.derivatives.__doc__ and "Example" in fgrad.derivatives.__doc__


def test_derivatives_refuse_what_they_cannot_do() -> None:
    with pytest.raises(TypeError, match=r"x must be a real floating-point scalar, got float64\[3\].*vmap"):
        fgrad.derivatives(_f, order=2)(np.ones(3))
    with pytest.raises(TypeError, match=r"must return one scalar.*got float64\[2\]"):
        fgrad.derivatives(lambda x: fnp.stack([x, x]), order=2)(0.5)
    with pytest.raises(TypeError, match="must return one scalar"):
        fgrad.derivatives(lambda x: (x, x), order=2)(0.5)
    with pytest.raises(ValueError, match="order must be an integer >= 0.*got -1"):
        fgrad.derivatives(_f, order=-1)
    with pytest.raises(ValueError, match="order must be an integer >= 0.*got 2.5"):
        fgrad.derivatives(_f, order=2.5)
    assert [float(v) for v in fgrad.derivatives(_f, order=0)(0.5)] == [float(_f(0.5))]
