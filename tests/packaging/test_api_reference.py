"""The API reference pages (tools/gen_api_docs.py, built into the site by mkdocs.yml's hook) list
every public name, so a name added to a namespace appears without editing a page."""
from __future__ import annotations

import fgrad.lax
import fgrad.numpy
import fgrad.torch
from tests.packaging.docstring_walk import gen_api_docs


def test_the_walk_reaches_the_submodules_users_import():
    modules = gen_api_docs.modules()
    for name in ("fgrad", "fgrad.numpy", "fgrad.numpy.linalg", "fgrad.lax", "fgrad.scipy.special",
                 "fgrad.random", "fgrad.nn", "fgrad.tree_util", "fgrad.torch", "fgrad.torch.nn",
                 "fgrad.torch.nn.functional", "fgrad.torch.autograd", "fgrad.torch.optim",
                 "fgrad.torch.utils.data", "fgrad.torch.linalg"):
        assert name in modules, name
    assert len(modules) == len(set(modules))
    # an import inside a namespace (fgrad.torch.nn.functional's `lax`) is not a page of its own
    assert not any(m.startswith("fgrad.torch.") and ".lax" in m for m in modules), modules


def test_a_module_page_has_an_entry_per_public_name():
    text = gen_api_docs.page("fgrad.lax")
    for name in gen_api_docs.public_names(fgrad.lax):
        assert f"### `fgrad.lax.{name}`" in text, name
    assert "fgrad.lax.scan" in text and ">>> lax.scan(" in text  # the docstring, example included


def test_a_new_name_appears_on_the_next_build(monkeypatch):
    def planted_for_the_reference(x):
        """A name added after the pages were written."""
        return x

    monkeypatch.setattr(fgrad.numpy, "planted_for_the_reference", planted_for_the_reference, raising=False)
    text = gen_api_docs.page("fgrad.numpy")
    assert "### `fgrad.numpy.planted_for_the_reference`" in text
    assert "A name added after the pages were written." in text


def test_the_torch_page_lists_tensor_methods_and_properties_with_their_docstrings():
    text = gen_api_docs.page("fgrad.torch")
    assert "### `Tensor.backward`" in text
    # a property shows its getter's docstring
    assert "### `Tensor.grad_fn`\n\n*property*" in text
    assert fgrad.torch.Tensor.grad_fn.__doc__.splitlines()[0] in text


def test_every_public_name_of_every_page_has_an_entry():
    # page() passes over a listed name the module lacks (an __all__ entry never defined); the
    # reference must still list every name users can reach
    missing = []
    for modname in gen_api_docs.modules():
        text = gen_api_docs.page(modname)
        module = gen_api_docs._module(modname)
        missing += [f"{modname}.{n}" for n in gen_api_docs.public_names(module)
                    if f"### `{modname}.{n}`" not in text]
    assert not missing, f"public names without an entry in the API reference: {missing}"
