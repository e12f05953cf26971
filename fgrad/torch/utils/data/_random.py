"""The data loader's use of fgrad.torch's one RNG (fgrad/torch/_tensor/_random.py, PyTorch's CPU
generator draw for draw): samplers, random_split and the DataLoader's worker seeds draw from the
stream of the `fgrad.torch.Generator` they are given, or of the default generator when None, as
torch's do; so they give torch's shuffles, splits and samples for the same seeds.
"""
from __future__ import annotations

import numpy as np

from ....core.errors import FgradTypeError
from ..._tensor._random import TorchMT19937
from ..._tensor.creation import Generator, default_generator


def as_generator(generator, what: str = "generator"):
    """Check a user's `generator` argument: None, an fgrad.torch.Generator, a NumPy Generator, or
    an int seed (fgrad's older API; it becomes `torch.Generator().manual_seed(seed)`)."""
    if generator is None or isinstance(generator, (Generator, np.random.Generator)):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return Generator().manual_seed(int(generator))
    raise FgradTypeError(f"{what} must be an fgrad.torch.Generator (torch.Generator under `import fgrad.torch as torch`) "
                         f"or None, got {type(generator).__name__}; make one with "
                         "torch.Generator().manual_seed(seed)")


def stream(generator) -> TorchMT19937:
    """The stream a sampler draws from: `generator`'s, else the default generator's (a NumPy
    Generator seeds a new stream with a 63-bit draw)."""
    generator = as_generator(generator)
    if isinstance(generator, np.random.Generator):
        return TorchMT19937(int(generator.integers(0, 1 << 63)))
    return (default_generator if generator is None else generator).engine


def fresh_stream(generator) -> TorchMT19937:
    """RandomSampler's stream: `generator`'s, or with None a new generator seeded by a 63-bit
    draw from the default one (torch's `torch.empty((), dtype=torch.int64).random_()`)."""
    generator = as_generator(generator)
    if generator is None:
        return TorchMT19937(default_generator.engine.seed63())
    return stream(generator)


def draw_seed(generator) -> int:
    """A 63-bit seed from `generator` (the default generator when None), as
    `torch.empty((), dtype=torch.int64).random_(generator=g)` draws one (the DataLoader's
    per-epoch worker base seed)."""
    return stream(generator).seed63()
