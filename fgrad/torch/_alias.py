"""`torch` as another name for fgrad.torch, so that a PyTorch script runs unmodified.

`install()` puts a finder at the front of `sys.meta_path` that answers every import of
`torch` or `torch.<sub>` with the module `fgrad.torch` or `fgrad.torch.<sub>` itself (the
same object, so `torch.nn is fgrad.torch.nn` and isinstance checks agree across both names).
`python -m fgrad.run script.py` and `fgrad.install_as_torch()` use it; PyMySQL's
`install_as_MySQLdb()` is the model.

The real PyTorch and fgrad.torch cannot share one process under one name: once the real
`torch` is imported, its modules are cached and every later `import torch` returns them, so
installing then would give a script a mix of both. `install()` refuses instead.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

from ..core.errors import FgradRuntimeError

ALIAS = "torch"
TARGET = "fgrad.torch"
# every name the finder answers, with its module: torch, and functorch (torch.func's name
# before PyTorch 2.0, a package of its own that older tutorials import)
ALIASES = {ALIAS: TARGET, "functorch": "fgrad.torch._functorch"}


def _aliased(fullname: str) -> tuple[str, str] | None:
    """(alias, target) whose alias is `fullname` or a package above it, or None."""
    for alias, target in ALIASES.items():
        if fullname == alias or fullname.startswith(alias + "."):
            return alias, target
    return None


class _Loader(importlib.abc.Loader):
    """Loads `torch.<sub>` as the already-imported `fgrad.torch.<sub>`."""

    def __init__(self, module) -> None:
        self.module = module
        self.own_spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        # the import system wrote the alias's spec into the module: the module keeps its own
        module.__spec__ = self.own_spec


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves `torch` and `torch.*` to `fgrad.torch` and `fgrad.torch.*` (and `functorch`
    to fgrad.torch._functorch)."""

    def find_spec(self, fullname: str, path=None, target=None):
        match = _aliased(fullname)
        if match is None:
            return None
        alias, target_name = match
        real = target_name + fullname[len(alias):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as e:
            if e.name != real:  # a dependency of the module is missing: that is the error to see
                raise
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: `torch` is fgrad.torch here (fgrad.install_as_torch or "
                f"python -m fgrad.run), and fgrad.torch has no {real!r}. See docs/torch-coverage.md "
                f"for what fgrad.torch provides.", name=fullname) from None
        # fgrad.torch.autograd is a module, not a package, with submodules (forward_ad, graph, ...)
        # that fgrad.torch registers under dotted names: `import torch.autograd.forward_ad` finds
        # them under the alias, where the import system would refuse a non-package parent
        for name, sub in list(sys.modules.items()):
            if sub is not None and name.startswith(real + "."):
                sys.modules.setdefault(fullname + name[len(real):], sub)
        loader = _Loader(module)
        spec = importlib.machinery.ModuleSpec(fullname, loader, origin=getattr(module, "__file__", None))
        if hasattr(module, "__path__"):
            spec.submodule_search_locations = list(module.__path__)
        return spec


def _real_torch_loaded() -> str | None:
    """The name of a `torch` module in sys.modules that is not fgrad.torch's, or None."""
    for name, module in list(sys.modules.items()):
        if name == ALIAS or name.startswith(ALIAS + "."):
            if module is None:
                continue
            own = getattr(module, "__name__", "")
            if own != TARGET and not own.startswith(TARGET + "."):
                return name
    return None


def install() -> None:
    """Make `import torch` (and every `torch.<sub>`) import fgrad.torch in this process.

    Raises:
        RuntimeError: the real PyTorch (some `torch` module) is already imported.
    """
    if any(isinstance(f, TorchAliasFinder) for f in sys.meta_path):
        return
    loaded = _real_torch_loaded()
    if loaded is not None:
        raise FgradRuntimeError(
            f"fgrad.install_as_torch(): the real PyTorch is already imported (sys.modules[{loaded!r}] is "
            f"{sys.modules[loaded]!r}), and a process cannot hold both under the name 'torch'. Call it "
            f"before anything imports torch, or run the script with `python -m fgrad.run script.py`.")
    sys.meta_path.insert(0, TorchAliasFinder())


def uninstall() -> None:
    """Undo `install()`: remove the finder and the `torch` names it created (the fgrad.torch
    modules themselves stay imported)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, TorchAliasFinder)]
    for name in [n for n in sys.modules if _aliased(n) is not None]:
        target = _aliased(name)[1]
        own = getattr(sys.modules[name], "__name__", "")
        if own == target or own.startswith(target + "."):
            del sys.modules[name]
