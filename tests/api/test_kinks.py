"""Derivatives at the kinks of smooth functions.

A smooth function computed stably often passes through max, abs, where/select or clip (the
max-shift of logaddexp, the branch of softplus, the guard of a norm). At the point where such
a piece switches, the function itself is still smooth, but differentiating the pieces loses
terms: d2/dx2 logaddexp(x, 0) at 0 came out 0 instead of 1/4. This file checks every smooth
function of the public API *at those points*, to third order, in every mode: reverse
(grad o grad o grad), forward (nested jvp) and both mixtures, against JAX (x64) or, for the
PyTorch-named functions, against PyTorch (through the Tensor facade, and also through
fgrad's transforms on plain arrays for fgrad.torch.nn.functional).

Coverage is enforced: `test_every_public_function_is_tested_or_listed` enumerates the public
callables of fgrad.numpy, fgrad.numpy.linalg, fgrad.numpy.fft, fgrad.scipy.special,
fgrad.scipy.linalg, fgrad.scipy.signal, fgrad.scipy.integrate, fgrad.torch.nn.functional, the
facade's functions (fgrad.<name>, also Tensor methods) and the fgrad.torch.nn layers. Each one must
be covered by a case below or listed, with its reason, in one of
  * NON_SMOOTH: genuinely non-differentiable somewhere, with the documented convention there
    (README, "Derivatives at non-differentiable points"); tested by tests/api/test_reliability.py;
  * NOT_DIFFERENTIABLE: integer/boolean results, piecewise-constant functions, creation;
  * NO_KINKS: linear, multilinear or structural functions (shape, indexing, products,
    linear algebra) whose implementations never switch between pieces.
A function added later fails that test until it is given a case or a line in a list.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import pathlib
import sys
from dataclasses import dataclass, field
from typing import Callable

import numpy as onp
import pytest

import fgrad
import fgrad.torch.nn as fnn
import fgrad.torch.nn.functional as F
import fgrad.numpy as fnp
import fgrad.scipy.integrate as fint
import fgrad.scipy.linalg as fsl
import fgrad.scipy.signal as fsig
import fgrad.scipy.special as fss
import fgrad.scipy.stats as fst
from fgrad.torch._tensor import FUNCTIONS as FACADE_FUNCTIONS

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.special as jss
    import jax.scipy.stats as jst
except ImportError:  # pragma: no cover - the oracle cases skip
    jax = jnp = jss = jst = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

ORDER = 3
RTOL, ATOL = 1e-7, 1e-9


# --- the public API --------------------------------------------------------------------------

def _callables(module, names) -> list[str]:
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if name.startswith("_") or obj is None or isinstance(obj, type) or inspect.ismodule(obj) \
                or not callable(obj):
            continue
        out.append(name)
    return out


def public_api() -> set[str]:
    """Every public function and layer whose derivatives users can ask for, namespaced."""
    names = {f"numpy.{n}" for n in _callables(fnp, dir(fnp))}
    names |= {f"numpy.linalg.{n}" for n in _callables(fnp.linalg, fnp.linalg.__all__)}
    names |= {f"scipy.special.{n}" for n in _callables(fss, fss.__all__)}
    names |= {f"scipy.stats.{d}.{n}" for d in fst.DISTRIBUTIONS for n in _callables(getattr(fst, d), getattr(fst, d).__all__)}
    names |= {f"scipy.stats.{n}" for n in _callables(fst, [n for n in fst.__all__ if n not in fst.DISTRIBUTIONS])}
    names |= {f"lax.{n}" for n in _callables(fgrad.lax, fgrad.lax.__all__)}
    names |= {f"numpy.fft.{n}" for n in _callables(fnp.fft, fnp.fft.__all__)}
    names |= {f"scipy.linalg.{n}" for n in _callables(fsl, fsl.__all__)}
    names |= {f"scipy.signal.{n}" for n in _callables(fsig, fsig.__all__)}
    names |= {f"scipy.integrate.{n}" for n in _callables(fint, fint.__all__)}
    own = [n for n in dir(F) if getattr(getattr(F, n), "__module__", None) == F.__name__]
    names |= {f"nn.functional.{n}" for n in _callables(F, sorted(set(F.__all__) | set(own)))}
    names |= {f"facade.{n}" for n in FACADE_FUNCTIONS}
    names |= {f"nn.{n}" for n in dir(fnn) if isinstance(getattr(fnn, n), type)
              and issubclass(getattr(fnn, n), fnn.Module)}
    return names


def _listing(table: dict[str, str]) -> dict[str, str]:
    """{reason: space-separated names} -> {name: reason}."""
    return {name: reason for reason, names in table.items() for name in names.split()}


NON_SMOOTH = _listing({
    "piecewise activations and margin/robust losses: at each switch point fgrad takes PyTorch's branch, "
    "and tests/torch/test_nn_families.py compares the first derivatives there with PyTorch's": """
        nn.functional.elu nn.functional.selu nn.functional.celu nn.functional.hardtanh nn.functional.relu6
        nn.functional.hardsigmoid nn.functional.hardswish nn.functional.softshrink nn.functional.hardshrink
        nn.functional.threshold nn.functional.prelu nn.functional.rrelu nn.functional.softsign
        nn.functional.smooth_l1_loss nn.functional.huber_loss nn.functional.margin_ranking_loss
        nn.functional.triplet_margin_loss nn.functional.hinge_embedding_loss nn.functional.cosine_embedding_loss
        nn.functional.gaussian_nll_loss nn.functional.normalize nn.functional.pairwise_distance
        nn.functional.embedding_bag nn.functional.cosine_similarity
        nn.ELU nn.SELU nn.CELU nn.Hardtanh nn.ReLU6 nn.Hardsigmoid nn.Hardswish nn.Softshrink nn.Hardshrink
        nn.Threshold nn.PReLU nn.RReLU nn.Softsign nn.SmoothL1Loss nn.HuberLoss nn.MarginRankingLoss
        nn.TripletMarginLoss nn.HingeEmbeddingLoss nn.CosineEmbeddingLoss nn.GaussianNLLLoss nn.PairwiseDistance
        nn.EmbeddingBag nn.CosineSimilarity""",
    "the in-place activations are their out-of-place forms above written into the input, with the "
    "same convention at the switch points (rrelu_, like rrelu, is leaky relu with the mean slope "
    "unless training=True draws the slopes); the margin losses over classes and the triplet loss "
    "with a user distance are hinges max(0, margin - ...) (relu'(0) = 0, as PyTorch): "
    "tests/torch/nn/test_functional_inplace_margin.py and tests/torch/nn/test_modules_3d_margin_ctc.py "
    "compare them with PyTorch": """
        nn.functional.relu_ nn.functional.leaky_relu_ nn.functional.elu_ nn.functional.selu_
        nn.functional.celu_ nn.functional.hardtanh_ nn.functional.threshold_ nn.functional.rrelu_
        nn.functional.multi_margin_loss nn.functional.multilabel_margin_loss
        nn.functional.triplet_margin_with_distance_loss nn.MultiMarginLoss nn.MultiLabelMarginLoss
        nn.TripletMarginWithDistanceLoss""",
    "kink at 0 (abs'(0) = sign(0) = 0; relu'(0) = 0; leaky_relu'(0) = slope, as PyTorch)": """
        numpy.abs numpy.absolute numpy.fabs numpy.copysign facade.abs facade.absolute facade.relu nn.functional.relu
        nn.functional.leaky_relu nn.functional.l1_loss nn.ReLU nn.LeakyReLU nn.L1Loss""",
    "relu inside: RNN and RNNCell with nonlinearity='relu', and the transformer layers' default "
    "feed-forward activation (relu'(0) = 0, as PyTorch); otherwise smooth (tanh, gelu). "
    "tests/torch/test_nn_rnn.py and tests/torch/test_nn_attention.py compare their gradients with PyTorch's": """
        nn.RNN nn.RNNCell nn.TransformerEncoderLayer nn.TransformerDecoderLayer nn.TransformerEncoder
        nn.TransformerDecoder nn.Transformer""",
    "ties: maximum/minimum and the max/min reductions of fgrad.numpy (and the facade's amax/amin) "
    "split evenly; numpy.sort/partition permute": """
        numpy.maximum numpy.minimum numpy.at_max numpy.at_min numpy.max numpy.min numpy.amax numpy.amin facade.maximum
        facade.minimum facade.amax facade.amin numpy.sort
        numpy.fmax numpy.fmin numpy.nanmax numpy.nanmin numpy.ptp numpy.partition""",
    "index-returning reductions, (values, indices): the gradient goes exactly to the returned "
    "indices, the same tied element as PyTorch's (topk: PyTorch's order among ties is "
    "unspecified; the gradient follows fgrad's indices). tests/torch/test_index_reductions.py finds "
    "every such function and method and compares them with PyTorch on ties and NaNs. Without "
    "dim, max/min split ties evenly, as PyTorch": """
        facade.max facade.min facade.sort facade.topk facade.cummax facade.cummin facade.median
        facade.nanmedian""",
    "clip/clamp bounds (numpy: ties split; facade: gradient passes at the bound, as PyTorch)": """
        numpy.clip facade.clamp facade.clip""",
    "max pooling: the first maximum of a window takes the gradient (as PyTorch)": """
        nn.functional.max_pool2d nn.MaxPool2d nn.functional.max_pool3d nn.MaxPool3d
        nn.functional.max_pool1d_with_indices nn.functional.max_pool2d_with_indices
        nn.functional.max_pool3d_with_indices""",
    "max pooling in 1-D and adaptive max pooling: the first maximum of a window takes the gradient "
    "(as PyTorch; tests/torch/test_nn_conv.py checks ties against it)": """
        nn.functional.max_pool1d nn.MaxPool1d nn.functional.adaptive_max_pool1d
        nn.functional.adaptive_max_pool2d nn.AdaptiveMaxPool1d nn.AdaptiveMaxPool2d
        nn.functional.adaptive_max_pool3d nn.AdaptiveMaxPool3d nn.functional.adaptive_max_pool1d_with_indices
        nn.functional.adaptive_max_pool2d_with_indices nn.functional.adaptive_max_pool3d_with_indices""",
    "fractional max pooling: max pooling over windows whose boundaries are drawn at random (or fixed "
    "by _random_samples); the first maximum of a window takes the gradient, as PyTorch "
    "(tests/torch/nn/test_fractional.py)": """
        nn.functional.fractional_max_pool2d nn.functional.fractional_max_pool2d_with_indices
        nn.functional.fractional_max_pool3d nn.functional.fractional_max_pool3d_with_indices
        nn.FractionalMaxPool2d nn.FractionalMaxPool3d""",
    "LP pooling: PyTorch's formula (sign(s) relu(|s|) * window)^(1/p), s the mean of x^p over a "
    "window: relu'(0) = 0 where s = 0, and x^p's own kink for odd or fractional p": """
        nn.functional.lp_pool1d nn.functional.lp_pool2d nn.LPPool1d nn.LPPool2d nn.functional.lp_pool3d
        nn.LPPool3d""",
    "grid_sample: piecewise bilinear in the grid (at integer pixel coordinates the piece above the "
    "floor); clipped coordinates (padding_mode border, reflection) have derivative 0 at and beyond "
    "the border and reflection points +1, as PyTorch; mode nearest has none in the grid "
    "(tests/torch/test_nn_conv.py compares both derivatives with PyTorch's)": """
        nn.functional.grid_sample""",
    "a choice between two arrays: piecewise by definition": """
        numpy.piecewise
        numpy.where numpy.select numpy.nan_to_num facade.where facade.masked_fill""",
    "corrcoef divides by the standard deviations (a kink where one is 0) and is clipped to [-1, 1] "
    "as NumPy's (the diagonal sits at the bound, where its derivative is 0 either way)": "numpy.corrcoef",
    "steps: heaviside has no derivative in x1 and passes the cotangent to x2 where x1 == 0; frexp's "
    "mantissa jumps at the powers of two, its derivative 2 ** -exponent between them (both as JAX; "
    "tests/numpy/test_nanreductions_calculus.py)": "numpy.heaviside numpy.frexp",
    "domain edges and kinks of scipy.special: entr, rel_entr and kl_div are -inf/inf outside x >= 0 "
    "(y > 0), with an infinite derivative at x = 0 (as JAX); the exponentially scaled Bessel "
    "functions (exp(-|x|) factor) have a kink at 0, where the derivative is the mean of the two "
    "sides (sign(0) = 0) (tests/scipy/test_special.py)": """
        scipy.special.entr scipy.special.rel_entr scipy.special.kl_div scipy.special.i0e
        scipy.special.i1e scipy.special.ive""",
    "control flow choosing a branch, or a trip count, from the values: piecewise by definition (the "
    "derivative is the taken branch's, of the trips made; tests/lax/test_control_flow.py)": """
        lax.cond lax.switch lax.while_loop""",
    "repeated eigenvalues / singular values: the vectors' derivative is undefined there and comes out "
    "inf/NaN (as JAX's eigh); functions of the values alone keep a finite gradient "
    "(tests/numpy/test_decompositions.py)": """
        numpy.linalg.eigh numpy.linalg.eigvalsh numpy.linalg.eig numpy.linalg.eigvals numpy.linalg.svd
        numpy.linalg.svdvals numpy.linalg.cond scipy.linalg.eigh""",
    "scipy.linalg's spectral functions share eigh/svd/eig's convention at repeated eigenvalues "
    "(singular values); comb and factorial jump to 0 outside 0 <= k <= N (n >= 0) as SciPy and "
    "JAX define them (a `where`, derivative of the taken side); fiedler is |a_i - a_j| (sign(0) = 0 "
    "at ties); rsf2csf decides which 2x2 blocks to rotate from the values, as SciPy and JAX "
    "(tests/scipy/test_linalg.py, tests/scipy/test_special_smooth.py)": """
        scipy.linalg.svd scipy.linalg.polar scipy.linalg.eigh_tridiagonal scipy.linalg.funm
        scipy.linalg.fiedler scipy.linalg.rsf2csf scipy.special.comb scipy.special.factorial""",
    "rank changes: the pseudo-inverse jumps where the rank does; the derivative is that of the "
    "constant-rank branch (tests/numpy/test_decompositions.py)": """
        numpy.linalg.pinv numpy.linalg.lstsq numpy.polyfit""",
    "jumps: piecewise-continuous remainders and floor division": """
        numpy.fmod numpy.mod numpy.remainder numpy.divmod numpy.floor_divide numpy.modf facade.fmod
        facade.remainder facade.floor_divide""",
    "order statistics: the gradient goes to the element sorted into place; at ties which element "
    "that is switches": """
        numpy.median numpy.nanmedian numpy.quantile numpy.nanquantile facade.quantile facade.nanquantile
        numpy.percentile numpy.nanpercentile numpy.sort_complex""",
    "ties: unique merges equal elements (the number of outputs changes); scatter_reduce's amax/amin "
    "split the gradient of tied candidates evenly, round by round": """
        numpy.unique facade.unique facade.unique_consecutive facade.scatter_reduce""",
    "clamp bounds (the gradient passes at the bound, as PyTorch's clamp); logit(eps=) clamps first": """
        facade.clamp_min facade.clamp_max facade.logit""",
    "kink at zero distance: hypot'(0, 0) = 0 and the p-norm distances' gradient is 0 there (the "
    "norm's convention; PyTorch gives NaN for hypot); p = inf ties split evenly": """
        numpy.hypot facade.hypot facade.cdist facade.dist nn.functional.pdist""",
    "xlogy at input = 0 with other <= 0: PyTorch's convention, d/dinput = 0 (not log 0)": "facade.xlogy",
    "distributions with a kink in the density: laplace's |x - loc| (derivative of logpdf 0 at x = loc, "
    "sign(0) = 0 as JAX; the CDFs take the piece of x >= loc, whose first derivative is the density), "
    "gennorm's |y|**beta (derivatives 0 at y = 0; its CDFs are exact to first order there), uniform's "
    "piecewise-linear CDF (the inside piece at the ends of the support). tests/scipy/stats/test_distributions.py "
    "checks the values at the kinks against SciPy and the one-sided derivatives": """
        scipy.stats.laplace.logpdf scipy.stats.laplace.pdf scipy.stats.laplace.cdf scipy.stats.laplace.logcdf
        scipy.stats.laplace.sf scipy.stats.laplace.logsf scipy.stats.laplace.ppf scipy.stats.laplace.isf
        scipy.stats.gennorm.logpdf scipy.stats.gennorm.pdf scipy.stats.gennorm.cdf scipy.stats.gennorm.logcdf
        scipy.stats.gennorm.sf scipy.stats.gennorm.logsf scipy.stats.uniform.logpdf scipy.stats.uniform.pdf
        scipy.stats.uniform.cdf scipy.stats.uniform.logcdf scipy.stats.uniform.sf scipy.stats.uniform.logsf
        scipy.stats.uniform.ppf scipy.stats.uniform.isf""",
    "step functions of the count k (k has derivative 0, as poisson's), linear in p or its log between "
    "the steps; the quantiles are piecewise constant (derivative 0). tests/scipy/stats/test_distributions.py": """
        scipy.stats.bernoulli.sf scipy.stats.bernoulli.logcdf scipy.stats.bernoulli.logsf
        scipy.stats.bernoulli.ppf scipy.stats.bernoulli.isf""",
    "jumps at the integers (frac = input - trunc(input))": "facade.frac",
    "interp is piecewise linear: kinks at the knots xp (the derivative in x there is the slope of the "
    "piece to the right; 0 outside [xp[0], xp[-1]], where left/right take over); unwrap adds whole "
    "periods that jump where a neighbour difference crosses discont (derivative the identity "
    "between); roots are eigenvalues, whose derivative is undefined at repeated roots "
    "(tests/numpy/test_editing_polynomials.py)": "numpy.interp numpy.unwrap numpy.roots",
})

NOT_DIFFERENTIABLE = _listing({
    "lax's comparisons, argmax and iota: boolean or integer results": """
        lax.eq lax.ne lax.lt lax.le lax.gt lax.ge lax.argmax lax.iota""",
    "lax.conv_dimension_numbers: axis positions computed from shapes and layout strings": """
        lax.conv_dimension_numbers""",
    "integer, boolean or piecewise-constant results (zero derivative where defined)": """
        numpy.sign numpy.floor numpy.ceil numpy.round numpy.around numpy.argmax numpy.argmin numpy.argsort
        numpy.argwhere numpy.nonzero numpy.flatnonzero numpy.count_nonzero numpy.isnan numpy.isinf numpy.isfinite
        numpy.equal numpy.not_equal numpy.less numpy.less_equal numpy.greater
        numpy.greater_equal numpy.logical_and numpy.logical_or numpy.logical_xor
        numpy.logical_not numpy.shape numpy.ndim numpy.size numpy.any numpy.all
        numpy.bitwise_and numpy.bitwise_or numpy.bitwise_xor numpy.bitwise_not numpy.invert
        numpy.bitwise_invert numpy.signbit numpy.trunc numpy.fix numpy.rint numpy.isclose numpy.allclose
        numpy.iscomplex numpy.isreal numpy.iscomplexobj numpy.isrealobj numpy.nanargmax numpy.nanargmin
        numpy.isposinf numpy.isneginf numpy.gcd numpy.lcm numpy.nextafter
        numpy.argpartition numpy.angle facade.angle facade.is_conj facade.resolve_conj
        facade.sign facade.floor facade.ceil facade.round facade.trunc facade.fix facade.argmax
        facade.argmin facade.argsort facade.argwhere facade.nonzero facade.isnan facade.isinf
        facade.isfinite facade.eq facade.ne facade.lt facade.le facade.gt facade.ge facade.greater
        facade.less facade.greater_equal facade.less_equal facade.not_equal facade.equal
        facade.logical_and facade.logical_or facade.logical_xor facade.logical_not
        facade.bitwise_and facade.bitwise_or facade.bitwise_xor facade.bitwise_not facade.any
        facade.all facade.count_nonzero facade.allclose facade.isclose facade.numel
        facade.broadcast_shapes nn.functional.one_hot""",
    "array creation": """
        numpy.arange numpy.array numpy.asarray numpy.empty numpy.empty_like numpy.eye numpy.full
        numpy.full_like numpy.identity numpy.linspace numpy.meshgrid numpy.ones numpy.ones_like
        numpy.tri numpy.zeros numpy.zeros_like numpy.astype numpy.fft.fftfreq numpy.fft.rfftfreq""",
    "integer result (a count of singular values)": "numpy.linalg.matrix_rank",
    "counts and positions: integer results, piecewise constant in the data (bincount and histogram "
    "are linear in their weights); index constants; random draws": """
        numpy.bincount numpy.histogram numpy.searchsorted numpy.digitize numpy.tril_indices
        numpy.triu_indices facade.bincount facade.histc facade.searchsorted facade.bucketize
        facade.tril_indices facade.triu_indices facade.multinomial""",
    "random (a fixed mask times the input)": "nn.functional.dropout nn.Dropout",
    "random: gumbel_softmax is softmax((logits + g) / tau) with fresh Gumbel noise g each call (hard=True "
    "adds a straight-through one-hot), no deterministic value to compare at a point": "nn.functional.gumbel_softmax",
    "argument check (returns None)": "nn.functional.assert_int_or_pair",
    "random: channel masks, and alpha dropout's fixed mask and shift, times / plus the input": """
        nn.functional.dropout1d nn.functional.dropout2d nn.functional.dropout3d
        nn.functional.alpha_dropout nn.functional.feature_alpha_dropout nn.Dropout1d nn.Dropout2d
        nn.Dropout3d nn.AlphaDropout nn.FeatureAlphaDropout""",
    "piecewise constant (the sign of gamma)": "scipy.special.gammasgn",
    "values only, as in JAX: the Schur and Hessenberg factors are not unique, and asking for their "
    "derivative raises DifferentiationError (tests/scipy/test_linalg.py)": """
        scipy.linalg.schur scipy.linalg.hessenberg""",
})

NO_KINKS = _listing({
    "lax's smooth and linear primitive functions: each is one fgrad primitive or fgrad.numpy "
    "function on operands of one dtype (tests/api/test_jax_names.py compares values and gradients "
    "with jax.lax); dynamic_slice/dynamic_update_slice are linear in the arrays (the clamped "
    "start is an integer)": """
        lax.add lax.sub lax.mul lax.div lax.neg lax.exp lax.log lax.sin lax.cos lax.tanh lax.sqrt
        lax.rsqrt lax.integer_pow lax.square lax.convert_element_type lax.broadcast_in_dim
        lax.reshape lax.transpose lax.slice lax.dynamic_slice lax.dynamic_update_slice
        lax.concatenate lax.pad lax.reduce_sum lax.dot_general lax.dot lax.conv_general_dilated
        lax.conv lax.conv_with_general_padding lax.full lax.cumsum lax.stop_gradient""",
    "smooth: polar(abs, angle) = abs (cos(angle) + i sin(angle)) (tests/numpy/test_complex.py)": "facade.polar",
    "apply_along_axis/apply_over_axes only route slices to the user's function (as smooth as it is); "
    "detrend, stft and istft are linear in the signal (fixed projections, windows, FFTs, overlap-add "
    "divided by the constant window norm); welch and csd are quadratic (conj(X) Y averaged; "
    "average='median' is an order statistic); tests/numpy/test_editing_polynomials.py, tests/scipy/test_signal.py": """
        numpy.apply_along_axis numpy.apply_over_axes scipy.signal.detrend scipy.signal.stft scipy.signal.istft
        scipy.signal.welch scipy.signal.csd""",
    "scatter and index updates, repeats, differences, rotations, grids and block matrices "
    "(linear in each operand)": """
        facade.scatter facade.scatter_add facade.index_add facade.index_copy facade.index_fill
        facade.index_put facade.masked_scatter facade.repeat_interleave facade.diff numpy.diff
        facade.rot90 facade.meshgrid facade.cartesian_prod facade.block_diag scipy.linalg.block_diag""",
    "multilinear products: fused multiply-adds, Kronecker and cross products": """
        facade.addcmul facade.addmm facade.addmv facade.baddbmm facade.addbmm facade.kron numpy.kron
        facade.cross numpy.cross""",
    "smooth activations, likelihood losses, normalisations (eps inside the square root) and lookups": """
        nn.functional.gelu nn.functional.silu nn.functional.mish nn.functional.logsigmoid nn.functional.tanhshrink
        nn.functional.glu nn.functional.softmin nn.functional.binary_cross_entropy
        nn.functional.binary_cross_entropy_with_logits nn.functional.kl_div nn.functional.soft_margin_loss
        nn.functional.multilabel_soft_margin_loss nn.functional.poisson_nll_loss nn.functional.layer_norm
        nn.functional.group_norm nn.functional.instance_norm nn.functional.rms_norm nn.functional.local_response_norm
        nn.functional.embedding nn.GELU nn.SiLU nn.Mish nn.LogSigmoid nn.Tanhshrink nn.GLU nn.Softmin nn.Softplus
        nn.BCELoss nn.BCEWithLogitsLoss nn.KLDivLoss nn.SoftMarginLoss nn.MultiLabelSoftMarginLoss nn.PoissonNLLLoss
        nn.LayerNorm nn.GroupNorm nn.InstanceNorm1d nn.InstanceNorm2d nn.InstanceNorm3d nn.RMSNorm
        nn.LocalResponseNorm nn.Embedding nn.Unflatten nn.ParameterList nn.ParameterDict
        nn.LazyInstanceNorm1d nn.LazyInstanceNorm2d nn.LazyInstanceNorm3d nn.CrossMapLRN2d""",
    "cross entropy through a linear layer (linear_cross_entropy, LinearCrossEntropyLoss) and the "
    "adaptive softmax's cluster log_softmax: matmuls into cross_entropy/log_softmax, whose ties are "
    "the cases F.cross_entropy[ties] and F.softmax[ties]; CTC's loss is a log-space forward recursion "
    "of logsumexps over alignments (the lengths and targets are integers): "
    "tests/torch/nn/test_modules_3d_margin_ctc.py compares it with PyTorch": """
        nn.functional.linear_cross_entropy nn.LinearCrossEntropyLoss nn.AdaptiveLogSoftmaxWithLoss
        nn.functional.ctc_loss nn.CTCLoss""",
    "linear/structural: shape, indexing, stacking, reductions by sum": """
        numpy.add numpy.subtract numpy.negative numpy.positive numpy.sum numpy.mean numpy.cumsum
        numpy.trace numpy.at numpy.at_add numpy.at_get numpy.at_set numpy.at_mul numpy.getitem numpy.take
        numpy.take_along_axis numpy.array_split numpy.atleast_1d numpy.atleast_2d
        numpy.atleast_3d numpy.broadcast_arrays numpy.broadcast_to numpy.column_stack
        numpy.concatenate numpy.diag numpy.diagflat numpy.diagonal numpy.dsplit numpy.dstack
        numpy.expand_dims numpy.flatten numpy.flip numpy.fliplr numpy.flipud numpy.hsplit
        numpy.hstack numpy.moveaxis numpy.pad numpy.ravel numpy.repeat numpy.reshape numpy.roll
        numpy.rot90 numpy.split numpy.squeeze numpy.stack numpy.swapaxes numpy.tile
        numpy.transpose numpy.tril numpy.triu numpy.vsplit numpy.vstack
        numpy.linalg.matrix_transpose numpy.linalg.trace numpy.linalg.diagonal
        numpy.real numpy.imag numpy.conj numpy.conjugate numpy.real_if_close facade.real facade.imag facade.conj
        facade.conj_physical facade.view_as_real facade.view_as_complex facade.complex
        numpy.nansum numpy.nanmean numpy.nancumsum numpy.rollaxis numpy.append numpy.row_stack
        numpy.permute_dims numpy.concat numpy.unstack numpy.matrix_transpose numpy.gradient numpy.trapezoid
        numpy.ediff1d numpy.cumulative_sum numpy.deg2rad numpy.radians numpy.rad2deg numpy.degrees numpy.ldexp
        numpy.average numpy.copy numpy.logspace numpy.geomspace
        numpy.delete numpy.insert numpy.put numpy.put_along_axis numpy.place numpy.fill_diagonal numpy.compress
        numpy.extract numpy.resize numpy.choose numpy.block numpy.trim_zeros
        facade.add facade.sub facade.subtract facade.neg facade.negative facade.sum facade.nansum
        facade.mean facade.cumsum facade.trace facade.reshape facade.flatten facade.unflatten
        facade.unsqueeze facade.squeeze facade.permute facade.transpose facade.swapaxes
        facade.swapdims facade.t facade.movedim facade.moveaxis facade.broadcast_to facade.narrow
        facade.split facade.tensor_split facade.chunk facade.unbind facade.gather
        facade.index_select facade.take facade.masked_select facade.flip facade.roll facade.tril
        facade.triu facade.diagonal facade.diag facade.clone facade.cat facade.concat
        facade.concatenate facade.stack facade.hstack facade.vstack
        nn.functional.flatten nn.functional.avg_pool2d nn.functional.nll_loss nn.Flatten
        nn.Identity nn.AvgPool2d nn.NLLLoss nn.Module nn.Sequential nn.ModuleList
        nn.ModuleDict nn.NLLLoss2d nn.Container nn.DataParallel""",
    "multilinear products (polynomial, no pieces)": """
        numpy.dot numpy.matmul numpy.inner numpy.outer numpy.tensordot numpy.vdot numpy.einsum
        numpy.linalg.matmul numpy.linalg.outer numpy.linalg.tensordot numpy.linalg.cross
        numpy.linalg.vecdot numpy.linalg.multi_dot numpy.linalg.matrix_power numpy.vecdot numpy.convolve
        numpy.correlate numpy.polyval numpy.vander numpy.cov
        scipy.signal.convolve scipy.signal.correlate scipy.signal.convolve2d scipy.signal.correlate2d
        scipy.signal.fftconvolve numpy.matvec numpy.vecmat numpy.poly numpy.polyadd numpy.polysub numpy.polymul
        numpy.polyder numpy.polyint numpy.polydiv
        facade.matmul facade.mm facade.bmm facade.mv facade.dot facade.inner facade.outer
        facade.ger facade.einsum facade.lerp
        nn.functional.linear nn.functional.bilinear nn.functional.conv2d nn.Linear nn.Conv2d
        nn.Bilinear nn.LazyLinear""",
    "convolutions (bilinear in input and weight) and affine_grid (linear in theta): "
    "tests/torch/test_nn_conv.py": """
        nn.functional.conv1d nn.functional.conv3d nn.functional.conv_transpose1d
        nn.functional.conv_transpose2d nn.functional.affine_grid nn.Conv1d nn.Conv3d
        nn.ConvTranspose1d nn.ConvTranspose2d nn.functional.conv_transpose3d nn.functional.conv_tbc
        nn.ConvTranspose3d nn.LazyConv1d nn.LazyConv2d nn.LazyConv3d nn.LazyConvTranspose1d
        nn.LazyConvTranspose2d nn.LazyConvTranspose3d""",
    "linear in the input with fixed routing: padding, pixel (un)shuffling, sliding blocks, average "
    "and adaptive-average pooling, max unpooling (the indices only route), resampling (fixed taps "
    "and weights): tests/torch/test_nn_conv.py": """
        nn.functional.pad nn.functional.pixel_shuffle nn.functional.pixel_unshuffle
        nn.functional.unfold nn.functional.fold nn.functional.avg_pool1d
        nn.functional.adaptive_avg_pool1d nn.functional.adaptive_avg_pool2d
        nn.functional.adaptive_avg_pool3d nn.functional.max_unpool1d nn.functional.max_unpool2d nn.functional.interpolate
        nn.functional.avg_pool3d nn.functional.max_unpool3d nn.functional.channel_shuffle
        nn.functional.native_channel_shuffle nn.AvgPool3d nn.MaxUnpool3d nn.ChannelShuffle
        nn.functional.upsample nn.functional.upsample_nearest nn.functional.upsample_bilinear
        nn.ConstantPad1d nn.ConstantPad2d nn.ConstantPad3d nn.ZeroPad1d nn.ZeroPad2d nn.ZeroPad3d
        nn.ReflectionPad1d nn.ReflectionPad2d nn.ReflectionPad3d nn.ReplicationPad1d
        nn.ReplicationPad2d nn.ReplicationPad3d nn.CircularPad1d nn.CircularPad2d nn.CircularPad3d
        nn.PixelShuffle nn.PixelUnshuffle nn.Unfold nn.Fold nn.AvgPool1d nn.AdaptiveAvgPool1d
        nn.AdaptiveAvgPool2d nn.AdaptiveAvgPool3d nn.MaxUnpool1d nn.MaxUnpool2d nn.Upsample nn.UpsamplingNearest2d
        nn.UpsamplingBilinear2d""",
    "special functions JAX lacks, each one primitive with closed-form derivative rules (Bessel "
    "recurrences, densities, inverse-function rules), no pieces: tests/scipy/test_special.py checks "
    "them against mpmath (log_expit is one smooth logaddexp; psi is digamma)": """
        scipy.special.psi scipy.special.j0 scipy.special.j1 scipy.special.jv scipy.special.jn
        scipy.special.y0 scipy.special.y1 scipy.special.yv scipy.special.yn scipy.special.iv
        scipy.special.stdtr scipy.special.stdtrit scipy.special.erfcinv scipy.special.log_expit""",
    "i0 is scipy.special.i0's primitive, with closed-form rules and no pieces (at 0 its second "
    "derivative is 1/2, where jnp.i0's is 0: tests/numpy/test_nanreductions_calculus.py)": "numpy.i0",
    "Student's t CDFs (JAX has none): one primitive each (stdtr, stdtrit); logcdf and logsf take "
    "log(p) or log1p(-q) at p = 1/2, two exact forms of one function, checked at the switch "
    "against mpmath in tests/scipy/stats/test_edges.py": """
        scipy.stats.t.cdf scipy.stats.t.logcdf scipy.stats.t.sf scipy.stats.t.logsf scipy.stats.t.ppf""",
    "ODE solutions and quadrature: odeint's step sizes are chosen from the values but held fixed "
    "under differentiation, and its reverse mode is the adjoint ODE (tests/scipy/test_integrate.py); "
    "trapezoid is linear": "scipy.integrate.odeint scipy.integrate.trapezoid",
    "matrix functions with their own primitives and rules (tests/numpy/test_linalg.py)": """
        numpy.linalg.inv numpy.linalg.solve numpy.linalg.det numpy.linalg.slogdet
        numpy.linalg.cholesky numpy.linalg.qr numpy.linalg.tensorinv numpy.linalg.tensorsolve
        scipy.linalg.solve_triangular scipy.linalg.solve_banded scipy.linalg.solve_sylvester
        scipy.linalg.sqrtm scipy.linalg.expm scipy.linalg.expm_frechet scipy.linalg.cholesky
        scipy.linalg.cho_factor scipy.linalg.cho_solve scipy.linalg.inv scipy.linalg.det
        scipy.linalg.solve""",
    "LU and QR with their own primitives and rules (the LU pivots are held fixed, as JAX), and the "
    "special matrices, gathers of their inputs (companion's first row a rational function of them): "
    "tests/scipy/test_linalg.py": """
        scipy.linalg.lu scipy.linalg.lu_factor scipy.linalg.lu_solve scipy.linalg.qr
        scipy.linalg.qr_multiply scipy.linalg.toeplitz scipy.linalg.circulant scipy.linalg.hankel
        scipy.linalg.leslie scipy.linalg.companion scipy.linalg.fiedler_companion
        scipy.linalg.convolution_matrix""",
    "special functions with one primitive each and closed-form derivative rules (integrals' "
    "integrands, the hypergeometric and zeta recurrences, w' = -2zw + 2i/sqrt(pi), the Legendre "
    "equation; boxcox through lmbda = 0 by exprel_n, no switch): tests/scipy/test_special_smooth.py "
    "checks them at orders 1-2 in both modes": """
        scipy.special.exp1 scipy.special.expn scipy.special.sici scipy.special.fresnel scipy.special.hyp1f1
        scipy.special.hyp2f1 scipy.special.zeta scipy.special.boxcox scipy.special.boxcox1p
        scipy.special.wofz scipy.special.sph_harm_y""",
    "linear transforms: the DFTs (complex results, JAX's convention: tests/ops/test_fft.py checks them "
    "through every transform, against JAX) and the "
    "frequency shifts": """
        numpy.fft.fft numpy.fft.ifft numpy.fft.fft2 numpy.fft.ifft2 numpy.fft.fftn numpy.fft.ifftn
        numpy.fft.rfft numpy.fft.irfft numpy.fft.rfft2 numpy.fft.irfft2 numpy.fft.rfftn
        numpy.fft.irfftn numpy.fft.hfft numpy.fft.ihfft numpy.fft.fftshift numpy.fft.ifftshift""",
    "linear transforms: scipy.fft's Hermitian DFTs over several axes (irfftn/rfftn of the conjugate; "
    "tests/numpy/test_fft_hermitian.py checks them against scipy.fft and at orders 1-2)": """
        numpy.fft.hfft2 numpy.fft.hfftn numpy.fft.ihfft2 numpy.fft.ihfftn""",
    "special functions JAX lacks, one primitive each over scipy.special with closed-form derivative "
    "rules (the K recurrences, Ai'' = x Ai, the polynomials' differentiation identities at clamped "
    "degrees, no pieces in x): tests/cases/special_more.py checks them against SciPy at orders 1-2": """
        scipy.special.k0 scipy.special.k1 scipy.special.k0e scipy.special.k1e scipy.special.kv
        scipy.special.kn scipy.special.kve scipy.special.airy scipy.special.eval_chebyt
        scipy.special.eval_chebyu scipy.special.eval_sh_chebyt scipy.special.eval_sh_chebyu
        scipy.special.eval_legendre scipy.special.eval_gegenbauer scipy.special.eval_hermite
        scipy.special.eval_hermitenorm scipy.special.eval_laguerre scipy.special.eval_genlaguerre""",
    "smooth recurrences and attention: sigmoid/tanh gates, softmax and matmuls; masks (packed "
    "sequences, attention masks) select by fixed patterns, never by value. tests/torch/test_nn_rnn.py and "
    "tests/torch/test_nn_attention.py compare gradients and a second-order quantity with PyTorch's": """
        nn.LSTM nn.GRU nn.LSTMCell nn.GRUCell nn.RNNBase nn.RNNCellBase nn.MultiheadAttention
        nn.functional.scaled_dot_product_attention nn.functional.multi_head_attention_forward""",
})


# --- cases ------------------------------------------------------------------------------------

@dataclass
class Case:
    """sum(w * fn(lib, *(args + t * dirs))) as a function of t, differentiated at t = 0.

    oracle "jax": fn(np, special, *xs) with (fgrad.numpy, fgrad.scipy.special) or
    (jax.numpy, jax.scipy.special). oracle "torch": fn(L, Fn, *xs) with L = fgrad or torch
    (Tensors) and Fn their nn.functional; with functional=True also L = None on plain arrays
    under fgrad's transforms."""
    id: str
    covers: tuple
    oracle: str
    fn: Callable
    args: tuple
    functional: bool = False
    torch_order: int = ORDER
    dirs: tuple = field(default=None)


def _arr(*xs):
    return tuple(onp.asarray(x, onp.float64) for x in xs)


CASES: list[Case] = []


def case(id, covers, oracle, fn, *args, functional=False, torch_order=ORDER):
    CASES.append(Case(id, tuple(covers.split()), oracle, fn, _arr(*args), functional, torch_order))


# unary elementwise functions at 0, +-1 (or in their domain), against JAX and PyTorch
_POINTS = {"default": [0.0, 1.0, -1.0], "log": [1.0, 0.5, 2.0], "sqrt": [1.0, 0.25, 4.0],
           "unit": [0.0, 0.5, -0.5], "acosh": [2.0, 1.5, 3.0], "recip": [1.0, -2.0, 0.5],
           "cbrt": [1.0, -1.0, 8.0], "log1p": [0.0, 1.0, -0.5], "logit": [0.5, 0.25, 0.9]}
_UNARY = {  # fgrad.numpy name: (domain, facade name or None)
    "sin": ("default", "sin"), "cos": ("default", "cos"), "tan": ("default", "tan"),
    "arcsin": ("unit", "arcsin"), "arccos": ("unit", "arccos"), "arctan": ("default", "arctan"),
    "sinh": ("default", "sinh"), "cosh": ("default", "cosh"), "tanh": ("default", "tanh"),
    "arcsinh": ("default", "arcsinh"), "arccosh": ("acosh", "arccosh"),
    "arctanh": ("unit", "arctanh"), "exp": ("default", "exp"), "expm1": ("default", "expm1"),
    "exp2": ("default", "exp2"), "log": ("log", "log"), "log2": ("log", "log2"),
    "log10": ("log", "log10"), "log1p": ("log1p", "log1p"), "sqrt": ("sqrt", "sqrt"),
    "cbrt": ("cbrt", None), "square": ("default", "square"), "reciprocal": ("recip", "reciprocal"),
}
_FACADE_ONLY_UNARY = {"asin": "unit", "acos": "unit", "atan": "default", "asinh": "default",
                      "acosh": "acosh", "atanh": "unit", "rsqrt": "sqrt", "sigmoid": "default",
                      "erf": "default"}

for _name, (_dom, _tname) in _UNARY.items():
    case(f"numpy.{_name}", f"numpy.{_name}", "jax",
         lambda np, sp, x, _n=_name: getattr(np, _n)(x), _POINTS[_dom])
    if _tname:
        case(f"facade.{_tname}", f"facade.{_tname}", "torch",
             lambda L, Fn, x, _n=_tname: getattr(L, _n)(x), _POINTS[_dom])
for _tname, _dom in _FACADE_ONLY_UNARY.items():
    case(f"facade.{_tname}", f"facade.{_tname}", "torch",
         lambda L, Fn, x, _n=_tname: getattr(L, _n)(x), _POINTS[_dom])
for _name, _dom in {"erf": "default", "expit": "default", "logit": "logit"}.items():
    case(f"special.{_name}", f"scipy.special.{_name}", "jax",
         lambda np, sp, x, _n=_name: getattr(sp, _n)(x), _POINTS[_dom])

_TIES = ([0.0, 1.0, -3.0, 700.0, 0.0], [0.0, 1.0, -3.0, 700.0, 5.0])  # equal pairs, and one not

# logaddexp: the max/abs of the stable formula switch at x == y
case("logaddexp[ties]", "numpy.logaddexp", "jax", lambda np, sp, x, y: np.logaddexp(x, y), *_TIES)
case("logaddexp[scalar]", "numpy.logaddexp", "jax", lambda np, sp, x: np.logaddexp(x, 0.0),
     [0.0, 1e-3, -2.0])
case("logaddexp2[ties]", "numpy.logaddexp2", "jax", lambda np, sp, x, y: np.logaddexp2(x, y), *_TIES)
case("facade.logaddexp[ties]", "facade.logaddexp facade.logaddexp2", "torch",
     lambda L, Fn, x, y: L.logaddexp(x, y) + L.logaddexp2(x, y), *_TIES)

# other binary elementwise functions, at equal arguments and at a zero base
_EQ = ([0.5, 1.0, 2.0], [0.5, 1.0, 2.0])
for _name in ("multiply", "divide", "true_divide", "power", "arctan2"):
    case(f"numpy.{_name}[ties]", f"numpy.{_name}", "jax",
         lambda np, sp, x, y, _n=_name: getattr(np, _n)(x, y), *_EQ)
for _name in ("mul", "multiply", "div", "divide", "true_divide", "pow", "atan2", "arctan2"):
    # PyTorch's third derivative of pow in both arguments is off by 2e-4 relative (JAX and
    # finite differences agree with fgrad; numpy.power[ties] checks order 3 against JAX)
    case(f"facade.{_name}[ties]", f"facade.{_name}", "torch",
         lambda L, Fn, x, y, _n=_name: getattr(L, _n)(x, y), *_EQ,
         torch_order=2 if _name == "pow" else ORDER)
case("power[zero_base]", "numpy.power", "jax",
     lambda np, sp, x: np.power(x, 2) + np.power(x, 3) + np.power(x, 3.0) + np.power(x, 4.0),
     [0.0, 1.0, -1.0])
case("facade.pow[zero_base]", "facade.pow facade.float_power", "torch",
     lambda L, Fn, x: L.pow(x, 2) + L.pow(x, 3) + L.pow(x, 3.0) + L.float_power(x, 4.0),
     [0.0, 1.0, -1.0])

# reductions: ties and zeros (prod's gradient is the product of the others: zero-safe)
_ROWS = [[0.0, 0.0, 2.0], [1.0, 1.0, 1.0], [0.0, 1.0, -2.0]]
case("prod[zeros]", "numpy.prod", "jax", lambda np, sp, x: np.prod(x, axis=1), _ROWS)
case("facade.prod[zeros]", "facade.prod", "torch", lambda L, Fn, x: L.prod(x, 1), _ROWS)
_TIED = [[1.0, 1.0, 2.0], [0.0, 0.0, 1.0], [3.0, -1.0, 3.0]]
case("var_std[ties]", "numpy.var numpy.std", "jax",
     lambda np, sp, x: np.var(x, axis=1) + np.std(x, axis=1, ddof=1), _TIED)
case("facade.var_std[ties]", "facade.var facade.std", "torch",
     lambda L, Fn, x: L.var(x, 1) + L.std(x, 1, unbiased=False), _TIED)
_TIED_LOGITS = [[0.0, 0.0, 0.0], [1.0, 1.0, -2.0], [500.0, 500.0, 499.0]]
case("special.logsumexp[ties]", "scipy.special.logsumexp", "jax",
     lambda np, sp, x: sp.logsumexp(x, axis=1), _TIED_LOGITS)
case("special.logsumexp[b]", "scipy.special.logsumexp", "jax",
     lambda np, sp, x: sp.logsumexp(x, axis=0, b=np.asarray([[1.0], [2.0], [0.5]])), _TIED_LOGITS)
case("special.softmax[ties]", "scipy.special.softmax", "jax",
     lambda np, sp, x: sp.softmax(x, axis=1) * np.asarray([1.0, 2.0, 3.0]), _TIED_LOGITS)
case("special.log_softmax[ties]", "scipy.special.log_softmax", "jax",
     lambda np, sp, x: sp.log_softmax(x, axis=1) * np.asarray([1.0, 2.0, 3.0]), _TIED_LOGITS)

# fgrad.scipy.special: xlogy/xlog1py at x = 0 (where their y-partials are masked), 1/gamma at
# the switch of its derivative rule (1/2), and the smooth families at ordinary points (one
# primitive each: the third derivatives check the rules' own derivative rules)
case("special.xlogy[x=0]", "scipy.special.xlogy scipy.special.xlog1py", "jax",
     lambda np, sp, x, y: sp.xlogy(x, y) + sp.xlog1py(x, y), [0.0, 0.0, 1.5], [0.5, 2.0, 1.0])
case("special.rgamma[switch]", "scipy.special.rgamma", "jax",
     lambda np, sp, x: sp.rgamma(x) if np is fnp else 1.0 / sp.gamma(x), [0.5, 1.5, 0.25])
case("special.gamma_family", "scipy.special.gamma scipy.special.gammaln scipy.special.digamma "
     "scipy.special.polygamma scipy.special.multigammaln scipy.special.beta scipy.special.betaln", "jax",
     lambda np, sp, x, y: sp.gamma(x) + sp.gammaln(x) + sp.digamma(x) + sp.polygamma(2, x)
     + sp.multigammaln(x + 2.0, 3) + sp.beta(x, y) + sp.betaln(x, y), [0.7, 2.5, 4.0], [1.5, 0.6, 3.0])
case("special.incomplete", "scipy.special.betainc scipy.special.gammainc scipy.special.gammaincc", "jax",
     lambda np, sp, x: sp.betainc(2.5, 1.5, x) + sp.gammainc(1.5, 3.0 * x) + sp.gammaincc(0.5, x),
     [0.2, 0.5, 0.9])
case("special.error_functions", "scipy.special.erfc scipy.special.erfcx scipy.special.erfinv "
     "scipy.special.ndtr scipy.special.ndtri scipy.special.log_ndtr", "jax",
     lambda np, sp, x: sp.erfc(x) + sp.erfcx(x) + sp.erfinv(0.9 * x) + sp.ndtr(x) + sp.ndtri(0.5 + 0.4 * x)
     + sp.log_ndtr(x), [0.0, 0.5, -0.8])
case("special.i0_i1", "scipy.special.i0 scipy.special.i1", "jax",
     lambda np, sp, x: sp.i0(x) + sp.i1(x), [0.3, 1.5, -3.0])
# spence at z = 3/4, where its derivative switches from the quotient log(z) / (1 - z) to its series
# about 1 (JAX's spence is no oracle at z >= 1: its derivatives there are 0 or NaN; the values at
# z = 1, -1, 1/2, -2/3, are checked in tests/scipy/test_special_smooth.py)
case("special.spence[switch]", "scipy.special.spence", "jax", lambda np, sp, z: sp.spence(z), [0.75, 0.8, 0.5])
case("special.integrals", "scipy.special.expi scipy.special.dawsn scipy.special.owens_t "
     "scipy.special.poch scipy.special.loggamma", "jax",
     lambda np, sp, x: sp.expi(x) + sp.dawsn(x) + sp.owens_t(x, 0.7) + sp.poch(x, 1.3)
     + sp.loggamma(x), [0.3, 1.5, 2.5])


# fgrad.scipy.stats against jax.scipy.stats: every function JAX has, at ordinary points and at
# the medians, where logcdf/logsf switch between log(p) and log1p(-q); shape parameters of the
# CDFs are constants (they have no derivative)
def _stats(np):
    return fst if np is fnp else jst


def _sum(fns, *args):
    return sum(f(*args) for f in fns)


def _dist(np, d, names):
    return [getattr(getattr(_stats(np), d), n) for n in names.split()]


_NORM = "logpdf pdf cdf logcdf sf logsf"
case("stats.norm", " ".join(f"scipy.stats.norm.{n}" for n in (_NORM + " ppf isf").split()), "jax",
     lambda np, sp, x, m, s: _sum(_dist(np, "norm", _NORM), x, m, s)
     + _sum(_dist(np, "norm", "ppf isf"), sp.expit(x), m, s), [0.0, -1.0, 2.0], [0.1, -0.2, 0.3], [1.2, 0.8, 2.0])
case("stats.t.pdf", "scipy.stats.t.logpdf scipy.stats.t.pdf", "jax",
     lambda np, sp, x, df, m, s: _sum(_dist(np, "t", "logpdf pdf"), x, df, m, s),
     [0.0, 1.0, -2.0], [1.0, 3.5, 30.0], [0.1, -0.2, 0.3], [1.2, 0.8, 2.0])
_CDFS = "cdf sf logcdf logsf"
for _d, _median, _shape in (("gamma", 2.175730095547763, (2.5,)), ("chi2", 2.3659738843753377, (3.0,)),
                            ("beta", 0.647547720122869, (2.5, 1.5))):
    case(f"stats.{_d}", " ".join(f"scipy.stats.{_d}.{n}" for n in ("logpdf pdf " + _CDFS).split()), "jax",
         lambda np, sp, x, *p, _d=_d, _shape=_shape: _sum(_dist(np, _d, "logpdf pdf"), x, *p)
         + _sum(_dist(np, _d, _CDFS), x, *_shape), [_median, 0.3, 0.8], *([[v, v + 0.5, v + 1.0]] for v in _shape))
_K = onp.array([2.0, 0.0, 5.0])


def _poisson(np, sp, mu):
    P = _stats(np).poisson
    out = P.logpmf(_K, mu) + P.pmf(_K, mu) + P.cdf(_K, mu)
    if np is fnp:
        return out + P.sf(_K, mu) + P.logcdf(_K, mu) + P.logsf(_K, mu)
    sf = sp.gammainc(_K + 1.0, mu)  # JAX has no poisson.sf/logcdf/logsf: their definitions
    return out + sf + np.log(P.cdf(_K, mu)) + np.log(sf)


# mu = 2.674...: P(K <= 2) = 1/2, the switch of logcdf and logsf
case("stats.poisson", " ".join(f"scipy.stats.poisson.{n}" for n in "logpmf pmf cdf sf logcdf logsf".split()),
     "jax", _poisson, [2.674060313723559, 1.0, 6.0])
case("stats.dirichlet", "scipy.stats.dirichlet.logpdf scipy.stats.dirichlet.pdf", "jax",
     lambda np, sp, z, a: _sum(_dist(np, "dirichlet", "logpdf pdf"), sp.softmax(z, axis=0), a),
     [[0.1, -0.3], [0.5, 0.2], [-0.4, 0.0]], [0.8, 2.0, 3.5])


def _mvn(np, sp, x, m, c):
    cov = c @ np.swapaxes(c, 0, 1) + 3.0 * np.eye(3)
    out = _sum(_dist(np, "multivariate_normal", "logpdf pdf"), x, m, cov)
    if np is fnp:
        return out + fst.multivariate_normal.entropy(m, cov)
    return out + 0.5 * (3 * (1.0 + onp.log(2 * onp.pi)) + np.linalg.slogdet(cov)[1])  # (JAX has no entropy)


case("stats.multivariate_normal", "scipy.stats.multivariate_normal.logpdf scipy.stats.multivariate_normal.pdf "
     "scipy.stats.multivariate_normal.entropy", "jax", _mvn,
     [[0.1, -0.5, 1.0], [0.3, 0.2, -0.1]], [0.0, 0.5, -0.5], [[1.0, 0.2, 0.0], [0.1, 0.8, 0.3], [-0.2, 0.0, 1.1]])
# the distributions added for issue 12, against jax.scipy.stats, at the points where their
# implementations switch between exact forms: log1mexp at log 2 (expon.logcdf at y = log 2,
# pareto.logcdf at b log y = log 2, gumbel logsf at exp(-y) = log 2), log_probability at the
# medians, the tails of cauchy's quantile at q = 1/4 and 3/4, truncnorm's normal mass across 0.
# SciPy functions JAX lacks are compared with their definitions written in jax.numpy.
_LN2 = float(onp.log(2.0))
_LOC3, _SCALE3 = [0.1, -0.2, 0.3], [1.2, 0.8, 2.0]


def _loc_scale_case(d, names, points, extra=None):
    """A case summing `names` of distribution d (with loc, scale) at `points`; `extra` (name:
    fn(jnp, jss, x, m, s)) gives JAX's side of the functions JAX lacks."""
    extra = extra or {}

    def fn(np, sp, x, m, s):
        out = 0.0
        for n in names.split():
            if np is fnp or n not in extra:
                out = out + getattr(getattr(_stats(np), d), n)(x, m, s)
            else:
                out = out + extra[n](np, sp, x, m, s)
        return out
    case(f"stats.{d}", " ".join(f"scipy.stats.{d}.{n}" for n in names.split()), "jax", fn, points, _LOC3, _SCALE3)


_L8 = "logpdf pdf cdf logcdf sf logsf ppf isf"
_J = lambda d, n: getattr(getattr(jst, d), n)  # noqa: E731  (JAX's function, for `extra`)
# ppf/isf take probabilities: the q-functions see expit(x) through a second call
_loc_scale_case("expon", "logpdf pdf cdf logcdf sf logsf", [_LN2 * 1.2 + 0.1, 0.5, 3.0])
_loc_scale_case("cauchy", "logpdf pdf cdf logcdf sf logsf", [0.1, -2.0, 5.0])
_loc_scale_case("logistic", "logpdf pdf cdf logcdf sf logsf", [0.1, -2.0, 5.0], {
    "logcdf": lambda np, sp, x, m, s: np.log(sp.expit((x - m) / s)),
    "logsf": lambda np, sp, x, m, s: np.log(sp.expit(-(x - m) / s))})
# (jax.scipy.stats.gumbel_* meet a float0 at third order: their definitions in jax.numpy instead)
_GUMBEL = {"logpdf": lambda np, y: -y - np.exp(-y), "pdf": lambda np, y: np.exp(-y - np.exp(-y)),
           "cdf": lambda np, y: np.exp(-np.exp(-y)), "logcdf": lambda np, y: -np.exp(-y),
           "sf": lambda np, y: -np.expm1(-np.exp(-y)), "logsf": lambda np, y: np.log(-np.expm1(-np.exp(-y)))}
_GUMBEL_L = {"logpdf": "logpdf", "pdf": "pdf", "cdf": "sf", "logcdf": "logsf", "sf": "cdf", "logsf": "logcdf"}


def _gumbel(name, sign):
    """JAX's side of gumbel_r (sign 1) or gumbel_l (sign -1) function `name`."""
    g = _GUMBEL[name if sign > 0 else _GUMBEL_L[name]]

    def fn(np, sp, x, m, s):
        out = g(np, sign * (x - m) / s)
        return out - np.log(s) if name == "logpdf" else out / s if name == "pdf" else out
    return fn


_loc_scale_case("gumbel_r", "logpdf pdf cdf logcdf sf logsf", [0.1 - 1.2 * onp.log(_LN2), -1.0, 2.0],
                {n: _gumbel(n, 1) for n in _GUMBEL})
_loc_scale_case("gumbel_l", "logpdf pdf cdf logcdf sf logsf", [0.1 + 1.2 * onp.log(_LN2), -1.0, 2.0],
                {n: _gumbel(n, -1) for n in _GUMBEL})


def _quantiles(d, extra=None):
    """ppf and isf of d at q = 1/4, 3/4 (cauchy's switches), 1/2 and 0.1."""
    extra = extra or {}

    def fn(np, sp, q, m, s):
        out = 0.0
        for n in ("ppf", "isf"):
            if np is fnp or n not in extra:
                out = out + getattr(getattr(_stats(np), d), n)(q, m, s)
            else:
                out = out + extra[n](np, sp, q, m, s)
        return out
    case(f"stats.{d}.quantiles", f"scipy.stats.{d}.ppf scipy.stats.{d}.isf", "jax", fn,
         [0.25, 0.75, 0.5], _LOC3, _SCALE3)
    CASES[-1].args = (onp.array([0.25, 0.75, 0.1]),) + CASES[-1].args[1:] if d == "cauchy" else CASES[-1].args


_quantiles("expon", {"isf": lambda np, sp, q, m, s: m - s * np.log(q)})
_quantiles("cauchy")
_quantiles("logistic")
_quantiles("gumbel_r", {"isf": lambda np, sp, q, m, s: m - s * np.log(-np.log1p(-q)),
                        "ppf": lambda np, sp, q, m, s: m - s * np.log(-np.log(q))})
_quantiles("gumbel_l", {"isf": lambda np, sp, q, m, s: m + s * np.log(-np.log(q)),
                        "ppf": lambda np, sp, q, m, s: m + s * np.log(-np.log1p(-q))})


def _pareto(np, sp, x, b):
    P = _stats(np).pareto
    out = sum(getattr(P, n)(x, b, 0.1, 1.2) for n in "logpdf pdf cdf logcdf sf logsf ppf".split() if n != "ppf")
    out = out + P.ppf(sp.expit(x - 2.0), b, 0.1, 1.2)
    q = sp.expit(x - 2.0)
    return out + (P.isf(q, b, 0.1, 1.2) if np is fnp else 0.1 + 1.2 * q ** (-1.0 / b))


# b log y = log 2 at x = 0.1 + 1.2 * 2 ** (1 / 2.5) for b = 2.5: the switch of log1mexp
case("stats.pareto", " ".join(f"scipy.stats.pareto.{n}" for n in _L8.split()), "jax", _pareto,
     [0.1 + 1.2 * 2 ** (1 / 2.5), 2.0, 4.0], [2.5, 1.0, 3.0])


def _truncnorm(np, sp, x, a, b):
    T = _stats(np).truncnorm
    return sum(getattr(T, n)(x, a, b, 0.1, 1.2) for n in "logpdf pdf cdf logcdf sf logsf".split())


# bounds on both sides of 0 and both left of it; x at the median of the first (logcdf/logsf switch)
case("stats.truncnorm", " ".join(f"scipy.stats.truncnorm.{n}" for n in "logpdf pdf cdf logcdf sf logsf".split()),
     "jax", _truncnorm, [0.1 + 1.2 * 0.1236084733725838, -0.5, -1.5], [-1.0, -2.0, -3.0], [1.5, 0.5, -1.0])
case("stats.vonmises_wrapcauchy", "scipy.stats.vonmises.logpdf scipy.stats.vonmises.pdf "
     "scipy.stats.wrapcauchy.logpdf scipy.stats.wrapcauchy.pdf", "jax",
     lambda np, sp, x, k, c: _sum(_dist(np, "vonmises", "logpdf pdf"), x - 3.0, k)
     + _sum(_dist(np, "wrapcauchy", "logpdf pdf"), x, c), [0.5, 3.0, 6.0], [0.5, 2.0, 30.0], [0.2, 0.5, 0.9])
_KB = onp.array([0.0, 1.0, 1.0])
_KN = onp.array([0.0, 2.0, 5.0])


def _discrete(np, sp, p, n, a):
    S = _stats(np)
    out = S.bernoulli.logpmf(_KB, p) + S.bernoulli.pmf(_KB, p) + S.bernoulli.cdf(_KB - 1.0, p)
    out = out + S.binom.logpmf(_KN, 6.0, p) + S.binom.pmf(_KN, 6.0, p)
    out = out + S.nbinom.logpmf(_KN, n, p) + S.nbinom.pmf(_KN, n, p)
    out = out + S.geom.logpmf(_KN + 1.0, p) + S.geom.pmf(_KN + 1.0, p)
    return out + S.betabinom.logpmf(_KN, 6.0, a, n) + S.betabinom.pmf(_KN, 6.0, a, n)


# p = 0 and 1 are where xlogy/xlog1py mask their partials (k = 0 with p = 0 is not differentiable
# from both sides; the derivatives are checked inside (0, 1))
case("stats.discrete", "scipy.stats.bernoulli.logpmf scipy.stats.bernoulli.pmf scipy.stats.bernoulli.cdf "
     "scipy.stats.binom.logpmf scipy.stats.binom.pmf scipy.stats.nbinom.logpmf scipy.stats.nbinom.pmf "
     "scipy.stats.geom.logpmf scipy.stats.geom.pmf scipy.stats.betabinom.logpmf scipy.stats.betabinom.pmf", "jax",
     _discrete, [0.3, 0.5, 0.9], [0.7, 2.0, 5.0], [0.5, 1.5, 3.0])
case("stats.multinomial", "scipy.stats.multinomial.logpmf scipy.stats.multinomial.pmf", "jax",
     lambda np, sp, z: _sum(_dist(np, "multinomial", "logpmf pmf"), onp.array([1, 0, 2]), 3,
                            sp.softmax(z, axis=-1)), [0.1, -0.3, 0.5])  # (JAX's x is one vector of counts)
# JAX sums the series up to mu + 20 below mu = 10, and to mu + 10 sqrt(mu) + 20 below 100: exact
# to 1e-12 there (fgrad switches to its asymptotic series at 200: tests/scipy/stats/test_distributions.py)
case("stats.poisson.entropy", "scipy.stats.poisson.entropy", "jax",
     lambda np, sp, mu: _stats(np).poisson.entropy(mu), [0.5, 3.0, 40.0])
case("stats.sem[ties]", "scipy.stats.sem", "jax",
     lambda np, sp, x: _stats(np).sem(x, axis=1) + _stats(np).sem(x, axis=0, ddof=0), _TIED)
case("facade.logsumexp_softmax[ties]", "facade.logsumexp facade.softmax facade.log_softmax",
     "torch", lambda L, Fn, x: L.logsumexp(x, 1, keepdim=True) + L.softmax(x, 1) * 2.0
     + L.log_softmax(x, 1) * L.tensor([1.0, 2.0, 3.0], dtype=x.dtype), _TIED_LOGITS)

# norms with zero entries (smooth there unless the whole vector is 0, SPEC 3b)
_SPARSE = [[0.0, 1.0, -0.5], [0.0, 0.0, 2.0]]
case("linalg.norm[zeros]", "numpy.linalg.norm", "jax",
     lambda np, sp, x: np.linalg.norm(x) + np.linalg.norm(x, axis=1) + np.linalg.norm(x, ord=4, axis=1)
     + np.linalg.norm(x, ord="fro"), _SPARSE)
case("linalg.vector_matrix_norm[zeros]", "numpy.linalg.vector_norm numpy.linalg.matrix_norm", "jax",
     lambda np, sp, x: np.linalg.vector_norm(x) + np.linalg.vector_norm(x, axis=1, ord=4)
     + np.linalg.matrix_norm(x), _SPARSE)
case("facade.norm[zeros]", "facade.norm", "torch",
     lambda L, Fn, x: L.norm(x) + L.norm(x, dim=1) + L.norm(x, p=4, dim=1), _SPARSE)

# fgrad.torch.nn.functional against torch.nn.functional, on Tensors and (functional=True) arrays
_SP = [0.0, 1e-3, -1.0, 2.5, 3.0, -30.0]
for _kw in ({}, {"beta": 2.0, "threshold": 5.0}, {"beta": 0.5, "threshold": 1.0},
            {"beta": -1.5, "threshold": 20.0}):
    case(f"F.softplus{_kw or ''}", "nn.functional.softplus", "torch",
         lambda L, Fn, x, _kw=_kw: Fn.softplus(x, **_kw), _SP, functional=True)
# exactly at beta x == threshold: PyTorch's convention (value and first derivative smooth,
# higher derivatives 0), and just either side of it
case("F.softplus[at_threshold]", "nn.functional.softplus", "torch",
     lambda L, Fn, x: Fn.softplus(x, beta=2.0, threshold=5.0), [2.5, 2.5 - 1e-6, 2.5 + 1e-6],
     functional=True)
for _name in ("sigmoid", "tanh"):
    case(f"F.{_name}", f"nn.functional.{_name}", "torch",
         lambda L, Fn, x, _n=_name: getattr(Fn, _n)(x), [0.0, 1.0, -1.0], functional=True)
case("F.softmax[ties]", "nn.functional.softmax nn.functional.log_softmax", "torch",
     lambda L, Fn, x: Fn.softmax(x, dim=1) * 2.0 + Fn.log_softmax(x, dim=-1), _TIED_LOGITS,
     functional=True)


def _target(L, data, dtype=None):
    if L is None:
        return onp.asarray(data, dtype)
    return L.tensor(data) if dtype is None else L.tensor(data, dtype=getattr(L, dtype))


case("F.cross_entropy[ties]", "nn.functional.cross_entropy", "torch",
     lambda L, Fn, x: Fn.cross_entropy(x, _target(L, [0, 2, 1])) + Fn.cross_entropy(
         x, _target(L, [1, 1, 0]), label_smoothing=0.1, reduction="sum")
     + Fn.cross_entropy(x, _target(L, [[0.5, 0.5, 0.0]] * 3, "float64")), _TIED_LOGITS,
     functional=True)
case("F.mse_loss[equal]", "nn.functional.mse_loss", "torch",
     lambda L, Fn, x, y: Fn.mse_loss(x, y), [0.0, 1.0, -2.0], [0.0, 1.0, -2.0], functional=True)
# PyTorch's batch norm is right to order 2 only (its double backward is not differentiated
# exactly); order 3 is checked against JAX on the textbook formula
_BN = [[1.0, 0.0], [1.0, 0.0], [2.0, 3.0]]
case("F.batch_norm[ties]", "nn.functional.batch_norm", "torch",
     lambda L, Fn, x: Fn.batch_norm(x, None, None, training=True), _BN, functional=True,
     torch_order=2)


def _batch_norm(np, sp, x):
    if np is fnp:
        return F.batch_norm(x, None, None, training=True)
    centered = x - np.mean(x, axis=0, keepdims=True)
    return centered / np.sqrt(np.mean(centered * centered, axis=0, keepdims=True) + 1e-5)


case("F.batch_norm[ties,jax]", "nn.functional.batch_norm", "jax", _batch_norm, _BN)

# fgrad.torch.nn layers against torch.nn
for _layer, _make, _pts in (
        ("Softmax", lambda nn: nn.Softmax(dim=1), _TIED_LOGITS),
        ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=1), _TIED_LOGITS),
        ("Sigmoid", lambda nn: nn.Sigmoid(), [0.0, 1.0]),
        ("Tanh", lambda nn: nn.Tanh(), [0.0, 1.0]),
        ("BatchNorm1d", lambda nn: nn.BatchNorm1d(2, affine=False, track_running_stats=False),
         [[1.0, 0.0], [1.0, 0.0], [2.0, 3.0]]),
        ("BatchNorm2d", lambda nn: nn.BatchNorm2d(1, affine=False, track_running_stats=False),
         [[[[1.0, 0.0]]], [[[1.0, 0.0]]], [[[2.0, 3.0]]]])):
    case(f"nn.{_layer}", f"nn.{_layer}", "torch",
         lambda L, Fn, x, _make=_make: _make(L.nn)(x), _pts,
         torch_order=2 if _layer.startswith("BatchNorm") else ORDER)
case("nn.losses[ties]", "nn.CrossEntropyLoss nn.MSELoss", "torch",
     lambda L, Fn, x: L.nn.CrossEntropyLoss()(x, _target(L, [0, 2, 1])) + L.nn.MSELoss()(x, x * 0.5),
     _TIED_LOGITS)



def _lax_loops(np, sp, x):
    """scan, fori_loop and map (loops of static length: smooth bodies stay smooth), to third
    order through the loops' own derivative rules, against jax.lax."""
    L = fgrad.lax if np is fnp else jax.lax
    c, ys = L.scan(lambda c, xi: (np.tanh(c * xi + 0.5), c * xi), x[0], x, reverse=True)
    y = L.fori_loop(0, 3, lambda i, v: np.sin(v) * 0.9 + c, x)
    return y + L.map(lambda r: r * r, ys) + c


case("lax.loops", "lax.scan lax.fori_loop lax.map", "jax", _lax_loops, [0.0, 1.0, -1.0])


# lax's primitive functions at their kinks (0, equal arguments, the clamp bounds, tied maxima),
# against jax.lax: one case per function, so a mismatch names it
def _lax(np):
    return fgrad.lax if np is fnp else jax.lax


_LAX_KINKS = {
    "abs": (lambda L, x: L.abs(x), [0.0, 1.0, -1.0]),
    "max": (lambda L, x: L.max(x, x * 0.0), [0.0, 1.0, -1.0]),
    "min": (lambda L, x: L.min(x, -x), [0.0, 1.0, -1.0]),
    "clamp": (lambda L, x: L.clamp(-0.5, x, 0.5), [0.5, -0.5, 0.0]),
    "reduce_max": (lambda L, x: L.reduce_max(x, (0,)), [[1.0, 1.0, 0.0], [0.0, 2.0, 1.0]]),
    "reduce_min": (lambda L, x: L.reduce_min(x, (0,)), [[1.0, 1.0, 2.0], [0.0, 2.0, 1.0]]),
    "sort": (lambda L, x: L.sort(x * x) * x, [[1.0, -1.0, 0.5], [0.0, 2.0, 1.0]]),
    "pow": (lambda L, x: L.pow(x * x, 1.5), [0.0, 1.0, -1.0]),
    "select": (lambda L, x: L.select(x > 0, x * x, -x), [0.0, 1.0, -1.0]),
    "sign": (lambda L, x: L.sign(x) * x, [0.0, 1.0, -1.0]),
    # cumulative reductions at ties and zeros: fgrad scans as JAX differentiates (the same
    # grouping), so even the tie splits of cummax/cummin agree (tests/lax/test_cumulative.py)
    "cummax": (lambda L, x: L.cummax(x * x, 1) * x, [[1.0, -1.0, 1.0, 0.5, 1.0], [0.0, 2.0, 2.0, 1.0, 2.0]]),
    "cummin": (lambda L, x: L.cummin(x, 1, True), [[1.0, 1.0, 0.0, 1.0, 1.0], [0.0, 2.0, 2.0, 1.0, 0.0]]),
    "cumlogsumexp": (lambda L, x: L.cumlogsumexp(x, 1), [[1.0, 1.0, 1.0, 0.0], [0.0, 2.0, 2.0, 2.0]]),
    "cumprod": (lambda L, x: L.cumprod(x, 1, True), [[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 3.0, -1.0]]),
}
for _n, (_fn, _pts) in _LAX_KINKS.items():
    case(f"lax.{_n}", f"lax.{_n}", "jax", lambda np, sp, x, _fn=_fn: _fn(_lax(np), x), _pts)

# cumulative products through zeros (a scan of products: exact, as prod's), logcumsumexp at ties
# (a scan of logaddexp), (std, mean) and (var, mean) at ties, addcdiv at equal arguments
case("cumprod[zeros]", "numpy.cumprod", "jax", lambda np, sp, x: np.cumprod(x, axis=1), _ROWS)
case("facade.cumprod[zeros]", "facade.cumprod", "torch", lambda L, Fn, x: L.cumprod(x, 1), _ROWS)
# (PyTorch's third derivative of logcumsumexp is NaN (its backward takes logs of negative
# cotangents), so to order 2; fgrad's is logaddexp's, checked to order 3 against JAX above)
case("facade.logcumsumexp[ties]", "facade.logcumsumexp", "torch", lambda L, Fn, x: L.logcumsumexp(x, 1),
     _TIED_LOGITS, torch_order=2)
case("facade.std_var_mean[ties]", "facade.std_mean facade.var_mean", "torch",
     lambda L, Fn, x: L.stack(list(L.std_mean(x, 1)) + list(L.var_mean(x, 1, correction=0))), _TIED)
case("facade.addcdiv[ties]", "facade.addcdiv", "torch", lambda L, Fn, x, y: L.addcdiv(x, x, y + 3.0, value=0.5),
     *_EQ)

# sinc at 0 (its Maclaurin branch, exact to every order), NumPy 2's short names of the inverse
# functions, float_power at a zero base, NaN-ignoring products through zeros and variances at ties
case("numpy.sinc", "numpy.sinc", "jax", lambda np, sp, x: np.sinc(x), [0.0, 1.0, -0.5])
case("numpy.short_names", "numpy.acos numpy.asin numpy.atan numpy.acosh numpy.asinh numpy.atanh numpy.atan2 "
     "numpy.pow", "jax", lambda np, sp, x: np.acos(x) + np.asin(x) + np.atan(x) + np.acosh(x + 2.0) + np.asinh(x)
     + np.atanh(x) + np.atan2(x, x + 1.0) + np.pow(x + 1.0, x), _POINTS["unit"])
case("float_power[zero_base]", "numpy.float_power", "jax",
     lambda np, sp, x: np.float_power(x, 3.0) + np.float_power(x, 4.0), [0.0, 1.0, -1.0])
case("nanprod[zeros]", "numpy.nanprod numpy.nancumprod numpy.cumulative_prod", "jax",
     lambda np, sp, x: np.nanprod(x, axis=1) + np.nancumprod(x, axis=1)[:, -1] + np.cumulative_prod(x, axis=1)[:, 1],
     _ROWS)
case("nanvar_nanstd[ties]", "numpy.nanvar numpy.nanstd", "jax",
     lambda np, sp, x: np.nanvar(x, axis=1) + np.nanstd(x, axis=1, ddof=1), _TIED)

# layers added later, against torch.nn (appended here: the cases above keep their directions,
# drawn from their positions, so the stored JAX values still match their inputs)
for _layer, _make, _pts in (
        ("BatchNorm3d", lambda nn: nn.BatchNorm3d(1, affine=False, track_running_stats=False),
         [[[[[1.0, 0.0]]]], [[[[1.0, 0.0]]]], [[[[2.0, 3.0]]]]]),
        ("SyncBatchNorm", lambda nn: nn.SyncBatchNorm(2, affine=False, track_running_stats=False),
         [[1.0, 0.0], [1.0, 0.0], [2.0, 3.0]]),
        # the lazy forms infer num_features from the first input, then are the layers above
        ("LazyBatchNorm1d", lambda nn: nn.LazyBatchNorm1d(affine=False, track_running_stats=False),
         [[1.0, 0.0], [1.0, 0.0], [2.0, 3.0]]),
        ("LazyBatchNorm2d", lambda nn: nn.LazyBatchNorm2d(affine=False, track_running_stats=False),
         [[[[1.0, 0.0]]], [[[1.0, 0.0]]], [[[2.0, 3.0]]]]),
        ("LazyBatchNorm3d", lambda nn: nn.LazyBatchNorm3d(affine=False, track_running_stats=False),
         [[[[[1.0, 0.0]]]], [[[[1.0, 0.0]]]], [[[[2.0, 3.0]]]]]),
        # softmax over dim -3 of a (C, H, W) input: the rows of _TIED_LOGITS as its channels
        ("Softmax2d", lambda nn: nn.Softmax2d(), onp.asarray(_TIED_LOGITS).T[:, :, None].tolist())):
    case(f"nn.{_layer}", f"nn.{_layer}", "torch",
         lambda L, Fn, x, _make=_make: _make(L.nn)(x), _pts,
         torch_order=2 if "BatchNorm" in _layer else ORDER)

for _k, _c in enumerate(CASES):  # a direction per argument: equal arguments move apart
    _rng = onp.random.default_rng(_k)
    _c.dirs = tuple(_rng.uniform(-1.0, 1.0, a.shape) for a in _c.args)


# --- derivatives of t -> sum(w * f(x + t v)) ----------------------------------------------------

_W = onp.random.default_rng(7).uniform(0.5, 1.5, 64)  # weights of the outputs in the sum


def _fgrad_scalar_fn(c):
    """g(t) on fgrad's transforms (plain arrays)."""
    def g(t):
        xs = [fnp.add(a, fnp.multiply(t, v)) for a, v in zip(c.args, c.dirs)]
        y = c.fn(fnp, fss, *xs) if c.oracle == "jax" else c.fn(None, F, *xs)
        flat = fnp.ravel(y)
        n = fnp.shape(flat)[0]
        return fnp.sum(fnp.multiply(flat, _W[:n]))
    return g


def _nested(g, steps):
    """g differentiated len(steps) times, each step 'rev' (grad) or 'fwd' (jvp with tangent 1)."""
    fns = [g]
    for s in steps:
        h = fns[-1]
        if s == "rev":
            fns.append(fgrad.grad(h))
        else:
            fns.append(lambda t, h=h: fgrad.jvp(h, (t,), (onp.float64(1.0),))[1])
    return fns


MODES = {"rev": ["rev"] * ORDER, "fwd": ["fwd"] * ORDER, "rev-fwd-rev": ["rev", "fwd", "rev"],
         "fwd-rev-fwd": ["fwd", "rev", "fwd"]}  # steps, innermost first


def _fgrad_derivatives(c, mode):
    return [float(f(onp.float64(0.0))) for f in _nested(_fgrad_scalar_fn(c), MODES[mode])]


def _jax_derivatives(c):
    def g(t):
        xs = [jnp.asarray(a) + t * jnp.asarray(v) for a, v in zip(c.args, c.dirs)]
        y = jnp.ravel(c.fn(jnp, jss, *xs))
        return jnp.sum(y * _W[:y.shape[0]])
    fns = [g]
    for _ in range(ORDER):
        fns.append(jax.grad(fns[-1]))
    # one compiled function per case: much faster than compiling each op eagerly
    return [float(v) for v in jax.jit(lambda t: [f(t) for f in fns])(0.0)]


def _tensor_derivatives(L, c):
    """The same derivatives through a Tensor library's autograd (create_graph), L = fgrad or torch."""
    t = L.zeros((), dtype=L.float64, requires_grad=True)
    xs = [L.tensor(a, dtype=L.float64) + t * L.tensor(v, dtype=L.float64)
          for a, v in zip(c.args, c.dirs)]
    Fn = F if L is fgrad.torch else torch.nn.functional
    y = L.reshape(c.fn(L, Fn, *xs), (-1,))
    y = (y * L.tensor(_W[:y.shape[0]], dtype=L.float64)).sum()
    out = [float(y.detach())]
    for _ in range(ORDER):
        if not y.requires_grad:
            out.append(0.0)
            continue
        (y,) = L.autograd.grad(y, t, create_graph=True, allow_unused=True)
        if y is None:
            y = L.zeros((), dtype=L.float64)
        out.append(float(y.detach()))
    return out


def _close(ours, ref, what):
    onp.testing.assert_allclose(ours, ref, rtol=RTOL, atol=ATOL,
                                err_msg=f"{what}: derivatives of order 0..{ORDER}")


# JAX's derivatives for the "jax" cases, computed once with the JAX the oracle extra pins:
# compiling the third derivative of a scipy.stats function takes XLA longer than everything
# fgrad does here, so the default run compares with these stored values and CI's slow step
# recomputes them with JAX (test_stored_jax_derivatives_are_jax), so they cannot go stale.
# `python tests/api/test_kinks.py --store-jax` rewrites the file.
JAX_STORE = pathlib.Path(__file__).resolve().parents[1] / "data" / "kinks_jax_x64.json"
_JAX_CASES = [c for c in CASES if c.oracle == "jax"]


def _fingerprint(c) -> str:
    """A digest of a case's inputs (a stored value belongs to the inputs it was computed at)."""
    text = repr([(onp.asarray(a).dtype.str, onp.asarray(a).tolist()) for a in (*c.args, *c.dirs)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _stored_jax(c) -> list:
    store = json.loads(JAX_STORE.read_text())["cases"]
    entry = store.get(c.id)
    if entry is None or entry["inputs"] != _fingerprint(c):
        pytest.fail(f"{JAX_STORE.name} has no JAX derivatives for case {c.id!r} at its current inputs: "
                    f"regenerate them with `python tests/api/test_kinks.py --store-jax` (needs jax)")
    return [float(v) for v in entry["derivatives"]]


@pytest.mark.parametrize("c", _JAX_CASES, ids=lambda c: c.id)
def test_functional_matches_jax_at_kinks(c):
    ref = _stored_jax(c)
    for mode in MODES:
        _close(_fgrad_derivatives(c, mode), ref, f"{c.id} ({mode})")


@pytest.mark.slow
@pytest.mark.parametrize("c", _JAX_CASES, ids=lambda c: c.id)
def test_stored_jax_derivatives_are_jax(c):
    if jax is None:
        pytest.skip("jax is not installed")
    stored, live = _stored_jax(c), _jax_derivatives(c)
    # (another machine's XLA may round differently in the last bits)
    onp.testing.assert_allclose(stored, live, rtol=1e-11, atol=1e-14,
                                err_msg=f"{c.id}: stored JAX derivatives differ from this JAX's; "
                                        f"regenerate with `python tests/api/test_kinks.py --store-jax`")


def _store_jax_values() -> None:
    """Recompute every "jax" case's derivatives with the installed JAX and rewrite JAX_STORE."""
    cases = {}
    for c in _JAX_CASES:
        print(c.id, flush=True)
        cases[c.id] = {"inputs": _fingerprint(c), "derivatives": _jax_derivatives(c)}
    JAX_STORE.parent.mkdir(exist_ok=True)
    JAX_STORE.write_text(json.dumps({"jax": jax.__version__, "order": ORDER, "cases": cases}, indent=1) + "\n")


@pytest.mark.parametrize("c", [c for c in CASES if c.oracle == "torch"], ids=lambda c: c.id)
def test_facade_matches_torch_at_kinks(c):
    if torch is None:
        pytest.skip("torch is not installed")
    n = c.torch_order + 1
    ref = _tensor_derivatives(torch, c)[:n]
    _close(_tensor_derivatives(fgrad.torch, c)[:n], ref, f"{c.id} (Tensor facade)")
    if c.functional:
        for mode in MODES:
            _close(_fgrad_derivatives(c, mode)[:n], ref, f"{c.id} (arrays, {mode})")


# --- the bug reports, and properties a table of directional derivatives does not show ---------

def test_reported_values():
    g = fgrad.grad
    assert g(g(lambda x: fnp.logaddexp(x, 0.0)))(0.0) == pytest.approx(0.25, abs=1e-15)
    assert g(g(lambda x: F.softplus(x)))(0.0) == pytest.approx(0.25, abs=1e-15)
    x = fgrad.torch.tensor(0.0, dtype=fgrad.torch.float64, requires_grad=True)
    (d1,) = fgrad.torch.autograd.grad(F.softplus(x), x, create_graph=True)
    (d2,) = fgrad.torch.autograd.grad(d1, x)
    assert float(d2) == pytest.approx(0.25, abs=1e-15)
    h = fgrad.hessian(lambda v: fnp.logaddexp(v[0], v[1]))(onp.array([1.5, 1.5]))
    onp.testing.assert_allclose(h, 0.25 * onp.array([[1.0, -1.0], [-1.0, 1.0]]), atol=1e-15)


@pytest.mark.parametrize("dtype", [onp.float32, onp.float64])
def test_logaddexp_hessian_vmap_jit_at_ties(dtype):
    """The full Hessian (both arguments, every pair equal), under vmap and jit, in float32 too."""
    pts = onp.array([[0.0, 0.0], [2.0, 2.0], [-50.0, -50.0], [1.0, -1.0]], dtype)
    hess = fgrad.hessian(lambda v: fnp.logaddexp(v[0], v[1]))
    batched = fgrad.vmap(hess)(pts)
    jitted = fgrad.jit(hess)
    for p, hb in zip(pts, batched):
        s = 1.0 / (1.0 + onp.exp(-(float(p[0]) - float(p[1]))))
        want = s * (1 - s) * onp.array([[1.0, -1.0], [-1.0, 1.0]])
        tol = 1e-6 if dtype == onp.float32 else 1e-14
        onp.testing.assert_allclose(hb, want, atol=tol)
        onp.testing.assert_allclose(jitted(p), want, atol=tol)
        assert hb.dtype == dtype


def test_logaddexp_at_infinities():
    """NumPy's values; each argument's derivative is 1/2 where both are the same infinity."""
    inf = onp.inf
    x = onp.array([inf, -inf, inf, -inf, 0.0, onp.nan])
    y = onp.array([inf, -inf, 0.0, 0.0, -inf, 0.0])
    with onp.errstate(all="ignore"):
        want = onp.logaddexp(x, y)
    with onp.errstate(all="raise"):
        onp.testing.assert_array_equal(fnp.logaddexp(x, y), want)
        gx, gy = fgrad.vjp(fnp.logaddexp, x, y)[1](onp.ones(6))
    onp.testing.assert_array_equal(gx, [0.5, 0.5, 1.0, 0.0, 1.0, onp.nan])
    onp.testing.assert_array_equal(gy, [0.5, 0.5, 0.0, 1.0, 0.0, onp.nan])


def test_facade_binds_the_functional_primitives():
    """One implementation: the facade records the primitive the functional side binds."""
    jaxpr = str(fgrad.make_jaxpr(lambda x: F.softplus(x))(1.0))
    assert "softplus" in jaxpr and "max" not in jaxpr and "abs" not in jaxpr
    assert "logaddexp" in str(fgrad.make_jaxpr(lambda x: fnp.logaddexp(x, 0.0))(1.0))
    t = fgrad.torch.tensor([0.0, 1.0], requires_grad=True)
    assert type(F.softplus(t).grad_fn).__name__ == "SoftplusBackward0"
    assert type(fgrad.torch.logaddexp(t, t).grad_fn).__name__ == "LogaddexpBackward0"


# --- coverage of the public API ---------------------------------------------------------------

def _tested() -> set[str]:
    return {name for c in CASES for name in c.covers}


def test_every_public_function_is_tested_or_listed():
    listed = set(NON_SMOOTH) | set(NOT_DIFFERENTIABLE) | set(NO_KINKS)
    missing = sorted(public_api() - _tested() - listed)
    assert not missing, (
        f"{missing}: give each a case in tests/api/test_kinks.py (evaluated at the points where its "
        "implementation switches pieces: 0, equal arguments, thresholds), or list it in "
        "NON_SMOOTH, NOT_DIFFERENTIABLE or NO_KINKS with the reason")


def test_listings_are_current_and_disjoint():
    api = public_api()
    tables = {"NON_SMOOTH": NON_SMOOTH, "NOT_DIFFERENTIABLE": NOT_DIFFERENTIABLE,
              "NO_KINKS": NO_KINKS, "cases": dict.fromkeys(_tested(), "")}
    for name, table in tables.items():
        stale = sorted(set(table) - api)
        assert not stale, f"{name} names functions that no longer exist: {stale}"
    seen: dict[str, str] = {}
    for name, table in tables.items():
        for fn in table:
            assert fn not in seen, f"{fn} is in both {seen[fn]} and {name}"
            seen[fn] = name


if __name__ == "__main__" and "--store-jax" in sys.argv:
    _store_jax_values()
