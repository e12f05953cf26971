"""Every facade function and Tensor method that returns (values, indices) -- max(dim),
min(dim), sort, topk, cummax, cummin, median(dim), nanmedian(dim), and mode, kthvalue where
fgrad has them -- on inputs with ties (and NaNs), against PyTorch: the same values, the same
indices, and a gradient that goes exactly to the returned indices (each value's cotangent to
the one element its index names, none shared between tied elements), as PyTorch's.

The functions are found, not listed: every name of fgrad.torch._tensor.FUNCTIONS and every Tensor
method that, called as f(x, 1), returns a result with `values` and `indices`. A new one is
therefore tested as soon as it exists (with the calls of CALLS, or the generic ones: each dim,
with and without keepdim). test_the_known_ones_are_found guards the discovery itself."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad
from fgrad.torch._tensor import FUNCTIONS

torch = pytest.importorskip("torch")

KNOWN = {"max", "min", "sort", "topk", "cummax", "cummin", "median", "nanmedian"}
MAYBE = {"mode", "kthvalue", "msort"}  # PyTorch's others, tested when fgrad has them

# inputs with ties in every row and column (and, in the second, NaNs: the largest value to
# PyTorch's max/sort/topk, skipped by nanmedian)
TIES = np.array([[3.0, 1.0, 3.0, 2.0, 1.0, 3.0],
                 [0.0, 0.0, 5.0, 5.0, -1.0, 5.0],
                 [2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
                 [1.0, 4.0, 1.0, 4.0, 0.0, 0.0]])
NANS = TIES.copy()
NANS[0, 4] = NANS[1, 1] = NANS[1, 3] = NANS[3, 0] = np.nan
CUBE = np.tile(TIES[:, None, :4], (1, 2, 1)) + np.array([0.0, 1.0])[None, :, None]
INPUTS = {"ties": TIES, "nans": NANS, "3d": CUBE}

# name: the calls (args, kwargs); dims 0, 1 and -1, keepdim, descending, largest, stable...
CALLS = {
    "max": [((1,), {}), ((0,), {}), ((-1,), {"keepdim": True})],
    "min": [((1,), {}), ((0,), {}), ((-1,), {"keepdim": True})],
    "median": [((1,), {}), ((0,), {}), ((-1,), {"keepdim": True})],
    "nanmedian": [((1,), {}), ((0,), {}), ((-1,), {"keepdim": True})],
    "mode": [((1,), {}), ((0,), {})],
    "cummax": [((1,), {}), ((0,), {})],
    "cummin": [((1,), {}), ((0,), {})],
    "sort": [((1,), {}), ((0,), {}), ((-1,), {"descending": True}), ((), {"dim": 1, "stable": True}),
             ((), {"dim": 0, "descending": True, "stable": True})],
    "topk": [((2,), {}), ((3, 0), {}), ((2, 1), {"largest": False}), ((1, -1), {})],
    "kthvalue": [((2, 1), {}), ((3, 0), {"keepdim": True})],
}
# PyTorch picks which of tied elements topk returns by its selection algorithm, in no
# documented order (for [0, 0, 5, 5] it returns index 3 before 2): for topk the indices are
# checked to hold the values, and the gradient to follow fgrad's own indices, not torch's.
UNSPECIFIED_TIE_ORDER = {"topk"}


def _probe(f) -> bool:
    x = fgrad.torch.tensor(TIES)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f(x, 1)
    except Exception:  # noqa: BLE001 - a function with another signature is not one of these
        return False
    # a (values, indices) named tuple (a sparse tensor's values()/indices() methods are not)
    return isinstance(r, tuple) and len(r) == 2 and r[0] is getattr(r, "values", None) \
        and r[1] is getattr(r, "indices", None)


def _discover() -> dict[str, list]:
    """{name: ["function", "method"]}: the forms in which fgrad has each index-returning op."""
    found: dict[str, list] = {}
    for name in sorted(FUNCTIONS):
        f = getattr(fgrad.torch, name, None)
        if not name.endswith("_") and callable(f) and _probe(f):
            found.setdefault(name, []).append("function")
    for name in sorted(dir(fgrad.torch.Tensor)):
        if name.startswith("_") or name.endswith("_") or not callable(getattr(fgrad.torch.Tensor, name, None)):
            continue
        if _probe(lambda x, *a, _n=name: getattr(x, _n)(*a)):
            found.setdefault(name, []).append("method")
    return found


FOUND = _discover()


def _calls(name) -> list:
    return CALLS.get(name) or [((d,), {}) for d in (0, 1, -1)] + [((1,), {"keepdim": True})]


CASES = [(name, form, inp, args, kwargs) for name in sorted(FOUND) for form in FOUND[name]
         for inp in INPUTS for args, kwargs in _calls(name)]


def test_the_known_ones_are_found():
    assert KNOWN <= set(FOUND), f"not found as index-returning: {sorted(KNOWN - set(FOUND))}"
    assert all(FOUND[n] == ["function", "method"] for n in KNOWN), FOUND
    unknown = set(FOUND) - KNOWN - MAYBE
    assert all(hasattr(torch, n) for n in unknown), f"no PyTorch counterpart to compare: {sorted(unknown)}"


def _call(lib, name, form, x, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if form == "function":
            return getattr(lib, name)(x, *args, **kwargs)
        return getattr(x, name)(*args, **kwargs)


def _dim(name, x, args, kwargs) -> int:
    if "dim" in kwargs:
        d = kwargs["dim"]
    elif name in ("topk", "kthvalue"):  # (k, dim=-1)
        d = args[1] if len(args) > 1 else -1
    else:
        d = args[0]
    return d % x.ndim


def _routed(x, indices, ct, dim) -> np.ndarray:
    """The gradient that sends each value's cotangent to the element its index names."""
    if indices.ndim < x.ndim:
        indices, ct = np.expand_dims(indices, dim), np.expand_dims(ct, dim)
    g = np.zeros_like(x)
    for pos in np.ndindex(indices.shape):
        target = list(pos)
        target[dim] = indices[pos]
        g[tuple(target)] += ct[pos]
    return g


def _run(lib, name, form, x_np, args, kwargs):
    x = lib.tensor(x_np, dtype=lib.float64, requires_grad=True)
    r = _call(lib, name, form, x, args, kwargs)
    values, indices = r.values, r.indices
    ct = np.arange(1.0, 1.0 + values.numel()).reshape(tuple(values.shape))
    values.backward(lib.tensor(ct, dtype=lib.float64))
    return values.detach().numpy(), indices.numpy(), x.grad.numpy(), ct


# Known disagreements of the MAYBE ops, left for their owners (fgrad/torch/_tensor/_ops_breadth.py):
# torch's kthvalue picks among tied elements by its quickselect's swaps (for a row of equal
# values, k=2 gives index 2; fgrad's stable order gives 1), and torch's mode sorts rows holding
# NaN with std::sort and `<`, which is no ordering there: equal values end up apart ([0, nan, 5,
# nan, -1, 5] has mode -1 in torch) and a NaN can come out as the mode. strict: a fix makes
# these pass, and then the marks must go.
_CASE_DISAGREE = {("kthvalue", "ties", (2, 1)), ("kthvalue", "nans", (2, 1)), ("mode", "nans", (1,)),
                  ("mode", "nans", (0,))}


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="see _CASE_DISAGREE"))
    if (c[0], c[2], c[3]) in _CASE_DISAGREE else c for c in CASES],
    ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{c[4]}")
def test_gradient_goes_to_the_returned_indices(case):
    name, form, inp, args, kwargs = case
    x = INPUTS[inp]
    dim = _dim(name, x, args, kwargs)
    v, i, g, ct = _run(fgrad.torch, name, form, x, args, kwargs)
    tv, ti, tg, _ = _run(torch, name, "function", x, args, kwargs)
    assert i.dtype == np.int64 and i.shape == ti.shape and v.shape == tv.shape
    np.testing.assert_array_equal(v, tv)  # NaN == NaN for assert_array_equal
    # the indices hold the values, and the gradient goes exactly there (in both libraries)
    held = np.take_along_axis(x, i if i.ndim == x.ndim else np.expand_dims(i, dim), dim)
    np.testing.assert_array_equal(held.reshape(v.shape), v)
    np.testing.assert_array_equal(g, _routed(x, i, ct, dim))
    np.testing.assert_array_equal(tg, _routed(x, ti, ct, dim))
    if name not in UNSPECIFIED_TIE_ORDER:  # the same tied element as PyTorch's, so its gradient
        np.testing.assert_array_equal(i, ti)
        np.testing.assert_array_equal(g, tg)


# Known disagreements, left for the facade's owners (fgrad/torch/_tensor/_ops.py): for a full
# reduction PyTorch splits the gradient evenly between every element equal to the result
# (evenly_distribute_backward; between the NaNs when the result is NaN), where fgrad's max/min
# give NaN gradients when the result is NaN (median/nanmedian share it as PyTorch does).
# strict: a fix makes these pass, and then the marks must go.
_FULL_DISAGREE = {("max", "nans"), ("min", "nans")}


@pytest.mark.parametrize("name, inp", [
    pytest.param(n, i, marks=pytest.mark.xfail(strict=True, reason="see _FULL_DISAGREE"))
    if (n, i) in _FULL_DISAGREE else (n, i)
    for n in ("max", "min", "median", "nanmedian") for i in ("ties", "nans")])
def test_full_reductions_match_torch(name, inp):
    """Without dim, these return one value, not (values, indices); PyTorch splits its gradient
    evenly between the elements equal to it."""
    grads = []
    for lib in (fgrad.torch, torch):
        x = lib.tensor(INPUTS[inp], dtype=lib.float64, requires_grad=True)
        y = getattr(lib, name)(x)
        (y * 3.0).backward()
        grads.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])
