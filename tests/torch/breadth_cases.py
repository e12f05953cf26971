"""The harness of tests/torch/test_ops_breadth_*.py: one case runs a function of `lib` (real
torch or fgrad.torch) on the same inputs under both, and compares what a script sees --
values, dtypes, shapes, the first output's grad_fn name -- and first and second derivatives
of a fixed weighted sum of the float outputs, or the error class for bad input."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

_ERRORS = (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError)


@dataclass(frozen=True)
class Case:
    """`fn(lib, *tensors)` on `args` (NumPy arrays become tensors; float ones require grad
    when `order` > 0; anything else is passed as it is). `order`: derivatives compared
    (0, 1 or 2). `grad_fn`: compare the first output's grad_fn name. `tol`: rtol and atol."""

    id: str
    fn: Callable
    args: tuple
    order: int = 2
    grad_fn: bool = True
    tol: float = 1e-6
    kwargs: dict = field(default_factory=dict)


def _tensors(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return [out]


def _make(lib, a, grad: bool):
    if isinstance(a, np.ndarray):
        t = lib.tensor(a)
        if grad and a.dtype.kind in "fc":
            t.requires_grad_(True)
        return t
    if isinstance(a, list) and a and all(isinstance(e, np.ndarray) for e in a):
        return [_make(lib, e, grad) for e in a]
    return a


def _leaves(xs) -> list:
    out = []
    for x in xs:
        if isinstance(x, list):
            out += _leaves(x)
        elif hasattr(x, "requires_grad") and x.requires_grad:
            out.append(x)
    return out


def _np(t) -> np.ndarray:
    if not hasattr(t, "detach"):
        return np.asarray(t)
    try:
        return t.detach().numpy()
    except RuntimeError:  # PyTorch's ZeroTensor (a gradient known to be zero)
        return np.zeros(tuple(t.shape))


def run(lib, case: Case):
    """(inputs, outputs) of the case under `lib`."""
    xs = [_make(lib, a, case.order > 0) for a in case.args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = case.fn(lib, *xs, **case.kwargs)
    return xs, out


def _weights(t, k: int) -> np.ndarray:
    rng = np.random.default_rng(100 + k)
    v = _np(t)
    w = rng.normal(size=v.shape)
    return w.astype(v.dtype) if v.dtype.kind == "f" else (w + 1j * rng.normal(size=v.shape)).astype(v.dtype)


def _grads(lib, xs, out, order: int):
    """[first-order grads, second-order grads] of sum(w_k * out_k) over the float outputs."""
    leaves = _leaves(xs)
    outs = [o for o in _tensors(out) if hasattr(o, "requires_grad") and o.requires_grad]
    if not leaves or not outs:
        return None
    loss = sum((o * lib.tensor(_weights(o, k))).real.sum() if o.is_complex() else (o * lib.tensor(_weights(o, k))).sum()
               for k, o in enumerate(outs))
    g1 = lib.autograd.grad(loss, leaves, create_graph=order > 1, allow_unused=True)
    res = [[None if g is None else _np(g) for g in g1]]
    if order > 1:
        used = [g for g in g1 if g is not None and g.requires_grad]
        if used:
            s = sum((g * lib.tensor(_weights(g, 50 + k))).sum() for k, g in enumerate(used))
            g2 = lib.autograd.grad(s, leaves, allow_unused=True)
            res.append([None if g is None else _np(g) for g in g2])
        else:
            res.append(None)
    return res


def _same(got, want, tol, what):
    if want is None or got is None:
        assert (got is None or not np.any(got)) and (want is None or not np.any(want)), what
        return
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def check(torch, ft, case: Case) -> None:
    """Values, dtypes, shapes, grad_fn name and derivatives of `case` equal under both libraries."""
    txs, tout = run(torch, case)
    fxs, fout = run(ft, case)
    tts, fts = _tensors(tout), _tensors(fout)
    assert len(tts) == len(fts), (case.id, len(tts), len(fts))
    assert type(tout).__name__ == type(fout).__name__ or not isinstance(tout, tuple) or \
        type(tout) is tuple or type(fout) is tuple, (type(tout), type(fout))
    for k, (t, f) in enumerate(zip(tts, fts)):
        if not hasattr(t, "dtype"):
            assert t == f, (case.id, k, t, f)
            continue
        assert str(t.dtype) == str(f.dtype), (case.id, k, t.dtype, f.dtype)
        assert tuple(t.shape) == tuple(f.shape), (case.id, k, tuple(t.shape), tuple(f.shape))
        _same(_np(f), _np(t), case.tol, f"{case.id}: output {k}")
    t0, f0 = tts[0], fts[0]
    if case.grad_fn and hasattr(t0, "grad_fn"):
        tn = None if t0.grad_fn is None else type(t0.grad_fn).__name__
        fn_ = None if f0.grad_fn is None else type(f0.grad_fn).__name__
        assert tn == fn_, (case.id, tn, fn_)
    if case.order:
        tg, fg = _grads(torch, txs, tout, case.order), _grads(ft, fxs, fout, case.order)
        assert (tg is None) == (fg is None), (case.id, tg is None, fg is None)
        if tg is not None:
            for level, (a, b) in enumerate(zip(fg, tg)):
                if a is None or b is None:
                    assert a is None and b is None or all(x is None or not np.any(x) for x in (a or b)), \
                        (case.id, level)
                    continue
                for i, (ga, gb) in enumerate(zip(a, b)):
                    _same(ga, gb, case.tol * 10, f"{case.id}: order {level + 1} grad of input {i}")


def error_class(fn) -> type | None:
    """The standard exception class `fn()` raises (the first of _ERRORS it is an instance of)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except _ERRORS as e:  # noqa: PERF203
        return next(c for c in _ERRORS if isinstance(e, c))
    return None


def check_error(torch, ft, fn: Callable[[Any], Any]) -> None:
    """`fn(lib)` raises the same kind of error under both libraries (and does raise)."""
    want = error_class(lambda: fn(torch))
    assert want is not None, "torch accepts this input; the case is wrong"
    got = error_class(lambda: fn(ft))
    assert got is want, (got, want)
