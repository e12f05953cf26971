"""torch.SymInt / SymFloat / SymBool against torch 2.13 in eager mode: sizes, numbers and bools
are never instances, the classes stand alone, and their constructors take the symbolic node."""
from __future__ import annotations

import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")
NAMES = ("SymInt", "SymFloat", "SymBool")


@pytest.mark.parametrize("name", NAMES)
def test_isinstance_as_eager_torch(name):
    f, t = getattr(ftorch, name), getattr(torch, name)
    for fv, tv in ((3, 3), (2.5, 2.5), (True, True), (ftorch.ones(2, 3).shape[1], torch.ones(2, 3).shape[1]),
                   (ftorch.ones(2).numel(), torch.ones(2).numel())):
        assert isinstance(fv, f) == isinstance(tv, t) is False
    assert [c.__name__ for c in f.__mro__] == [c.__name__ for c in t.__mro__]
    for lib in (ftorch, torch):
        with pytest.raises(TypeError, match="node"):
            getattr(lib, name)()
    assert f("n").node == "n"
