"""Neural-network primitives: conv2d (grouped too), max/avg pooling, unfold/fold, relu,
linear, log_softmax, nll_loss (and cross_entropy built on the last two).

Every rule is written with fgrad ops, so derivatives of any order work. The primitives come
in closed families, each member's derivative being another member:
  * conv2d / conv2d_input_grad / conv2d_weight_grad: three bilinear maps, each the adjoint
    of the others in one argument (PyTorch's forward / grad-input / grad-weight split), all
    with `groups` (vmap folds per-example kernels into the groups);
  * unfold <-> fold (im2col / col2im), linear and mutually transposed;
  * resample <-> resample_transpose (fixed taps along one axis: interpolation, adaptive
    averaging), linear and mutually transposed;
  * max_pool2d_indices: where each window's maximum is (return_indices), no derivative;
  * max_pool2d -> max_pool2d_grad (routes the cotangent to the arg-max) <-> max_pool2d_gather
    (reads at the arg-max), the last two linear and each other's transposes;
  * avg_pool2d <-> avg_pool2d_grad, linear and mutually transposed;
  * relu -> relu_grad (ct where y > 0), linear in ct and its own transpose;
  * softplus -> softplus_grad (logistic(beta x)), whose derivative is written with fgrad ops.
Impls are CPU/GPU-agnostic NumPy code (xp), with CPU overrides where NumPy is slow:
convolutions run oneDNN's float32 kernels when its optional wheel is installed (onednn.py),
else pick im2col + one GEMM or an FFT by estimated cost and share intermediates
between the forward pass and the gradients (_Memo); relu and 2x2 max pooling use Numba
(fgrad.ops.numba_kernels).

Layouts follow PyTorch: images NCHW, convolution weights OIHW.

Conventions at non-differentiable points, PyTorch's (whose gradients fgrad.torch reproduces;
the README's table lists them with the others):
  * relu'(0) = 0; a NaN cotangent at an inactive unit is zeroed (JAX and PyTorch agree).
  * max pooling routes each window's cotangent to the *first* maximal element of the window
    (row-major order inside the window; NaN counts as maximal); ties are not split.

Modules: conv.py (the convolution family), pool.py (max and average pooling), unfold.py
(unfold/fold), resample.py (resample), dense.py (linear, addmm, relu, softplus, log_softmax, nll_loss, cross_entropy), _geometry.py (shared helpers). Each
primitive's impl, shape rule, jvp, vjp and batching rule sit together in one of them.
`conv_algorithm` ("auto", "gemm" or "fft") lives in conv.py, whose impls read it; it is read and
set through this package too (`fgrad.ops.nn.conv_algorithm = "gemm"`), which forwards it.
"""
from __future__ import annotations

import sys
import types

from . import conv as _conv
from .conv import (conv2d, conv2d_input_grad, conv2d_input_grad_p, conv2d_p, conv2d_weight_grad,
                   conv2d_weight_grad_p)
from .pool import (avg_pool2d, avg_pool2d_grad, avg_pool2d_grad_p, avg_pool2d_p, max_pool2d,
                   max_pool2d_gather, max_pool2d_gather_p, max_pool2d_grad, max_pool2d_grad_p,
                   max_pool2d_indices, max_pool2d_indices_p, max_pool2d_p)
from .resample import resample, resample_p, resample_transpose, resample_transpose_p
from .unfold import fold, fold_p, unfold, unfold_p
from .dense import (addmm, addmm_p, cross_entropy, linear, linear_p, log_softmax, log_softmax_p, nll_loss,
                    nll_loss_p, relu, relu_grad_p, relu_p, softmax, softplus, softplus_grad_p,
                    softplus_p)

__all__ = ["conv2d", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d", "max_pool2d_grad",
           "max_pool2d_gather", "max_pool2d_indices", "unfold", "fold", "resample", "resample_transpose",
           "avg_pool2d", "avg_pool2d_grad", "relu", "linear", "addmm", "addmm_p", "log_softmax",
           "softmax", "softplus", "nll_loss", "cross_entropy",
           "conv2d_p", "conv2d_input_grad_p", "conv2d_weight_grad_p", "max_pool2d_p",
           "max_pool2d_grad_p", "max_pool2d_gather_p", "max_pool2d_indices_p", "unfold_p", "fold_p",
           "resample_p", "resample_transpose_p",
           "avg_pool2d_p", "avg_pool2d_grad_p", "relu_p",
           "relu_grad_p", "softplus_p", "softplus_grad_p", "linear_p", "log_softmax_p", "nll_loss_p"]


class _Package(types.ModuleType):
    """`fgrad.ops.nn.conv_algorithm = "gemm"` (as the tests' monkeypatch does) must reach the
    global that conv.py's impls read, so the package forwards that one attribute."""

    @property
    def conv_algorithm(self):
        return _conv.conv_algorithm

    @conv_algorithm.setter
    def conv_algorithm(self, value):
        _conv.conv_algorithm = value


sys.modules[__name__].__class__ = _Package
