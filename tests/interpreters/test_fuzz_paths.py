"""Differential fuzz of fgrad's execution paths (issue 23): random small programs of
fgrad.numpy element-wise, reduction and shape operations, with random argument kinds (NumPy
scalars such as np.float32(2), 0-d arrays, Python numbers, non-contiguous arrays, float32,
float64 and integer arrays), each run

- eagerly,
- under jit (FGRAD_JIT_MATH=eager, where jit runs eager's arithmetic: bit for bit), and under
  the default FGRAD_JIT_MATH=fused (library functions such as exp and tanh by the C library
  or vmath, a few ulps from NumPy's own: compared within a relative 1e-9, 1e-4 for float32),
- through eager `fgrad.grad`, called REPEATS times: from the HOT-th sighting of one graph
  structure the backward pass is replayed (interpreters/replay.py), which runs the same impls
  in the same order: bit for bit with the first call's engine walk, and with jit(grad) under
  FGRAD_JIT_MATH=eager.

Integer programs (wrapping arithmetic, floor division and remainders by 0 and -1, operands of
other integer dtypes, casts) are compared jit against eager, bit for bit.

The default run checks SEEDS seeded programs; the slow test checks 4,000 more.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.interpreters import replay
from fgrad.interpreters.compile import scalar

SEEDS = 100  # programs in the default run (a few seconds with an empty kernel cache)
REPEATS = replay.HOT + 2


def _kinds(rng, dtype):
    """An operand beside a (4, 6) array: a random kind."""
    k = rng.integers(8)
    v = float(rng.choice([0.5, 2.0, -1.5, 3.0, 0.0, -0.0]))
    if k == 0:
        return v, f"{v!r}"
    if k == 1:
        return int(rng.integers(-3, 4)), "int"
    if k == 2:
        t = rng.choice([np.float32, np.float64, np.int64, np.int32])
        return t(v), f"np.{t.__name__}({v})"
    if k == 3:
        return np.array(v, dtype), f"0-d {dtype}"
    if k == 4:
        return rng.standard_normal(6).astype(dtype), "row"
    if k == 5:
        return rng.standard_normal((8, 6)).astype(dtype)[::2], "strided"
    if k == 6:
        return rng.integers(-3, 4, (4, 6)), "int array"
    return rng.standard_normal((6, 4)).astype(dtype).T, "transposed"


_UNARY = [
    ("neg", fnp.negative), ("abs", fnp.abs), ("sin", fnp.sin), ("tanh", fnp.tanh),
    ("exp", lambda x: fnp.exp(fnp.clip(x, -20.0, 20.0))), ("square", fnp.square),
    ("sqrt", lambda x: fnp.sqrt(fnp.abs(x))), ("pow.5", lambda x: fnp.abs(x) ** 0.5),
    ("pow2", lambda x: x ** 2), ("pow3", lambda x: x ** 3), ("log1p", lambda x: fnp.log1p(fnp.abs(x))),
    ("sigmoid", lambda x: 1.0 / (1.0 + fnp.exp(-x))), ("floor", fnp.floor), ("sign", fnp.sign),
    ("rev", lambda x: x[::-1]), ("T2", lambda x: fnp.transpose(fnp.transpose(x))),
    ("reshape", lambda x: fnp.reshape(fnp.reshape(x, (-1,)), (4, 6))),
    ("cumsum", lambda x: fnp.cumsum(x, axis=1)), ("astype32", lambda x: x.astype(np.float32)),
    ("astype64", lambda x: x.astype(np.float64)),
]
_BINARY = [
    ("add", fnp.add), ("sub", fnp.subtract), ("mul", fnp.multiply),
    ("div", lambda x, y: x / (fnp.abs(y) + 1.0)), ("max", fnp.maximum), ("min", fnp.minimum),
    ("where", lambda x, y: fnp.where(x > y, x, y)), ("hypot", fnp.hypot),
    ("powy", lambda x, y: fnp.abs(x) ** fnp.clip(y, -2, 2)),
]
_REDUCE = [
    ("sum0", lambda x: fnp.sum(x, axis=0, keepdims=True)), ("mean1", lambda x: fnp.mean(x, axis=1, keepdims=True)),
    ("max1", lambda x: fnp.max(x, axis=1, keepdims=True)),
]


_INT_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64]
_INT_UNARY = [("neg", fnp.negative), ("abs", fnp.abs), ("sign", fnp.sign),
              ("invert", lambda x: fnp.invert(x) if x.dtype.kind != "f" else x),
              ("rev", lambda x: x[::-1]), ("sum0", lambda x: fnp.sum(x, axis=0, keepdims=True) * fnp.ones_like(x))]
_INT_BINARY = [("add", fnp.add), ("sub", fnp.subtract), ("mul", fnp.multiply), ("floordiv", fnp.floor_divide),
               ("mod", fnp.remainder), ("fmod", fnp.fmod), ("xor", fnp.bitwise_xor), ("and", fnp.bitwise_and),
               ("max", fnp.maximum), ("min", fnp.minimum), ("lt", lambda x, y: fnp.where(x < y, x, y))]


def int_program(rng):
    """A random integer program f(x) (wrapping arithmetic, casts between integer dtypes and to
    float64, operands of other integer dtypes), with its description."""
    steps, desc = [], []
    for _ in range(int(rng.integers(3, 8))):
        kind = rng.integers(8)
        if kind < 2:
            name, fn = _INT_UNARY[rng.integers(len(_INT_UNARY))]
            steps.append(fn)
            desc.append(name)
        elif kind < 3:
            t = _INT_DTYPES[rng.integers(len(_INT_DTYPES))] if rng.integers(4) else np.float64
            steps.append(lambda x, t=t: x.astype(t) if x.dtype.kind != "f" else x)
            desc.append(f"astype({t.__name__})")
        else:
            name, fn = _INT_BINARY[rng.integers(len(_INT_BINARY))]
            t = _INT_DTYPES[rng.integers(len(_INT_DTYPES))]
            info = np.iinfo(t)
            vals = np.array([0, 1, 2, 7, info.max, info.min, info.max - 1] + ([-1, -2] if info.min else []), t)
            other = vals[rng.integers(len(vals), size=(4, 6))] if rng.integers(2) else t(vals[rng.integers(len(vals))])
            steps.append(lambda x, fn=fn, o=other: fn(x, o) if fn in (fnp.add, fnp.maximum)
                         or np.result_type(x.dtype, np.asarray(o).dtype).kind != "f" else x)
            desc.append(f"{name}(x, {'array' if np.ndim(other) else 'np.' + t.__name__})")

    def f(x):
        for s in steps:
            x = s(x)
        return x
    return f, " -> ".join(desc)


def check_int(seed: int) -> None:
    """An integer program: jit equals eager bit for bit (kernels' integer types)."""
    rng = np.random.default_rng(seed)
    t = _INT_DTYPES[rng.integers(len(_INT_DTYPES))]
    info = np.iinfo(t)
    vals = np.array([0, 1, 3, info.max, info.min, info.max - 1] + ([-1, -5] if info.min else []), t)
    x = vals[rng.integers(len(vals), size=(4, 6))]
    f, desc = int_program(rng)
    with np.errstate(all="ignore"):
        _same(fgrad.jit(f)(x), f(x), f"jit seed {seed} ({np.dtype(t)}): {desc}")


def program(rng, dtype):
    """A random program f(x) of 3-7 steps (x: (4, 6)), with its description."""
    steps, desc = [], []
    for _ in range(int(rng.integers(3, 8))):
        kind = rng.integers(10)
        if kind < 5:
            name, fn = _UNARY[rng.integers(len(_UNARY))]
            steps.append(lambda x, fn=fn: fn(x))
            desc.append(name)
        elif kind < 9:
            name, fn = _BINARY[rng.integers(len(_BINARY))]
            other, what = _kinds(rng, dtype)
            if rng.integers(2):
                steps.append(lambda x, fn=fn, o=other: fn(x, o))
                desc.append(f"{name}(x, {what})")
            else:
                steps.append(lambda x, fn=fn, o=other: fn(o, x))
                desc.append(f"{name}({what}, x)")
        else:
            name, fn = _REDUCE[rng.integers(len(_REDUCE))]
            steps.append(lambda x, fn=fn: fn(x) * fnp.ones((4, 6)))
            desc.append(name)

    def f(x):
        for s in steps:
            x = s(x)
        return x
    return f, " -> ".join(desc)


def _spread(f, x, want, rel: float, rng) -> np.ndarray:
    """How far each output of f moves when x moves by a relative `rel` (a few ulps): the
    program's own conditioning at x. Fused math differs from NumPy's by a few ulps inside the
    program, and an ill-conditioned program (the sine of a large float32 sum) turns that into
    any difference at all; a well-conditioned one keeps the spread near zero, so a wrong kernel
    still fails."""
    spread = np.zeros(np.shape(want))
    for _ in range(3):
        moved = np.asarray(f(x * (1 + rel * rng.uniform(-1, 1, np.shape(x))).astype(x.dtype)))
        d = np.abs(moved.astype(np.float64) - np.asarray(want, np.float64))
        spread = np.fmax(spread, np.where(np.isnan(d), np.inf, d))
    return spread


def _same(got, want, what: str, rtol: float = 0.0, spread=0.0) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    if rtol:
        atol = rtol * (1 + np.nanmax(np.abs(want), initial=0)) + 4 * np.asarray(spread)
        close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        assert np.all(close), (f"{what}: differ beyond rtol {rtol} and the program's own spread at "
                               f"{np.argwhere(~close)[:3].tolist()}: {got[~close][:3]} vs {want[~close][:3]}")
        return
    same = (got == want) & (np.signbit(got) == np.signbit(want)) if got.dtype.kind == "f" else got == want
    if got.dtype.kind == "f":
        same |= np.isnan(got) & np.isnan(want)
    assert np.all(same), f"{what}: differ at {np.argwhere(~same)[:3].tolist()}: {got[~same][:3]} vs {want[~same][:3]}"


def check(seed: int, monkeypatch) -> None:
    rng = np.random.default_rng(seed)
    dtype = np.float32 if rng.integers(3) == 0 else np.float64
    f, desc = program(rng, dtype)
    x = rng.standard_normal((4, 6)).astype(dtype)
    if rng.integers(3) == 0:  # a non-contiguous input
        x = rng.standard_normal((6, 4)).astype(dtype).T
    what = f"seed {seed} ({np.dtype(dtype)}): {desc}"
    with np.errstate(all="ignore"):
        want = f(x)
        monkeypatch.setattr(scalar, "MATH", "eager")
        _same(fgrad.jit(f)(x), want, f"jit (FGRAD_JIT_MATH=eager) {what}")
        monkeypatch.setattr(scalar, "MATH", "fused")
        single = dtype == np.float32 or "astype32" in desc
        tol = 1e-4 if single else 1e-9  # (float32 ulps)
        ulps = 8 * np.finfo(np.float32 if single else np.float64).eps
        _same(fgrad.jit(f)(x), want, f"jit {what}", rtol=tol, spread=_spread(f, x, want, ulps, rng))

        def loss(x):
            return fnp.sum(f(x))
        grads = [fgrad.grad(loss)(x) for _ in range(REPEATS)]
        for k, g in enumerate(grads[1:], 1):
            _same(g, grads[0], f"grad call {k + 1} (replayed from call {replay.HOT}) {what}")
        monkeypatch.setattr(scalar, "MATH", "eager")
        _same(fgrad.jit(fgrad.grad(loss))(x), grads[0], f"jit(grad) (FGRAD_JIT_MATH=eager) {what}")


def _fuzz(first_seed: int, count: int, monkeypatch) -> None:
    """Seeds first_seed .. first_seed + count - 1: a fixed set, not a time budget, so that every
    machine (CI's included) runs the same programs and a failure reproduces anywhere."""
    for seed in range(first_seed, first_seed + count):
        check(seed, monkeypatch)
        check_int(seed)


# Seeds that once failed, kept in the default run: 19083 (the sine of a large float32 sum, where
# fused math's 1-ulp power differs from NumPy's: the comparison now allows the program's spread).
REGRESSIONS = [19083]


def test_fuzz_eager_jit_replay(monkeypatch):
    """SEEDS seeded random programs, and the seeds that once failed."""
    _fuzz(0, SEEDS, monkeypatch)
    for seed in REGRESSIONS:
        _fuzz(seed, 1, monkeypatch)


@pytest.mark.slow
def test_fuzz_eager_jit_replay_long(monkeypatch):
    _fuzz(10_000, 4_000, monkeypatch)
