"""scalar.math_as: one jit MATH mode for the programs lowered inside a block (fgrad.torch.compile
lowers its programs with "eager": NumPy computes exp, tanh, sin, ... as eager does)."""
from __future__ import annotations

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.errors import FgradValueError
from fgrad.interpreters.compile import scalar


def _chain(x):
    return np.tanh(np.sin(x) * 1.5 + 0.25) * x + 1.0


def test_math_as_chooses_the_lowering_of_programs_made_inside():
    x = onp.linspace(-4.0, 4.0, 64)
    with scalar.math_as("eager"):
        assert scalar.math_mode() == "eager"
        with scalar.math_as("fused"):  # nested: the innermost block's mode
            assert scalar.math_mode() == "fused"
        eager = fgrad.jit(_chain)
        text = eager.lower(x).as_text()
        got = eager(x)
    assert scalar.math_mode() == scalar.MATH
    assert "math.tanh" not in text and "math.sin" not in text  # left to NumPy's impls
    onp.testing.assert_array_equal(got, _chain(x))  # eager's bits
    if scalar.MATH == "fused":  # outside the block: MATH again
        assert "math.tanh" in fgrad.jit(_chain).lower(x).as_text()


def test_math_as_refuses_an_unknown_mode():
    with pytest.raises(FgradValueError, match="'fast'"):
        with scalar.math_as("fast"):
            pass
