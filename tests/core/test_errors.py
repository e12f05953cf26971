"""Every entry of the error catalogue: type, message, and a correct computation after it."""
import re
from pathlib import Path

import pytest

from tests.core.error_catalogue import ENTRIES




@pytest.mark.parametrize("entry", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_catalogued_error(entry):
    eid, title, trigger, exc, pattern, fix, recovery = entry
    with pytest.raises(exc) as info:
        trigger()
    message = str(info.value)
    assert re.search(pattern, message, re.S), f"{eid}: message was {info.value}"
    # Where: the user's own line (the trigger in error_catalogue.py, fgrad's frames filtered out);
    # and the entry's anchor in docs/errors.md.
    assert re.search(r"\n  at \S*error_catalogue\.py:\d+: \S", message), f"{eid}: no user line in {message}"
    assert f"See docs/errors.md#{eid}" in message, f"{eid}: no docs link in {message}"
    assert message.index(f"See docs/errors.md#{eid}") > message.index("  at "), message
    recovery()


def test_catalogue_is_large_and_documented():
    assert len(ENTRIES) >= 25
    doc = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    for eid, *_ in ENTRIES:
        assert f"(`{eid}`)" in doc, f"docs/errors.md lacks {eid}: run python tests/core/error_catalogue.py"
        assert f'<a id="{eid}"></a>' in doc, f"docs/errors.md lacks the anchor of {eid}: run python tests/core/error_catalogue.py"


# Builtin exception types fgrad raises through its own subclasses (core/errors.py), so every
# error names the user's line. KeyError/AttributeError/StopIteration stay builtin: Python's
# protocols (dict lookup, getattr/hasattr, iteration) raise and catch them as control flow.
_OWN = {"TypeError", "ValueError", "RuntimeError", "IndexError", "NotImplementedError"}


def test_every_raise_site_uses_fgrads_error_classes():
    import ast
    root = Path(__file__).resolve().parents[2] / "fgrad"
    offenders = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id in _OWN:
                offenders.append(f"{path.relative_to(root.parent)}:{node.lineno}: raise {node.exc.func.id}(...)")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _OWN:
                offenders.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.func.id}(...) built")
    assert not offenders, ("raise fgrad's subclass (FgradTypeError, FgradValueError, ... in "
                           "fgrad/core/errors.py) so the message names the user's line:\n" + "\n".join(offenders))


def test_plain_errors_name_the_users_line():
    import fgrad
    import fgrad.numpy as fnp
    with pytest.raises(ValueError) as info:
        fnp.reshape(fnp.ones(6), (4, 2))
    assert re.search(r"\n  at \S*test_errors\.py:\d+: fnp\.reshape", str(info.value)), str(info.value)
    with pytest.raises(RuntimeError) as info:
        fgrad.torch.ones(2, 3) @ fgrad.torch.ones(2, 3)
    assert "test_errors.py" in str(info.value) and info.value.args[0] in str(info.value)


def test_one_module_owns_every_error_class():
    import inspect

    import fgrad.core.errors as errors
    import fgrad.torch._errors as torch_errors
    # the core's classes, and the PyTorch door's own (PyTorch's names, derived from the core's)
    owners = {Path(errors.__file__).resolve(), Path(torch_errors.__file__).resolve()}
    import ast
    root = Path(__file__).resolve().parents[2] / "fgrad"
    elsewhere = []
    for path in sorted(root.rglob("*.py")):
        if path.resolve() in owners:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and (node.name.endswith("Error") or node.name.endswith("Exception")):
                elsewhere.append(f"{path.relative_to(root.parent)}:{node.lineno}: class {node.name}")
    assert not elsewhere, "define error classes in fgrad/core/errors.py (fgrad.torch's own: fgrad/torch/_errors.py):\n" + "\n".join(elsewhere)
    for module in (errors, torch_errors):
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == module.__name__:
                assert issubclass(cls, errors.FgradError), f"{name} must derive from FgradError (user line, docs link)"


@pytest.mark.parametrize("cls, builtin", [("FgradTypeError", TypeError), ("FgradValueError", ValueError),
                                          ("FgradIndexError", IndexError), ("FgradRuntimeError", RuntimeError),
                                          ("FgradNotImplementedError", NotImplementedError)])
def test_builtin_errors_show_the_builtin_name_and_pickle(cls, builtin):
    import pickle
    import traceback

    import fgrad.core.errors as errors
    e = getattr(errors, cls)("what happened")
    assert isinstance(e, builtin) and isinstance(e, errors.FgradError)
    assert type(e).__name__ == builtin.__name__ and repr(e) == f"{builtin.__name__}('what happened')"
    assert traceback.format_exception_only(e)[0].startswith(f"{builtin.__name__}: what happened")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e) and str(back) == str(e)
