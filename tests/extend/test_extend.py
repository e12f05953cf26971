"""fgrad.extend: each module's names exist and are documented in its docstring (they are the
public surface libraries such as fgrad.torch are written on)."""
from __future__ import annotations

import re

import pytest

import fgrad.extend
from fgrad.extend import batching, kernels, lax, nn, numpy


@pytest.mark.parametrize("module", [batching, kernels, lax, nn, numpy], ids=lambda m: m.__name__)
def test_every_name_is_defined_and_documented(module):
    assert module.__all__, module.__name__
    undocumented = [n for n in module.__all__ if not re.search(rf"(?<![\w.]){re.escape(n)}\b", module.__doc__)]
    assert not undocumented, f"{module.__name__}: names its docstring does not describe: {undocumented}"
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_package_lists_its_modules():
    assert sorted(fgrad.extend.__all__) == ["batching", "kernels", "lax", "nn", "numpy"]
    for name in fgrad.extend.__all__:
        assert name in fgrad.extend.__doc__


def test_binders_bind_the_primitives_fgrad_lax_exports():
    import numpy as np
    from fgrad import make_jaxpr
    jaxpr = make_jaxpr(lambda x: lax.reshape(lax.add(x, x), (4,)))(np.ones((2, 2)))
    assert [e.primitive for e in jaxpr.jaxpr.eqns] == [fgrad.lax.add_p, fgrad.lax.reshape_p]
