"""torch.fx.passes on fgrad.torch: graph passes (shape propagation)."""
from . import shape_prop  # noqa: F401
