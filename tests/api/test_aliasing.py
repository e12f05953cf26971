"""Aliasing, class-wide: a result shares memory with an input exactly when the reference
library's does (NumPy for fgrad.numpy, PyTorch for the Tensor facade), so writing into a
result changes an input only where the reference documents a view.

fgrad.numpy: every public function that NumPy also has, on coverage_table's sample arguments,
on integer versions of them, and on the no-op variants where an implementation may be tempted
to hand back its input (axis=(), zero pads, shift 0, reps 1, factors of 1.0, one-element
lists). NumPy's own function on the same inputs is the oracle.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as onp
import pytest

import fgrad.numpy as fnp
from tests.numpy.coverage_table import _functions, sample

VEC = onp.array([0.3, 0.5, 0.7])
MAT = onp.array([[2.0, 0.5, 0.1], [0.5, 1.5, 0.3], [0.1, 0.3, 1.2]])
IVEC = onp.array([3, 5, 7])
BVEC = onp.array([True, False, True])
CVEC = onp.array([0.3 + 1j, 0.5, 0.7 - 2j])

# name -> [(call(f, *arrays), arrays)]: the calls that do nothing to the values (fgrad.numpy
# namespace names; "linalg." and "fft." prefix their submodules' functions)
NOOPS: dict[str, list[tuple[Callable, tuple]]] = {
    "copy": [(lambda f, a: f(a), (VEC,))],
    "array": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a, copy=True), (VEC,)),
              (lambda f, a: f(a, dtype=onp.float64), (VEC,))],
    "asarray": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a, dtype=onp.float64), (VEC,))],
    "astype": [(lambda f, a: f(a, onp.float64), (VEC,)), (lambda f, a: f(a, onp.int64), (IVEC,))],
    "ascontiguousarray": [(lambda f, a: f(a), (VEC,))],
    "concatenate": [(lambda f, a: f([a]), (VEC,)), (lambda f, a: f([a], axis=None), (VEC,)),
                    (lambda f, a: f([a, a[:0]]), (VEC,))],
    "concat": [(lambda f, a: f([a]), (VEC,))],
    "stack": [(lambda f, a: f([a]), (VEC,))],
    "hstack": [(lambda f, a: f([a]), (VEC,)), (lambda f, a: f((a,)), (MAT,))],
    "vstack": [(lambda f, a: f([a]), (VEC,)), (lambda f, a: f([a]), (MAT,))],
    "row_stack": [(lambda f, a: f([a]), (MAT,))],
    "dstack": [(lambda f, a: f([a]), (MAT[:, :, None],))],
    "column_stack": [(lambda f, a: f([a]), (MAT,))],
    "block": [(lambda f, a: f([a]), (VEC,)), (lambda f, a: f(a), (VEC,))],
    "append": [(lambda f, a: f(a, onp.zeros(0)), (VEC,))],
    "insert": [(lambda f, a: f(a, 0, onp.zeros(0)), (VEC,))],
    "delete": [(lambda f, a: f(a, []), (VEC,))],
    "add": [(lambda f, a: f(a, 0.0), (VEC,)), (lambda f, a: f(0.0, a), (VEC,)), (lambda f, a: f(a, 0), (IVEC,))],
    "subtract": [(lambda f, a: f(a, 0.0), (VEC,))],
    "multiply": [(lambda f, a: f(a, 1.0), (VEC,)), (lambda f, a: f(1.0, a), (VEC,)),
                 (lambda f, a: f(a, 1), (IVEC,)), (lambda f, a: f(a, onp.float64(1.0)), (VEC,)),
                 (lambda f, a: f(a, onp.array(1.0)), (VEC,))],
    "divide": [(lambda f, a: f(a, 1.0), (VEC,))],
    "true_divide": [(lambda f, a: f(a, 1.0), (VEC,))],
    "power": [(lambda f, a: f(a, 1.0), (VEC,)), (lambda f, a: f(a, 1), (VEC,)), (lambda f, a: f(a, 1), (IVEC,))],
    "float_power": [(lambda f, a: f(a, 1.0), (VEC,))],
    "positive": [(lambda f, a: f(a), (IVEC,))],
    "negative": [(lambda f, a: f(a), (IVEC,))],
    "dot": [(lambda f, a: f(a, 1.0), (VEC,)), (lambda f, a: f(1.0, a), (VEC,)), (lambda f, a: f(a, 1.0), (MAT,))],
    "inner": [(lambda f, a: f(a, 1.0), (VEC,))],
    "outer": [(lambda f, a: f(a, onp.ones(1)), (VEC,))],
    "kron": [(lambda f, a: f(a, 1.0), (VEC,)), (lambda f, a: f(a, onp.ones(1)), (VEC,))],
    "tensordot": [(lambda f, a: f(a, 1.0, 0), (VEC,))],
    "einsum": [(lambda f, a: f("i->i", a), (VEC,)), (lambda f, a: f("ij->ij", a), (MAT,)),
               (lambda f, a: f("ij->ji", a), (MAT,)), (lambda f, a: f("ii->i", a), (MAT,))],
    "matmul": [(lambda f, a: f(a, onp.eye(3)), (MAT,))],
    "roll": [(lambda f, a: f(a, 0), (VEC,)), (lambda f, a: f(a, 3), (VEC,)), (lambda f, a: f(a, 0, axis=0), (MAT,)),
             (lambda f, a: f(a, (0, 0), axis=(0, 1)), (MAT,))],
    "pad": [(lambda f, a: f(a, 0), (VEC,)), (lambda f, a: f(a, ((0, 0),)), (VEC,)),
            (lambda f, a: f(a, 0, mode="edge"), (VEC,)), (lambda f, a: f(a, 0, mode="reflect"), (VEC,))],
    "tile": [(lambda f, a: f(a, 1), (VEC,)), (lambda f, a: f(a, (1, 1)), (MAT,)), (lambda f, a: f(a, ()), (VEC,))],
    "repeat": [(lambda f, a: f(a, 1), (VEC,)), (lambda f, a: f(a, 1, axis=0), (MAT,))],
    "resize": [(lambda f, a: f(a, a.shape), (VEC,))],
    "reshape": [(lambda f, a: f(a, a.shape), (VEC,)), (lambda f, a: f(a, (3, 3)), (MAT,))],
    "ravel": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a), (MAT,)), (lambda f, a: f(a), (MAT.T,))],
    "squeeze": [(lambda f, a: f(a), (VEC,))],
    "expand_dims": [(lambda f, a: f(a, ()), (VEC,))],
    "transpose": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a, (0, 1)), (MAT,))],
    "permute_dims": [(lambda f, a: f(a, (0, 1)), (MAT,))],
    "moveaxis": [(lambda f, a: f(a, 0, 0), (MAT,))],
    "swapaxes": [(lambda f, a: f(a, 0, 0), (MAT,))],
    "rollaxis": [(lambda f, a: f(a, 0), (MAT,))],
    "matrix_transpose": [(lambda f, a: f(a), (MAT,))],
    "broadcast_to": [(lambda f, a: f(a, a.shape), (VEC,))],
    "broadcast_arrays": [(lambda f, a: f(a)[0], (VEC,)), (lambda f, a: f(a, a)[1], (VEC,))],
    "atleast_1d": [(lambda f, a: f(a), (VEC,))],
    "atleast_2d": [(lambda f, a: f(a), (MAT,)), (lambda f, a: f(a), (VEC,))],
    "atleast_3d": [(lambda f, a: f(a), (MAT[None],))],
    "flip": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a, axis=()), (VEC,))],
    "rot90": [(lambda f, a: f(a, 0), (MAT,)), (lambda f, a: f(a, 4), (MAT,)), (lambda f, a: f(a, 2), (MAT,))],
    "tril": [(lambda f, a: f(a, 5), (MAT,))],
    "triu": [(lambda f, a: f(a, -5), (MAT,))],
    "diagonal": [(lambda f, a: f(a), (MAT,))],
    "trim_zeros": [(lambda f, a: f(a), (VEC,))],
    "diff": [(lambda f, a: f(a, n=0), (VEC,))],
    "sort": [(lambda f, a: f(a), (VEC[:1],)), (lambda f, a: f(a, axis=None), (VEC[:1],))],
    "partition": [(lambda f, a: f(a, 0), (VEC[:1],))],
    "sort_complex": [(lambda f, a: f(a), (CVEC[:1],))],
    "take": [(lambda f, a: f(a, onp.array([0, 1, 2])), (VEC,))],
    "compress": [(lambda f, a: f([True, True, True], a), (VEC,))],
    "extract": [(lambda f, a: f(onp.array([True, True, True]), a), (VEC,))],
    "where": [(lambda f, a: f(True, a, 0.0), (VEC,)), (lambda f, a: f(onp.array([True] * 3), a, a), (VEC,))],
    "select": [(lambda f, a: f([onp.array([True] * 3)], [a]), (VEC,))],
    "choose": [(lambda f, a: f(onp.zeros(3, int), [a]), (VEC,))],
    "clip": [(lambda f, a: f(a, -onp.inf, onp.inf), (VEC,)), (lambda f, a: f(a, None, 10.0), (VEC,)),
             (lambda f, a: f(a, 0, 10), (IVEC,))],
    "maximum": [(lambda f, a: f(a, a), (VEC,)), (lambda f, a: f(a, -onp.inf), (VEC,))],
    "minimum": [(lambda f, a: f(a, onp.inf), (VEC,))],
    "fmax": [(lambda f, a: f(a, -onp.inf), (VEC,))],
    "fmin": [(lambda f, a: f(a, onp.inf), (VEC,))],
    "nan_to_num": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a), (IVEC,))],
    "real": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a), (CVEC,))],
    "imag": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a), (CVEC,))],
    "conj": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a), (IVEC,))],
    "conjugate": [(lambda f, a: f(a), (VEC,))],
    "real_if_close": [(lambda f, a: f(a), (VEC,)), (lambda f, a: f(a), (CVEC.real + 0j,))],
    "around": [(lambda f, a: f(a), (IVEC,)), (lambda f, a: f(a, 20), (VEC,))],
    "round": [(lambda f, a: f(a), (IVEC,))],
    "sum": [(lambda f, a: f(a, axis=()), (VEC,)), (lambda f, a: f(a, axis=0), (VEC[:, None].T,))],
    "prod": [(lambda f, a: f(a, axis=()), (VEC,))],
    "max": [(lambda f, a: f(a, axis=()), (VEC,))],
    "min": [(lambda f, a: f(a, axis=()), (VEC,))],
    "amax": [(lambda f, a: f(a, axis=()), (VEC,))],
    "amin": [(lambda f, a: f(a, axis=()), (VEC,))],
    "mean": [(lambda f, a: f(a, axis=()), (VEC,))],
    "average": [(lambda f, a: f(a, axis=()), (VEC,))],
    "nansum": [(lambda f, a: f(a, axis=()), (VEC,))],
    "nanprod": [(lambda f, a: f(a, axis=()), (VEC,))],
    "nanmax": [(lambda f, a: f(a, axis=()), (VEC,))],
    "nanmin": [(lambda f, a: f(a, axis=()), (VEC,))],
    "nanmean": [(lambda f, a: f(a, axis=()), (VEC,))],
    "median": [(lambda f, a: f(a, axis=()), (VEC,))],
    "cumsum": [(lambda f, a: f(a), (VEC[:1],))],
    "cumprod": [(lambda f, a: f(a), (VEC[:1],))],
    "cumulative_sum": [(lambda f, a: f(a), (VEC[:1],))],
    "convolve": [(lambda f, a: f(a, onp.ones(1)), (VEC,))],
    "correlate": [(lambda f, a: f(a, onp.ones(1)), (VEC,))],
    "split": [(lambda f, a: f(a, 1)[0], (VEC,))],
    "array_split": [(lambda f, a: f(a, 1)[0], (VEC,))],
    "meshgrid": [(lambda f, a: f(a)[0], (VEC,)), (lambda f, a: f(a, copy=False)[0], (VEC,))],
    "linalg.matrix_power": [(lambda f, a: f(a, 1), (MAT,))],
    "linalg.multi_dot": [(lambda f, a: f([a, onp.eye(3)]), (MAT,))],
    "fft.fftshift": [(lambda f, a: f(a, axes=()), (VEC,))],
    "fft.ifftshift": [(lambda f, a: f(a, axes=()), (VEC,))],
}

# Where fgrad returns a new array and NumPy a view: the safe direction (writing into the
# result never reaches the input), left as it is; each entry says why.
COPIES_OF_VIEWS = {
    "diagonal": "NumPy's view is read-only: only later writes into the input would show in it",
    "linalg.diagonal": "as diagonal",
    "real": "of a complex array: the real_p primitive copies (contiguous results for its kernels)",
    "imag": "as real",
    "real_if_close": "as real",
    "einsum": "'ii->i' is a gather in fgrad",
}

MODULES = (("", onp, fnp), ("linalg.", onp.linalg, fnp.linalg), ("fft.", onp.fft, fnp.fft))


def _arrays(tree: Any) -> list:
    """The arrays in a result (tuples, lists, named tuples)."""
    if isinstance(tree, onp.ndarray):
        return [tree]
    if isinstance(tree, (tuple, list)):
        return [a for t in tree for a in _arrays(t)]
    return []


def _integer(a: onp.ndarray) -> onp.ndarray:
    return onp.round(a * 10).astype(onp.int64) if a.dtype.kind == "f" else a


def _cases() -> list:
    cases = []
    for prefix, ref, mod in MODULES:
        for name in sorted(_functions(mod)):
            oracle = getattr(ref, name, None)
            if not callable(oracle) or isinstance(oracle, type):
                continue
            call, args = sample("numpy." + prefix + name)
            calls = [("sample", call, args), ("integer", call, tuple(_integer(a) for a in args))]
            calls += [(f"noop{i}", c, a) for i, (c, a) in enumerate(NOOPS.get(prefix + name, []))]
            cases += [pytest.param(prefix + name, call, args, id=f"{prefix}{name}-{kind}") for kind, call, args in calls]
    return cases


def _run(fn: Callable, call: Callable, args: tuple) -> tuple:
    """(the inputs it ran on, the result): fresh copies of the inputs, so each run is alone."""
    ins = tuple(a.copy() for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ins, call(fn, *ins)


def _sharing(ins: tuple, out: Any) -> list:
    return [[bool(onp.shares_memory(o, a)) for a in ins] for o in _arrays(out)]


def _written(ins: tuple, out: Any) -> list:
    """Write into each writeable result array, then: which inputs changed."""
    before = [a.copy() for a in ins]
    for o in _arrays(out):
        # (NumPy's broadcast results are writeable only until a deprecation ends: skipped)
        if o.flags.writeable and o.size and all(st or n == 1 for st, n in zip(o.strides, o.shape)):
            o[...] = onp.asarray(99, dtype=o.dtype) if o.dtype.kind != "b" else ~o
    return [not onp.array_equal(a, b, equal_nan=True) for a, b in zip(ins, before)]


@pytest.mark.parametrize("name, call, args", _cases())
def test_numpy_function_aliases_like_numpy(name: str, call: Callable, args: tuple) -> None:
    mod, ref, full = fnp, onp, name
    for prefix, r, m in MODULES[1:]:
        if name.startswith(prefix):
            mod, ref, name = m, r, name[len(prefix):]
    try:
        ins, expected = _run(getattr(ref, name), call, args)
    except Exception:  # noqa: BLE001 - NumPy refuses these arguments: nothing to compare
        pytest.skip("NumPy refuses these arguments")
    try:
        got_ins, got = _run(getattr(mod, name), call, args)
    except Exception:  # noqa: BLE001 - errors are other tests' business
        pytest.skip("fgrad refuses these arguments")
    want, have = _sharing(ins, expected), _sharing(got_ins, got)
    if full in COPIES_OF_VIEWS and not any(map(any, have)):
        assert not any(_written(got_ins, got))
        return
    if len(want) == len(have):  # (a function may return a list where NumPy returns an array)
        assert have == want, f"{name}: result shares memory with the inputs {have}, NumPy's {want}"
    assert _written(got_ins, got) == _written(ins, expected), \
        f"{name}: writing into the result changed inputs differently from NumPy"


# --- the Tensor facade against PyTorch ---------------------------------------------------------------
# Every function of the op table (fgrad.torch._tensor.FUNCTIONS) and every Tensor method PyTorch also
# has, called on two (2, 3) float32 tensors x and y (as f(x), else f(x, y); a call both
# libraries refuse is skipped), and the calls below, the no-op variants among them. Storage
# shared with an input, and whether `result.mul_(5)` changes an input, must be PyTorch's.

torch = pytest.importorskip("torch")
import fgrad  # noqa: E402
import fgrad.torch.nn.functional as fF  # noqa: E402
from fgrad.torch._tensor import FUNCTIONS  # noqa: E402

TX = onp.array([[0.3, -0.5, 0.7], [0.2, 0.4, -0.9]], onp.float32)
TY = onp.array([[0.4, 0.6, 0.9], [0.1, -0.3, 0.8]], onp.float32)


def _F(L):
    return fF if L is fgrad.torch else torch.nn.functional


# name -> call(L, x, y): L is torch or fgrad
TORCH_CALLS: dict[str, Callable] = {
    "flip0": lambda L, x, y: x.flip(0), "flip01": lambda L, x, y: L.flip(x, (0, 1)),
    "flip_none": lambda L, x, y: x.flip(()),
    "rot90_0": lambda L, x, y: x.rot90(0), "rot90_1": lambda L, x, y: x.rot90(1),
    "rot90_2": lambda L, x, y: x.rot90(2), "rot90_4": lambda L, x, y: L.rot90(x, 4),
    "roll0": lambda L, x, y: x.roll(0), "roll_full": lambda L, x, y: x.roll(3, 1),
    "roll00": lambda L, x, y: L.roll(x, (0, 0), (0, 1)), "roll1": lambda L, x, y: x.roll(1, 1),
    "repeat11": lambda L, x, y: x.repeat(1, 1), "repeat21": lambda L, x, y: x.repeat(2, 1),
    "stack1": lambda L, x, y: L.stack([x]), "hstack1": lambda L, x, y: L.hstack([x]),
    "vstack1": lambda L, x, y: L.vstack([x]), "cat1": lambda L, x, y: L.cat([x]),
    "cat_empty": lambda L, x, y: L.cat([x, x[:0]]), "concat1": lambda L, x, y: L.concat([x], 1),
    "block_diag1": lambda L, x, y: L.block_diag(x),
    "pad0": lambda L, x, y: _F(L).pad(x, (0, 0)), "pad00": lambda L, x, y: _F(L).pad(x, (0, 0, 0, 0)),
    "pad0_reflect": lambda L, x, y: _F(L).pad(x[None], (0, 0), mode="reflect"),
    "pad0_replicate": lambda L, x, y: _F(L).pad(x[None], (0, 0), mode="replicate"),
    "pad0_circular": lambda L, x, y: _F(L).pad(x[None], (0, 0), mode="circular"),
    "mul1": lambda L, x, y: x * 1.0, "rmul1": lambda L, x, y: 1.0 * x, "mul1t": lambda L, x, y: x.mul(1),
    "add0": lambda L, x, y: x + 0.0, "sub0": lambda L, x, y: x - 0, "div1": lambda L, x, y: x / 1.0,
    "pow1": lambda L, x, y: x ** 1, "pos": lambda L, x, y: +x, "add_alpha0": lambda L, x, y: x.add(y, alpha=0),
    "sum_keep": lambda L, x, y: x.sum(0, keepdim=True)[None], "mean_1": lambda L, x, y: x[:1].mean(0),
    "amax_1": lambda L, x, y: x[:1].amax(0), "cumsum_1": lambda L, x, y: x[:1].cumsum(0),
    "cumprod_1": lambda L, x, y: x[:1].cumprod(0), "sort_1": lambda L, x, y: x[:, :1].sort(1)[0],
    "to_same": lambda L, x, y: x.to(L.float32), "float": lambda L, x, y: x.float(),
    "double": lambda L, x, y: x.double(), "type_as": lambda L, x, y: x.type_as(y),
    "type_same": lambda L, x, y: x.type(L.float32), "contiguous": lambda L, x, y: x.contiguous(),
    "contiguous_t": lambda L, x, y: x.t().contiguous(), "to_cpu": lambda L, x, y: x.to("cpu"),
    "clone": lambda L, x, y: x.clone(), "detach": lambda L, x, y: x.detach(),
    "expand": lambda L, x, y: x.expand(2, 3), "expand2": lambda L, x, y: x[:1].expand(2, 3),
    "expand_as": lambda L, x, y: x.expand_as(y), "broadcast_to": lambda L, x, y: x.broadcast_to((2, 3)),
    "reshape": lambda L, x, y: x.reshape(2, 3), "reshape_t": lambda L, x, y: x.t().reshape(6),
    "view": lambda L, x, y: x.view(3, 2), "view_as": lambda L, x, y: x.view_as(y),
    "reshape_as": lambda L, x, y: x.reshape_as(y), "flatten": lambda L, x, y: x.flatten(),
    "flatten1d": lambda L, x, y: x[0].flatten(), "unflatten": lambda L, x, y: x.unflatten(1, (3, 1)),
    "squeeze": lambda L, x, y: x.squeeze(), "squeeze0": lambda L, x, y: x.squeeze(0),
    "unsqueeze": lambda L, x, y: x.unsqueeze(0), "narrow": lambda L, x, y: x.narrow(0, 0, 2),
    "t": lambda L, x, y: x.t(), "T": lambda L, x, y: x.T, "mT": lambda L, x, y: x.mT,
    "movedim00": lambda L, x, y: x.movedim(0, 0), "permute01": lambda L, x, y: x.permute(0, 1),
    "transpose00": lambda L, x, y: x.transpose(0, 0), "swapaxes00": lambda L, x, y: x.swapaxes(0, 0),
    "select": lambda L, x, y: x.select(0, 1), "index_int": lambda L, x, y: x[1],
    "index_slice": lambda L, x, y: x[:, 1:], "index_all": lambda L, x, y: x[:], "index_ellipsis": lambda L, x, y: x[...],
    "index_list": lambda L, x, y: x[[0, 1]], "index_mask": lambda L, x, y: x[x > -10],
    "unbind": lambda L, x, y: x.unbind(0), "split": lambda L, x, y: x.split(1), "split_all": lambda L, x, y: x.split(2),
    "chunk1": lambda L, x, y: x.chunk(1), "tensor_split1": lambda L, x, y: x.tensor_split(1),
    "diagonal": lambda L, x, y: x.diagonal(), "tril_all": lambda L, x, y: x.tril(5), "triu_all": lambda L, x, y: x.triu(-5),
    "real": lambda L, x, y: x.real, "real_fn": lambda L, x, y: L.real(x), "conj": lambda L, x, y: x.conj(),
    "resolve_conj": lambda L, x, y: x.resolve_conj(), "conj_physical": lambda L, x, y: x.conj_physical(),
    "nan_to_num": lambda L, x, y: x.nan_to_num(), "clamp_inf": lambda L, x, y: x.clamp(-float("inf"), float("inf")),
    "clamp_min": lambda L, x, y: x.clamp(min=-10.0), "where_true": lambda L, x, y: L.where(x > -10, x, y),
    "masked_fill_none": lambda L, x, y: x.masked_fill(x > 10, 0.0), "index_select_all": lambda L, x, y: x.index_select(0, L.tensor([0, 1])),
    "lerp0": lambda L, x, y: x.lerp(y, 0.0), "diff0": lambda L, x, y: x.diff(n=0) if L is torch else x.diff(n=0),
    "matmul_eye": lambda L, x, y: x @ L.eye(3), "einsum_id": lambda L, x, y: L.einsum("ij->ij", x),
    "einsum_t": lambda L, x, y: L.einsum("ij->ji", x), "meshgrid1": lambda L, x, y: L.meshgrid(x[0], indexing="ij"),
    "meshgrid2": lambda L, x, y: L.meshgrid(x[0], y[0], indexing="ij"),
    "relu_pos": lambda L, x, y: (x.abs()).relu(), "abs": lambda L, x, y: x.abs(), "sign": lambda L, x, y: x.sign(),
    "F_dropout_eval": lambda L, x, y: _F(L).dropout(x, 0.5, training=False),
    "F_dropout0": lambda L, x, y: _F(L).dropout(x, 0.0), "F_identity_pad": lambda L, x, y: _F(L).pad(x, (0, 0), value=1.0),
    "F_normalize": lambda L, x, y: _F(L).normalize(x), "F_relu": lambda L, x, y: _F(L).relu(x),
    "F_linear_eye": lambda L, x, y: _F(L).linear(x, L.eye(3)),
    "F_interpolate_same": lambda L, x, y: _F(L).interpolate(x[None], size=3),
    "F_adaptive_avg_pool_same": lambda L, x, y: _F(L).adaptive_avg_pool1d(x[None], 3),
    "F_hardtanh_wide": lambda L, x, y: _F(L).hardtanh(x, -10.0, 10.0),
    "F_pad_crop": lambda L, x, y: _F(L).pad(x, (-1, 0)),
    "F_adaptive_avg_pool2d_same": lambda L, x, y: _F(L).adaptive_avg_pool2d(x[None], (2, 3)),
    "F_adaptive_max_pool1d_same": lambda L, x, y: _F(L).adaptive_max_pool1d(x[None], 3),
    "F_avg_pool1d_1": lambda L, x, y: _F(L).avg_pool1d(x[None], 1),
    "F_max_pool1d_1": lambda L, x, y: _F(L).max_pool1d(x[None], 1),
    "cartesian_prod1": lambda L, x, y: L.cartesian_prod(x[0]),
    "block_diag2": lambda L, x, y: L.block_diag(x, y),
    "tile1": lambda L, x, y: L.tile(x, (1, 1)),
    "repeat_interleave1": lambda L, x, y: x.repeat_interleave(1, 0),
    "take_along_dim": lambda L, x, y: L.take_along_dim(x, L.tensor([[0, 1, 2]]), 1),
    "squeeze_none": lambda L, x, y: L.squeeze(x, 0),
    "atleast_2d": lambda L, x, y: L.atleast_2d(x), "ravel": lambda L, x, y: x.ravel(),
    "flatten_t": lambda L, x, y: x.t().flatten(),
}


def _torch_cases() -> list:
    cases = [pytest.param(n, (lambda L, x, y, n=n: getattr(L, n)(x)), (lambda L, x, y, n=n: getattr(L, n)(x, y)),
                          id=f"fn-{n}") for n in sorted(set(FUNCTIONS))]
    methods = sorted(n for n in dir(fgrad.torch.Tensor) if not n.startswith("_") and not n.endswith("_")
                     and callable(getattr(fgrad.torch.Tensor, n, None)) and callable(getattr(torch.Tensor, n, None))
                     and n not in ("backward", "register_hook", "numpy", "tolist", "item", "cuda"))
    cases += [pytest.param(n, (lambda L, x, y, n=n: getattr(x, n)()), (lambda L, x, y, n=n: getattr(x, n)(y)),
                           id=f"method-{n}") for n in methods]
    cases += [pytest.param(n, call, None, id=f"call-{n}") for n, call in TORCH_CALLS.items()]
    return cases


def _torch_run(L, call):
    ins = (L.tensor(TX.copy()), L.tensor(TY.copy()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ins, call(L, *ins)


def _tensors(r) -> list:
    if isinstance(r, (tuple, list)):
        return [t for x in r for t in _tensors(x)]
    return [r] if isinstance(r, (torch.Tensor, fgrad.torch.Tensor)) else []


def _storage_shared(L, out, ins) -> list:
    if L is torch:
        return [[o.numel() > 0 and o.untyped_storage().data_ptr() == a.untyped_storage().data_ptr() for a in ins]
                for o in out]
    return [[bool(onp.shares_memory(o._value, a._value)) for a in ins] for o in out]


def _mul_(out, ins) -> tuple:
    """Multiply each floating result by 5 in place: (which writes failed, which inputs changed)."""
    before = [a.clone() for a in ins]
    failed = []
    for o in out:
        if o.dtype.is_floating_point:
            try:
                o.mul_(5)
                failed.append(False)
            except RuntimeError:  # (PyTorch refuses writes into expanded tensors, as fgrad)
                failed.append(True)
    return failed, [not bool((a == b).all()) for a, b in zip(ins, before)]


@pytest.mark.parametrize("name, call, call2", _torch_cases())
def test_facade_op_aliases_like_pytorch(name: str, call: Callable, call2: Callable | None) -> None:
    for c in (call, call2):
        if c is None:
            continue
        try:
            t_ins, t_out = _torch_run(torch, c)
            break
        except Exception:  # noqa: BLE001 - PyTorch refuses this call: try the next
            continue
    else:
        pytest.skip("PyTorch refuses these arguments")
    try:
        f_ins, f_out = _torch_run(fgrad.torch, c)
    except Exception:  # noqa: BLE001 - errors are other tests' business
        pytest.skip("fgrad refuses these arguments")
    t_out, f_out = _tensors(t_out), _tensors(f_out)
    if len(t_out) != len(f_out):
        pytest.skip("a different number of results")
    want, have = _storage_shared(torch, t_out, t_ins), _storage_shared(fgrad.torch, f_out, f_ins)
    assert have == want, f"{name}: result shares storage with the inputs {have}, PyTorch's {want}"
    assert _mul_(f_out, f_ins) == _mul_(t_out, t_ins), \
        f"{name}: result.mul_(5) changed the inputs differently from PyTorch"


# --- every primitive, eagerly -------------------------------------------------------------------------
# Each equation of every registry case's jaxpr (tests/cases), bound eagerly on concrete values:
# the result shares memory with an operand only for a view primitive (Primitive(view=True)).

from fgrad.core.ir import Literal  # noqa: E402
from tests.ops.test_primitives import JIT_CASES  # noqa: E402


@pytest.mark.parametrize("case", JIT_CASES, ids=lambda c: c.name)
def test_primitive_eager_result_is_new_unless_a_view(case) -> None:
    args = case.make_args()
    closed = fgrad.make_jaxpr(case.fn)(*args)
    env = {id(v): x for v, x in zip(closed.jaxpr.constvars, closed.consts)}
    env.update({id(v): x for v, x in zip(closed.jaxpr.invars, args)})
    for e in closed.jaxpr.eqns:
        vals = [a.val if isinstance(a, Literal) else env[id(a)] for a in e.invars]
        out = e.primitive.bind(*vals, **e.params)
        if not e.primitive.view:
            shared = [i for i, v in enumerate(vals) if isinstance(v, onp.ndarray) and onp.shares_memory(out, v)]
            assert not shared, f"{case.name}: {e.primitive.name} returns memory of its operands {shared}"
        env[id(e.outvars[0])] = out
