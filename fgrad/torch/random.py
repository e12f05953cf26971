"""torch.random: the default CPU generator's functions, and fork_rng.

Every random function of fgrad.torch draws from one engine, PyTorch's CPU generator reproduced
draw for draw (fgrad/torch/_tensor/_random.py); these are its seeding and state functions under
torch.random's names.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._tensor.creation import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,
                               set_rng_state)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda") -> Iterator[None]:
    """Run a block with the default generator's stream forked: its state is saved on entry and
    restored on exit, so draws inside leave the outer stream where it was.

    Args:
        devices: accepted for torch's signature; fgrad.torch's generators are CPU ones, whose
            state is always forked.
        enabled: False makes this a no-op.
        device_type: accepted for torch's signature.
    Returns:
        a context manager.
    """
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
