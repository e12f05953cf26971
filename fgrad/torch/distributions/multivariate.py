"""The multivariate distributions of torch.distributions: MultivariateNormal,
LowRankMultivariateNormal, Wishart, LKJCholesky and LogisticNormal (Dirichlet lives beside Beta in
continuous.py, which draws through it), with PyTorch's parameters and expressions.

MultivariateNormal, LowRankMultivariateNormal, LogisticNormal and LKJCholesky sample as
PyTorch (equal values for the same seed, to the rounding of their matmuls and float math).
Wishart's Bartlett draws are PyTorch's, but PyTorch 2.13 redraws every sample once (see Wishart).
"""
from __future__ import annotations

import math
import warnings
from numbers import Number

from ...core.errors import FgradValueError
from .. import _tensor as T
from .. import linalg, special
from .._tensor import creation
from .._tensor.tensor import Size, Tensor
from . import constraints
from .continuous import Beta, Chi2, Dirichlet, Normal
from .distribution import Distribution
from .structure import ExponentialFamily, TransformedDistribution
from .transforms import StickBreakingTransform
from .utils import LOG_2PI, _standard_normal, broadcast_all, finfo_of, lazy_property, vec_to_tril_matrix

__all__ = ["MultivariateNormal", "LowRankMultivariateNormal", "Dirichlet", "Wishart", "LKJCholesky",
           "LogisticNormal"]

lgamma = special.gammaln
digamma = special.digamma
_LOG_2 = math.log(2)


def _diag_embed(d: Tensor) -> Tensor:
    return d.unsqueeze(-1) * creation.eye(d.shape[-1], dtype=d.dtype, device=d.device)


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dims."""
    return T.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """|L^{-1} x|^2 over broadcast batch dims (L lower triangular)."""
    shape = tuple(T.broadcast_shapes(tuple(bx.shape[:-1]), tuple(bL.shape[:-2])))
    n = bx.shape[-1]
    L = bL.expand(shape + (n, n)) if tuple(bL.shape[:-2]) != shape else bL
    x = bx.expand(shape + (n,)) if tuple(bx.shape[:-1]) != shape else bx
    z = linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return z.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    Lf = linalg.cholesky(T.flip(P, (-2, -1)))
    L_inv = T.transpose(T.flip(Lf, (-2, -1)), -2, -1)
    Id = creation.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(L_inv, Id.expand(tuple(L_inv.shape)), upper=False)


class MultivariateNormal(Distribution):
    """N(loc, Σ) with Σ given as covariance_matrix, precision_matrix or scale_tril (its
    Cholesky factor L, Σ = L Lᵀ); batch dims broadcast.

    Args:
        loc: mean (..., k).
        covariance_matrix, precision_matrix, scale_tril: (..., k, k); exactly one.
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise FgradValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                  "specified.")
        if not isinstance(loc, Tensor) or loc.dim() < 1:
            raise FgradValueError("loc must be at least one-dimensional.")
        k = loc.shape[-1]
        for name, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is None:
                continue
            if m.dim() < 2:
                raise FgradValueError(f"{name} matrix must be at least two-dimensional, with optional leading "
                                      "batch dimensions")
            if tuple(m.shape[-2:]) != (k, k):
                raise FgradValueError(f"{name} must be {k} x {k} to match loc of shape {tuple(loc.shape)}, got "
                                      f"shape {tuple(m.shape)}")
            batch_shape = tuple(T.broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1])))
            setattr(self, name, m.expand(batch_shape + (k, k)))
        self.loc = loc.expand(batch_shape + (k,))
        super().__init__(batch_shape, (k,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(precision_matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        loc_shape = batch_shape + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return T.matmul(L, L.mT).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        return linalg._cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        L = self._unbroadcasted_scale_tril
        shape = tuple(T.broadcast_shapes(tuple(diff.shape[:-1]), tuple(L.shape[:-2])))
        k = self._event_shape[0]
        # the lower triangle only, as a triangular solve reads it (no gradient to the zeros above)
        L = L.tril().expand(shape + (k, k))
        z = linalg.solve(L, diff.expand(shape + (k,)).unsqueeze(-1))
        maha = z.squeeze(-1).pow(2).sum(-1)
        return (maha + k * LOG_2PI) * -0.5 - self._half_log_det()

    def entropy(self):
        k = self._event_shape[0]
        h = self._half_log_det() + 0.5 * k * (1.0 + LOG_2PI)
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of I + Wᵀ D⁻¹ W."""
    m = W.size(-1)
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = T.matmul(Wt_Dinv, W) + creation.eye(m, dtype=W.dtype, device=W.device)
    return linalg.cholesky(K)


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W Wᵀ + D) by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """xᵀ (W Wᵀ + D)⁻¹ x by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x.pow(2) / D).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    """N(loc, W Wᵀ + diag(D)) with a low-rank covariance factor W (k x m) and diagonal D.

    Args:
        loc: (..., k). cov_factor: (..., k, m). cov_diag: (..., k), positive.
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise FgradValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise FgradValueError("cov_factor must be at least two-dimensional, with optional leading batch "
                                  "dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise FgradValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise FgradValueError(f"cov_diag must be a batch of vectors with shape {Size(event_shape)}")
        loc_, cov_diag_ = loc.unsqueeze(-1), cov_diag.unsqueeze(-1)
        try:
            shape = tuple(T.broadcast_shapes(tuple(loc_.shape), tuple(cov_factor.shape), tuple(cov_diag_.shape)))
        except Exception as e:
            raise FgradValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                                  f"cov_diag {cov_diag.shape}") from e
        self.cov_factor = cov_factor if tuple(cov_factor.shape) == shape else cov_factor.expand(shape)
        self.loc = loc_.expand(shape)[..., 0]
        self.cov_diag = cov_diag_.expand(shape)[..., 0]
        batch_shape = tuple(self.loc.shape[:-1])
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        loc_shape = batch_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        n = self._event_shape[0]
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        K = T.matmul(Dinvsqrt_W, Dinvsqrt_W.mT) + creation.eye(n, dtype=Dinvsqrt_W.dtype)
        scale_tril = cov_diag_sqrt_unsqueeze * linalg.cholesky(K)
        return scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        cov = T.matmul(W, W.mT) + _diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        C = self._capacitance_tril
        shape = tuple(T.broadcast_shapes(tuple(C.shape[:-2]), tuple(Wt_Dinv.shape[:-2])))
        A = linalg.solve_triangular(C.expand(shape + tuple(C.shape[-2:])),
                                    Wt_Dinv.expand(shape + tuple(Wt_Dinv.shape[-2:])), upper=False)
        precision = _diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return precision.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        W_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_W = _standard_normal(W_shape, self.loc.dtype, self.loc.device)
        eps_D = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * LOG_2PI + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + LOG_2PI) + log_det)
        return H.expand(tuple(self._batch_shape)) if len(self._batch_shape) else H


def _mvdigamma(x, p: int):
    offsets = creation.arange(p, dtype=x.dtype, device=x.device).div(2)
    return digamma(x.unsqueeze(-1) - offsets.expand(tuple(x.shape) + (p,))).sum(-1)


def _mvlgamma(x, p: int):
    return special.multigammaln(x, p)


class Wishart(ExponentialFamily):
    """Wishart(df, Σ) over positive-definite p x p matrices, Σ given as covariance_matrix,
    precision_matrix or scale_tril. rsample is Bartlett's decomposition (chi-squared diagonal, normal
    lower triangle), as PyTorch's; singular draws (possible when df < p) are redrawn. PyTorch
    2.13's rsample tests its samples with the check inverted, so it warns "Singular sample
    detected" and redraws every valid sample once: for the same seed its values (and the
    generator's state after) differ from these, which are the first draws.

    Args:
        df: > p - 1. covariance_matrix, precision_matrix, scale_tril: exactly one.
        validate_args: check parameters and values.
    """

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise FgradValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                  "specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise FgradValueError("scale_tril must be at least two-dimensional, with optional leading batch "
                                  "dimensions")
        if isinstance(df, Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = creation.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(T.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise FgradValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        self.arg_constraints = {"covariance_matrix": constraints.positive_definite,
                                "precision_matrix": constraints.positive_definite,
                                "scale_tril": constraints.lower_cholesky,
                                "df": constraints.greater_than(event_shape[-1] - 1)}
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.",
                          stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        p = event_shape[-1]
        offsets = creation.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        self._dist_chi2 = Chi2(df=(self.df.unsqueeze(-1) - offsets.expand(batch_shape + (p,))))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(batch_shape)
        cov_shape = batch_shape + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new.arg_constraints = self.arg_constraints
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        p = self._event_shape[-1]
        offsets = creation.arange(p, dtype=new._unbroadcasted_scale_tril.dtype)
        new._dist_chi2 = Chi2(df=(new.df.unsqueeze(-1) - offsets.expand(batch_shape + (p,))))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = creation.eye(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return linalg._cholesky_solve(identity, L).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def _df_view(self):
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_view() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = T.where(factor <= 0, math.nan, factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_view() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        sample_shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=finfo_of(self.df).eps)
        below = creation.randn(sample_shape + tuple(self._batch_shape) + (p * (p - 1) // 2,),
                               dtype=diag.dtype, device=diag.device)
        noise = _diag_embed(diag) + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett draws; singular ones (possible when df < p) are redrawn up to
        `max_try_correction` times (default 10, as PyTorch)."""
        if max_try_correction is None:
            max_try_correction = 10
        sample = self._bartlett_sampling(sample_shape)
        for _ in range(max_try_correction):
            ok = linalg.eigvalsh(sample.detach()).gt(0).all(-1)
            if bool(ok.all()):
                break
            fresh = self._bartlett_sampling(sample_shape)
            sample = T.where(ok.reshape(tuple(ok.shape) + (1, 1)), sample, fresh)
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - _mvlgamma(nu / 2, p) + (nu - p - 1) / 2 * linalg.slogdet(value)[1]
                - linalg._cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + _mvlgamma(nu / 2, p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-linalg.slogdet(-2 * x)[1] + _LOG_2 * p) + _mvlgamma(y + (p + 1) / 2, p)


class LKJCholesky(Distribution):
    """The LKJ distribution over Cholesky factors of dim x dim correlation matrices
    (concentration eta), sampled by the onion method as PyTorch (its Beta and normal draws).

    Args:
        dim: >= 2. concentration: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise FgradValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = tuple(self.concentration.size())
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = creation.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = T.cat([creation.zeros((1,), dtype=offset.dtype), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with T.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = creation.randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype).tril(-1)
            norm = u_normal.pow(2).sum(-1, keepdim=True).sqrt()
            # the first row has no entries below the diagonal: it stays zero (not 0 / 0)
            first = creation.arange(self.dim).reshape(self.dim, 1) == 0
            u_hypersphere = T.where(first, 0.0, u_normal / T.where(first, 1.0, norm))
            w = T.sqrt(y) * u_hypersphere
            tiny = finfo_of(w).tiny
            diag_elems = T.clamp(1 - T.sum(w ** 2, dim=-1), min=tiny).sqrt()
            return w + _diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = creation.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = T.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = lgamma(alpha) * dm1
        numerator = _mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex: StickBreakingTransform of a
    Normal(loc, scale) vector (K-1 entries give a K-simplex point).

    Args:
        loc, scale: of the underlying Normal.
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
