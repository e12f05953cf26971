"""Two doors on one core: `fgrad` is JAX's namespace, `fgrad.torch` is PyTorch's.

- every name on fgrad's top level is one JAX has there too, or one of a short list of
  functional-side additions (a facade name here would fail);
- every name the facade used to put on fgrad's top level, asked of fgrad, raises an
  AttributeError that points to fgrad.torch;
- the names the two ecosystems share with different meanings exist once per door, with each
  ecosystem's signature (vmap: in_axes / in_dims);
- `import fgrad` does not import the PyTorch door.
"""
from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
import fgrad.torch as torch_door

# fgrad-only names of the functional door: its subpackages that JAX has no counterpart for at
# its top level (or keeps under another name), and the lazily loaded siblings.
FUNCTIONAL_EXTRAS = {"api", "core", "custom", "interpreters", "ops", "stop_gradient", "test_util",
                     "torch", "viz", "distributed",
                     # the way into the torch door for unmodified PyTorch scripts (`import torch`
                     # as fgrad.torch): a switch for the process, not a PyTorch name
                     "install_as_torch", "run",
                     # Taylor mode at the top level (issue 25): JAX keeps jet in jax.experimental.jet,
                     # which fgrad.experimental.jet still is
                     "jet", "derivatives", "experimental"}

# What the facade put on fgrad's top level before the split (a sample of each kind: the
# Tensor class, creation, grad mode, the torch subpackages, dtypes, functions).
FORMER_FACADE_NAMES = ["Tensor", "tensor", "optim", "data", "utils", "func", "autograd", "cuda",
                       "no_grad", "manual_seed", "randn", "zeros", "float32", "cat", "save", "load",
                       "linalg", "special", "distributions", "compile", "from_numpy", "Size"]


def test_top_level_names_are_jax_names_or_functional_extras() -> None:
    jax = pytest.importorskip("jax")
    import jax.extend  # noqa: F401 (a subpackage JAX loads when asked, as fgrad.extend, which fgrad.torch loads)
    public = {n for n in dir(fgrad) if not n.startswith("_")}
    others = sorted(public - set(dir(jax)) - FUNCTIONAL_EXTRAS)
    assert not others, f"fgrad's top level has names JAX does not: {others} (PyTorch's belong in fgrad.torch)"


@pytest.mark.parametrize("name", FORMER_FACADE_NAMES)
def test_a_facade_name_asked_of_fgrad_points_to_fgrad_torch(name: str) -> None:
    path = {"data": "utils.data"}.get(name, name)
    obj = torch_door
    for part in path.split("."):
        obj = getattr(obj, part)  # the name's home in fgrad.torch
    with pytest.raises(AttributeError, match=rf"import fgrad\.torch as torch`, then torch\.{path}$"):
        getattr(fgrad, name)


def test_unknown_name_is_a_plain_attribute_error() -> None:
    with pytest.raises(AttributeError) as e:
        fgrad.no_such_name  # noqa: B018
    assert "fgrad.torch" not in str(e.value)


def test_vmap_has_each_ecosystems_signature() -> None:
    assert "in_axes" in inspect.signature(fgrad.vmap).parameters
    assert "in_dims" in inspect.signature(torch_door.vmap).parameters
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(fgrad.vmap(fnp.sum, in_axes=1)(x), x.sum(0))
    t = torch_door.tensor(x)
    np.testing.assert_allclose(torch_door.vmap(lambda r: r.sum(), in_dims=1)(t).numpy(), x.sum(0))


def test_each_door_has_its_own_random() -> None:
    key = fgrad.random.PRNGKey(0)
    assert fgrad.random.uniform(key, (2,)).shape == (2,)      # JAX's: keys are values
    torch_door.manual_seed(0)
    assert torch_door.rand(2).shape == (2,)                     # PyTorch's: a seeded generator


def test_each_door_has_its_own_nn() -> None:
    # fgrad.nn is jax.nn (functions of arrays and initializer factories taking keys);
    # fgrad.torch.nn is torch.nn (Module classes)
    np.testing.assert_array_equal(fgrad.nn.relu(np.array([-1.0, 2.0])), [0.0, 2.0])
    w = fgrad.nn.initializers.glorot_uniform()(fgrad.random.PRNGKey(0), (3, 4))
    assert w.shape == (3, 4)
    for name in ("Linear", "Module", "functional"):
        getattr(torch_door.nn, name)  # the name's home
        with pytest.raises(AttributeError, match=rf"import fgrad\.torch as torch`, then torch\.nn\.{name}$"):
            getattr(fgrad.nn, name)
    with pytest.raises(AttributeError) as e:
        fgrad.nn.no_such_function  # noqa: B018
    assert "fgrad.torch" not in str(e.value)
    assert torch_door.nn.Linear(3, 4).weight.shape == (4, 3)
    assert not hasattr(torch_door.nn, "initializers")


def test_torch_submodules_import_by_pytorch_paths() -> None:
    import fgrad.torch.autograd.graph  # noqa: F401
    import fgrad.torch.nn.functional as F
    import fgrad.torch.utils.data as data
    assert F.relu is torch_door.nn.functional.relu
    assert data.DataLoader is torch_door.utils.data.DataLoader
    assert torch_door.__version__ == fgrad.__version__


def test_importing_fgrad_does_not_import_the_torch_door() -> None:
    code = "import sys, fgrad; fgrad.grad(lambda x: x * x)(1.0); print('fgrad.torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
