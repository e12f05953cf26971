"""Channel-wise and alpha dropout layers with PyTorch's names: Dropout1d/2d/3d zero whole
channels, AlphaDropout/FeatureAlphaDropout keep SELU's self-normalisation. Each is the
identity in eval mode; masks come from fgrad's default generator (fgrad.torch.manual_seed)."""
from __future__ import annotations

from ...core.errors import FgradValueError
from . import _spatial as S
from .module import Module

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise FgradValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero whole channels of [N, C, L] (or [C, L]) with probability p (scaling the rest)."""

    def forward(self, input):
        return S.dropout1d(input, self.p, self.training)


class Dropout2d(_DropoutNd):
    """Zero whole channels of [N, C, H, W] with probability p (scaling the rest)."""

    def forward(self, input):
        return S.dropout2d(input, self.p, self.training)


class Dropout3d(_DropoutNd):
    """Zero whole channels of [N, C, D, H, W] (or [C, D, H, W]) with probability p."""

    def forward(self, input):
        return S.dropout3d(input, self.p, self.training)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks: keeps zero mean and unit variance."""

    def forward(self, input):
        return S.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input):
        return S.feature_alpha_dropout(input, self.p, self.training)
