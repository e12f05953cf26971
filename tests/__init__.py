"""fgrad's test suite (tests/test_layout.py says how it is laid out)."""
from __future__ import annotations

from typing import Iterable

import pytest


def sampled(values: Iterable, every: int, unpack: bool = False) -> list:
    """`values` as parametrize entries where every `every`-th (the first, then each
    `every`-th after it) runs in the default run and the others are marked slow: a family
    whose cases each cost an oracle's compilation keeps a spread of them in the default run,
    and CI's slow step runs them all. `unpack`: each value is a tuple of several argnames'
    values."""
    def entry(v, marks=()):
        return pytest.param(*v, marks=marks) if unpack else pytest.param(v, marks=marks)
    return [v if i % every == 0 else entry(v, pytest.mark.slow) for i, v in enumerate(values)]
