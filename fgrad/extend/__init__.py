"""Public access to fgrad's machinery for libraries that build on it, as `jax.extend` is for
JAX. fgrad.torch (the PyTorch door) is written on the functional door's public modules and
this package only, as a third-party library would be.

Where each piece lives, the way a JAX user would look for it:
  * the primitives themselves are `fgrad.lax.<name>_p` (`fgrad.lax.add_p`, `conv2d_p`), as in
    `jax.lax`, generated from the primitive registry;
  * `fgrad.extend.lax`: the functions that bind those primitives directly (`reshape`,
    `dot_general`, `getitem`, `add`, ...): no argument checking, conversion or promotion, for
    code that has already normalised its operands (fgrad.lax's public functions check theirs,
    which a library's hot path has already done);
  * `fgrad.extend.nn`: the neural-network primitives' functions (PyTorch's layouts: NCHW images,
    OIHW kernels) and their argument helpers (pooling and padding geometry, the loss core);
  * `fgrad.extend.numpy`: fgrad.numpy's array-API machinery: the `Policy` base class a dialect
    subclasses (promotion and error wording; fgrad.torch's `TorchPolicy` is one) and the
    argument helpers fgrad.numpy's functions share (`cast`, `normalize_axes`, ...);
  * `fgrad.extend.batching`: the batching rule that binds a primitive once per example;
  * `fgrad.extend.kernels`: the fused Numba CPU kernels (an optimiser's update in one pass).

Every name is the object fgrad's own modules use (no wrapper): binding it costs what it costs
inside fgrad. The names and their meaning are kept stable; the modules they come from are not.
"""
from . import batching, kernels, lax, nn, numpy  # noqa: F401

__all__ = ["batching", "kernels", "lax", "nn", "numpy"]
