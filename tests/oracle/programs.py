"""Random differentiable programs, written once against a NumPy-like module so the
same program runs on fgrad and on an oracle (JAX or PyTorch).

A program is a list of steps over two inputs (x, y): each step applies a unary op to
the running value, or a binary op between the running value and x or y, and the
program ends with a sum. Domain guards (1 + v*v, tanh before exp) keep every step
defined for any input, including large magnitudes, while exact zeros and ties still
reach abs, maximum and max, where the kink conventions are checked.
"""
from __future__ import annotations

import numpy as onp
from hypothesis import strategies as st


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
    }


def _binary(m):
    return {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": lambda a, b: a / (1 + b * b), "maximum": m.maximum, "minimum": m.minimum,
        "arctan2": lambda a, b: m.arctan2(a, 1 + b * b),
        "pow": lambda a, b: (1 + a * a) ** m.tanh(b),
        "where": lambda a, b: m.where(a > b, a, b * 2),
    }


def _reduce(m):
    return {"sum": lambda v: m.sum(v), "mean": lambda v: m.mean(v), "max": lambda v: m.max(v),
            "min": lambda v: m.min(v)}


UNARY = sorted(_unary(onp))
BINARY = sorted(_binary(onp))
REDUCE = sorted(_reduce(onp))


def run(program, m, x, y, kinks=None):
    """Run `program` with module `m`. With `kinks` (a list), note SPEC 3b points hit."""
    un, bi, red = _unary(m), _binary(m), _reduce(m)
    v = x
    steps, final = program
    for kind, name, other in steps:
        if kind == "u":
            if kinks is not None and name == "abs" and onp.any(onp.asarray(v) == 0):
                kinks.append("abs(0)")
            v = un[name](v)
        else:
            o = x if other == 0 else y
            if kinks is not None and name in ("maximum", "minimum", "where") and onp.any(
                    onp.asarray(v) == onp.asarray(o if name != "where" else o * 2)):
                kinks.append(f"{name} tie")
            v = bi[name](v, o)
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
