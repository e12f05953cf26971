"""The pairing table of tests/torch/test_counterparts.py: each fgrad.torch function with its
functional counterpart (fgrad.numpy, fgrad.lax, fgrad.scipy.special, fgrad.numpy.linalg,
fgrad.nn), the arguments each side takes, and the inputs they are compared on.

A `Pair` names the torch function by its path under fgrad.torch ("exp", "special.expit",
"linalg.inv", "nn.functional.relu") and the counterpart by its path under fgrad
("numpy.exp", "scipy.special.expit", "nn.relu"). `args` are the positional arguments: a
string is an input the test generates (see `make`) and differentiates; anything else is
passed to both sides as it is. `tkw` are the torch keywords; the counterpart's keywords are
`fkw`, or, when not given, `tkw` with PyTorch's argument names mapped by ARG_NAMES (dim ->
axis, keepdim -> keepdims). `tsel`/`fsel` pick the compared output from a result with
several (torch.max(x, dim) returns values and indices). `points` are extra inputs where a
convention bites (0, ties, bounds), tried besides the random ones.
"""
from __future__ import annotations

import dataclasses
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# PyTorch's argument names -> the functional door's (the only renames applied implicitly)
ARG_NAMES = {"dim": "axis", "keepdim": "keepdims"}


@dataclass(frozen=True)
class Pair:
    """One torch function and its counterpart, with how to call each (see the module doc)."""

    torch: str
    fn: str
    args: tuple = ("n:3,4",)
    tkw: dict = field(default_factory=dict)
    fkw: dict | None = None
    targs: Callable | None = None  # the arguments -> torch's positional arguments
    fargs: Callable | None = None  # the arguments -> the counterpart's positional arguments
    tsel: Callable | None = None
    fsel: Callable | None = None
    points: tuple = ()
    order: int = 2  # derivatives compared: 0 (values only), 1 (VJP) or 2 (VJP and grad of it)
    tag: str = ""   # told apart from other pairs of the same torch function

    @property
    def id(self) -> str:
        return f"{self.torch}~{self.fn}" + (f"[{self.tag}]" if self.tag else "")

    def fn_kwargs(self) -> dict:
        """The counterpart's keywords: fkw, or tkw under the functional door's names."""
        if self.fkw is not None:
            return self.fkw
        return {ARG_NAMES.get(k, k): v for k, v in self.tkw.items()}


def _seed(text: str) -> int:
    return zlib.crc32(text.encode())


def make(spec: str, rng: np.random.Generator) -> np.ndarray:
    """A float64 input from `spec`, "kind:shape": n normal, p in [0.5, 2], u in [0.1, 0.9],
    g in [1.5, 3] (acosh), i int64 in [0, 3), f32 a float32 normal; and matrices "kind:...,n"
    of shape (..., n, n): s symmetric positive definite, q well-conditioned, t lower
    triangular well-conditioned."""
    kind, _, shape_text = spec.partition(":")
    shape = tuple(int(s) for s in shape_text.split(",") if s)
    if kind == "n":
        return rng.standard_normal(shape)
    if kind == "p":
        return rng.uniform(0.5, 2.0, shape)
    if kind == "u":
        return rng.uniform(0.1, 0.9, shape)
    if kind == "g":
        return rng.uniform(1.5, 3.0, shape)
    if kind == "i":
        return rng.integers(0, 3, shape).astype(np.int64)
    if kind == "f32":
        return rng.standard_normal(shape).astype(np.float32)
    n = shape[-1]
    shape = shape + (n,)
    a = rng.standard_normal(shape)
    if kind == "s":
        return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    if kind == "q":
        return a + 2 * n ** 0.5 * np.eye(n)
    if kind == "t":
        return np.tril(a) + 2 * n ** 0.5 * np.eye(n)
    raise ValueError(f"unknown input kind {kind!r} in {spec!r}; use one of n p u g i f32 s q t")


class Lit(str):
    """A string argument passed as it is (einsum's subscripts), not an input spec."""


def inputs(pair: Pair, k: int = 2) -> list[tuple]:
    """`k` random input tuples for `pair` (seeded by its id), then its special points."""
    rng = np.random.default_rng(_seed(pair.id))
    sets = [tuple(make(a, rng) if isinstance(a, str) and not isinstance(a, Lit) else a for a in pair.args)
            for _ in range(k)]
    return sets + list(pair.points)


def pt(*args: Any) -> tuple:
    """A special point: nested lists become float64 arrays, other arguments stay as given."""
    return tuple(np.asarray(a, np.float64) if isinstance(a, list) else a for a in args)


def fgrad_stack(r: Any) -> Any:
    """A tuple of index arrays as one (k, n) array, as PyTorch returns them."""
    import fgrad.numpy
    return fgrad.numpy.stack(r)


def first(r: Any) -> Any:
    """(values, indices) -> values."""
    return r[0]


def P(torch: str, fn: str, *args: Any, **kw: Any) -> Pair:
    """A Pair; `args` default to one (3, 4) normal input."""
    return Pair(torch, fn, args or ("n:3,4",), **kw)


Z = pt([[0.0, -0.0, 1.5, -2.0]])  # zeros of both signs, for kinks at 0
TIE = pt([[1.0, 1.0, -2.0, 3.0]], [[1.0, 0.5, -2.0, -0.0]])  # two operands tied in places
ORIGIN = pt([[0.0, -0.0, 0.0]], [[0.0, 0.0, -0.0]])  # both operands zero (atan2, hypot)
MAXTIE = pt([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0]])  # ties of the largest entries

UNARY_SAME = ["abs", "absolute", "arccos", "arcsin", "arctan", "arcsinh", "arctanh", "arccosh", "ceil",
              "cos", "cosh", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p", "log2", "negative",
              "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "fix", "reciprocal",
              "isnan", "isinf", "isfinite", "logical_not", "angle", "real", "conj", "nan_to_num",
              "round"]
# the domain each needs ("n" when absent)
DOMAIN = {"arccos": "u", "arcsin": "u", "arctanh": "u", "arccosh": "g", "acos": "u", "asin": "u",
          "atanh": "u", "acosh": "g", "log": "p", "log10": "p", "log1p": "p", "log2": "p", "sqrt": "p",
          "rsqrt": "p", "logit": "u", "erfinv": "u", "ndtri": "u", "digamma": "p", "psi": "p",
          "gammaln": "p", "bessel_y0": "p", "bessel_y1": "p", "xlogy": "p", "entr": "p", "multigammaln": "g"}
# torch's short names -> NumPy's
TORCH_ALIASES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "asinh": "arcsinh", "atanh": "arctanh",
                 "acosh": "arccosh", "neg": "negative", "conj_physical": "conj"}


# points at the edge of a domain (the derivative there is inf or a convention)
EDGE = {"sqrt": pt([[0.0, 4.0]]), "log": pt([[0.0, 1.0]]), "log2": pt([[0.0, 1.0]]), "log10": pt([[0.0, 1.0]]),
        "log1p": pt([[-1.0, 0.0]]), "rsqrt": pt([[0.0, 4.0]]), "arcsin": pt([[1.0, -1.0]]),
        "arccos": pt([[1.0, -1.0]]), "arctanh": pt([[1.0, -1.0]]), "arccosh": pt([[1.0, 2.0]]),
        "asin": pt([[1.0, -1.0]]), "acos": pt([[1.0, -1.0]]), "atanh": pt([[1.0, -1.0]]),
        "acosh": pt([[1.0, 2.0]]), "logit": pt([[0.0, 1.0]]), "entr": pt([[0.0, 1.0]]),
        "erfinv": pt([[1.0, -1.0]]), "ndtri": pt([[0.0, 1.0]])}


def _unary(name: str, fn: str, points=(Z,), **kw) -> Pair:
    short = name.rsplit(".", 1)[-1]
    d = DOMAIN.get(short, DOMAIN.get(fn.rsplit(".", 1)[-1], "n"))
    edge = EDGE.get(short, EDGE.get(fn.rsplit(".", 1)[-1]))
    return P(name, fn, f"{d}:3,4", points=points if d == "n" else (edge,) if edge else (), **kw)


def _build() -> list[Pair]:
    pairs: list[Pair] = []
    add = pairs.append
    # --- elementwise, one operand -------------------------------------------------------------
    for name in UNARY_SAME:
        add(_unary(name, f"numpy.{name}"))
    for tname, nname in TORCH_ALIASES.items():
        add(_unary(tname, f"numpy.{nname}"))
    for name in ("abs", "neg", "exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt", "sign", "square"):
        add(_unary(name, f"lax.{name}", tag="lax"))
    add(_unary("sigmoid", "nn.sigmoid"))
    add(_unary("sigmoid", "scipy.special.expit", tag="expit"))
    add(_unary("erf", "scipy.special.erf"))
    add(_unary("logit", "scipy.special.logit"))
    add(_unary("relu", "nn.relu"))
    add(P("frac", "numpy.modf", fsel=first, points=(Z,)))
    # --- elementwise, two operands ------------------------------------------------------------
    two = ("n:3,4", "n:3,4")
    for name in ("add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "arctan2",
                 "logaddexp", "logaddexp2", "hypot", "remainder", "fmod", "floor_divide", "greater",
                 "greater_equal", "less", "less_equal", "not_equal", "logical_and", "logical_or",
                 "logical_xor"):
        add(P(name, f"numpy.{name}", *two, points=(TIE, ORIGIN), order=0 if name == "floor_divide" else 2))
    for tname, nname in {"sub": "subtract", "mul": "multiply", "div": "divide", "atan2": "arctan2",
                         "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
                         "ge": "greater_equal"}.items():
        add(P(tname, f"numpy.{nname}", *two, points=(TIE, ORIGIN)))
    for tname, lname in {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "maximum": "max",
                         "minimum": "min"}.items():
        add(P(tname, f"lax.{lname}", *two, points=(TIE,), tag="lax"))
    add(P("pow", "numpy.power", "p:3,4", "n:3,4"))
    add(P("pow", "lax.pow", "p:3,4", "n:3,4", tag="lax"))
    add(P("pow", "numpy.power", "n:3,4", 3, tag="int exponent"))
    add(P("float_power", "numpy.float_power", "p:3,4", "n:3,4"))
    XLOGY0 = pt([[0.0, 1.0, 2.0]], [[0.0, 0.0, 3.0]])  # x = 0 and y = 0 together, y = 0 alone
    add(P("xlogy", "scipy.special.xlogy", "p:3,4", "p:3,4", points=(XLOGY0,)))
    for a, b in (("add", "add"), ("mul", "multiply"), ("div", "divide")):
        add(P(a, f"numpy.{b}", "n:3,4", 2.5, tag="number"))
    add(P("where", "numpy.where", np.array([[True, False, True, False]] * 3), "n:3,4", "n:3,4"))
    add(P("clamp", "numpy.clip", "n:3,4", -0.5, 0.5, points=(pt([[-0.5, 0.5, 0.0, 2.0]], -0.5, 0.5),)))
    add(P("clip", "numpy.clip", "n:3,4", -0.5, 0.5, points=(pt([[-0.5, 0.5, 0.0, 2.0]], -0.5, 0.5),)))
    add(P("clamp", "lax.clamp", "n:3,4", -0.5, 0.5, fargs=lambda x, lo, hi: (lo, x, hi), tag="lax",
          points=(pt([[-0.5, 0.5, 0.0, 2.0]], -0.5, 0.5),)))
    # --- reductions ---------------------------------------------------------------------------
    for name in ("sum", "mean", "prod", "amax", "amin", "nansum"):
        add(P(name, f"numpy.{name}"))
        add(P(name, f"numpy.{name}", tkw={"dim": 1, "keepdim": True}, tag="dim"))
    for name in ("std", "var"):  # (PyTorch's default correction is 1, NumPy's ddof 0)
        add(P(name, f"numpy.{name}", fkw={"ddof": 1}))
        add(P(name, f"numpy.{name}", tkw={"dim": 1, "keepdim": True}, fkw={"axis": 1, "keepdims": True, "ddof": 1},
              tag="dim"))
        add(P(name, f"numpy.{name}", tkw={"correction": 0}, fkw={}, tag="correction 0",
              points=(pt([[2.0, 2.0, 2.0, 2.0]]),)))
        add(P(name, f"numpy.{name}", fkw={"ddof": 1}, tag="zero spread", points=(pt([[2.0, 2.0, 2.0, 2.0]]),)))
    for name in ("argmax", "argmin", "any", "all", "count_nonzero"):
        add(P(name, f"numpy.{name}", tkw={"dim": 1}, order=0))
    add(P("max", "numpy.max", points=(MAXTIE,)))
    add(P("min", "numpy.min", points=(pt([[1.0, -3.0, -3.0, 2.0], [0.0, 0.0, 1.0, 0.0]]),)))
    add(P("amax", "numpy.amax", tag="ties", points=(MAXTIE,)))
    add(P("max", "numpy.max", tkw={"dim": 1}, tsel=first, tag="dim", points=(MAXTIE,)))
    add(P("min", "numpy.min", tkw={"dim": 1}, tsel=first, tag="dim"))
    add(P("median", "numpy.median", "n:3,5", tkw={"dim": 1}, tsel=first))
    add(P("quantile", "numpy.quantile", "n:3,5", 0.3, tkw={"dim": 1}))
    add(P("logsumexp", "scipy.special.logsumexp", tkw={"dim": 1}))
    add(P("logsumexp", "nn.logsumexp", tkw={"dim": 1}, tag="nn"))
    add(P("norm", "numpy.linalg.norm", fkw={}, points=(pt([[0.0, 0.0, 0.0, 0.0]]),)))
    add(P("cumsum", "numpy.cumsum", tkw={"dim": 1}))
    add(P("cumprod", "numpy.cumprod", tkw={"dim": 1}))
    add(P("cummax", "lax.cummax", tkw={"dim": 1}, tsel=first, points=(MAXTIE,)))
    add(P("cummin", "lax.cummin", tkw={"dim": 1}, tsel=first))
    add(P("logcumsumexp", "lax.cumlogsumexp", tkw={"dim": 1}))
    add(P("diff", "numpy.diff", tkw={"dim": 1}))
    add(P("trace", "numpy.trace", "n:4,4"))
    # --- shape --------------------------------------------------------------------------------
    add(P("reshape", "numpy.reshape", "n:3,4", (2, 6)))
    add(P("transpose", "numpy.swapaxes", "n:2,3,4", 0, 2))
    add(P("swapaxes", "numpy.swapaxes", "n:2,3,4", 0, 2))
    add(P("swapdims", "numpy.swapaxes", "n:2,3,4", 0, 2))
    add(P("permute", "numpy.transpose", "n:2,3,4", (2, 0, 1)))
    add(P("t", "numpy.transpose", "n:3,4"))
    add(P("movedim", "numpy.moveaxis", "n:2,3,4", 0, 2))
    add(P("moveaxis", "numpy.moveaxis", "n:2,3,4", 0, 2))
    add(P("flatten", "numpy.ravel", "n:2,3,4"))
    add(P("squeeze", "numpy.squeeze", "n:3,1,4"))
    add(P("unsqueeze", "numpy.expand_dims", "n:3,4", 1))
    add(P("flip", "numpy.flip", tkw={"dims": (1,)}, fkw={"axis": (1,)}))
    add(P("roll", "numpy.roll", "n:3,4", 1, tkw={"dims": 1}, fkw={"axis": 1}))
    add(P("rot90", "numpy.rot90", "n:3,4"))
    add(P("tril", "numpy.tril", "n:4,4", -1, fkw={}))
    add(P("triu", "numpy.triu", "n:4,4", 1, fkw={}))
    add(P("diag", "numpy.diag", "n:4,4"))
    add(P("diag", "numpy.diag", "n:4", tag="vector"))
    add(P("diagonal", "numpy.diagonal", "n:4,4", 1))
    add(P("broadcast_to", "numpy.broadcast_to", "n:1,4", (3, 4)))
    add(P("repeat_interleave", "numpy.repeat", "n:3,4", 2, tkw={"dim": 1}))
    add(P("clone", "numpy.copy"))
    add(P("asarray", "numpy.asarray"))
    add(P("take", "numpy.take", "n:3,4", np.array([0, 5, 11, 5])))
    swap = {"fargs": lambda x, d, i: (x, i, d)}  # torch: (input, dim, index); NumPy: (a, indices, axis)
    add(P("gather", "numpy.take_along_axis", "n:3,4", 1, np.array([[0, 0, 3], [1, 2, 1], [3, 3, 0]]), **swap))
    add(P("index_select", "numpy.take", "n:3,4", 1, np.array([0, 2, 2]), **swap))
    add(P("kron", "numpy.kron", "n:2,3", "n:3,2"))
    add(P("outer", "numpy.outer", "n:3", "n:4"))
    add(P("ger", "numpy.outer", "n:3", "n:4"))
    add(P("inner", "numpy.inner", "n:4", "n:4"))
    add(P("inner", "numpy.inner", "n:2,3,4", "n:5,4", tag="N-d"))
    add(P("inner", "numpy.inner", "n:", "n:3,4", tag="0-d"))
    add(P("dot", "numpy.dot", "n:4", "n:4"))
    add(P("matmul", "numpy.matmul", "n:3,4", "n:4,2"))
    add(P("mm", "numpy.matmul", "n:3,4", "n:4,2"))
    add(P("mv", "numpy.matmul", "n:3,4", "n:4"))
    add(P("bmm", "numpy.matmul", "n:2,3,4", "n:2,4,2"))
    add(P("einsum", "numpy.einsum", Lit("ij,jk->ik"), "n:3,4", "n:4,2"))
    both = {"targs": lambda *a: (list(a),), "fargs": lambda *a: (list(a),)}
    for name in ("stack", "cat", "concat", "concatenate", "hstack", "vstack"):
        add(P(name, f"numpy.{'concatenate' if name.startswith('c') else name}", "n:3,4", "n:3,4", **both))
    add(P("cross", "numpy.cross", "n:4,3", "n:4,3", tkw={"dim": 1}))
    add(P("sort", "numpy.sort", tkw={"dim": 1}, tsel=first, points=(MAXTIE,)))
    add(P("argsort", "numpy.argsort", tkw={"dim": 1}, order=0))
    # --- compositions with a counterpart under another name ---------------------------------
    add(P("chunk", "numpy.array_split", "n:3,4", 2, tkw={"dim": 1}, tsel=lambda r: r[1], fsel=lambda r: r[1]))
    add(P("unbind", "numpy.unstack", "n:3,4", tkw={"dim": 1}, tsel=lambda r: r[2], fsel=lambda r: r[2]))
    add(P("clamp_min", "numpy.maximum", "n:3,4", 0.25, points=(pt([[0.25, 1.0, -1.0, 0.0]], 0.25),)))
    add(P("clamp_max", "numpy.minimum", "n:3,4", 0.25, points=(pt([[0.25, 1.0, -1.0, 0.0]], 0.25),)))
    mask = np.array([[True, False, False, True]] * 3)
    add(P("masked_fill", "numpy.where", "n:3,4", mask, 1.5, fargs=lambda x, m, v: (m, v, x)))
    add(P("std_mean", "numpy.std", tkw={"dim": 1}, fkw={"axis": 1, "ddof": 1}, tsel=first))
    add(P("var_mean", "numpy.mean", tkw={"dim": 1}, tsel=lambda r: r[1]))
    add(P("numel", "numpy.size", "n:3,4"))
    add(P("as_tensor", "numpy.asarray"))
    add(P("tensor", "numpy.array", "n:3,4", order=0))
    add(P("block_diag", "scipy.linalg.block_diag", "n:2,2", "n:1,3"))
    add(P("linalg.solve_triangular", "scipy.linalg.solve_triangular", "t:3", "n:3,2", tkw={"upper": False},
          fkw={"lower": True}))
    add(P("nn.functional.flatten", "numpy.ravel", "n:2,3,4"))
    add(P("nn.functional.pad", "numpy.pad", "n:3,4", (1, 2), fargs=lambda x, p: (x, ((0, 0), p))))
    add(P("nn.functional.layer_norm", "nn.standardize", "n:3,4", (4,), fargs=lambda x, s: (x,),
          fkw={"axis": -1, "epsilon": 1e-5}))
    add(P("nn.functional.conv2d", "lax.conv_general_dilated", "n:2,3,6,5", "n:4,3,3,2",
          fargs=lambda x, w: (x, w, (1, 1), [(0, 0), (0, 0)])))
    add(P("nn.functional.conv2d", "lax.conv_general_dilated", "n:2,3,6,5", "n:4,3,3,2",
          tkw={"stride": 2, "padding": 1}, fkw={},
          fargs=lambda x, w: (x, w, (2, 2), [(1, 1), (1, 1)]), tag="stride 2, padding 1"))
    # --- integers, booleans and searches: values only ----------------------------------------
    ints = ("i:3,4", "i:3,4")
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        add(P(name, f"numpy.{name}", *ints))
    add(P("bitwise_not", "numpy.bitwise_not", "i:3,4"))
    add(P("isclose", "numpy.isclose", *two, points=(TIE,)))
    add(P("allclose", "numpy.allclose", *two, points=(TIE,)))
    add(P("argwhere", "numpy.argwhere", "n:3,4", points=(Z,)))
    add(P("nonzero", "numpy.nonzero", "n:3,4", tkw={"as_tuple": True}, fkw={}, tsel=first, fsel=first,
          points=(Z,)))
    add(P("bincount", "numpy.bincount", np.array([0, 2, 2, 5, 1])))
    add(P("searchsorted", "numpy.searchsorted", np.array([-1.0, 0.0, 0.5, 2.0]), "n:3"))
    add(P("unique", "numpy.unique", np.array([3.0, 1.0, 3.0, -2.0, 1.0])))
    add(P("tensor_split", "numpy.array_split", "n:5,4", 3, tsel=first, fsel=first))
    # (torch.split takes a section's size, numpy.split the number of sections)
    add(P("split", "numpy.split", "n:6,4", 2, fargs=lambda x, size: (x, 6 // size), tsel=lambda r: r[1],
          fsel=lambda r: r[1]))
    add(P("meshgrid", "numpy.meshgrid", "n:3", "n:4", tkw={"indexing": "ij"}, tsel=first, fsel=first))
    add(P("nanmedian", "numpy.nanmedian", "n:3,5", tkw={"dim": 1}, tsel=first))
    add(P("nanquantile", "numpy.nanquantile", "n:3,5", 0.3, tkw={"dim": 1}))
    add(P("log_softmax", "nn.log_softmax", tkw={"dim": 1}))
    add(P("softmax", "nn.softmax", tkw={"dim": 1}))
    add(P("log_softmax", "scipy.special.log_softmax", tkw={"dim": 1}, tag="scipy"))
    add(P("softmax", "scipy.special.softmax", tkw={"dim": 1}, tag="scipy"))
    # --- creation: PyTorch's default float dtype (float32) against NumPy's float64 --------------
    for name in ("zeros", "ones"):
        add(P(name, f"numpy.{name}", (3, 4), order=0))
    add(P("full", "numpy.full", (3, 4), 2.5))
    add(P("full", "lax.full", (3, 4), 2.5, tag="lax"))
    add(P("eye", "numpy.eye", 3))
    add(P("arange", "numpy.arange", 5))
    add(P("arange", "numpy.arange", 0.0, 1.0, 0.25, tag="float"))
    add(P("linspace", "numpy.linspace", 0.0, 1.0, 7))
    add(P("logspace", "numpy.logspace", 0.0, 1.0, 7))
    for name in ("zeros_like", "ones_like", "full_like"):
        add(P(name, f"numpy.{name}", "n:3,4", *((2.5,) if name == "full_like" else ()), order=0))
    for name in ("tril_indices", "triu_indices"):
        # (torch: row, col, offset; NumPy: n, k, m)
        add(P(name, f"numpy.{name}", 4, 5, 1 if name == "tril_indices" else -1, fargs=lambda r, c, o: (r, o, c),
              fsel=fgrad_stack))
    # --- PyTorch's promotion (TorchPolicy) against NumPy's: integer and mixed-precision inputs
    add(P("exp", "numpy.exp", "i:3,4", tag="int"))
    add(P("true_divide", "numpy.true_divide", "i:3,4", 2, tag="int"))
    add(P("sum", "numpy.sum", "i:3,4", tag="int"))
    add(P("add", "numpy.add", "f32:3,4", "n:", tag="0-d float64"))
    # --- linear algebra -----------------------------------------------------------------------
    lin = [("cholesky", ("s:3",)), ("cond", ("q:3",)), ("det", ("q:3",)), ("inv", ("q:3",)),
           ("eigvalsh", ("s:3",)), ("matrix_norm", ("n:3,4",)), ("norm", ("n:3,4",)), ("pinv", ("n:3,4",)),
           ("solve", ("q:3", "n:3,2")), ("svdvals", ("n:3,4",)), ("vector_norm", ("n:3,4",)),
           ("vecdot", ("n:3,4", "n:3,4")), ("matmul", ("n:3,4", "n:4,2")), ("diagonal", ("n:2,3,3",))]
    for name, args in lin:
        zero = (pt(np.zeros((3, 4)).tolist()),) if name in ("norm", "vector_norm", "matrix_norm") else ()
        add(P(f"linalg.{name}", f"numpy.linalg.{name}", *args, points=zero))
    add(P("linalg.cross", "numpy.linalg.cross", "n:4,3", "n:4,3"))
    add(P("linalg.matrix_power", "numpy.linalg.matrix_power", "q:3", 3))
    add(P("linalg.matrix_rank", "numpy.linalg.matrix_rank", "n:3,4"))
    add(P("linalg.multi_dot", "numpy.linalg.multi_dot", "n:3,4", "n:4,2", "n:2,3",
          targs=lambda *a: (list(a),), fargs=lambda *a: (list(a),)))
    sel = {"tsel": lambda r: r[0], "fsel": lambda r: r[0]}
    sel1 = {"tsel": lambda r: r[1], "fsel": lambda r: r[1]}
    add(P("linalg.eigh", "numpy.linalg.eigh", "s:3", **sel, tag="values"))
    add(P("linalg.eigh", "numpy.linalg.eigh", "s:3", **sel1, tag="vectors"))
    add(P("linalg.qr", "numpy.linalg.qr", "q:3", **sel, tag="Q"))
    add(P("linalg.qr", "numpy.linalg.qr", "q:3", **sel1, tag="R"))
    add(P("linalg.svd", "numpy.linalg.svd", "n:3,4", tkw={"full_matrices": False}, **sel1, tag="S"))
    add(P("linalg.svd", "numpy.linalg.svd", "n:3,4", tkw={"full_matrices": False}, **sel, tag="U"))
    add(P("linalg.slogdet", "numpy.linalg.slogdet", "q:3", **sel1))
    add(P("linalg.lstsq", "numpy.linalg.lstsq", "q:3", "n:3,2", **sel))
    add(P("det", "numpy.linalg.det", "q:3"))
    add(P("inverse", "numpy.linalg.inv", "q:3"))
    add(P("slogdet", "numpy.linalg.slogdet", "q:3", **sel1))
    add(P("logdet", "numpy.linalg.slogdet", "s:3", fsel=lambda r: r[1]))
    add(P("linalg.matrix_exp", "scipy.linalg.expm", "n:3,3"))
    add(P("linalg.tensorinv", "numpy.linalg.tensorinv", "q:4", tkw={"ind": 1}))
    add(P("linalg.tensorsolve", "numpy.linalg.tensorsolve", "q:4", "n:4"))
    add(P("linalg.lu_factor", "scipy.linalg.lu_factor", "q:3", **sel))
    add(P("linalg.lu", "scipy.linalg.lu", "q:3", tsel=lambda r: r[2], fsel=lambda r: r[2]))
    # --- scipy.special ------------------------------------------------------------------------
    for name in ("digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "expit", "gammaln", "i0", "i0e", "i1",
                 "i1e", "log_ndtr", "logit", "ndtr", "ndtri", "psi"):
        add(_unary(f"special.{name}", f"scipy.special.{name}"))
    for tname, fname in {"bessel_j0": "j0", "bessel_j1": "j1", "bessel_y0": "y0", "bessel_y1": "y1",
                         "modified_bessel_i0": "i0", "modified_bessel_i1": "i1", "modified_bessel_k0": "k0",
                         "modified_bessel_k1": "k1", "scaled_modified_bessel_k0": "k0e",
                         "scaled_modified_bessel_k1": "k1e"}.items():
        # (PyTorch defines no derivative for its Bessel functions, nor does fgrad.torch)
        add(P(f"special.{tname}", f"scipy.special.{fname}", f"{DOMAIN.get(tname, 'n')}:3,4", order=0))
    for name in ("exp2", "expm1", "log1p", "round", "sinc"):
        add(_unary(f"special.{name}", f"numpy.{name}"))
    add(P("special.airy_ai", "scipy.special.airy", "n:3,4", order=0, fsel=lambda r: r[0]))
    for name in ("xlogy", "xlog1py"):
        add(P(f"special.{name}", f"scipy.special.{name}", "p:3,4", "p:3,4",
              points=(XLOGY0 if name == "xlogy" else pt([[0.0, 1.0]], [[0.0, -1.0]]),)))
    for name in ("gammainc", "gammaincc"):  # (the derivative in a is not defined in either door)
        add(P(f"special.{name}", f"scipy.special.{name}", 1.5, "p:3,4"))
    add(P("special.polygamma", "scipy.special.polygamma", 2, "p:3,4"))
    add(P("special.multigammaln", "scipy.special.multigammaln", "g:3,4", 2))
    add(P("special.logsumexp", "scipy.special.logsumexp", tkw={"dim": 1}))
    add(P("special.softmax", "nn.softmax", tkw={"dim": 1}))
    add(P("special.log_softmax", "nn.log_softmax", tkw={"dim": 1}))
    # --- nn.functional ------------------------------------------------------------------------
    F = "nn.functional."
    kinks = pt([[0.0, -0.0, 6.0, 3.0, -3.0, 1.0, -1.0, 2.5]])
    for tname, fname in {"relu": "relu", "relu6": "relu6", "elu": "elu", "celu": "celu", "selu": "selu",
                         "hardsigmoid": "hard_sigmoid", "hardswish": "hard_swish", "hardtanh": "hard_tanh",
                         "leaky_relu": "leaky_relu", "logsigmoid": "log_sigmoid", "mish": "mish",
                         "sigmoid": "sigmoid", "silu": "silu", "softplus": "softplus", "softsign": "soft_sign",
                         "tanh": "tanh"}.items():
        add(P(F + tname, f"nn.{fname}", "n:3,8", points=(kinks,)))
    # (beta * x above threshold: PyTorch's softplus is x there, jax.nn's log1p(exp(x)) stays smooth)
    add(P(F + "softplus", "nn.softplus", "n:3,4", points=(pt([[20.0, 25.0, -25.0, 0.0]]),), tag="threshold"))
    add(P(F + "gelu", "nn.gelu", "n:3,4", fkw={"approximate": False}, points=(Z,)))
    add(P(F + "gelu", "nn.gelu", "n:3,4", tkw={"approximate": "tanh"}, fkw={"approximate": True}, tag="tanh"))
    add(P(F + "glu", "nn.glu", "n:3,4", tkw={"dim": 1}))
    add(P(F + "softmax", "nn.softmax", "n:3,4", tkw={"dim": 1}))
    add(P(F + "log_softmax", "nn.log_softmax", "n:3,4", tkw={"dim": 1}))
    add(P(F + "softmax", "scipy.special.softmax", "n:3,4", tkw={"dim": 1}, tag="scipy"))
    add(P(F + "one_hot", "nn.one_hot", np.array([0, 2, 1, 2]), 3))
    # --- torch's top-level breadth (fgrad/torch/_tensor/_ops_breadth.py, fgrad/torch/_breadth.py) -----
    for name in ("deg2rad", "rad2deg", "sinc", "positive", "ravel", "fliplr", "flipud", "atleast_1d",
                 "atleast_2d", "atleast_3d", "corrcoef", "cov", "diagflat"):
        add(P(name, f"numpy.{name}", points=(Z,) if name in ("sinc", "deg2rad") else ()))
    for name in ("fmax", "fmin", "copysign"):
        add(P(name, f"numpy.{name}", *two, order=1 if name == "copysign" else 2))
    add(P("heaviside", "numpy.heaviside", *two, order=0))
    add(P("signbit", "numpy.signbit", points=(Z,), order=0))
    add(P("isreal", "numpy.isreal", order=0))
    inf = np.inf
    for name in ("isposinf", "isneginf"):
        add(P(name, f"numpy.{name}", points=(pt([[inf, -inf, np.nan, 0.0, -0.0]]),), order=0))
    add(P("nextafter", "numpy.nextafter", *two, order=0,
          points=(pt([[0.0, -0.0, 1.0, inf, -inf, np.nan, 1.0]], [[-0.0, 0.0, 0.5, 0.0, inf, 1.0, 1.0]]),)))
    for name in ("gcd", "lcm"):
        add(P(name, f"numpy.{name}", *ints, points=(pt(np.array([[-4, 6, 0, 9, 0]]), np.array([[6, -4, 0, 12, 5]])),)))
    add(P("nanmean", "numpy.nanmean", tkw={"dim": 1}))
    add(P("tile", "numpy.tile", "n:3,4", (2, 1)))
    add(P("vander", "numpy.vander", "n:4", 3, order=1))
    add(P("vdot", "numpy.vdot", "n:4", "n:4"))
    add(P("tensordot", "numpy.tensordot", "n:3,4", "n:4,2", 1))
    add(P("trapezoid", "numpy.trapezoid"))
    add(P("ldexp", "numpy.ldexp", "n:3,4", np.arange(4), order=1))
    add(P("frexp", "numpy.frexp", tsel=first, fsel=first, order=1))
    for name, args in (("column_stack", ("n:4", "n:4")), ("dstack", ("n:3,4", "n:3,4"))):
        add(P(name, f"numpy.{name}", *args, targs=lambda *a: (list(a),), fargs=lambda *a: (list(a),)))
    add(P("row_stack", "numpy.vstack", "n:3,4", "n:3,4", targs=lambda *a: (list(a),), fargs=lambda *a: (list(a),)))
    for name, arr in (("hsplit", "n:3,4"), ("vsplit", "n:4,3"), ("dsplit", "n:2,3,4")):
        add(P(name, f"numpy.{name}", arr, 2, tsel=first, fsel=first))
    add(P("select", "numpy.take", "n:3,4", 1, 2, fargs=lambda x, d, i: (x, i, d)))
    for name, fn in (("digamma", "digamma"), ("erfc", "erfc"), ("erfinv", "erfinv"), ("i0", "i0"),
                     ("lgamma", "gammaln")):
        add(_unary(name, f"scipy.special.{fn}"))
    add(P("polygamma", "scipy.special.polygamma", 2, "p:3,4"))
    add(P("mvlgamma", "scipy.special.multigammaln", "g:3,4", 2))
    add(P("cholesky", "numpy.linalg.cholesky", "s:3"))
    add(P("qr", "numpy.linalg.qr", "q:3", **sel1))
    add(P("svd", "numpy.linalg.svd", "n:3,4", **sel1, fkw={"full_matrices": False}))
    add(P("matrix_exp", "scipy.linalg.expm", "n:3,3", order=1))
    add(P("pinverse", "numpy.linalg.pinv", "n:3,4"))
    add(P("celu", "nn.celu", "n:3,4", points=(kinks,)))
    add(P("selu", "nn.selu", "n:3,4", points=(kinks,)))
    add(P("alias_copy", "numpy.copy"))
    add(P("detach_copy", "numpy.copy", order=0))
    add(P("diagonal_copy", "numpy.diagonal", "n:3,4", 1))
    add(P("expand_copy", "numpy.broadcast_to", "n:4", (3, 4)))
    add(P("permute_copy", "numpy.transpose", "n:3,4", (1, 0)))
    add(P("t_copy", "numpy.transpose"))
    add(P("transpose_copy", "numpy.swapaxes", "n:3,4", 0, 1))
    add(P("select_copy", "numpy.take", "n:3,4", 1, 2, fargs=lambda x, d, i: (x, i, d)))
    add(P("squeeze_copy", "numpy.squeeze", "n:3,1,4", 1))
    add(P("unsqueeze_copy", "numpy.expand_dims", "n:3,4", 1))
    add(P("view_copy", "numpy.reshape", "n:3,4", (2, 6)))
    add(P("unbind_copy", "numpy.unstack", "n:3,4", tkw={"dim": 1}, tsel=lambda r: r[2], fsel=lambda r: r[2]))
    add(P("split_copy", "numpy.split", "n:6,4", 2, fargs=lambda x, size: (x, 6 // size), tsel=lambda r: r[1],
          fsel=lambda r: r[1]))
    for name in ("split_with_sizes", "split_with_sizes_copy", "unsafe_split_with_sizes"):
        add(P(name, "numpy.split", "n:6,4", [2, 4], fargs=lambda x, s: (x, [2]), tsel=lambda r: r[1],
              fsel=lambda r: r[1]))
    add(P("unsafe_split", "numpy.split", "n:6,4", 2, fargs=lambda x, size: (x, 6 // size), tsel=lambda r: r[1],
          fsel=lambda r: r[1]))
    add(P("unsafe_chunk", "numpy.array_split", "n:3,4", 2, tkw={"dim": 1}, tsel=lambda r: r[1], fsel=lambda r: r[1]))
    add(P("take_along_dim", "numpy.take_along_axis", "n:3,4", np.array([[0, 3], [1, 1], [2, 0]]), 1))
    add(P("broadcast_tensors", "numpy.broadcast_arrays", "n:3,4", "n:4", tsel=lambda r: r[1], fsel=lambda r: r[1]))
    add(P("msort", "numpy.sort", fkw={"axis": 0}))
    add(P("aminmax", "numpy.min", tsel=first, fsel=None, order=1))
    add(P("trapz", "numpy.trapezoid"))
    add(P("frobenius_norm", "numpy.linalg.norm", "n:3,4", (0, 1), fargs=lambda x, d: (x,)))
    add(P("chain_matmul", "numpy.linalg.multi_dot", "n:3,4", "n:4,2", "n:2,3", fargs=lambda *a: (list(a),)))
    add(P("matrix_power", "numpy.linalg.matrix_power", "q:3", 3))
    add(P("adjoint", "numpy.matrix_transpose"))
    add(P("deg2rad_", "numpy.deg2rad", targs=lambda x: (x * 1,)))
    add(P("conv2d", "lax.conv_general_dilated", "n:2,3,6,5", "n:4,3,3,2",
          fargs=lambda x, w: (x, w, (1, 1), [(0, 0), (0, 0)])))
    add(P("layer_norm", "nn.standardize", "n:3,4", (4,), fargs=lambda x, s: (x,), fkw={"axis": -1, "epsilon": 1e-5}))
    add(P("constant_pad_nd", "numpy.pad", "n:3,4", (1, 2), fargs=lambda x, p: (x, ((0, 0), p))))
    add(P("embedding", "numpy.take", "n:4,3", np.array([1, 0, 3, 1]), fkw={"axis": 0}))
    add(P("slice_copy", "numpy.take", "n:3,4", 1, 0, 3, 2, fargs=lambda x, d, a, b, st: (x, np.arange(a, b, st), d)))
    add(P("narrow_copy", "numpy.take", "n:3,4", 1, 1, 2, fargs=lambda x, d, a, n: (x, np.arange(a, a + n), d)))
    add(P("diag_embed", "numpy.diag", "n:4"))
    add(P("kthvalue", "numpy.sort", "n:3,4", 2, tsel=first, fargs=lambda x, k: (x,), fsel=lambda r: r[:, 1]))
    add(P("threshold", "numpy.where", "n:3,4", 0.25, -1.0, fargs=lambda x, t, v: (x > t, x, v)))
    add(P("hardshrink", "numpy.where", "n:3,4", 0.5, fargs=lambda x, lam: (abs(x) > lam, x, 0.0)))
    add(P("prelu", "numpy.where", "n:3,4", "p:1", fargs=lambda x, w: (x > 0, x, w * x), order=1))
    add(P("bilinear", "numpy.einsum", "n:2,3", "n:2,4", "n:5,3,4",
          fargs=lambda a, b, w: ("bi,oij,bj->bo", a, w, b), order=1))
    add(P("cholesky_inverse", "numpy.linalg.inv", "t:3", fargs=lambda lo: (lo @ lo.T,), order=1))
    add(P("detach", "numpy.copy", order=0))
    add(P("gradient", "numpy.gradient", "n:3,4", tkw={"dim": 1}, fkw={"axis": 1}, tsel=first))
    for name, fn in (("rnn_tanh_cell", "numpy.tanh"), ("rnn_relu_cell", "nn.relu")):
        add(P(name, fn, "n:2,3", "n:2,4", "n:4,3", "n:4,4",
              fargs=lambda x, h, wi, wh: (x @ wi.T + h @ wh.T,)))
    std = {"tsel": first, "fargs": lambda x, *r: (x,)}
    add(P("native_layer_norm", "nn.standardize", "n:3,4", (4,), None, None, 1e-5, fkw={"axis": -1, "epsilon": 1e-5},
          **std))
    add(P("native_batch_norm", "nn.standardize", "n:2,3,4", None, None, None, None, True, 0.1, 1e-5,
          fkw={"axis": (0, 2), "epsilon": 1e-5}, **std))
    add(P("native_group_norm", "nn.standardize", "n:2,3,4", None, None, 2, 3, 4, 1, 1e-5,
          fkw={"axis": (1, 2), "epsilon": 1e-5}, **std))
    add(P("batch_norm", "nn.standardize", "n:2,3,4", None, None, None, None, True, 0.1, 1e-5, False,
          fargs=lambda x, *r: (x,), fkw={"axis": (0, 2), "epsilon": 1e-5}))
    add(P("instance_norm", "nn.standardize", "n:2,3,4", None, None, None, None, True, 0.1, 1e-5, False,
          fargs=lambda x, *r: (x,), fkw={"axis": (2,), "epsilon": 1e-5}))
    add(P("norm_except_dim", "numpy.linalg.norm", "n:3,4", 2, 0, fargs=lambda v, p, d: (v,),
          fkw={"axis": 1, "keepdims": True}))
    add(P("as_strided_copy", "numpy.take", "n:3,4", (2, 3), (1, 2),
          fargs=lambda x, size, st: (x.reshape(-1), np.array([[0, 2, 4], [1, 3, 5]]))))
    # (the dropout family outside training: the identity)
    for name in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"):
        add(P(name, "numpy.copy", "n:2,3,4", 0.5, False, fargs=lambda x, p, t: (x,)))
    add(P("dropout_", "numpy.copy", "n:2,3,4", 0.5, False, fargs=lambda x, p, t: (x,),
          targs=lambda x, p, t: (x * 1, p, t)))
    add(P("threshold_", "numpy.where", "n:3,4", 0.25, -1.0, fargs=lambda x, t, v: (x > t, x, v),
          targs=lambda x, t, v: (x * 1, t, v)))
    add(P("pixel_shuffle", "numpy.reshape", "n:1,4,3,4", 2,
          fargs=lambda x, r: (x.reshape(1, 1, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3), (1, 1, 6, 8))))
    add(P("pixel_unshuffle", "numpy.reshape", "n:1,1,6,8", 2,
          fargs=lambda x, r: (x.reshape(1, 1, 3, 2, 4, 2).transpose(0, 1, 3, 5, 2, 4), (1, 4, 3, 4))))
    add(P("margin_ranking_loss", "numpy.maximum", "n:3", "n:3", np.array([1.0, -1.0, 1.0]), 0.2, 0,
          fargs=lambda a, b, y, m, r: (0.0, -y * (a - b) + m)))
    # the sparse products, on the first operand made sparse (torch.sparse.mm's values)
    sp = {"targs": lambda a, b: (a.to_sparse(), b), "order": 0}
    for name in ("dsmm", "spmm"):
        add(P(name, "numpy.matmul", "n:3,3", "n:3,2", **sp))
    for name in ("smm", "hsmm", "hspmm"):
        add(P(name, "numpy.matmul", "n:3,3", "n:3,2", tsel=lambda r: r.to_dense(), **sp))
    for name in ("saddmm", "sspaddmm"):
        add(P(name, "numpy.add", "n:3,2", "n:3,3", "n:3,2", targs=lambda c, a, b: (c.to_sparse(), a.to_sparse(), b),
              fargs=lambda c, a, b: (c, a @ b), tsel=lambda r: r.to_dense(), order=0))
    add(P("native_dropout", "numpy.copy", "n:3,4", 0.3, False, fargs=lambda x, p, t: (x,), tsel=first))
    for name, fn in (("rnn_tanh", "numpy.tanh"), ("rnn_relu", "nn.relu")):
        add(P(name, fn, "n:1,2,3", "n:1,2,4", "n:4,3", "n:4,4",
              targs=lambda x, h, wi, wh: (x, h, [wi, wh], False, 1, 0.0, False, False, False), tsel=first,
              fargs=lambda x, h, wi, wh: ((x @ wi.T + h @ wh.T),)))
    add(P("batch_norm_update_stats", "numpy.mean", "n:2,3,4", None, None, 0.1, fargs=lambda x, *r: (x,),
          fkw={"axis": (0, 2)}, tsel=first, order=0))
    # pools whose window is the whole input: the reductions
    whole = {"fargs": lambda x, k: (x,), "fkw": {"axis": -1, "keepdims": True}}
    add(P("avg_pool1d", "numpy.mean", "n:2,3,4", 4, **whole))
    add(P("adaptive_avg_pool1d", "numpy.mean", "n:2,3,4", 1, **whole))
    add(P("max_pool1d", "numpy.max", "n:2,3,4", 4, **whole))
    add(P("max_pool1d_with_indices", "numpy.max", "n:2,3,4", 4, tsel=first, **whole))
    add(P("adaptive_max_pool1d", "numpy.max", "n:2,3,4", 1, tsel=first, **whole))
    add(P("max_pool2d", "numpy.max", "n:2,3,4", (3, 4), fargs=lambda x, k: (x,),
          fkw={"axis": (-2, -1), "keepdims": True}))
    add(P("conv_transpose3d", "numpy.einsum", "n:1,2,2,3,2", "n:2,3,1,1,1",
          fargs=lambda x, w: ("ncxyz,co->noxyz", x, w[:, :, 0, 0, 0])))
    # (q = min(m, n): the randomized factorisation is exact up to rounding)
    add(P("svd_lowrank", "numpy.linalg.svd", "n:5,3", 3, tsel=lambda r: r[1], fsel=lambda r: r[1], order=1))
    add(P("pca_lowrank", "numpy.linalg.svd", "n:5,3", 3, False, tsel=lambda r: r[1],
          fargs=lambda x, q, c: (x,), fsel=lambda r: r[1], order=1))
    add(P("select_scatter", "lax.dynamic_update_slice", "n:3,4", "n:4", 0, 1,
          fargs=lambda x, src, d, i: (x, src[None], (i, 0))))
    add(P("slice_scatter", "lax.dynamic_update_slice", "n:3,4", "n:3,2", 1, 1, 3,
          fargs=lambda x, src, d, a, b: (x, src, (0, a))))
    add(P("as_strided", "numpy.take", "n:3,4", (2, 3), (1, 2),
          fargs=lambda x, size, st: (x.reshape(-1), np.array([[0, 2, 4], [1, 3, 5]]))))
    add(P("cumulative_trapezoid", "numpy.cumsum", "n:3,4", fargs=lambda y: ((y[:, 1:] + y[:, :-1]) * 0.5,),
          fkw={"axis": -1}))
    for name in ("channel_shuffle", "native_channel_shuffle"):
        add(P(name, "numpy.reshape", "n:1,4,3", 2, fargs=lambda x, g: (x.reshape(1, 2, 2, 3).transpose(0, 2, 1, 3),
                                                                       (1, 4, 3))))
    add(P("max_pool3d", "numpy.max", "n:1,2,3,4", (2, 3, 4), fargs=lambda x, k: (x,),
          fkw={"axis": (-3, -2, -1), "keepdims": True}))
    add(P("group_norm", "nn.standardize", "n:2,3,4", 1, fargs=lambda x, g: (x,), fkw={"axis": (1, 2), "epsilon": 1e-5}))
    add(P("pairwise_distance", "numpy.linalg.norm", "n:3,4", "n:3,4", fargs=lambda a, b: (a - b + 1e-6,),
          fkw={"axis": -1}))
    add(P("rrelu", "numpy.where", "n:3,4", fargs=lambda x: (x >= 0, x, x * ((1 / 8 + 1 / 3) / 2)), fkw={}))
    for name, fn, args in (("zero_", "numpy.zeros_like", ()), ("fill", "numpy.full_like", (2.5,)),
                           ("fill_", "numpy.full_like", (2.5,))):
        add(P(name, fn, "n:3,4", *args, targs=lambda x, *r: (x * 1, *r), order=0))
    add(P("sgn", "numpy.sign", points=(Z,)))
    add(P("rsub", "numpy.subtract", *two, fargs=lambda x, y: (y, x)))
    add(P("nuclear_norm", "numpy.linalg.norm", "n:3,4", fkw={"ord": "nuc"}, order=1))
    add(P("cholesky_solve", "scipy.linalg.cho_solve", "n:3,2", "t:3", fargs=lambda b, lo: ((lo, True), b)))
    add(P("triangular_solve", "scipy.linalg.solve_triangular", "n:3,2", "t:3", tkw={"upper": False},
          fkw={"lower": True}, fargs=lambda b, a: (a, b), tsel=first))
    for name, fn in (("igamma", "gammainc"), ("igammac", "gammaincc")):
        add(P(name, f"scipy.special.{fn}", "p:3,4", "p:3,4", order=0))
    # the in-place functions (torch.sin_(x) is x.sin_()) against the out-of-place ones' counterparts,
    # on a non-leaf copy of the input (a leaf that requires grad cannot be written in place)
    inplace_bases = {"abs_": "abs", "acos_": "acos", "acosh_": "acosh", "arccos_": "arccos", "arccosh_": "arccosh",
                     "arcsin_": "arcsin", "arcsinh_": "arcsinh", "arctan_": "arctan", "arctanh_": "arctanh",
                     "asin_": "asin", "asinh_": "asinh", "atan_": "atan", "atanh_": "atanh", "ceil_": "ceil",
                     "clamp_": "clamp", "clip_": "clip", "cos_": "cos", "cosh_": "cosh", "erf_": "erf",
                     "erfc_": "erfc", "exp2_": "exp2", "exp_": "exp", "expm1_": "expm1", "fix_": "fix",
                     "floor_": "floor", "frac_": "frac", "i0_": "i0", "log10_": "log10", "log1p_": "log1p",
                     "log2_": "log2", "log_": "log", "neg_": "neg", "negative_": "negative",
                     "rad2deg_": "rad2deg", "reciprocal_": "reciprocal", "relu_": "relu", "round_": "round",
                     "rsqrt_": "rsqrt", "sigmoid_": "sigmoid", "sin_": "sin", "sinc_": "sinc", "sinh_": "sinh",
                     "sqrt_": "sqrt", "square_": "square", "tan_": "tan", "tanh_": "tanh", "trunc_": "trunc",
                     "nan_to_num_": "nan_to_num", "clamp_min_": "clamp_min", "clamp_max_": "clamp_max"}
    firsts = {}
    for p in pairs:
        firsts.setdefault(p.torch, p)
    for name, base in inplace_bases.items():
        p = firsts[base]
        add(dataclasses.replace(p, torch=name, targs=(lambda *a, _t=p.targs: (a[0] * 1, *a[1:]) if _t is None
                                                      else _t(a[0] * 1, *a[1:]))))
    # nn.functional's in-place activations, as the out-of-place ones (on a non-leaf copy), and its
    # spellings of torch's top-level functions, as those
    for name, base in (("relu_", F + "relu"), ("elu_", F + "elu"), ("leaky_relu_", F + "leaky_relu"),
                       ("hardtanh_", F + "hardtanh"), ("celu_", F + "celu"), ("selu_", F + "selu"),
                       ("threshold_", "threshold_"), ("rrelu_", "rrelu")):
        p = firsts[base]
        add(dataclasses.replace(p, torch=F + name, targs=(lambda *a, _t=p.targs: (a[0] * 1, *a[1:]) if _t is None
                                                          else _t(a[0] * 1, *a[1:]))))
    for name in ("channel_shuffle", "native_channel_shuffle", "conv_transpose3d", "max_pool3d",
                 "max_pool1d_with_indices"):
        add(dataclasses.replace(firsts[name], torch=F + name))
    add(P(F + "max_pool2d_with_indices", "numpy.max", "n:2,3,4", (3, 4), fargs=lambda x, k: (x,),
          fkw={"axis": (-2, -1), "keepdims": True}, tsel=first))
    add(P(F + "adaptive_max_pool1d_with_indices", "numpy.max", "n:2,3,4", 1, tsel=first, **whole))
    add(P(F + "adaptive_max_pool2d_with_indices", "numpy.max", "n:2,3,4", 1, fargs=lambda x, k: (x,),
          fkw={"axis": (-2, -1), "keepdims": True}, tsel=first))
    # 3-D pools whose window is the whole volume: the reductions
    whole3 = {"fargs": lambda x, k: (x,), "fkw": {"axis": (-3, -2, -1), "keepdims": True}}
    add(P(F + "avg_pool3d", "numpy.mean", "n:1,2,3,4", (2, 3, 4), **whole3))
    add(P(F + "max_pool3d_with_indices", "numpy.max", "n:1,2,3,4", (2, 3, 4), tsel=first, **whole3))
    add(P(F + "adaptive_max_pool3d", "numpy.max", "n:1,2,3,4", 1, **whole3))
    add(P(F + "adaptive_max_pool3d_with_indices", "numpy.max", "n:1,2,3,4", 1, tsel=first, **whole3))
    # fractional pools with one window covering the input (its placement is then fixed)
    for name, sel in (("fractional_max_pool2d", {}), ("fractional_max_pool2d_with_indices", {"tsel": first})):
        add(P(F + name, "numpy.max", "n:2,3,4", (3, 4), tkw={"output_size": 1}, fargs=lambda x, k: (x,),
              fkw={"axis": (-2, -1), "keepdims": True}, **sel))
    for name, sel in (("fractional_max_pool3d", {}), ("fractional_max_pool3d_with_indices", {"tsel": first})):
        add(P(F + name, "numpy.max", "n:1,2,3,4", (2, 3, 4), tkw={"output_size": 1}, **whole3, **sel))
    # (p = 1 on positive inputs: sum pooling)
    add(P(F + "lp_pool3d", "numpy.sum", "p:1,2,3,4", 1.0, (2, 3, 4), fargs=lambda x, p, k: (x,),
          fkw={"axis": (-3, -2, -1), "keepdims": True}))
    return pairs


PAIRS = _build()
