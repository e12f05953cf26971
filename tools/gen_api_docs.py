"""The API reference pages of the documentation site, generated from the public names and their
docstrings, so that a name added to a namespace appears in the reference without editing a page.

`python tools/gen_api_docs.py OUTDIR` writes the pages into OUTDIR; mkdocs.yml's hook
(tools/mkdocs_hooks.py) calls `pages()` and adds them to the site without writing files.
"""
from __future__ import annotations

import importlib
import inspect
import pathlib
import sys
import types
from typing import Iterator

# The namespaces with a page each; submodules of fgrad.torch, fgrad.numpy, fgrad.scipy and fgrad.nn
# (fgrad.torch.nn.functional, fgrad.numpy.linalg, ...) are found by walking their attributes.
ROOTS = ("fgrad", "fgrad.numpy", "fgrad.lax", "fgrad.scipy", "fgrad.random", "fgrad.nn",
         "fgrad.tree_util", "fgrad.torch")
WALK = ("fgrad.numpy", "fgrad.scipy", "fgrad.nn", "fgrad.torch")


def public_names(module: types.ModuleType) -> list[str]:
    """The public names of ``module``: its ``__all__`` when it has one, else every attribute
    without a leading underscore that is not a module.

    Args:
        module: an imported module.

    Returns:
        The names, sorted.
    """
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")
                 and not isinstance(getattr(module, n, None), types.ModuleType)]
    return sorted(set(names))


# Some submodules are module objects set as attributes (fgrad.torch.backends.cpu), not importable
# by name: pages look them up here.
_MODULES: dict[str, types.ModuleType] = {}


def _module(name: str) -> types.ModuleType:
    return _MODULES.get(name) or importlib.import_module(name)


def submodules(name: str) -> list[str]:
    """The modules below ``name`` reachable as public attributes (fgrad.torch.nn.functional is
    fgrad.torch.nn's attribute ``functional``), depth first, ``name`` itself first.

    Args:
        name: a dotted module name.

    Returns:
        The dotted names of the module and its public submodules.
    """
    found: list[str] = []
    seen: set[int] = set()
    root = name + "."
    # Breadth first, so that a module is listed once under the shortest name users reach it by
    # (fgrad.torch.autograd lives in fgrad/torch/_tensor/autograd.py); an attribute counts as a
    # submodule when the module's own last name is the attribute's (not `import ... as S`).
    queue = [(importlib.import_module(name), name)]
    while queue:
        module, public = queue.pop(0)
        if id(module) in seen:
            continue
        seen.add(id(module))
        found.append(public)
        _MODULES[public] = module
        for attr in sorted(dir(module)):
            value = getattr(module, attr, None) if not attr.startswith("_") else None
            if isinstance(value, types.ModuleType) and value.__name__.startswith(root) \
                    and value.__name__.rsplit(".", 1)[-1] == attr:
                queue.append((value, f"{public}.{attr}"))
    return found


def modules() -> list[str]:
    """Every module that gets a page of the API reference, in page order.

    Returns:
        Dotted module names.
    """
    out: list[str] = []
    for root in ROOTS:
        for name in (submodules(root) if root in WALK else [root]):
            if name not in out:
                out.append(name)
    return out


def _signature(obj: object) -> str:
    try:
        return str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text}\n{fence}\n"


def _entry(title: str, obj: object) -> str:
    lines = [f"### `{title}`\n"]
    if isinstance(obj, property):
        lines.append("*property*\n")
    elif inspect.isclass(obj) or callable(obj):
        kind = "class" if inspect.isclass(obj) else "function"
        lines.append(f"```python\n{kind} {title.rsplit('.', 1)[-1]}{_signature(obj)}\n```\n")
    elif not isinstance(obj, types.ModuleType):
        return "\n".join(lines + [f"A value: `{type(obj).__name__}`.\n"])
    doc = inspect.getdoc(obj)
    lines.append(_fence(doc) if doc else "*No docstring.*\n")
    return "\n".join(lines)


def page(modname: str) -> str:
    """The Markdown page of one module: its docstring, then one entry per public name (its
    signature and docstring, verbatim as a text block).

    Args:
        modname: a dotted module name.

    Returns:
        The page's Markdown text.
    """
    module = _module(modname)
    parts = [f"# `{modname}`\n"]
    doc = inspect.getdoc(module)
    if doc:
        parts.append(_fence(doc))
    names = public_names(module)
    parts.append(f"{len(names)} public names.\n")
    for name in names:
        if not hasattr(module, name):
            continue
        parts.append(_entry(f"{modname}.{name}", getattr(module, name)))
    if modname == "fgrad.torch":
        parts.append("## `Tensor` methods\n\nThe methods and properties of `fgrad.torch.Tensor`.\n")
        tensor = module.Tensor
        for name in sorted(n for n in dir(tensor) if not n.startswith("_")):
            static = inspect.getattr_static(tensor, name)
            parts.append(_entry(f"Tensor.{name}", static if isinstance(static, property)
                                else getattr(tensor, name)))
    return "\n".join(parts)


def page_path(modname: str) -> str:
    """Where a module's page lives inside the site: ``api/<dotted name>.md``.

    Args:
        modname: a dotted module name.

    Returns:
        The page's path relative to the docs directory.
    """
    return f"api/{modname}.md"


def index() -> str:
    """The API reference's index page: one link per module page.

    Returns:
        The page's Markdown text.
    """
    lines = ["# API reference\n",
             "Generated from the docstrings of every public name (`tools/gen_api_docs.py`); a new "
             "name appears here on the next build.\n"]
    for name in modules():
        lines.append(f"- [`{name}`]({name}.md)")
    return "\n".join(lines) + "\n"


def pages() -> Iterator[tuple[str, str]]:
    """Every generated page.

    Returns:
        An iterator of (path relative to the docs directory, Markdown text).
    """
    yield "api/index.md", index()
    for name in modules():
        yield page_path(name), page(name)


def main(argv: list[str]) -> int:
    out = pathlib.Path(argv[1] if len(argv) > 1 else "site-api")
    for rel, text in pages():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
