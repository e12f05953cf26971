"""Rejection samplers (Gamma, Poisson, Binomial, von Mises) drawing from fgrad.torch's default
generator, and the implicit reparameterisation of Gamma samples.

The draws follow the default generator (`manual_seed` makes them reproducible) but not
PyTorch's per-element algorithms, so their values differ from torch's for the same seed. Each
sampler runs vectorised in float64: every round draws for the elements still rejected.

`standard_gamma(alpha)` is one torch op (grad_fn `StandardGammaBackward0`) whose derivative
with respect to alpha is the implicit reparameterisation gradient dx/dalpha =
-(dF(x; alpha)/dalpha) / f(x; alpha) (F the Gamma cdf), approximated as PyTorch does
(a series for small x, a saddle-point expansion for large alpha, a rational fit elsewhere;
Jankowiak & Obermeyer 2018), so gradients through Gamma, Chi2, StudentT, Beta, Dirichlet,
InverseGamma and FisherSnedecor samples are PyTorch's for the same sample.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sps

from ... import numpy as fnp
from ...lax import stop_gradient
from .. import _tensor as T
from .._tensor import creation
from .._tensor._boundary import call
from .._tensor.tensor import Tensor


def _uniform(n: int) -> np.ndarray:
    return creation._engine().uniform(int(n))


def _normal(n: int) -> np.ndarray:
    return creation.randn((int(n),), dtype=_f64()).numpy().astype(np.float64)


def _f64():
    return T.float64


def gamma_np(alpha: np.ndarray) -> np.ndarray:
    """Standard Gamma(alpha) draws (Marsaglia & Tsang; alpha < 1 boosted by U**(1/alpha)).

    Args:
        alpha: positive float64 array.
    Returns:
        float64 array of alpha's shape.
    """
    alpha = np.asarray(alpha, np.float64)
    flat = alpha.reshape(-1)
    a = np.where(flat < 1, flat + 1, flat)
    d = a - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    out = np.empty_like(a)
    todo = np.arange(a.size)
    while todo.size:
        x = _normal(todo.size)
        u = _uniform(todo.size)
        v = 1.0 + c[todo] * x
        ok = v > 0
        v3 = np.where(ok, v, 1.0) ** 3
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = ok & ((u < 1 - 0.0331 * x ** 4)
                           | (np.log(u) < 0.5 * x * x + d[todo] * (1 - v3 + np.log(v3))))
        out[todo[accept]] = d[todo[accept]] * v3[accept]
        todo = todo[~accept]
    small = flat < 1
    if small.any():
        u = _uniform(int(small.sum()))
        out[small] *= u ** (1.0 / flat[small])
    # a Gamma sample is positive: underflow (tiny alpha) gives the smallest positive float
    return np.maximum(out, np.finfo(np.float64).tiny).reshape(alpha.shape)


def poisson_np(rate: np.ndarray) -> np.ndarray:
    """Poisson(rate) draws: counting exponential gaps for rate < 10, else Hörmann's
    transformed rejection (PTRS).

    Args:
        rate: nonnegative float64 array.
    Returns:
        float64 array of counts.
    """
    rate = np.asarray(rate, np.float64).reshape(-1)
    out = np.zeros_like(rate)
    small = np.flatnonzero((rate < 10) & (rate > 0))
    if small.size:
        # multiply uniforms until the product drops below exp(-rate)
        limit = np.exp(-rate[small])
        prod = np.ones(small.size)
        count = np.zeros(small.size)
        live = np.arange(small.size)
        while live.size:
            prod[live] *= _uniform(live.size)
            done = prod[live] <= limit[live]
            count[live[~done]] += 1
            live = live[~done]
        out[small] = count
    big = np.flatnonzero(rate >= 10)
    if big.size:
        lam = rate[big]
        slam, loglam = np.sqrt(lam), np.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        todo = np.arange(big.size)
        res = np.zeros(big.size)
        while todo.size:
            U = _uniform(todo.size) - 0.5
            V = _uniform(todo.size)
            us = 0.5 - np.abs(U)
            k = np.floor((2 * a[todo] / us + b[todo]) * U + lam[todo] + 0.43)
            quick = (us >= 0.07) & (V <= vr[todo])
            with np.errstate(divide="ignore", invalid="ignore"):
                lhs = np.log(V) + np.log(invalpha[todo]) - np.log(a[todo] / (us * us) + b[todo])
                rhs = -lam[todo] + k * loglam[todo] - sps.gammaln(k + 1)
            valid = (k >= 0) & ~((us < 0.013) & (V > us))
            accept = valid & (quick | (lhs <= rhs))
            res[todo[accept]] = k[accept]
            todo = todo[~accept]
        out[big] = res
    return out


def binomial_np(count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """Binomial(count, prob) draws: by inversion (waiting times) where count * min(p, 1-p) < 10,
    else Hörmann's BTRS rejection.

    Args:
        count: nonnegative integer-valued float64 array.
        prob: float64 array in [0, 1], of count's shape.
    Returns:
        float64 array of successes.
    """
    count = np.asarray(count, np.float64).reshape(-1)
    prob = np.asarray(prob, np.float64).reshape(-1)
    flip = prob > 0.5
    p = np.where(flip, 1 - prob, prob)
    out = np.zeros_like(count)
    small = np.flatnonzero((count * p < 10) & (p > 0) & (count > 0))
    if small.size:
        # geometric waiting times between successes until they pass count trials
        logq = np.log1p(-p[small])
        trials = np.zeros(small.size)
        succ = np.zeros(small.size)
        live = np.arange(small.size)
        while live.size:
            u = _uniform(live.size)
            with np.errstate(divide="ignore"):
                gap = np.ceil(np.log1p(-u) / logq[live])
            gap = np.maximum(gap, 1)
            trials[live] += gap
            over = trials[live] > count[small][live]
            succ[live[~over]] += 1
            live = live[~over]
        out[small] = succ
    big = np.flatnonzero(count * p >= 10)
    if big.size:
        n, pp = count[big], p[big]
        spq = np.sqrt(n * pp * (1 - pp))
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * pp
        c = n * pp + 0.5
        alpha = (2.83 + 5.1 / b) * spq
        vr = 0.92 - 4.2 / b
        m = np.floor((n + 1) * pp)
        lpq = np.log(pp / (1 - pp))
        h = sps.gammaln(m + 1) + sps.gammaln(n - m + 1)
        todo = np.arange(big.size)
        res = np.zeros(big.size)
        while todo.size:
            U = _uniform(todo.size) - 0.5
            V = _uniform(todo.size)
            us = 0.5 - np.abs(U)
            k = np.floor((2 * a[todo] / us + b[todo]) * U + c[todo])
            valid = (k >= 0) & (k <= n[todo])
            quick = valid & (us >= 0.07) & (V <= vr[todo])
            kk = np.clip(k, 0, n[todo])
            with np.errstate(divide="ignore", invalid="ignore"):
                lhs = np.log(V * alpha[todo] / (a[todo] / (us * us) + b[todo]))
                rhs = h[todo] - sps.gammaln(kk + 1) - sps.gammaln(n[todo] - kk + 1) + (kk - m[todo]) * lpq[todo]
            accept = quick | (valid & (lhs <= rhs))
            res[todo[accept]] = k[accept]
            todo = todo[~accept]
        out[big] = res
    out = np.where(p == 0, 0.0, out)
    return np.where(flip, count - out, out)


def von_mises_np(loc: np.ndarray, concentration: np.ndarray, n_shape: tuple) -> np.ndarray:
    """von Mises draws in [-pi, pi) (Best & Fisher's rejection), shape `n_shape` (loc and
    concentration broadcast to it).

    Args:
        loc, concentration: float64 arrays.
        n_shape: the output shape.
    Returns:
        float64 array.
    """
    loc = np.broadcast_to(np.asarray(loc, np.float64), n_shape).reshape(-1)
    kappa = np.broadcast_to(np.asarray(concentration, np.float64), n_shape).reshape(-1)
    tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
    rho = (tau - np.sqrt(2 * tau)) / (2 * np.where(kappa > 0, kappa, 1.0))
    r = (1 + rho ** 2) / (2 * rho)
    out = np.empty_like(loc)
    todo = np.arange(loc.size)
    while todo.size:
        u1, u2, u3 = _uniform(todo.size), _uniform(todo.size), _uniform(todo.size)
        z = np.cos(np.pi * u1)
        f = (1 + r[todo] * z) / (r[todo] + z)
        c = kappa[todo] * (r[todo] - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = (c * (2 - c) - u2 > 0) | (np.log(c / u2) + 1 - c >= 0)
        theta = np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1))
        out[todo[accept]] = theta[accept]
        todo = todo[~accept]
    # a concentration of 0 is the uniform circle
    zero = kappa == 0
    if zero.any():
        out[zero] = np.pi * (2 * _uniform(int(zero.sum())) - 1)
    return (np.mod(out + loc + np.pi, 2 * np.pi) - np.pi).reshape(n_shape)


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
    x = gamma_np(a).astype(dtype)
    x = np.maximum(x, np.finfo(dtype).tiny)  # the float32 cast may underflow to 0
    g = gamma_grad_np(a, x).astype(dtype)
    g = np.where(np.isfinite(g), g, 0).astype(dtype)

    def fn(av):
        # value x; derivative g (a - stop_gradient(a) is 0 with derivative 1)
        return fnp.asarray(x) + fnp.asarray(g) * (av - stop_gradient(av))
    return call("StandardGammaBackward0", fn, (alpha,))


def sample_poisson(rate: Tensor) -> Tensor:
    """torch.poisson(rate): Poisson counts (a float Tensor of rate's dtype), no gradient.

    Args:
        rate: nonnegative floating Tensor.
    Returns:
        Tensor.
    """
    r = rate.detach().numpy()
    return creation.tensor(poisson_np(r).reshape(r.shape).astype(r.dtype))


def sample_binomial(count: Tensor, prob: Tensor) -> Tensor:
    """torch.binomial(count, prob): Binomial successes (a float Tensor), no gradient.

    Args:
        count: Tensor of trial counts.
        prob: Tensor of success probabilities, of count's shape.
    Returns:
        Tensor.
    """
    c, p = count.detach().numpy(), prob.detach().numpy()
    shape = np.broadcast_shapes(c.shape, p.shape)
    c, p = np.broadcast_to(c, shape), np.broadcast_to(p, shape)
    return creation.tensor(binomial_np(c, p).reshape(shape).astype(p.dtype))


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
    g = gamma_np(a)
    x = g / g.sum(-1, keepdims=True)
    info = np.finfo(dtype)
    x = np.clip(x.astype(dtype), info.tiny, 1 - info.eps)
    total = np.broadcast_to(a.astype(np.float64).sum(-1, keepdims=True), a.shape)
    G = dirichlet_grad_np(x.astype(np.float64), a.astype(np.float64), total).astype(dtype)
    G = np.where(np.isfinite(G), G, 0).astype(dtype)

    def fn(av):
        # value x; tangent G * da - x * sum(G * da): PyTorch's Dirichlet backward, transposed
        s = fnp.asarray(G) * (av - stop_gradient(av))
        xv = fnp.asarray(x)
        return xv + s - xv * fnp.sum(s, axis=-1, keepdims=True)
    return call("_DirichletBackward", fn, (concentration,))
