"""nn.functional's names for torch's top-level functions that fgrad.torch defines above the nn
package (fgrad/torch/_breadth.py): pdist, conv_tbc, native_channel_shuffle and conv_transpose3d (rows of
_breadth's alias table) and ctc_loss (with nn.functional's reduction='mean'). The package imports this module
after _breadth, and it sets them on fgrad.torch.nn.functional, so nn itself imports nothing above its layer."""
from __future__ import annotations

from typing import Any

from . import _breadth as B
from ._tensor.tensor import Tensor
from .nn import functional as _F

__all__ = ["pdist", "conv_tbc", "native_channel_shuffle", "conv_transpose3d", "ctc_loss"]


# (nn.functional's name, the torch function it is): rows of the alias table of _breadth
_ALIASES = (
    ("pdist", B, "pdist"),
    ("conv_tbc", B, "conv_tbc"),
    ("native_channel_shuffle", B, "native_channel_shuffle"),
    ("conv_transpose3d", B, "conv_transpose3d"),
)
for _row in _ALIASES:
    globals()[_row[0]] = B._alias(*_row, None, tensor_first=False, home=__name__)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss (torch.ctc_loss with nn.functional's
    default reduction, 'mean': each loss divided by its target length, then averaged).

    Args:
        log_probs: (T, N, C) or (T, C) log-probabilities.
        targets: (N, S) padded label rows, or the labels concatenated (1-D).
        input_lengths: (N,) frames per sample.
        target_lengths: (N,) labels per sample.
        blank: the blank label.
        reduction: 'none', 'mean' or 'sum'.
        zero_infinity: infinite losses and their gradients become 0.

    Returns:
        The loss."""
    return B.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                      zero_infinity)


for _name in __all__:
    setattr(_F, _name, globals()[_name])
    _F.__all__.append(_name)
