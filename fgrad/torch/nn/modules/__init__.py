"""torch.nn.modules and its submodules (torch.nn.modules.module, .conv, .loss, ...) on fgrad.torch.

Scripts import nn's classes from where PyTorch defines them (`from torch.nn.modules.module import
Module`, `from torch.nn.modules.loss import _Loss`). fgrad.torch.nn lays its files out differently,
so each of these modules is an alias: it holds, of the names PyTorch's module of that name lists
(`__all__`), those fgrad.torch.nn has, the same objects, and the base classes subclassed by
custom layers (`_ConvNd`, `_BatchNorm`, `_Loss`, ...) where fgrad has a base of that name. A
module none of whose names fgrad has is not made, so importing it fails as for any missing module.
"""
from __future__ import annotations

import sys
import types

from .. import attention as _attention, conv as _conv, layers as _layers, loss as _loss
from .. import normalization as _normalization, padding as _padding, pooling as _pooling
from ... import nn as _nn

# PyTorch 2.13's torch.nn.modules.<submodule>.__all__
_TORCH_LAYOUT = {
    "activation": ("Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid",
        "Tanh", "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
        "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU",
        "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax",),
    "adaptive": ("AdaptiveLogSoftmaxWithLoss",),
    "batchnorm": ("BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
        "LazyBatchNorm3d", "SyncBatchNorm",),
    "channelshuffle": ("ChannelShuffle",),
    "container": ("Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
        "ParameterDict",),
    "conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
        "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
        "LazyConvTranspose3d",),
    "distance": ("PairwiseDistance", "CosineSimilarity",),
    "dropout": ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
        "FeatureAlphaDropout",),
    "flatten": ("Flatten", "Unflatten",),
    "fold": ("Fold", "Unfold",),
    "instancenorm": ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
        "LazyInstanceNorm2d", "LazyInstanceNorm3d",),
    "lazy": ("LazyModuleMixin",),
    "linear": ("Bilinear", "Identity", "LazyLinear", "Linear",),
    "linear_cross_entropy_options": ("LinearCrossEntropyOptions",),
    "loss": ("L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss",
        "MSELoss", "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
        "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss", "LinearCrossEntropyLoss",
        "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss",
        "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",),
    "module": ("register_module_forward_pre_hook", "register_module_forward_hook",
        "register_module_full_backward_pre_hook", "register_module_backward_hook",
        "register_module_full_backward_hook", "register_module_buffer_registration_hook",
        "register_module_module_registration_hook", "register_module_parameter_registration_hook",
        "Module",),
    "normalization": ("LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm",),
    "padding": ("CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
        "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
        "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
        "ZeroPad3d",),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle",),
    "pooling": ("MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
        "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
        "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
        "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",),
    "rnn": ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",),
    "sparse": ("Embedding", "EmbeddingBag",),
    "transformer": ("Transformer", "TransformerEncoder", "TransformerDecoder",
        "TransformerEncoderLayer", "TransformerDecoderLayer",),
    "upsampling": ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",),
    "utils": ("consume_prefix_in_state_dict_if_present",),
}
# The base classes custom layers subclass, by submodule, and fgrad's modules that define them: only
# those every class deriving from it in PyTorch derives from here (fgrad's Dropout is no _DropoutNd)
_BASES = {
    "conv": ("_ConvNd", "_ConvTransposeNd"),
    "batchnorm": ("_BatchNorm",),
    "instancenorm": ("_InstanceNorm",),
    "loss": ("_Loss", "_WeightedLoss"),
    "pooling": ("_MaxPoolNd",),
    "padding": ("_ConstantPadNd",),
}
_BASE_HOMES = (_conv, _layers, _loss, _normalization, _pooling, _padding)


def _find(name: str):
    """fgrad's object for one of PyTorch's names, or None when fgrad has none."""
    if not name.startswith("_"):
        return getattr(_nn, name, None)
    return next((getattr(home, name) for home in _BASE_HOMES if hasattr(home, name)), None)


def _make(submodule: str, names) -> types.ModuleType | None:
    found = {name: obj for name in names if (obj := _find(name)) is not None}
    if not found:
        return None
    module = types.ModuleType(f"{__name__}.{submodule}",
                              f"torch.nn.modules.{submodule} on fgrad.torch: aliases of fgrad.torch.nn's "
                              f"classes ({__name__}'s docstring says which).")
    module.__dict__.update(found)
    module.__all__ = [name for name in found if not name.startswith("_")]
    sys.modules[module.__name__] = module
    return module


__all__: list[str] = []
for _submodule, _names in _TORCH_LAYOUT.items():
    _module = _make(_submodule, _names + _BASES.get(_submodule, ()))
    if _module is not None:
        globals()[_submodule] = _module
        for _name in _module.__all__:
            globals()[_name] = getattr(_module, _name)
            __all__.append(_name)
del _submodule, _names, _module, _name

# A class PyTorch defines in torch.nn.modules.linear without listing it in __all__, named by
# scripts that list the classes of a pickled model (MultiheadAttention's out_proj is one).
linear.NonDynamicallyQuantizableLinear = _attention.NonDynamicallyQuantizableLinear
