"""Random differentiable programs, written once against a small library interface so the
same program runs on fgrad (functional API or Tensor facade) and on an oracle (JAX or
PyTorch).

A program is a list of steps over two inputs (x, y): each step applies a unary op to
the running value, or a binary op between the running value and x or y, and the
program ends with a reduction. Domain guards (1 + v*v, tanh before exp) keep every step
defined for any input, including large magnitudes, while exact zeros and ties still
reach abs, maximum, relu, clip and max, where the kink conventions (SPEC 3b) apply: a run
notes every kink it hits, and the tests skip exactly those examples.
"""
from __future__ import annotations

import numpy as onp
from hypothesis import strategies as st


class ArrayLib:
    """NumPy-style namespace (fgrad.numpy or jax.numpy) plus its nn functions."""

    def __init__(self, m, relu, log_softmax, erf, sigmoid):
        self.m, self._relu, self._log_softmax = m, relu, log_softmax
        self._erf, self._sigmoid = erf, sigmoid

    def flip(self, v):
        return self.m.flip(v)

    def reverse_axes(self, v):
        return self.m.transpose(self.m.transpose(v) * self.m.tanh(self.m.transpose(v)))

    def cumsum(self, v):
        return self.m.cumsum(v, axis=-1) if v.ndim else v

    def center(self, v):
        return v - self.m.mean(v, axis=-1, keepdims=True) if v.ndim else v

    def reshape_roundtrip(self, v):
        return self.m.reshape(self.m.reshape(v, (-1,)) * 1.5, v.shape)

    def gram(self, v):
        t = self.m.tanh(v)
        if v.ndim < 2:
            return t * t * t
        return (t @ self.m.swapaxes(t, -1, -2)) @ t

    def clip(self, v):
        return self.m.clip(v, -1.0, 1.0)

    def gather(self, v):
        if not v.ndim or not v.shape[-1]:
            return v
        idx = onp.arange(v.shape[-1])[::-1] % max(v.shape[-1] - 1, 1)
        return v[..., idx] * 0.5 + v

    def erf_sigmoid(self, v):
        return self._erf(v) + self._sigmoid(v)

    def relu(self, v):
        return self._relu(v)

    def log_softmax(self, v):
        return self._log_softmax(v) if v.ndim else v

    def prod(self, v):
        return self.m.prod(self.m.tanh(v) + 1.5)

    def norm(self, v):
        return self.m.linalg.norm(v)

    def var(self, v):
        return self.m.var(v)


class TensorLib:
    """The same interface over a PyTorch-style module (torch, or fgrad's facade)."""

    def __init__(self, lib):
        self.lib = lib

    def flip(self, v):
        return v.flip(tuple(range(v.ndim))) if v.ndim else v

    def reverse_axes(self, v):
        if not v.ndim:
            return v * v.tanh()
        axes = tuple(reversed(range(v.ndim)))
        t = v.permute(*axes)
        return (t * t.tanh()).permute(*axes)

    def cumsum(self, v):
        return self.lib.cumsum(v, dim=-1) if v.ndim else v

    def center(self, v):
        return v - v.mean(dim=-1, keepdim=True) if v.ndim else v

    def reshape_roundtrip(self, v):
        return (v.reshape(-1) * 1.5).reshape(v.shape)

    def gram(self, v):
        t = v.tanh()
        if v.ndim < 2:
            return t * t * t
        return (t @ t.transpose(-1, -2)) @ t

    def clip(self, v):
        return self.lib.clamp(v, -1.0, 1.0)

    def gather(self, v):
        if not v.ndim or not v.shape[-1]:
            return v
        idx = onp.arange(v.shape[-1])[::-1] % max(v.shape[-1] - 1, 1)
        return v[..., self.lib.tensor(idx.copy())] * 0.5 + v

    def erf_sigmoid(self, v):
        return self.lib.erf(v) + self.lib.sigmoid(v)

    def relu(self, v):
        return self.lib.relu(v)

    def log_softmax(self, v):
        return self.lib.log_softmax(v, -1) if v.ndim else v

    def prod(self, v):
        return (v.tanh() + 1.5).prod()

    def norm(self, v):
        return v.norm()

    def var(self, v):
        return v.var(unbiased=False) if v.numel() > 0 else v.sum() * float("nan")


def _unary(m):
    return {
        "sin": m.sin, "cos": m.cos, "tanh": m.tanh, "arctan": m.arctan, "negative": m.negative,
        "abs": m.abs, "square": lambda v: v * v,
        "exp_tanh": lambda v: m.exp(m.tanh(v)),
        "log_1p_sq": lambda v: m.log(1 + v * v),
        "sqrt_1p_sq": lambda v: m.sqrt(1 + v * v),
        "log1p_sq": lambda v: m.log1p(v * v),
        "sigmoid": lambda v: 1 / (1 + m.exp(-m.tanh(v) * 4)),
        "arcsinh": m.arcsinh,
        "expm1_tanh": lambda v: m.expm1(m.tanh(v)),
        "cbrt_1p_sq": lambda v: m.cbrt(1 + v * v),
        "sinh_cosh": lambda v: m.sinh(m.tanh(v)) + m.cosh(m.tanh(v)),
        "tan_tanh": lambda v: m.tan(m.tanh(v)),
        "arcsin_arccos": lambda v: m.arcsin(m.tanh(v) * 0.9) * m.arccos(m.tanh(v) * 0.8),
        "arctanh_tanh": lambda v: m.arctanh(m.tanh(v) * 0.9),
        "arccosh_2p_sq": lambda v: m.arccosh(2 + v * v),
        "log2_log10": lambda v: m.log2(2 + v * v) - m.log10(1 + v * v),
        "exp2_tanh": lambda v: m.exp2(m.tanh(v)),
    }


_STRUCTURAL = ("flip", "reverse_axes", "cumsum", "center", "reshape_roundtrip", "gram", "clip",
               "relu", "log_softmax", "gather", "erf_sigmoid")


def _binary(m):
    return {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": lambda a, b: a / (1 + b * b), "maximum": m.maximum, "minimum": m.minimum,
        "arctan2": lambda a, b: m.arctan2(a, 1 + b * b),
        "pow": lambda a, b: (1 + a * a) ** m.tanh(b),
        "where": lambda a, b: m.where(a > b, a, b * 2),
    }


def _reduce(m, lib):
    return {"sum": lambda v: m.sum(v), "mean": lambda v: m.mean(v), "max": lambda v: m.max(v),
            "min": lambda v: m.min(v), "prod": lib.prod, "norm": lib.norm, "var": lib.var}


UNARY = sorted(_unary(onp)) + list(_STRUCTURAL)
BINARY = sorted(_binary(onp))
REDUCE = ["sum", "mean", "max", "min", "prod", "norm", "var"]


def _value(v):
    v = getattr(v, "_value", v)
    if hasattr(v, "detach"):
        v = v.detach().numpy()
    return onp.asarray(v)


def run(program, m, lib, x, y, kinks=None):
    """Run `program` with NumPy-style module `m` and structural library `lib`.
    With `kinks` (a list), note the SPEC 3b points the run hits."""
    un, bi, red = _unary(m), _binary(m), _reduce(m, lib)
    v = x
    steps, final = program
    for kind, name, other in steps:
        if kind == "u":
            if kinks is not None and name in ("abs", "relu") and onp.any(_value(v) == 0):
                kinks.append(f"{name}(0)")
            if kinks is not None and name == "clip" and onp.any(onp.abs(_value(v)) == 1):
                kinks.append("clip at a bound")
            v = un[name](v) if name in un else getattr(lib, name)(v)
        else:
            o = x if other == 0 else y
            if kinks is not None and name == "pow" and onp.any(onp.tanh(_value(o)) == 0):
                # PyTorch masks d/dx x**t where t == 0 with a select, losing the mixed second
                # derivative; fgrad and JAX keep it. Only the PyTorch comparison skips this.
                kinks.append("torch: pow exponent 0")
            if kinks is not None and name in ("maximum", "minimum", "where") and onp.any(
                    _value(v) == _value(o if name != "where" else o * 2)):
                kinks.append(f"{name} tie")
            v = bi[name](v, o)
    if kinks is not None and final == "norm" and not onp.any(_value(v)):
        kinks.append("norm(0)")
    return red[final](v)


@st.composite
def programs(draw):
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            steps.append(("u", draw(st.sampled_from(UNARY)), None))
        else:
            steps.append(("b", draw(st.sampled_from(BINARY)), draw(st.integers(0, 1))))
    return steps, draw(st.sampled_from(REDUCE))


_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 1e4, -1e4, 3.0]


@st.composite
def shapes(draw):
    """Two broadcast-compatible shapes, with scalars, size-1 and size-0 dimensions."""
    ndim = draw(st.integers(0, 3))
    base = [draw(st.sampled_from([0, 1, 2, 3])) for _ in range(ndim)]
    if 0 in base and draw(st.booleans()):
        base = [max(d, 1) for d in base]

    def variant():
        k = draw(st.integers(0, len(base)))
        return tuple(1 if draw(st.booleans()) else d for d in base[len(base) - k:])
    return tuple(base), variant()


@st.composite
def inputs(draw, dtype):
    sx, sy = draw(shapes())
    rng = onp.random.default_rng(draw(st.integers(0, 2 ** 31)))

    def arr(shape):
        a = rng.standard_normal(shape) * draw(st.sampled_from([1.0, 3.0, 100.0]))
        flat = a.reshape(-1)
        for i in range(flat.size):
            if draw(st.integers(0, 5)) == 0:
                flat[i] = draw(st.sampled_from(_SPECIAL))
        return a.astype(dtype)
    return arr(sx), arr(sy)
