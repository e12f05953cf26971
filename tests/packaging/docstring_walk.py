"""The public callables of fgrad's namespaces and which of them lack a docstring (shared by
tests/packaging/test_docstrings.py; the walk is tools/gen_api_docs.py's, the one the API
reference pages are generated from, so the reference and this check see the same names)."""
from __future__ import annotations

import inspect
import pathlib
import sys
import types
from typing import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools"))
import gen_api_docs  # noqa: E402


def has_docstring(obj: object) -> bool:
    """Whether `obj` carries its own docstring: a class its own (not a base class's, which
    inspect.getdoc would lend it), a property its getter's, anything else what help() shows."""
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
    elif isinstance(obj, property):
        doc = obj.__doc__ or (obj.fget.__doc__ if obj.fget else None)
    else:
        doc = inspect.getdoc(obj)
    return bool(doc and doc.strip())


def defined_in_fgrad(obj: object) -> bool:
    """Whether `obj` (a function, class or callable object) comes from fgrad's code: names
    re-exported from the standard library or typing (Iterable, ParamsT) are not fgrad's to
    document."""
    if inspect.isclass(obj) or inspect.isroutine(obj):
        module = getattr(obj, "__module__", None)
    else:
        module = type(obj).__module__
    return isinstance(module, str) and (module == "fgrad" or module.startswith("fgrad."))


def public_callables(module: types.ModuleType, modname: str) -> Iterator[tuple[str, object]]:
    """(dotted public name, object) for every public callable of `module` defined in fgrad."""
    for name in gen_api_docs.public_names(module):
        obj = getattr(module, name, None)
        if obj is None or isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        if defined_in_fgrad(obj):
            yield f"{modname}.{name}", obj


def in_torch(modname: str) -> bool:
    """Whether a page module belongs to the PyTorch door (fgrad.torch and its submodules)."""
    return modname == "fgrad.torch" or modname.startswith("fgrad.torch.")


def undocumented(torch_door: bool) -> list[str]:
    """The public names of callables without a docstring, in the namespaces of one door: the
    functional one (fgrad, fgrad.numpy, lax, scipy, random, nn, tree_util and their
    submodules) or the PyTorch one (fgrad.torch and its submodules); each object once, under
    the first name the walk reaches it by."""
    seen: set[int] = set()
    missing = []
    for modname in gen_api_docs.modules():
        if in_torch(modname) != torch_door:
            continue
        for name, obj in public_callables(gen_api_docs._module(modname), modname):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if not has_docstring(obj):
                missing.append(name)
    return missing


def undocumented_members(cls: type, prefix: str) -> list[str]:
    """The public methods and properties of `cls` without a docstring, as prefix.name."""
    missing = []
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        obj = inspect.getattr_static(cls, name)
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if (callable(obj) or isinstance(obj, property)) and not has_docstring(obj):
            missing.append(f"{prefix}.{name}")
    return missing
