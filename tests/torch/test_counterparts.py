"""fgrad.torch against fgrad's functional door: every torch function (fgrad.torch, .special,
.linalg, .nn.functional; fgrad.torch has no fft module) with a counterpart in fgrad.numpy,
fgrad.lax, fgrad.scipy.special, fgrad.scipy.linalg, fgrad.numpy.linalg or fgrad.nn gives the
counterpart's values and derivatives (a VJP with a random cotangent, and the gradient of that
VJP's inner product with a random vector), or the table DIFFERENCES names the convention that
makes them differ.

Both doors run the same primitives, so they agree bit for bit (values to the sign of zero;
a derivative's zero has no meaningful sign), except the pairs in TOLERANCE, which compose the
primitives in another order (the reason is recorded). Both tables are checked both ways: a
DIFFERENCES entry names a member that exists (a dotted name that imports, or a row of a docs
table) and the pair really differs at the stage it lists; a TOLERANCE entry really is not bit
for bit. So neither table can go stale or keep an entry that is no longer needed. The pairing
table is tests/torch/counterparts.py; test_every_same_name_counterpart_is_paired keeps it
complete. KNOWN_BUGS are departures of one door from its own ecosystem, expected to fail
until fixed.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import pathlib
import types
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import fgrad
import fgrad.torch as ft
import fgrad.torch.linalg  # noqa: F401  (the namespaces enumerated below)
import fgrad.torch.nn.functional  # noqa: F401
import fgrad.torch.special  # noqa: F401

from .counterparts import PAIRS, Lit, Pair, inputs

ROOT = pathlib.Path(__file__).resolve().parents[2]
STAGES = ("dtype", "value", "vjp", "vjp2")


@dataclass(frozen=True)
class Difference:
    """Where a pair differs: the first `stage` that differs (of STAGES), what differs, and the
    convention that makes it differ: a dotted name under fgrad, or "<doc path>#<first cell
    of a table row>"."""

    stage: str
    what: str
    member: str


CONVENTIONS = "docs/derivative-conventions.md#"
FLOAT_DTYPE = "fgrad.torch._tensor._policy.TorchPolicy.float_dtype"
DEFAULT_FLOAT = "fgrad.torch._tensor._policy.TORCH.default_float"
_CREATED = "a float result is PyTorch's default float dtype, float32, against NumPy's float64"

# pair id -> the convention that makes the pair differ
DIFFERENCES: dict[str, Difference] = {
    "abs~lax.abs[lax]": Difference("vjp", "abs'(0): 0 (PyTorch's, fgrad.numpy's) against jax.lax.abs's 1",
                                   "fgrad.lax._ops._abs"),
    "frac~numpy.modf": Difference("value", "the fraction of -0.0 and of negative whole numbers: +0.0 (PyTorch's "
                                  "x - trunc(x)) against NumPy's -0.0", "fgrad.numpy.modf"),
    "clamp~numpy.clip": Difference("vjp", "the derivative at a bound: 1 against 0.5",
                                   CONVENTIONS + "clamp / clip at a bound"),
    "clip~numpy.clip": Difference("vjp", "the derivative at a bound: 1 against 0.5",
                                  CONVENTIONS + "clamp / clip at a bound"),
    "clamp_min~numpy.maximum": Difference("vjp", "a tie with the bound: 1 (PyTorch's clamp) against maximum's "
                                          "even split", CONVENTIONS + "clamp / clip at a bound"),
    "clamp_max~numpy.minimum": Difference("vjp", "a tie with the bound: 1 (PyTorch's clamp) against minimum's "
                                          "even split", CONVENTIONS + "clamp / clip at a bound"),
    "clamp~lax.clamp[lax]": Difference("vjp", "the derivative at a bound: 1 against jax.lax.clamp's 0",
                                       "fgrad.lax.clamp"),
    "max~numpy.max[dim]": Difference("vjp", "a tie along dim: all to the index returned against split evenly",
                                     CONVENTIONS + "max along a dim at a tie"),
    "cummax~lax.cummax": Difference("vjp", "a tie: all to the index returned (the latest) against split "
                                    "between the tied entries", "fgrad.torch._tensor._ops_math._cumulative_extreme"),
    "xlogy~scipy.special.xlogy": Difference("vjp", "d/dx at x = 0, y = 0: PyTorch's 0 (its log masked where "
                                            "x == 0) against -inf; d/dy at x = 0, y = 0: nan against 0",
                                            CONVENTIONS + "xlogy(x, 0) at x = 0"),
    "special.xlogy~scipy.special.xlogy": Difference("vjp", "as xlogy~scipy.special.xlogy",
                                                    CONVENTIONS + "xlogy(0, y) at y = 0"),
    "nn.functional.softplus~nn.softplus[threshold]": Difference(
        "value", "beta * x above the threshold (20): PyTorch's x against log1p(exp(x))",
        "README.md#nn.functional.softplus"),
    "exp~numpy.exp[int]": Difference("dtype", "an integer input computes in float32 against float64", FLOAT_DTYPE),
    "true_divide~numpy.true_divide[int]": Difference("dtype", "integers divide into float32 against float64",
                                                     FLOAT_DTYPE),
    "add~numpy.add[0-d float64]": Difference("dtype", "a 0-d float64 operand does not promote a float32 tensor "
                                             "(float32 against float64)",
                                             "fgrad.torch._tensor._policy.TorchPolicy.result_dtype"),
    **{k: Difference("dtype", _CREATED, DEFAULT_FLOAT) for k in (
        "zeros~numpy.zeros", "ones~numpy.ones", "full~numpy.full", "full~lax.full[lax]", "eye~numpy.eye",
        "arange~numpy.arange[float]", "linspace~numpy.linspace", "logspace~numpy.logspace")},
    "nn.functional.celu~nn.celu": Difference("value", "celu(-0.0): PyTorch's -0.0 against jax.nn's +0.0 (its "
                                             "max(x, 0) + expm1(min(x, 0)))", "fgrad.nn.celu"),
    "nn.functional.elu~nn.elu": Difference("vjp2", "elu''(0): 0 (PyTorch's) against jax.nn's 1",
                                           CONVENTIONS + "elu'' at 0"),
    "nn.functional.selu~nn.selu": Difference("vjp2", "selu''(0): 0 (PyTorch's) against jax.nn's scale * alpha",
                                             CONVENTIONS + "elu'' at 0"),
    "nn.functional.relu6~nn.relu6": Difference("value", "relu6(-0.0): PyTorch's -0.0 (hardtanh's clamp keeps x at "
                                               "a bound) against jax.nn's +0.0 (its max(x, 0))", "fgrad.nn.relu6"),
    "nn.functional.hardsigmoid~nn.hard_sigmoid": Difference(
        "vjp", "the slope inside (-3, 3): PyTorch's kernel constant, 1/6 rounded to float32 in every dtype, against "
        "1/6", "fgrad.torch.nn.functional.hardsigmoid"),
    "nn.functional.hardtanh~nn.hard_tanh": Difference("vjp", "the derivative at -1 and 1: 0 against jax.nn's 1",
                                                      CONVENTIONS + "hardtanh at a bound"),
    "nn.functional.leaky_relu~nn.leaky_relu": Difference("vjp", "leaky_relu'(0): negative_slope against 1",
                                                         CONVENTIONS + "leaky_relu at 0"),
    "nn.functional.one_hot~nn.one_hot": Difference("dtype", "int64 (PyTorch's) against jax.nn.one_hot's float "
                                                   "default", "fgrad.nn.one_hot"),
}
DIFFERENCES["cholesky_solve~scipy.linalg.cho_solve"] = Difference(
    "vjp", "PyTorch differentiates (L L^H)^-1 B in every entry of L; scipy's cho_solve reads only L's triangle",
    "fgrad.torch.cholesky_solve")
# torch's top-level names of nn.functional's functions differ as those do
DIFFERENCES.update({k.replace("nn.functional.", ""): DIFFERENCES[k]
                    for k in ("nn.functional.celu~nn.celu", "nn.functional.selu~nn.selu")})

# Last bits: the same mathematics rounded in another order (tolerance relative, and absolute
# at the same size).
ORDER2 = ("the second-order graphs hold the same terms, summed in another order: fgrad.torch "
          "differentiates the backward graph it recorded, fgrad.grad the VJP it traces")
FORMULA = ("each door computes with its ecosystem's formula: fgrad.torch's is PyTorch's (closer to its "
           "bits), fgrad.nn's / fgrad.scipy's JAX's")
TOLERANCE: dict[str, tuple[float, str]] = {
    **{k: (1e-12, ORDER2) for k in (
        "divide~numpy.divide", "true_divide~numpy.true_divide", "div~numpy.divide", "div~lax.div[lax]",
        "arctan2~numpy.arctan2", "atan2~numpy.arctan2", "logaddexp2~numpy.logaddexp2", "hypot~numpy.hypot",
        "pow~numpy.power", "pow~lax.pow[lax]", "float_power~numpy.float_power", "linalg.cond~numpy.linalg.cond",
        "linalg.pinv~numpy.linalg.pinv", "linalg.solve~numpy.linalg.solve", "linalg.lstsq~numpy.linalg.lstsq",
        "special.i1e~scipy.special.i1e", "nn.functional.softsign~nn.soft_sign",
        "linalg.solve_triangular~scipy.linalg.solve_triangular")},
    **{k: (1e-12, FORMULA) for k in (
        "special.ndtr~scipy.special.ndtr", "special.softmax~nn.softmax", "nn.functional.softmax~nn.softmax",
        "nn.functional.softmax~scipy.special.softmax[scipy]", "nn.functional.gelu~nn.gelu",
        "nn.functional.hardsigmoid~nn.hard_sigmoid", "nn.functional.hardswish~nn.hard_swish",
        "nn.functional.celu~nn.celu", "nn.functional.elu~nn.elu", "nn.functional.selu~nn.selu",
        "softmax~nn.softmax", "softmax~scipy.special.softmax[scipy]",
        "log_softmax~scipy.special.log_softmax[scipy]", "nn.functional.layer_norm~nn.standardize")},
    "nanquantile~numpy.nanquantile": (1e-12, "PyTorch's quantile interpolates by its lerp, one fused multiply-add "
                                      "(fgrad.torch's, bit for bit); NumPy's formula rounds twice"),
    "exp2~numpy.exp2": (1e-12, "fgrad.torch.exp2 is 2.0 ** x, as PyTorch rounds it more often; fgrad.numpy.exp2 "
                        "is its own primitive"),
    "special.exp2~numpy.exp2": (1e-12, "torch.special.exp2 is torch.exp2 (see exp2~numpy.exp2)"),
    "xlogy~scipy.special.xlogy": (1e-12, "fgrad.torch.xlogy has PyTorch's backward (masked where x == 0); "
                                  "fgrad.scipy's rule rounds its terms in another order"),
    "special.xlogy~scipy.special.xlogy": (1e-12, "the same function as xlogy~scipy.special.xlogy"),
    "outer~numpy.outer": (1e-12, "the cotangents of outer's operands are reduced in another order"),
    "ger~numpy.outer": (1e-12, "ger is outer"),
    "cummax~lax.cummax": (1e-12, "the facade scatters the cotangent to the indices it returns; lax.cummax "
                          "differentiates JAX's prefix scan, which sums in a tree order"),
    "cummin~lax.cummin": (1e-12, "as cummax~lax.cummax"),
    "linalg.matrix_power~numpy.linalg.matrix_power": (1e-12, "the matrix products associate in another order"),
    "matrix_power~numpy.linalg.matrix_power": (1e-12, "the matrix products associate in another order"),
    "pinverse~numpy.linalg.pinv": (1e-12, ORDER2),
}
# torch's top-level names of nn.functional's functions round as those do
TOLERANCE.update({k.replace("nn.functional.", ""): TOLERANCE[k]
                  for k in ("nn.functional.celu~nn.celu", "nn.functional.selu~nn.selu")})
TOLERANCE.update({k: (1e-12, ORDER2) for k in (
    "sinc~numpy.sinc", "special.sinc~numpy.sinc", "linalg.tensorsolve~numpy.linalg.tensorsolve",
    "corrcoef~numpy.corrcoef", "frobenius_norm~numpy.linalg.norm")})
TOLERANCE.update({f"{_name}~numpy.trapezoid": (1e-12, "torch.trapezoid is PyTorch's composition (the sum less half "
                                                      "the two ends, times dx); NumPy sums the pairs' means")
                  for _name in ("trapezoid", "trapz")})
TOLERANCE["triangular_solve~scipy.linalg.solve_triangular"] = (
    1e-12, "torch.triangular_solve solves with the triangle by LU (numpy.linalg.solve); solve_triangular substitutes")
TOLERANCE["layer_norm~nn.standardize"] = TOLERANCE["nn.functional.layer_norm~nn.standardize"]
TOLERANCE["rnn_tanh~numpy.tanh"] = (
    1e-12, "PyTorch's layer projects the whole sequence at once and adds the hidden state's map in place; "
    "the second derivative sums its terms in that order")
for _name in ("group_norm", "native_layer_norm", "native_batch_norm", "native_group_norm", "batch_norm",
              "instance_norm"):
    TOLERANCE[f"{_name}~nn.standardize"] = TOLERANCE["nn.functional.layer_norm~nn.standardize"]
TOLERANCE["cholesky_inverse~numpy.linalg.inv"] = (1e-12, "torch.cholesky_inverse is inv(L)^H inv(L); the "
                                                         "counterpart inverts the product L L^H")
TOLERANCE.update({f"{_name}~numpy.matmul": (1e-12, "torch.sparse.mm sums the nonzero products row by row, "
                                                    "numpy.matmul in its own order")
                  for _name in ("dsmm", "spmm", "smm", "hsmm", "hspmm")})
TOLERANCE.update({f"{_name}~numpy.add": (1e-12, "the sparse product's sums (see dsmm~numpy.matmul)")
                  for _name in ("saddmm", "sspaddmm")})
TOLERANCE.update({f"{_name}~numpy.linalg.svd": (1e-10, "randomized subspace iteration, then the SVD of the "
                                                         "projected matrix: the same values, rounded otherwise")
                  for _name in ("svd_lowrank", "pca_lowrank")})
TOLERANCE["vander~numpy.vander"] = (1e-12, "torch.vander is a cumulative product of the columns (PyTorch's); "
                                           "numpy.vander takes each power")
# an in-place function (torch.sin_) differs from its counterpart as the out-of-place one does
for _pid in [p.id for p in PAIRS if p.torch.endswith("_") and not p.torch.endswith("__")]:
    _base = _pid.replace("_~", "~", 1)
    for _table in (DIFFERENCES, TOLERANCE):
        if _base in _table:
            _table[_pid] = _table[_base]


def _resolve(member: str) -> Any:
    """The object a Difference names: a table row's text, or the attribute of a module."""
    if "#" in member:
        path, row = member.split("#", 1)
        for line in (ROOT / path).read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.lstrip().startswith("|") and cells[0].replace("`", "") == row:
                return line
        raise LookupError(f"{path} has no table row whose first cell is {row!r}")
    parts = member.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(member)


def _lookup(root: Any, path: str) -> Any:
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


# --- the two sides ---------------------------------------------------------------------------------

def _float(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def _diff_positions(pair: Pair, args: tuple) -> list[int]:
    """The positions of the inputs differentiated: the float arrays generated from a spec (or
    a special point given in their place)."""
    return [k for k, v in enumerate(args) if _float(v) and isinstance(pair.args[k], str)
            and not isinstance(pair.args[k], Lit)]


def _to_np(r: Any) -> np.ndarray:
    return np.asarray(r.detach().numpy() if isinstance(r, ft.Tensor) else r)


def _torch_side(pair: Pair, args: tuple, diff: list[int], cts: tuple) -> dict:
    fn = _lookup(ft, pair.torch)
    tensors = [ft.tensor(v, requires_grad=k in diff and pair.order > 0) if isinstance(v, np.ndarray) else v
               for k, v in enumerate(args)]
    call_args = pair.targs(*tensors) if pair.targs else tensors
    out = fn(*call_args, **pair.tkw)
    out = pair.tsel(out) if pair.tsel else out
    res = {"value": _to_np(out)}
    if pair.order == 0 or not diff:
        return res
    xs = [tensors[k] for k in diff]
    ct, w = cts
    gs = ft.autograd.grad(out, xs, grad_outputs=ft.tensor(ct), create_graph=pair.order > 1, allow_unused=True)
    res["vjp"] = [np.zeros_like(args[k]) if g is None else _to_np(g) for k, g in zip(diff, gs)]
    if pair.order > 1:
        # (a gradient that needs no gradient is constant in the inputs: its derivative is zero)
        terms = [(g * ft.tensor(wk)).sum() for g, wk in zip(gs, w) if g is not None and g.requires_grad]
        if terms:
            hs = ft.autograd.grad(sum(terms[1:], terms[0]), xs, allow_unused=True)
        else:
            hs = [None] * len(xs)
        res["vjp2"] = [np.zeros_like(args[k]) if h is None else _to_np(h) for k, h in zip(diff, hs)]
    return res


def _fn_side(pair: Pair, args: tuple, diff: list[int], cts: tuple) -> dict:
    fn = _lookup(fgrad, pair.fn)
    kw = pair.fn_kwargs()

    def f(*d):
        full = list(args)
        for k, v in zip(diff, d):
            full[k] = v
        out = fn(*(pair.fargs(*full) if pair.fargs else full), **kw)
        return pair.fsel(out) if pair.fsel else out

    d0 = [args[k] for k in diff]
    res = {"value": np.asarray(f(*d0))}
    if pair.order == 0 or not diff:
        return res
    ct, w = cts

    def vjp(*d):
        return fgrad.vjp(f, *d)[1](ct)

    res["vjp"] = [np.asarray(g) for g in vjp(*d0)]
    if pair.order > 1:
        def inner(*d):
            return sum(fgrad.numpy.vdot(g, wk) for g, wk in zip(vjp(*d), w))
        res["vjp2"] = [np.asarray(h) for h in fgrad.grad(inner, argnums=tuple(range(len(d0))))(*d0)]
    return res


def _bit_equal(a: np.ndarray, b: np.ndarray, signed_zeros: bool = True) -> bool:
    """Same shape, dtype and bits (NaNs equal; the sign of zero counts when `signed_zeros`)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind not in "fc":
        return np.array_equal(a, b)
    return np.array_equal(a, b, equal_nan=True) and (not signed_zeros or np.array_equal(np.signbit(a), np.signbit(b)))


def _close(a: np.ndarray, b: np.ndarray, rtol: float, signed_zeros: bool = True) -> bool:
    """Same shape and dtype, values within rtol (relative and absolute), zeros of one sign
    where both are zero when `signed_zeros`."""
    if a.shape != b.shape or a.dtype != b.dtype or not np.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True):
        return False
    zeros = (a == 0) & (b == 0)
    return not signed_zeros or np.array_equal(np.signbit(a[zeros]), np.signbit(b[zeros]))


def compare(pair: Pair, args: tuple, rng: np.random.Generator, exact: bool = False) -> dict[str, bool]:
    """Per stage, whether the two doors agree on `args` (bit for bit, or to the pair's
    TOLERANCE unless `exact`); stages after the first disagreement are left out."""
    diff = _diff_positions(pair, args)
    probe = _fn_side(dataclasses.replace(pair, order=0), args, diff, (None, None))["value"]
    if probe.dtype.kind != "f":  # (comparisons, integer results: values only)
        diff = []
    cts = (rng.standard_normal(probe.shape), [rng.standard_normal(np.shape(args[k])) for k in diff])
    a = _torch_side(pair, args, diff, cts)
    b = _fn_side(pair, args, diff, cts)
    rtol = None if exact else TOLERANCE.get(pair.id, (None, ""))[0]
    same = (lambda x, y, signed=True: _close(x, y, rtol, signed)) if rtol else _bit_equal
    out = {}
    for stage in STAGES:
        if stage == "dtype":
            ok = a["value"].dtype == b["value"].dtype
        elif stage == "value":
            ok = same(a["value"], b["value"])
        elif stage in a:
            # (a derivative's zero has no meaningful sign: a product with a zero cotangent
            # takes the other factor's, which depends on the order the rules multiply in)
            ok = len(a[stage]) == len(b[stage]) and all(same(x, y, False) for x, y in zip(a[stage], b[stage]))
        else:
            continue
        out[stage] = ok
        if not ok:
            break
    return out


def _compare_all(pair: Pair, exact: bool = False) -> list[dict[str, bool]]:
    rng = np.random.default_rng(0)
    return [compare(pair, args, rng, exact) for args in inputs(pair)]


def _first_difference(results: list[dict[str, bool]]) -> str | None:
    for r in results:
        for stage, ok in r.items():
            if not ok:
                return stage
    return None


# pair id -> a door that departs from its own ecosystem (a bug, reported, not yet fixed): the pair's
# test is expected to fail, strictly, so that the fix removes the entry
KNOWN_BUGS: dict[str, str] = {}


def _params():
    return [pytest.param(p, id=p.id, marks=[pytest.mark.xfail(reason=KNOWN_BUGS[p.id], strict=True)]
                         if p.id in KNOWN_BUGS else []) for p in PAIRS]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the ties divide by zero on purpose)
@pytest.mark.filterwarnings("ignore:To copy construct:UserWarning")  # (torch.tensor(a Tensor) warns, as PyTorch)
@pytest.mark.parametrize("pair", _params())
def test_pair(pair: Pair):
    results = _compare_all(pair)
    listed = DIFFERENCES.get(pair.id)
    found = _first_difference(results)
    if listed is None:
        assert found is None, (f"{pair.id}: the doors differ at stage {found!r} on input set "
                               f"{[i for i, r in enumerate(results) if not all(r.values())]}; find the convention "
                               "that makes them differ and list it in DIFFERENCES, or fix the door that is wrong")
    else:
        assert found == listed.stage, (f"{pair.id}: DIFFERENCES lists a difference at stage {listed.stage!r} "
                                       f"({listed.what}), but the first stage that differs is {found!r}")
    if pair.id in TOLERANCE and listed is None:
        assert _first_difference(_compare_all(pair, exact=True)) is not None, (
            f"{pair.id} agrees bit for bit: remove it from TOLERANCE")


def test_every_listed_difference_names_a_convention_that_exists():
    for pid, d in DIFFERENCES.items():
        assert d.stage in STAGES, f"{pid}: stage {d.stage!r} is none of {STAGES}"
        assert _resolve(d.member) is not None, f"{pid}: {d.member} names nothing"


def test_the_tables_name_only_pairs_that_exist():
    ids = {p.id for p in PAIRS}
    assert len(ids) == len(PAIRS), "two pairs share an id: give one a tag"
    stale = (set(DIFFERENCES) | set(TOLERANCE)) - ids
    assert not stale, f"DIFFERENCES/TOLERANCE name pairs the table no longer has: {sorted(stale)}"


# --- coverage: which torch functions have a counterpart ---------------------------------------------

def _public_functions(mod: types.ModuleType) -> list[str]:
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    return sorted(n for n in names if callable(getattr(mod, n, None)) and not inspect.isclass(getattr(mod, n))
                  and not isinstance(getattr(mod, n), types.ModuleType))


def torch_functions() -> list[str]:
    """Every public function of fgrad.torch, .special, .linalg and .nn.functional, by path."""
    out = []
    for prefix in ("", "special.", "linalg.", "nn.functional."):
        mod = _lookup(ft, prefix[:-1]) if prefix else ft
        out += [prefix + n for n in _public_functions(mod)]
    return out


# where a torch function's same-name counterpart is looked for, by the torch namespace
SEARCH = {"": ("numpy", "lax", "scipy.special", "scipy.linalg", "nn"), "special.": ("scipy.special", "numpy"),
          "linalg.": ("numpy.linalg",), "nn.functional.": ("nn",)}


def same_name_counterparts(path: str) -> list[str]:
    """The functions of the functional door with the torch function's own name."""
    prefix, _, name = path.rpartition(".")
    prefix = prefix + "." if prefix else ""
    found = []
    for ns in SEARCH[prefix]:
        mod = _lookup(fgrad, ns)
        if name in _public_functions(mod):
            found.append(f"{ns}.{name}")
    return found


# torch functions with a same-name counterpart that are not paired, and why
UNPAIRED = {
    "equal": "torch.equal is one bool for whole tensors (numpy.array_equal's meaning); numpy.equal is element-wise "
             "(paired with torch.eq)",
    "imag": "torch.imag refuses real tensors and the pairs compare float64 inputs",
    "polar": "scipy.linalg.polar is the polar decomposition; torch.polar builds complex numbers from polar "
             "coordinates",
    "empty": "uninitialised values", "empty_like": "uninitialised values",
    "cond": "lax.cond takes (pred, true_fun, false_fun, *operands) and traces both branches; torch.cond runs one "
            "branch eagerly (tests/torch/test_ops_breadth_nn_linalg.py)",
    "while_loop": "lax.while_loop carries one pytree; torch.while_loop a tuple of values (tested in "
                  "test_ops_breadth_nn_linalg.py)",
    "solve": "torch.solve is removed from PyTorch (it raises, as fgrad's does); linalg.solve is paired",
    "lu": "scipy.linalg.lu returns (P, L, U); torch.lu LAPACK's packed LU and 1-based pivots (tested against torch)",
    "lu_solve": "scipy.linalg.lu_solve takes ((lu, piv), b) with 0-based pivots; torch.lu_solve(b, LU, pivots) "
                "(tested against torch)",
    "histogram": "not differentiable, and torch.histogram's bins default to the data's range (tested against torch)",
    "put": "numpy.put writes in place; torch.put returns a new tensor (tested against torch)",
    "kl_div": "scipy.special.kl_div is elementwise x log(x/y) - x + y; torch.kl_div is a reduced loss on "
              "log-probabilities (tested against torch)",
    "special.zeta": "torch.special.zeta has no derivative in x (scipy.special.zeta's raises, as torch's backward "
                    "does), which the pairs differentiate (tested against torch in "
                    "tests/torch/test_special_bessel_polynomials.py)",
    "linalg.eig": "complex results, which the pairs' float64 comparisons do not take (tested against torch in "
                  "tests/torch/test_linalg_factorizations.py)",
    "linalg.eigvals": "complex results (tested against torch in tests/torch/test_linalg_factorizations.py)",
}


def test_every_same_name_counterpart_is_paired():
    paired = {p.torch for p in PAIRS}
    missing = [f for f in torch_functions() if same_name_counterparts(f) and f not in paired and f not in UNPAIRED]
    assert not missing, f"torch functions with a same-name counterpart but no pair: {missing}"
    assert not (set(UNPAIRED) & paired), "UNPAIRED lists functions that are paired"


def test_every_paired_function_is_public():
    unknown = {p.torch for p in PAIRS} - set(torch_functions())
    assert not unknown, f"pairs of functions fgrad.torch does not export: {sorted(unknown)}"


def coverage() -> dict[str, Any]:
    """Counts of the enumeration and the pairing (tests/torch/test_counterparts.py's report)."""
    functions = torch_functions()
    paired = {p.torch for p in PAIRS}
    kinds = {"known bugs": KNOWN_BUGS, "named difference": DIFFERENCES, "to tolerance": TOLERANCE}
    counts = dict.fromkeys(["bit for bit", *kinds], 0)
    for p in PAIRS:  # (each pair counted once, under the first of kinds that lists it)
        counts[next((k for k, table in kinds.items() if p.id in table), "bit for bit")] += 1
    return {"functions": len(functions), "paired functions": len(paired), "pairs": len(PAIRS), **counts,
            "unpaired": sorted(set(functions) - paired)}


def test_most_torch_functions_are_paired():
    c = coverage()
    assert c["paired functions"] >= 0.6 * c["functions"], c


# --- regressions found by the pairs (both doors against JAX) ----------------------------------------

def test_lax_abs_of_negative_zero_is_positive_zero():
    # (jax.lax.abs(-0.0) is +0.0 and its derivative at 0 is 1: select(x >= 0, 1, -1))
    got = np.asarray(fgrad.lax.abs(np.array([-0.0, 0.0, -2.0])))
    assert _bit_equal(got, np.array([0.0, 0.0, 2.0]))
    assert float(fgrad.grad(fgrad.lax.abs)(np.float64(-0.0))) == 1.0


def test_modf_fraction_has_derivative_one_at_whole_numbers():
    xs = np.array([0.0, -0.0, -2.0, 3.0, 1.5])
    got = [float(fgrad.grad(lambda v: fgrad.numpy.modf(v)[0])(x)) for x in xs]
    assert got == [1.0] * 5  # (frac(x) = x near 0; JAX's and PyTorch's frac give 1 at every whole number)
    assert _bit_equal(np.asarray(fgrad.numpy.modf(xs)[0]), np.modf(xs)[0])


@pytest.mark.parametrize("x0", [0.0, -0.0])
@pytest.mark.parametrize("name", ["elu", "celu", "selu"])
def test_elu_family_second_derivative_at_zero_is_pytorchs(name, x0):
    # (elu_backward takes the exponential branch at 0, elu_double_backward the linear one)
    torch = pytest.importorskip("torch")

    def d2(lib):
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(lib.nn.functional, name)(x), x, create_graph=True)
        (h,) = lib.autograd.grad(g, x)
        return float(h)
    assert d2(ft) == d2(torch) == 0.0
