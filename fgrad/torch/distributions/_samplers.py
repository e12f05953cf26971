"""The rejection samplers of torch.distributions (Gamma, Poisson, Binomial; Dirichlet through
Gamma) and the implicit reparameterisation gradients of Gamma and Dirichlet samples.

The samplers are PyTorch's CPU kernels (sample_gamma, Hörmann's PTRS and BTRS, the waiting-time
inversion), run element by element in PyTorch's order on the default generator's
uniform_real_distribution<double> and normal_distribution<double> draws, with libm's log, pow and
sqrt (Python's math) and float32 rounding where PyTorch's kernel computes in the input's float
type: with the same seed the samples are PyTorch's, bit for bit, and the generator is left in
PyTorch's state. They are Python loops (a few microseconds a draw).

`standard_gamma(alpha)` is one torch op (grad_fn `StandardGammaBackward0`) whose derivative
with respect to alpha is the implicit reparameterisation gradient dx/dalpha =
-(dF(x; alpha)/dalpha) / f(x; alpha) (F the Gamma cdf), approximated as PyTorch does
(a series for small x, a saddle-point expansion for large alpha, a rational fit elsewhere;
Jankowiak & Obermeyer 2018), so gradients through Gamma, Chi2, StudentT, InverseGamma and
FisherSnedecor samples are PyTorch's for the same sample; `sample_dirichlet` does the same for
Dirichlet (and Beta) samples.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sps

from ... import numpy as fnp
from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradTypeError
from ...lax import stop_gradient
from .._tensor import creation
from .._tensor._boundary import call
from .._tensor.tensor import Tensor

_MASK53 = (1 << 53) - 1
_F32 = np.float32
_K0331 = float(_F32(0.0331))  # PyTorch's float literals, widened to double
_THIRD32 = _F32(1) / _F32(3)


class _Draws:
    """The default generator's double draws in PyTorch's order: `uniform()` is
    uniform_real_distribution<double> (53 bits of a 64-bit draw), `normal()` is
    normal_distribution<double> (Box-Muller on two uniforms, the sine cached in the generator
    for the next normal). 64-bit draws are read ahead in blocks; `close()` leaves the generator
    exactly after the ones used."""

    def __init__(self, generator=None) -> None:
        self._engine = creation._engine(generator)
        self._bits = self._engine.bits
        self._saved = self._bits.state
        self._buf: list = []
        self._used = 0

    def __enter__(self) -> "_Draws":
        return self

    def __exit__(self, *exc) -> None:
        self._bits.state = self._saved
        if self._used:
            self._bits.random_raw(2 * self._used)

    def _r64(self) -> int:
        if not self._buf:
            raw = self._bits.random_raw(512)
            self._buf = ((raw[0::2] << np.uint64(32)) | raw[1::2]).tolist()[::-1]
        self._used += 1
        return self._buf.pop()

    def uniform(self) -> float:
        return (self._r64() & _MASK53) * (1.0 / (1 << 53))

    def normal(self) -> float:
        engine = self._engine
        if engine.next_double_normal is not None:
            value, engine.next_double_normal = engine.next_double_normal, None
            return value
        u1 = self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        engine.next_double_normal = r * math.sin(theta)
        return r * math.cos(theta)


def _gamma_one(alpha: float, draws: _Draws, single: bool) -> float:
    """PyTorch's sample_gamma: Marsaglia & Tsang, alpha < 1 boosted by U**(1/alpha); `single`:
    alpha is a float32 and its own arithmetic rounds to float32, as in PyTorch's float kernel."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = float(_F32(1) / _F32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1 - draws.uniform(), inv)
        alpha = float(_F32(alpha) + _F32(1)) if single else alpha + 1.0
    d = float(_F32(alpha) - _THIRD32) if single else alpha - float(_THIRD32)
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = draws.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - draws.uniform()
        xx = x * x
        if u < 1.0 - _K0331 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def gamma_np(alpha: np.ndarray, single: bool | None = None, generator=None) -> np.ndarray:
    """Standard Gamma(alpha) draws in C order, as torch._standard_gamma's kernel.

    Args:
        alpha: nonnegative float array.
        single: float32 arithmetic on alpha (default: alpha is float32).
        generator: a torch Generator (default: the default one).
    Returns:
        float64 array of alpha's shape (the caller rounds to its dtype).
    """
    alpha = np.asarray(alpha)
    if single is None:
        single = alpha.dtype == np.float32
    with _Draws(generator) as draws:
        out = [_gamma_one(a, draws, single) for a in alpha.reshape(-1).tolist()]
    return np.array(out, np.float64).reshape(alpha.shape)


def _poisson_one(lam: float, draws: _Draws) -> float:
    """PyTorch's sample_poisson: Hörmann's PTRS for rate >= 10, else multiplying uniforms."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = draws.uniform() - 0.5
            V = draws.uniform()
            us = 0.5 - abs(U)
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return float(k)
            if k < 0 or (us < 0.013 and V > us):
                continue
            if (math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return float(k)
    if lam == 0:
        return 0.0
    enlam = math.exp(-lam)
    count, prod = 0, 1.0
    while True:
        prod *= draws.uniform()
        if prod > enlam:
            count += 1
        else:
            return float(count)


def poisson_np(rate: np.ndarray, generator=None) -> np.ndarray:
    """Poisson(rate) draws in C order, as torch.poisson's kernel.

    Args:
        rate: nonnegative float array.
        generator: a torch Generator (default: the default one).
    Returns:
        float64 array of counts.
    """
    rate = np.asarray(rate)
    with _Draws(generator) as draws:
        out = [_poisson_one(r, draws) for r in rate.astype(np.float64).reshape(-1).tolist()]
    return np.array(out, np.float64).reshape(rate.shape)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    """log(k!) minus its Stirling approximation (a table below 10)."""
    if k < 10:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(count: float, p: float, draws: _Draws, single: bool) -> float:
    """Successes as the number of geometric waiting times that fit in `count` trials."""
    logprob = float(np.log1p(_F32(-p))) if single else math.log1p(-p)
    geom_sum, num = 0.0, 0.0
    while True:
        geom_sum += math.ceil(math.log(draws.uniform()) / logprob)
        if geom_sum > count:
            return num
        num = float(_F32(num + 1)) if single else num + 1


def _binomial_btrs(count: float, p: float, draws: _Draws, single: bool) -> float:
    """Hörmann's transformed rejection with squeeze (BTRS), PyTorch's variant."""
    if single:
        f_count, f_p = _F32(count), _F32(p)
        stddev = float(np.sqrt(f_count * f_p * (_F32(1) - f_p)))
        r = float(f_p / (_F32(1) - f_p))
        m = math.floor(float((f_count + _F32(1)) * f_p))
        c = float(f_count * f_p) + 0.5
    else:
        stddev = math.sqrt(count * p * (1 - p))
        r = p / (1 - p)
        m = math.floor((count + 1) * p)
        c = count * p + 0.5
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * stddev
    while True:
        U = draws.uniform() - 0.5
        V = draws.uniform()
        us = 0.5 - abs(U)
        k = math.floor((2 * a / us + b) * U + c)
        k = float(_F32(k)) if single else float(k)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and V <= v_r:
            return k
        V = math.log(V * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        if V <= upper:
            return k


def _binomial_one(count: float, prob: float, draws: _Draws, single: bool) -> float:
    """PyTorch's sample_binomial: BTRS where count * min(p, 1-p) >= 10, else waiting-time
    inversion; `single`: count and prob are float32 and their own products round to float32."""
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        cp = float(_F32(count) * _F32(prob)) if single else count * prob
        return (_binomial_btrs if cp >= 10.0 else _binomial_inversion)(count, prob, draws, single)
    if prob > 0.5:
        q = float(_F32(1.0) - _F32(prob)) if single else 1.0 - prob
        cq = float(_F32(count) * _F32(q)) if single else count * q
        k = (_binomial_btrs if cq >= 10.0 else _binomial_inversion)(count, q, draws, single)
        return float(_F32(count - k)) if single else count - k
    return math.nan


def binomial_np(count: np.ndarray, prob: np.ndarray, generator=None) -> np.ndarray:
    """Binomial(count, prob) draws in C order, as torch.binomial's kernel.

    Args:
        count: nonnegative integer-valued float array.
        prob: float array of count's shape, in [0, 1].
        generator: a torch Generator (default: the default one).
    Returns:
        float64 array of successes.
    """
    prob = np.asarray(prob)
    single = prob.dtype == np.float32
    count, prob = np.broadcast_arrays(np.asarray(count, prob.dtype), prob)
    with _Draws(generator) as draws:
        out = [_binomial_one(c, p, draws, single)
               for c, p in zip(count.reshape(-1).tolist(), prob.reshape(-1).tolist())]
    return np.array(out, np.float64).reshape(prob.shape)


def gamma_grad_np(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dalpha for x ~ Gamma(alpha, 1) (the implicit reparameterisation gradient).

    Args:
        alpha: positive float64 array.
        x: the samples, of alpha's shape.
    Returns:
        float64 array.
    """
    alpha, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    out = np.empty(alpha.shape)
    with np.errstate(all="ignore"):
        # small x: the cdf's power series and its derivative in alpha, term by term
        numer = np.ones_like(x)
        denom = alpha.copy()
        s1 = numer / denom
        s2 = numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-x / i)
            denom = denom + 1
            s1 = s1 + numer / denom
            s2 = s2 + numer / (denom * denom)
        pow_xa = x ** alpha
        pdf = x ** (alpha - 1) * np.exp(-x)
        cdf = pow_xa * s1
        cdf_alpha = (np.log(x) - sps.digamma(alpha)) * cdf - pow_xa * s2
        small = -cdf_alpha / pdf
        small = np.where(np.isnan(small), 0.0, small)
        # large alpha near its mean: Rice's saddle point
        n1 = 1 + 24 * alpha * (1 + 12 * alpha)
        n2 = 1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
        near = n1 * n2 / (1244160 * alpha ** 4)
        dn = np.sqrt(8 * alpha)
        t2 = dn / (alpha - x)
        t3 = (x - alpha - alpha * np.log(x / alpha)) ** -1.5
        t23 = np.where(x < alpha, t2 - t3, t2 + t3)
        t1 = np.log(x / alpha) * t23 - np.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) ** 2)
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        far = -stirling * x * t1 / dn
        large = np.where((0.9 * alpha <= x) & (x <= 1.1 * alpha), near, far)
        # elsewhere: a rational fit in log(x / alpha) and log(alpha)
        u, v = np.log(x / alpha), np.log(alpha)
        coef = np.array(
            [[0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
             [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
              -0.00058392623],
             [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
              0.00085092367, -1.5247877e-07]])
        cv = [coef[0, i] + u * (coef[1, i] + u * coef[2, i]) for i in range(8)]
        p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
        q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
        mid = np.exp(p / q)
        out = np.where(x < 0.8, small, np.where(alpha > 8, large, mid))
    return out


def standard_gamma(alpha: Tensor) -> Tensor:
    """Standard Gamma(alpha) samples as one torch op: differentiable in alpha through the
    implicit reparameterisation gradient (gamma_grad_np).

    Args:
        alpha: positive floating Tensor.
    Returns:
        Tensor of alpha's shape and dtype.
    """
    a = alpha.detach().numpy()
    dtype = a.dtype
    x = np.maximum(gamma_np(a).astype(dtype), np.finfo(dtype).tiny)  # (a sample is positive)
    g = gamma_grad_np(a, x).astype(dtype)
    g = np.where(np.isfinite(g), g, 0).astype(dtype)

    def fn(av):
        # value x; derivative g (a - stop_gradient(a) is 0 with derivative 1)
        return fnp.asarray(x) + fnp.asarray(g) * (av - stop_gradient(av))
    return call("StandardGammaBackward0", fn, (alpha,))


def _floating(name: str, x) -> np.ndarray:
    if not isinstance(x, Tensor):
        raise FgradTypeError(f"{name}(): expected a Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise FgradNotImplementedError(f"{name}(): not implemented for {x.dtype} (a floating Tensor of rates or "
                                       "probabilities is expected; convert with .float() or .double())")
    return x.detach().numpy()


def poisson(input: Tensor, generator=None) -> Tensor:
    """torch.poisson: a Poisson count for each rate of input, drawn as PyTorch's kernel (the same
    values for the same seed). Its derivative is zero (PoissonBackward0), as PyTorch's.

    Args:
        input: a floating Tensor of nonnegative rates.
        generator: a torch Generator (default: the default one).
    Returns:
        Tensor of input's shape and dtype.
    Raises:
        RuntimeError: a rate is negative.
    """
    r = _floating("poisson", input)
    if not np.all(r >= 0):  # (a NaN rate too, as PyTorch's check)
        raise FgradRuntimeError(f"invalid Poisson rate, expected rate to be non-negative (got {float(np.min(r))}); "
                                "torch.poisson takes rates >= 0")
    x = poisson_np(r, generator).astype(r.dtype)

    def fn(rv):
        # the counts, with a zero derivative in the rates
        return fnp.asarray(x) + 0 * (rv - stop_gradient(rv))
    if not input.requires_grad:
        return creation.tensor(x)
    return call("PoissonBackward0", fn, (input,))


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """torch.binomial: a Binomial(count, prob) draw per element (count and prob broadcast),
    drawn as PyTorch's kernel (the same values for the same seed); no derivative.

    Args:
        count: a floating Tensor of trial counts.
        prob: a floating Tensor of success probabilities.
        generator: a torch Generator (default: the default one).
    Returns:
        Tensor of the broadcast shape, in prob's dtype.
    """
    c, p = _floating("binomial", count), _floating("binomial", prob)
    shape = np.broadcast_shapes(c.shape, p.shape)
    c, p = np.broadcast_to(c, shape), np.broadcast_to(p, shape)
    return creation.tensor(binomial_np(c, p, generator).reshape(shape).astype(p.dtype))


def sample_poisson(rate: Tensor) -> Tensor:
    """Poisson counts for Poisson.sample (torch.poisson of the rates, outside the graph)."""
    return poisson(rate.detach())


def sample_binomial(count: Tensor, prob: Tensor) -> Tensor:
    """Binomial draws for Binomial.sample (torch.binomial, outside the graph)."""
    return binomial(count.detach(), prob.detach())


_DIRICHLET_COEF = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _beta_grad_alpha_small(x, alpha, beta):
    """-(dF/dalpha)/f / (1 - x) for Beta(alpha, beta) near x = 0: a series in x."""
    factor = sps.digamma(alpha) - sps.digamma(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * (i - beta) * x / i
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** (-beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    """The same for the derivative in beta, near x = 0."""
    factor = sps.digamma(alpha + beta) - sps.digamma(beta)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    """The same for alpha and beta both large: a saddle-point expansion (a polynomial at the
    mean, where the expansion is singular)."""
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    b2 = beta * beta
    poly = 47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha ** 3 * b2 * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * b2))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * alpha * alpha * (x - 1) + alpha * beta * (x - 1) - x * b2
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (np.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx)
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x))) ** -1.5
    far = stirling * prefactor * (term1 + term2 * (term3 + np.where(x < mean, term4, -term4)))
    return np.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


def dirichlet_grad_np(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """The scaled implicit reparameterisation gradient -(dF/dalpha)/f/(1 - x) of x ~
    Beta(alpha, total - alpha), the marginal of a Dirichlet coordinate; approximated as PyTorch
    does (series near 0 and 1, a saddle point for large parameters, a rational correction
    elsewhere), so Dirichlet and Beta rsample gradients are PyTorch's for the same sample.

    Args:
        x, alpha, total: float64 arrays of one shape.
    Returns:
        float64 array.
    """
    x, alpha, total = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, alpha, total)))
    beta = total - alpha
    boundary = total * x * (1 - x)
    with np.errstate(all="ignore"):
        small_a = _beta_grad_alpha_small(x, alpha, beta)
        small_b = -_beta_grad_beta_small(1 - x, beta, alpha)
        mid = _beta_grad_alpha_mid(x, alpha, beta)
        u = np.log(x)
        a = np.log(alpha) - u
        b = np.log(total) - a
        pu, pa = [np.ones_like(u), u, u * u], [np.ones_like(a), a, a * a]
        p = np.zeros_like(x)
        q = np.zeros_like(x)
        c = _DIRICHLET_COEF
        for i in range(3):
            for j in range(3):
                ua = pu[i] * pa[j]
                p = p + ua * (c[0, i, j, 0] + b * (c[0, i, j, 1] + b * (c[0, i, j, 2] + b * c[0, i, j, 3])))
                q = q + ua * (c[1, i, j, 0] + b * (c[1, i, j, 1] + b * (c[1, i, j, 2] + b * c[1, i, j, 3])))
        rational = p / q * (x * (sps.digamma(total) - sps.digamma(alpha)) / beta)
        out = np.where((alpha > 6) & (beta > 6), mid, rational)
        out = np.where((x >= 0.5) & (boundary < 0.75), small_b, out)
        out = np.where((x <= 0.5) & (boundary < 2.5), small_a, out)
    return out


def sample_dirichlet(concentration: Tensor) -> Tensor:
    """Dirichlet(concentration) samples (normalised Gamma draws) as one torch op (grad_fn
    `_DirichletBackward`, as PyTorch's): the derivative in concentration is PyTorch's implicit
    one, dx/dalpha_i = G_i (e_i - x) with G from dirichlet_grad_np.

    Args:
        concentration: positive floating Tensor (..., K).
    Returns:
        Tensor of its shape and dtype.
    """
    a = concentration.detach().numpy()
    dtype = a.dtype
    info = np.finfo(dtype)
    # PyTorch's kernel: double Gamma draws (alpha widened), normalised, rounded to the dtype and
    # kept inside (0, 1)
    g = np.maximum(gamma_np(a.astype(np.float64), single=False), np.finfo(np.float64).tiny)
    x = (g / g.sum(-1, keepdims=True)).astype(dtype)
    x = np.minimum(np.nextafter(dtype.type(1), dtype.type(0)), np.maximum(info.tiny, x))
    total = np.broadcast_to(a.astype(np.float64).sum(-1, keepdims=True), a.shape)
    G = dirichlet_grad_np(x.astype(np.float64), a.astype(np.float64), total).astype(dtype)
    G = np.where(np.isfinite(G), G, 0).astype(dtype)

    def fn(av):
        # value x; tangent G * da - x * sum(G * da): PyTorch's Dirichlet backward, transposed
        s = fnp.asarray(G) * (av - stop_gradient(av))
        xv = fnp.asarray(x)
        return xv + s - xv * fnp.sum(s, axis=-1, keepdims=True)
    return call("_DirichletBackward", fn, (concentration,))
