"""An alias package: inside ``jax_alias()``, ``import jax`` and ``import jax.<sub>`` load fgrad.

Real JAX is installed next to fgrad, and other tests import it; the alias shadows it only
while the context is open. On entry every ``jax``/``jax.*`` entry of sys.modules is set aside
and a meta-path finder is put first; on exit the aliases are dropped and the set-aside
modules are put back, so nothing leaks into other tests.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Iterator
from types import ModuleType

# JAX's public modules that fgrad mirrors under the same name. Others (jax.core,
# jax.extend, jax._src, jax.sharding, ...) are JAX internals or outside fgrad: importing them
# under the alias raises ModuleNotFoundError naming the module, rather than loading an
# fgrad module of the same name with another meaning (fgrad.core is fgrad's own core).
ALIASED = ("numpy", "lax", "scipy", "nn", "random", "tree_util", "tree", "experimental",
           "ad_checkpoint", "debug", "test_util")


def _target(fullname: str) -> str | None:
    """The fgrad module that ``fullname`` (``jax`` or ``jax.<sub>...``) aliases, or None."""
    if fullname == "jax":
        return "fgrad"
    if not fullname.startswith("jax."):
        return None
    rest = fullname[len("jax."):]
    if rest.split(".")[0] not in ALIASED:
        raise ModuleNotFoundError(f"{fullname} is not aliased to fgrad (fgrad has no "
                                  f"counterpart to it; see tests/jax_docs/alias.py ALIASED)",
                                  name=fullname)
    return "fgrad." + rest


class _Loader(importlib.abc.Loader):
    """Hands back the already-imported fgrad module as the jax module."""

    def __init__(self, module: ModuleType):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Resolves ``jax`` and ``jax.*`` to fgrad's modules."""

    def find_spec(self, fullname, path=None, target=None):
        name = _target(fullname)
        if name is None:
            return None
        module = importlib.import_module(name)
        return importlib.machinery.ModuleSpec(fullname, _Loader(module),
                                              is_package=hasattr(module, "__path__"))


def _is_jax(name: str) -> bool:
    return name == "jax" or name.startswith("jax.")


@contextlib.contextmanager
def jax_alias() -> Iterator[None]:
    """Make ``import jax...`` load fgrad for the duration of the block.

    Returns:
        A context manager; sys.modules and sys.meta_path are as before once it exits.
    """
    saved = {k: v for k, v in sys.modules.items() if _is_jax(k)}
    for k in saved:
        del sys.modules[k]
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if _is_jax(k)]:
            del sys.modules[k]
        sys.modules.update(saved)
