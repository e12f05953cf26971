"""The Tensor class is defined once, with its methods from _methods.py's table in its class
body: no other module installs attributes on it, every row resolves on the class, and the
generated methods carry their torch function's signature and name it in their docstring."""
from __future__ import annotations

import ast
import inspect
import pathlib
import pickle

import numpy as np
import pytest

import fgrad
import fgrad.torch as torch
import fgrad.torch.fx  # noqa: F401  (imported on use otherwise: it must not add methods either)
from fgrad.torch._tensor import _methods as M
from fgrad.torch._tensor import tensor as tensor_module
from fgrad.torch._tensor.tensor import TensorBase

PACKAGE = pathlib.Path(fgrad.__file__).parent
DEFINING = {PACKAGE / "torch" / "_tensor" / "tensor.py"}
# what type() puts in a class namespace besides the table's rows
CLASS_KEYS = {"__module__", "__slots__", "__hash__", "__doc__"}


def _tensor_aliases(tree: ast.Module) -> set[str]:
    """The names a module binds to the Tensor class (`from ... import Tensor as T`)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if a.name == "Tensor")
    return names


def _is_tensor(expr: ast.expr, aliases: set[str]) -> bool:
    return (isinstance(expr, ast.Name) and expr.id in aliases) or \
        (isinstance(expr, ast.Attribute) and expr.attr == "Tensor")


def _attribute_writes(source: str, label: str) -> list[str]:
    """`Tensor.<name> = ...`, `setattr(Tensor, ...)` and `del Tensor.<name>` in `source`, as
    "label:line: statement" lines in line order."""
    tree = ast.parse(source, label)
    aliases = _tensor_aliases(tree) | {"Tensor"}
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            for leaf in ast.walk(t):
                if isinstance(leaf, ast.Attribute) and isinstance(leaf.ctx, (ast.Store, ast.Del)) \
                        and _is_tensor(leaf.value, aliases):
                    found.append((node.lineno, f"{label}:{node.lineno}: {ast.unparse(node)[:80]}"))
        if isinstance(node, ast.Call) and node.args and _is_tensor(node.args[0], aliases) and (
                (isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"))
                or (isinstance(node.func, ast.Attribute) and node.func.attr in ("__setattr__", "__delattr__"))):
            found.append((node.lineno, f"{label}:{node.lineno}: {ast.unparse(node)[:80]}"))
    return [line for _, line in sorted(found)]


def test_the_scan_sees_each_form_of_write():
    src = ("from .t import Tensor as T\nimport x\nT.a = 1\nsetattr(T, 'b', 2)\nx.Tensor.c += 1\n"
           "type.__setattr__(Tensor, 'd', 3)\ndel T.e\nT.f: int = 4\nT.g.h = 5\nother.a = 1\n")
    found = _attribute_writes(src, "probe.py")
    assert [line.split(":")[1] for line in found] == ["3", "4", "5", "6", "7", "8"]


def test_no_module_but_tensor_py_assigns_tensor_attributes():
    sources = {path: path.read_text() for path in sorted(PACKAGE.rglob("*.py")) if path not in DEFINING}
    writes = [w for path, text in sources.items() if "Tensor" in text
              for w in _attribute_writes(text, str(path.relative_to(PACKAGE.parent)))]
    assert not writes, ("Tensor methods belong in fgrad/torch/_tensor/_methods.py's TABLE (the class is "
                        "created with them), not installed from another module:\n" + "\n".join(writes))


def test_class_namespace_is_the_table():
    # whatever ran at import time (every fgrad.torch module is imported above), the public
    # class holds exactly the table's rows, and the base only what tensor.py defines
    # (copyreg caches __slotnames__ on a class the first time one of its instances is copied
    # or pickled: Python's own cache, not a method installed from outside)
    assert set(vars(torch.Tensor)) - {"__slotnames__"} == set(M.TABLE) | CLASS_KEYS
    for name, value in vars(TensorBase).items():
        fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        code = getattr(fn, "__code__", None)
        if code is not None:
            assert code.co_filename == tensor_module.__file__, name


def test_every_row_resolves_on_the_class():
    cls_vars = vars(torch.Tensor)
    for name, (kind, target) in M.TABLE.items():
        assert kind in M.KINDS, name
        assert hasattr(torch.Tensor, name), name
        value = cls_vars[name]
        if kind in (M.FUNCTION, M.CONSTANT):
            assert value is target, name
        elif kind == M.ALIAS:
            assert value is cls_vars[target], name
        elif kind == M.PROPERTY:
            assert isinstance(value, property) and value.fget is target, name
        else:
            assert inspect.isfunction(value) and value.__qualname__ == f"Tensor.{name}", name


def test_upper_rows_declare_their_functions_signature():
    import importlib
    for name, (kind, target) in M.TABLE.items():
        if kind != M.UPPER:
            continue
        module, attr, params = target
        fn = getattr(importlib.import_module(module), attr)
        declared = list(inspect.signature(getattr(torch.Tensor, name)).parameters.values())[1:]
        actual = list(inspect.signature(fn).parameters.values())[1:]
        assert [(p.name, p.kind, p.default) for p in declared] == \
            [(p.name, p.kind, p.default) for p in actual], name


def test_generated_methods_show_the_torch_signature_and_name_the_function():
    # torch.add/cumsum also take out= (_out.py), which the methods do not
    assert str(inspect.signature(torch.Tensor.add)) == "(input, other, *, alpha=1)"
    assert str(inspect.signature(torch.add)) == "(input, other, *, alpha=1, out=None)"
    assert str(inspect.signature(torch.Tensor.add_)) == "(self, other, *, alpha=1)"
    assert str(inspect.signature(torch.Tensor.cumsum)) == "(input, dim, *, dtype=None)"
    assert str(inspect.signature(torch.Tensor.uniform_)) == "(self, a=0.0, b=1.0, *, generator=None)"
    assert str(inspect.signature(torch.Tensor.det)) == "(self)"
    for name, (kind, target) in M.TABLE.items():
        if kind in (M.INPLACE, M.INPLACE_ON_COPY, M.REFLECTED, M.CASTER, M.FACTORY, M.RANDOM, M.UPPER):
            doc = getattr(torch.Tensor, name).__doc__
            assert doc.startswith(f"Tensor.{name}(") and "torch" in doc, (name, doc)
        if kind in (M.INPLACE, M.INPLACE_ON_COPY):
            assert f"torch.{target.__name__} " in getattr(torch.Tensor, name).__doc__, name
        if kind != M.CONSTANT:  # every method, property and torch function says what it is
            assert (inspect.getdoc(getattr(torch.Tensor, name)) or "").strip(), name


def test_generated_methods_compute_as_their_functions():
    x = torch.tensor([1.0, 2.0, 3.0])
    y = torch.tensor([0.5, 0.25, 2.0])
    np.testing.assert_allclose(x.clone().add_(y, alpha=2).numpy(), (x + 2 * y).numpy())
    np.testing.assert_allclose(x.clone().cumprod_(0).numpy(), [1.0, 2.0, 6.0])
    np.testing.assert_allclose((2 ** x).numpy(), [2.0, 4.0, 8.0])
    assert (2 ** x).grad_fn is None and (2 % x).dtype == torch.float32
    assert x.double().dtype == torch.float64 and x.new_ones(2).dtype == torch.float32
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    a = torch.empty(5).uniform_(1.0, 2.0, generator=g1)
    b = torch.empty(5).uniform_(1.0, 2.0, generator=g2)
    assert torch.equal(a, b) and bool(((a >= 1.0) & (a < 2.0)).all())
    with pytest.raises(TypeError):
        torch.empty(5).geometric_()  # p has no default, as in PyTorch
    m = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
    assert m.det().item() == pytest.approx(5.0) and m.inverse().shape == (2, 2)
    assert m.to_sparse().to_dense().equal(m) and m.layout is torch.strided and not m.is_sparse


def test_class_identity_hashing_pickling_and_subclasses():
    x = torch.ones(2, requires_grad=True)
    assert type(x) is torch.Tensor and isinstance(x, TensorBase) and type(x + 1) is torch.Tensor
    assert {x: 1}[x] == 1  # __eq__ in the class body leaves it hashable
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is torch.Tensor and y.requires_grad and y.equal(x)
    p = torch.nn.Parameter(torch.zeros(3))
    assert isinstance(p, torch.Tensor) and type(pickle.loads(pickle.dumps(p))) is type(p)
    p2 = p.add(1)  # a subclass inherits the table's methods
    assert type(p2) is torch.Tensor and p2.sum().item() == 3.0


def test_functional_door_refuses_tensors_with_the_class_hook():
    with pytest.raises(TypeError, match=r"fgrad.torch.func.grad"):
        fgrad.grad(lambda v: v.sum())(torch.ones(2))
