"""PyTorch's grad_fn class names for the primitives the facade binds directly (its
single-primitive fast paths and the nodes of primitives that reach the facade's own binding).

Names belong to the PyTorch door: the primitives below know nothing of them. A primitive not
listed gets its name's CamelCase with Backward0 ("mul" -> MulBackward0).
"""
from __future__ import annotations

PRIMITIVE_GRAD_FN = {
    "avg_pool2d": "AvgPool2DBackward0",
    "avg_pool2d_grad": "AvgPool2DBackwardBackward0",
    "banded_solve": "LinalgSolveBandedBackward0",
    "broadcast_in_dim": "ExpandBackward0",
    "cholesky": "LinalgCholeskyExBackward0",
    "complex": "ComplexBackward0",
    "concatenate": "CatBackward0",
    "conj": "ConjBackward0",
    "conv2d": "ConvolutionBackward0",
    "conv2d_input_grad": "ConvolutionBackwardBackward0",
    "conv2d_weight_grad": "ConvolutionBackwardBackward1",
    "conv_full": "ConvolutionBackward0",
    "convert_element_type": "ToCopyBackward0",
    "coo_matmul": "SparseAddmmBackward0",
    "cos_grad": "MulBackward0",  # (PyTorch's derivative of cos is grad * -sin(x): a product)
    "cumsum": "CumsumBackward0",
    "custom_vjp_call": "CustomFunctionBackward",
    "det": "LinalgDetBackward0",
    "dot_general": "MmBackward0",
    "eig": "LinalgEigBackward0",
    "eigh": "LinalgEighBackward0",
    "expm": "LinalgMatrixExpBackward0",
    "fft": "FftC2CBackward0",
    "fmod": "FmodBackward0",
    "fold": "Col2ImBackward0",
    "getitem": "IndexBackward0",
    "imag": "ImagBackward0",
    "integer_pow": "PowBackward0",
    "inv": "LinalgInvExBackward0",
    "irfft": "FftC2RBackward0",
    "linear": "AddmmBackward0",
    "log1p": "Log1PBackward0",  # (PyTorch's spelling)
    "log_softmax": "LogSoftmaxBackward0",
    "logabsdet": "LinalgSlogdetBackward0",
    "logaddexp": "LogaddexpBackward0",
    "logistic": "SigmoidBackward0",
    "logistic_grad": "SigmoidBackwardBackward0",
    "max": "MaximumBackward0",  # (elementwise: torch.maximum; reductions are reduce_max)
    "max_pool2d": "MaxPool2DWithIndicesBackward0",
    "max_pool2d_grad": "MaxPool2DWithIndicesBackwardBackward0",
    "min": "MinimumBackward0",
    "mod": "RemainderBackward0",
    "nll_loss": "NllLossBackward0",
    "pad": "ConstantPadNdBackward0",
    "pinv": "LinalgPinvBackward0",
    "qr": "LinalgQrBackward0",
    "real": "RealBackward0",
    "reduce_max": "MaxBackward1",
    "reduce_min": "MinBackward1",
    "reduce_prod": "ProdBackward1",
    "reduce_sum": "SumBackward1",
    "relu_grad": "ThresholdBackwardBackward0",
    "resample": "UpsampleBackward0",
    "resample_transpose": "UpsampleBackwardBackward0",
    "reshape": "ViewBackward0",
    "rev": "FlipBackward0",
    "rfft": "FftR2CBackward0",
    "scatter_add": "IndexPutBackward0",
    "select": "WhereBackward0",
    "sin_grad": "MulBackward0",  # (PyTorch's derivative of sin is grad * cos(x): a product)
    "slice": "SliceBackward0",
    "softplus": "SoftplusBackward0",
    "softplus_grad": "SoftplusBackwardBackward0",
    "solve": "LinalgSolveExBackward0",
    "sqrtm": "LinalgSqrtmBackward0",
    "svd": "LinalgSvdBackward0",
    "sylvester": "LinalgSolveSylvesterBackward0",
    "tanh_grad": "TanhBackwardBackward0",
    "transpose": "PermuteBackward0",
    "triangular_solve": "LinalgSolveTriangularBackward0",
    "tril": "TrilBackward0",
    "triu": "TriuBackward0",
    "unfold": "Im2ColBackward0",
}


def grad_fn_name(prim_name: str) -> str:
    """The grad_fn class name of a node recording the primitive `prim_name`."""
    name = PRIMITIVE_GRAD_FN.get(prim_name)
    if name is None:
        name = "".join(p.capitalize() for p in prim_name.split("_")) + "Backward0"
    return name
