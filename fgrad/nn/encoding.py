"""jax.nn.one_hot."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError
from .. import numpy as jnp


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """One-hot encoding of the integer indices `x`: a new axis of size `num_classes` (at
    `axis`) that is 1 at each index and 0 elsewhere (0 everywhere for an index outside
    [0, num_classes)). `dtype` defaults to float64, fgrad's default float."""
    if not isinstance(num_classes, (int, np.integer)):
        raise FgradTypeError(f"one_hot: num_classes must be a concrete int (it sets a shape), "
                        f"got {num_classes!r}")
    x = jnp.asarray(x)
    out_axis = axis + x.ndim + 1 if axis < 0 else axis
    if not 0 <= out_axis <= x.ndim:
        raise FgradValueError(f"one_hot: axis {axis} is out of range for a result of {x.ndim + 1} "
                         f"dimensions (x has shape {x.shape})")
    shape = [1] * (x.ndim + 1)
    shape[out_axis] = num_classes
    classes = np.arange(num_classes, dtype=x.dtype).reshape(shape)
    return (jnp.expand_dims(x, out_axis) == classes).astype(np.float64 if dtype is None else dtype)
