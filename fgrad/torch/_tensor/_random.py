"""PyTorch's CPU random number generator, draw for draw: the one RNG of fgrad.torch.

A PyTorch CPU generator (CPUGeneratorImpl) is a 32-bit Mersenne Twister (MT19937) seeded with
the low 32 bits of `manual_seed(seed)`, plus a cached second Box-Muller sample. Every random
function of fgrad.torch (rand, randn, randint, randperm, Tensor.uniform_/normal_/bernoulli_/
random_/exponential_/geometric_/cauchy_/log_normal_, multinomial, dropout, nn.init,
torch.distributions' samplers, the data loader's samplers) turns this engine's draws into values
with PyTorch's transforms (ATen's TransformationHelper.h, DistributionsHelper.h,
DistributionTemplates.h, DistributionKernels.cpp), so a seeded `fgrad.torch.Generator` gives
torch's float32 and float64 values bit for bit (float16: uniforms are torch's, normal_ on 16 or
more elements is not: torch recomputes its last block differently).

Two of torch's kernels depend on the CPU, and this module follows an x86-64 CPU with AVX2 (every
x86 CPU since 2013, the machines torch's CPU wheels run fastest on):
- float32 `normal_` on 16 or more contiguous elements runs torch's AVX2 kernel, whose log and
  sin/cos are the Cephes polynomials of avx_mathfun.h; they are evaluated here in float32 step
  by step (`_log8`, `_sincos8`) with the same roundings. (Without AVX2, torch uses libm's logf/
  cosf/sinf and its float32 values differ in the last bits.)
- `bernoulli_(p)` with a float p: fgrad follows torch's portable kernel (one 64-bit uniform per
  element, `u < p`), which torch 2.13's CPU wheel runs (builds that take MKL's VSL path for it
  on Intel CPUs, as older ones did, draw differently).

The state is kept as NumPy's MT19937 (its raw 32-bit output is std::mt19937's) and read and
written as torch's `get_rng_state()` bytes. Transforms of large draws run compiled
(_random_kernels.py); the NumPy code here is their reference and the path for small draws.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.errors import FgradRuntimeError
from ...interpreters.compile.kernels import prefer_wide_vectors

_MASK32 = 0xFFFFFFFF
_MASK24 = np.uint64((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)
_TWO63 = 1 << 63
# randperm's "small n" path (n < UINT32_MAX / 20) draws 32-bit values; larger n uses 64-bit ones
_RANDPERM_SMALL = _MASK32 // 20
_MT_N = 624
# torch's get_rng_state(): sizeof(CPUGeneratorImplStateLegacy) on x86-64
_STATE_BYTES = 5056
# uniform_int_from_to draws 64 bits from this range on ("approx 5% skew" of a 32-bit modulo)
_RANDINT_WIDE = 1 << 28
# torch's default_rng_seed_val: the seed of the default generator and of a new torch.Generator()
DEFAULT_SEED = 67280421310721
# normal_ switches from scalar Box-Muller to its block kernel at this many contiguous elements
_NORMAL_BLOCK = 16
# draws of at least this many elements run _random_kernels' compiled loops (smaller ones stay in
# NumPy, whose per-call cost is lower than importing Numba for a handful of values)
_KERNEL_MIN = 512

_F = np.float32
_KERNELS = None


def _kernels(n: int):
    """The compiled transforms (_random_kernels) for a draw of `n` elements, or None without
    Numba, or while they are not loaded yet and `n` is below _KERNEL_MIN (the NumPy references
    below compute the same values)."""
    global _KERNELS
    if _KERNELS is False or (_KERNELS is None and n < _KERNEL_MIN):
        return None
    if _KERNELS is None:
        prefer_wide_vectors()  # (before Numba first compiles in the process)
        try:
            from . import _random_kernels  # (Numba loads for the first large draw, not at import)
        except ImportError:  # pragma: no cover - numba is a dependency
            _KERNELS = False
            return None
        _KERNELS = _random_kernels
    return _KERNELS


def memory_order(value) -> list[int] | None:
    """The axes of `value` (an array) from outermost to innermost in memory: the order in which
    torch's TensorIterator fills a tensor of that layout (a transposed one gets its draws down
    the columns), and so of torch's `empty_like(value)` (preserve_format keeps the order of the
    strides, dense); None when that is the logical (row-major) order. Axes of length 1 keep
    their place."""
    strides, shape = getattr(value, "strides", None), value.shape
    if strides is None or len(shape) < 2:
        return None
    movable = [d for d in range(len(shape)) if shape[d] > 1]
    ranked = iter(sorted(movable, key=lambda d: -abs(strides[d])))  # stable: ties keep their order
    order = [next(ranked) if shape[d] > 1 else d for d in range(len(shape))]
    return None if order == list(range(len(shape))) else order


def place(flat: np.ndarray, shape: tuple, order: list[int] | None) -> np.ndarray:
    """Draws `flat`, made in fill order `order` (memory_order's), as an array of `shape`."""
    if order is None:
        return flat.reshape(shape)
    return flat.reshape([shape[d] for d in order]).transpose(np.argsort(order))


def _mt_state(seed: int) -> np.random.MT19937:
    """An MT19937 in at::mt19937's initial state for `seed` (init_with_uint32 of its low 32 bits)."""
    key = np.empty(624, np.uint32)
    x = int(seed) & _MASK32
    key[0] = x
    for i in range(1, 624):
        x = (1812433253 * (x ^ (x >> 30)) + i) & _MASK32
        key[i] = x
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 624}}
    return bits


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e == a + b exactly, s = fl(a + b) (Knuth's TwoSum)."""
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p + e == a * b exactly, p = fl(a * b) (Dekker's product with Veltkamp's split)."""
    def split(x):
        t = x * 134217729.0  # 2**27 + 1
        hi = t - (t - x)
        return hi, x - hi
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma64(a, b, c) -> np.ndarray:
    """float64 fused multiply-add a * b + c rounded once, as torch's compiled `x * scale + shift`
    (GCC fuses them). Boldo and Melquiond's emulation: the exact product and sum's low parts
    added with rounding to odd, then one rounding to nearest."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        v, err = _two_sum(tl, ul)
        odd = v.view(np.uint64) & np.uint64(1)
        bump = (err != 0) & (odd == 0)
        v = np.where(bump, np.nextafter(v, np.where(err > 0, np.inf, -np.inf)), v)
        out = th + v
    plain = a * b + c
    return np.where(np.isfinite(out), out, plain)


def _fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 fused multiply-add a * b + c rounded once (as _mm256_fmadd_ps).

    a * b is exact in float64; the float64 sum is rounded, and where that rounding lands exactly
    on a float32 tie the sum's rounding error (TwoSum) decides the side, so the float32 result
    is the correctly rounded one."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    bv = s - p
    err = (p - (s - bv)) + (c64 - bv)
    out = s.astype(_F)
    # a tie: s is the midpoint between two float32s, so rounding it is decided by err's sign
    lo = np.where(out.astype(np.float64) > s, np.nextafter(out, _F(-np.inf)), out)
    tie = (err != 0) & (lo.astype(np.float64) + (np.nextafter(lo, _F(np.inf)).astype(np.float64)
                                                 - lo.astype(np.float64)) / 2 == s)
    if tie.any():
        s = np.where(tie, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        out = s.astype(_F)
    return out


def _c(value: float, like: np.ndarray) -> np.ndarray:
    """A float32 constant broadcast to `like`'s shape."""
    return np.full(like.shape, value, _F)


def _log8(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's log256_ps (Cephes logf) in float32, one rounding per vector instruction."""
    x = np.maximum(x, _F(np.finfo(_F).tiny))
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F) + _F(1)
    x = ((bits & ~0x7F800000) | 0x3F000000).view(_F)  # the mantissa in [0.5, 1)
    small = x < _F(0.707106781186547524)
    tmp = np.where(small, x, _F(0))
    x = x - _F(1)
    e = e - np.where(small, _F(1), _F(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, 7.0376836292E-2)
    for coef in (-1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1):
        y = _fma32(y, x, _c(coef, x))
    # GCC contracts each multiply feeding an add into one fma; which of two products it fuses
    # (here y * z, not e * q1) was found against torch's output
    y = _fma32(y * x, z, e * _F(-2.12194440e-4))
    y = _fma32(-z, _c(0.5, x), y)
    return _fma32(e, _c(0.693359375, x), x + y)


def _sincos8(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's sincos256_ps (Cephes sinf/cosf) in float32, for x >= 0."""
    j = (x * _F(1.27323954473516)).astype(np.int32)  # cvttps: truncation; x * 4/pi
    j = (j + 1) & ~1
    y = j.astype(_F)
    sin_sign = (j & 4) != 0
    poly_sin = (j & 2) == 0  # the sine polynomial gives sin (else the cosine one does)
    cos_sign = ((j - 2) & 4) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma32(y, _c(dp, x), x)
    z = x * x
    c = _fma32(_c(2.443315711809948E-005, x), z, _c(-1.388731625493765E-003, x))
    c = _fma32(c, z, _c(4.166664568298827E-002, x))
    c = _fma32(c * z, z, -(z * _F(0.5))) + _F(1)
    s = _fma32(_c(-1.9515295891E-4, x), z, _c(8.3321608736E-3, x))
    s = _fma32(s, z, _c(-1.6666654611E-1, x))
    s = _fma32(s * z, x, x)
    sin = np.where(poly_sin, s, c)
    cos = np.where(poly_sin, c, s)
    return np.where(sin_sign, -sin, sin), np.where(cos_sign, -cos, cos)


class TorchMT19937:
    """The state and draws of a `torch.Generator` on the CPU, with PyTorch's transforms."""

    __slots__ = ("_bits", "seed", "next_double_normal", "_seeded_key")

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self._bits = np.random.MT19937()
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> None:
        """Restart from `seed` in place (CPUGeneratorImpl::set_current_seed: the cached normal
        sample is dropped); the bit generator object stays the same."""
        self.seed = int(seed)
        self._bits.state = _mt_state(seed).state
        # torch's engine tells "just seeded" (next = 0) from "624 draws made" (next = 624) in its
        # state; NumPy's position is 624 for both, so the seeded array is kept to tell them apart
        self._seeded_key = self._bits.state["state"]["key"]
        self.next_double_normal: float | None = None

    @property
    def bits(self) -> np.random.MT19937:
        """The MT19937 bit generator (shared: NumPy samplers drawing from it advance this stream)."""
        return self._bits

    def get_state(self) -> np.ndarray:
        """The state as torch's `get_rng_state()` bytes (CPUGeneratorImplStateLegacy on x86-64,
        5056 uint8 values): seed, the engine's `left`/`seeded`/`next`, its 624 words (each as
        uint64), the cached double normal sample and its flag, the (unused) float one."""
        mt = self._bits.state["state"]
        key, pos = mt["key"], int(mt["pos"])
        fresh = pos == _MT_N and self._seeded_key is not None and np.array_equal(key, self._seeded_key)
        buf = np.zeros(_STATE_BYTES, np.uint8)
        head = np.array([self.seed % (1 << 64)], np.uint64).tobytes() \
            + np.array([_MT_N + 1 - pos, 1], np.int32).tobytes() \
            + np.array([0 if fresh else pos], np.uint64).tobytes() + key.astype(np.uint64).tobytes()
        buf[:len(head)] = np.frombuffer(head, np.uint8)
        if self.next_double_normal is not None:
            buf[5024:5032] = np.frombuffer(np.array([self.next_double_normal], np.float64).tobytes(), np.uint8)
            buf[5040:5044] = np.frombuffer(np.array([1], np.int32).tobytes(), np.uint8)
        return buf

    def set_state(self, state) -> None:
        """Restore a `get_state` value, or torch's `get_rng_state()` bytes (5056, or the older
        5048 without the float sample), checked as CPUGeneratorImpl::set_state checks them."""
        raw = np.ascontiguousarray(state)
        if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size not in (_STATE_BYTES, _STATE_BYTES - 8):
            raise FgradRuntimeError(
                f"set_rng_state expects a 1-d uint8 state of {_STATE_BYTES} (or {_STATE_BYTES - 8}) bytes, as "
                f"get_rng_state() returns, got dtype {raw.dtype} shape {raw.shape}")
        b = raw.tobytes()
        seed = int(np.frombuffer(b[0:8], np.uint64)[0])
        left, seeded = (int(v) for v in np.frombuffer(b[8:16], np.int32))
        nxt = int(np.frombuffer(b[16:24], np.uint64)[0]) & _MASK32
        if not (seeded and 0 < left <= _MT_N and nxt <= _MT_N):
            raise FgradRuntimeError(f"set_rng_state: invalid mt19937 state (seeded={seeded}, left={left}, "
                                    f"next={nxt}); pass a state from get_rng_state()")
        key = (np.frombuffer(b[24:24 + 8 * _MT_N], np.uint64) & np.uint64(_MASK32)).astype(np.uint32)
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _MT_N + 1 - left}}
        self.seed = seed
        self._seeded_key = key.copy() if left == 1 and nxt == 0 else None
        valid = int(np.frombuffer(b[5040:5044], np.int32)[0])
        self.next_double_normal = float(np.frombuffer(b[5024:5032], np.float64)[0]) if valid else None

    # --- raw draws ------------------------------------------------------------------------------

    def random32(self, n: int) -> np.ndarray:
        """`n` draws of generator->random() (uint32 values, as uint64)."""
        return self._bits.random_raw(int(n))

    def random64(self, n: int) -> np.ndarray:
        """`n` draws of generator->random64(): two 32-bit draws, the first the high half."""
        raw = self._bits.random_raw(2 * int(n))
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    def seed63(self) -> int:
        """`torch.empty((), dtype=torch.int64).random_(generator=g).item()`: a seed in [0, 2**63)."""
        return int(self.random64(1)[0]) % _TWO63

    def uniform(self, n: int) -> np.ndarray:
        """`n` float64 draws in [0, 1) of uniform_real_distribution<double> (53 random bits)."""
        return (self.random64(n) & _MASK53).astype(np.float64) * (1.0 / (1 << 53))

    def _unit(self, n: int, dtype) -> np.ndarray:
        """uniform_real_distribution<dtype>(0, 1): 24 bits of a 32-bit draw (float32) or 53 of a
        64-bit one (float64)."""
        if np.dtype(dtype) == np.float32:
            return (self.random32(n) & _MASK24).astype(_F) * _F(1.0 / (1 << 24))
        return self.uniform(n)

    # --- Tensor methods -------------------------------------------------------------------------

    def uniform_(self, n: int, dtype, low: float = 0.0, high: float = 1.0, out_dtype=None) -> np.ndarray:
        """`torch.empty(n, dtype=out_dtype).uniform_(low, high)`, drawn in `dtype` (float64 for
        float64, float32 for the rest); a half-precision `out_dtype` maps the values that round to
        `high` to `low`, as torch's kernel does for reduced precision."""
        values = self._uniform(n, dtype, low, high)
        if out_dtype is None or np.dtype(out_dtype) == values.dtype:
            return values
        out = values.astype(out_dtype)
        if out.dtype.kind == "f" and out.dtype.itemsize < 4:
            out[out == np.asarray(high).astype(out.dtype)] = np.asarray(low).astype(out.dtype)
        return out

    def _uniform(self, n: int, dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """`torch.empty(n, dtype=dtype).uniform_(low, high)`: u * (high - low) + low in dtype."""
        dt = np.dtype(dtype).type
        lo, hi = dt(low), dt(high)
        u = self._unit(n, dt)
        if lo == 0 and hi == 1:  # u * 1 + 0 is u
            return u
        # GCC fuses u * (hi - lo) + lo into one fma
        kernels = _kernels(n)
        if kernels is not None:
            return kernels.affine(u, hi - lo, lo)
        if dt is _F:
            return _fma32(u, np.full(n, hi - lo, _F), np.full(n, lo, _F))
        return _fma64(u, hi - lo, lo)

    def normal_(self, n: int, dtype, mean: float = 0.0, std: float = 1.0, contiguous: bool = True) -> np.ndarray:
        """`torch.empty(n, dtype=dtype).normal_(mean, std)`: below 16 elements, or for a tensor
        that is not contiguous, normal_distribution<double> per element (with the cached sine),
        else n uniforms transformed by Box-Muller in blocks of 16, the last 16 redrawn when n is
        not a multiple."""
        dt = np.dtype(dtype).type
        if n < _NORMAL_BLOCK or not contiguous:
            return self._normal_scalars(n, mean, std).astype(dt)
        data = self._unit(n, dt)
        full = n - n % _NORMAL_BLOCK
        # the tail's redraw follows every block's transform in torch; transforms draw nothing
        tail = self._unit(_NORMAL_BLOCK, dt) if full < n else None
        kernels = _kernels(n)
        if kernels is not None:
            fill = kernels.normal_blocks_f32 if dt is _F else kernels.normal_blocks_f64
            fill(data[:full], dt(mean), dt(std))
            if tail is not None:
                fill(tail, dt(mean), dt(std))
        else:
            blocks = self._blocks_f32 if dt is _F else self._blocks_f64
            data[:full] = blocks(data[:full].reshape(-1, 16), mean, std).reshape(-1)
            if tail is not None:
                tail = blocks(tail.reshape(1, 16), mean, std).reshape(-1)
        if tail is not None:
            data[n - _NORMAL_BLOCK:] = tail
        return data

    def _normal_scalars(self, n: int, mean: float, std: float) -> np.ndarray:
        """`n` draws of normal_distribution<double>(mean, std) (float64): Box-Muller on two
        53-bit uniforms gives the cosine sample and caches the sine one for the next draw."""
        values = []
        if n and self.next_double_normal is not None:
            values.append(self.next_double_normal)
            self.next_double_normal = None
        fresh = n - len(values)
        u = self.uniform(fresh + fresh % 2)  # (u1, u2) per pair, drawn in that order
        kernels = _kernels(n)
        if kernels is not None:
            values = np.concatenate([np.array(values, np.float64), kernels.box_muller_pairs(u)])
        else:
            for u1, u2 in zip(u[0::2].tolist(), u[1::2].tolist()):
                r = math.sqrt(-2.0 * math.log1p(-u2))
                theta = 2.0 * math.pi * u1
                values += [r * math.cos(theta), r * math.sin(theta)]
        if fresh % 2:
            self.next_double_normal = float(values[-1])
            values = values[:-1]
        if std == 1 and mean == 0:  # x * 1 + 0 is x, but for -0.0 (+ 0.0 rounds it to +0.0)
            return np.array(values, np.float64) + 0.0
        return _fma64(np.array(values, np.float64), std, mean)

    @staticmethod
    def _blocks_f64(d: np.ndarray, mean: float, std: float) -> np.ndarray:
        """normal_fill_16<double> on each row of `d` (rows of 16 float64 uniforms), with libm's
        log/cos/sin (Python's math; NumPy's may differ in the last bit): cos into a row's first
        8 values, sin into its last 8."""
        radius = np.array([math.sqrt(-2.0 * math.log(1.0 - u)) for u in d[:, :8].reshape(-1).tolist()])
        theta = [2.0 * math.pi * u for u in d[:, 8:].reshape(-1).tolist()]
        cos = radius * np.array([math.cos(t) for t in theta])
        sin = radius * np.array([math.sin(t) for t in theta])
        return np.concatenate([_fma64(cos, std, mean).reshape(-1, 8), _fma64(sin, std, mean).reshape(-1, 8)], axis=1)

    @staticmethod
    def _blocks_f32(d: np.ndarray, mean: float, std: float) -> np.ndarray:
        """normal_fill_16_AVX2 on each row of `d` (rows of 16 float32 uniforms): float32
        Box-Muller with the Cephes log/sincos and a final fma."""
        radius = np.sqrt(_F(-2) * _log8(_F(1) - d[:, :8]))
        sin, cos = _sincos8(_F(2.0 * math.pi) * d[:, 8:])
        m, s = np.full(radius.shape, _F(mean)), np.full(radius.shape, _F(std))
        return np.concatenate([_fma32(radius * cos, s, m), _fma32(radius * sin, s, m)], axis=1)

    def random_(self, n: int, low: int, high: int) -> np.ndarray:
        """`random_(low, high)` / randint: a draw modulo the range, plus low (uniform_int_from_to:
        a 32-bit draw below a range of 2**28, a 64-bit one from there, whatever the dtype)."""
        span = int(high) - int(low)
        if span <= 0:
            raise FgradRuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        draws = self.random64(n) if span >= _RANDINT_WIDE else self.random32(n)
        return (draws % np.uint64(span)).astype(np.int64) + np.int64(low)

    def exponential_(self, n: int, lambd: float = 1.0) -> np.ndarray:
        """`exponential_(lambd)` (float64 values): -1 / lambd * log1p(-u) on 53-bit uniforms, with
        libm's log1p (Python's math; NumPy's may differ in the last bit)."""
        scale = -1.0 / float(lambd)
        kernels = _kernels(n)
        if kernels is not None:
            return kernels.scaled_log1p_neg(self.uniform(n), scale)
        return np.array([scale * math.log1p(-u) for u in self.uniform(n).tolist()], np.float64)

    def geometric_(self, n: int, p: float) -> np.ndarray:
        """`geometric_(p)` (float64 values): ceil(log(u) / log1p(-p)) on 53-bit uniforms, libm's
        log (the number of Bernoulli(p) trials up to the first success)."""
        p = float(p)
        if not 0 < p < 1:
            raise FgradRuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
        denominator = math.log1p(-p)
        kernels = _kernels(n)
        if kernels is not None:
            return kernels.geometric(self.uniform(n), denominator)
        return np.array([math.ceil(math.log(u) / denominator) if u > 0 else math.inf
                         for u in self.uniform(n).tolist()], np.float64)

    def cauchy_(self, n: int, median: float = 0.0, sigma: float = 1.0) -> np.ndarray:
        """`cauchy_(median, sigma)` (float64 values): median + sigma * tan(pi * (u - 0.5)) on
        53-bit uniforms, libm's tan, the multiply-add fused as torch's compiled kernel."""
        median, sigma = float(median), float(sigma)
        if not sigma > 0:
            raise FgradRuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
        kernels = _kernels(n)
        if kernels is not None:
            return kernels.cauchy(self.uniform(n), median, sigma)
        return _fma64(np.array([math.tan(math.pi * (u - 0.5)) for u in self.uniform(n).tolist()], np.float64),
                      sigma, median)

    def log_normal_(self, n: int, mean: float = 1.0, std: float = 2.0) -> np.ndarray:
        """`log_normal_(mean, std)` (float64 values): exp of normal_distribution<double>(mean,
        std) draws (the element-by-element path, sharing the cached normal sample), libm's exp."""
        std = float(std)
        if not std > 0:
            raise FgradRuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
        normals = self._normal_scalars(n, float(mean), std)
        kernels = _kernels(n)
        if kernels is not None:
            return kernels.exp(normals)
        return np.array([math.exp(v) for v in normals.tolist()], np.float64)

    def bernoulli_(self, n: int, p: float) -> np.ndarray:
        """`bernoulli_(p)` with a float p (torch's portable kernel): float64 uniform < p, as bool."""
        return self.uniform(n) < float(p)

    def bernoulli(self, probs: np.ndarray) -> np.ndarray:
        """`torch.bernoulli(probs)`: per element a uniform in the probabilities' dtype (float32:
        24 bits, float64: 53 bits) < p, as bool."""
        p = np.asarray(probs)
        dt = np.float32 if p.dtype in (np.float16, np.float32) else np.float64
        return (self._unit(p.size, dt) < p.reshape(-1).astype(dt)).reshape(p.shape)

    # --- torch functions ------------------------------------------------------------------------

    def randperm(self, n: int) -> list[int]:
        """`torch.randperm(n, generator=g).tolist()`."""
        return self.randperm_array(n).tolist()

    def randperm_array(self, n: int) -> np.ndarray:
        """`torch.randperm(n, generator=g)` as an int64 array."""
        n = int(n)
        if n < 0:
            raise FgradRuntimeError(f"randperm: n must be non-negative, got {n}")
        kernels = _kernels(n)
        if n < _RANDPERM_SMALL:
            # Fisher-Yates from the front: swap r[i] with r[i + random() % (n - i)]
            draws = self.random32(max(n - 1, 0))
            if kernels is not None:
                return kernels.randperm_swaps(draws, n)
            perm = list(range(n))
            if n > 1:
                offsets = (draws % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
                for i, z in enumerate(offsets):
                    j = i + z
                    perm[i], perm[j] = perm[j], perm[i]
            return np.array(perm, np.int64)
        # the "inside-out" variant PyTorch uses for huge n (64-bit draws keep it unbiased)
        draws = self.random64(n)
        if kernels is not None:
            return kernels.randperm_inside_out(draws, n)
        perm = [0] * n
        for i in range(n):
            z = int(draws[i]) % (i + 1)
            perm[i] = perm[z]
            perm[z] = i
        return np.array(perm, np.int64)

    def randint(self, high: int, size: int) -> list[int]:
        """`torch.randint(high=high, size=(size,), dtype=torch.int64, generator=g).tolist()`."""
        return self.random_(size, 0, high).tolist()

    def multinomial(self, weights: np.ndarray, num_samples: int, replacement: bool, dtype=np.float64) -> list[int]:
        """`torch.multinomial(weights, num_samples, replacement, generator=g).tolist()` for 1-d
        `weights` of a tensor of `dtype`: PyTorch's checks and both of its CPU algorithms, with
        their arithmetic in that dtype (float64, else float32)."""
        dt = np.float64 if np.dtype(dtype) == np.float64 else np.float32
        w = np.asarray(weights).astype(dt)
        if w.size and w.min() < 0:
            raise FgradRuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.all(np.isfinite(w)):
            raise FgradRuntimeError("invalid multinomial distribution (encountering probability entry = "
                                    "infinity or NaN)")
        if not replacement and num_samples > w.size:
            raise FgradRuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        # a sequential running sum in the weights' dtype, as PyTorch's kernel accumulates it
        cum = np.cumsum(w, dtype=dt)
        if w.size == 0 or cum[-1] <= 0:
            raise FgradRuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if replacement and num_samples > 1:
            # inverse-CDF sampling: the first bucket whose normalised cumulative weight >= u (a
            # float64 uniform against the dtype's cumulative weights)
            cum = cum / cum[-1]
            cum[-1] = 1
            return np.searchsorted(cum.astype(np.float64), self.uniform(num_samples), side="left").tolist()
        # PyTorch's fast path (no replacement, or one sample): the top num_samples of w / q
        # with q ~ Exp(1) drawn for every category, both in the dtype. Ties (zero weights drawn
        # when num_samples exceeds the non-zero ones) are broken by index here; PyTorch's topk
        # leaves their order unspecified.
        ratio = w / self.exponential_(w.size).astype(dt)
        return np.argsort(-ratio, kind="stable")[:num_samples].tolist()
