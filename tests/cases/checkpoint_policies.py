"""Cases for checkpoint with a saving policy and for checkpoint_name's `name` primitive
(format: see tests/ops/test_primitives.py)."""
import numpy as np

import fgrad
import fgrad.numpy as fnp
from fgrad.custom import checkpoint_name  # (fgrad.ad_checkpoint: see test_namespaces)


def _named_block(x, y):
    return checkpoint_name(fnp.tanh(x * y), "t") * fnp.dot(x, y.T).sum()


XY = lambda rng, dt: (rng.uniform(-1, 1, (3, 4)).astype(dt), rng.uniform(-1, 1, (3, 4)).astype(dt))  # noqa: E731
X = lambda rng, dt: (rng.uniform(-1, 1, (3, 4)).astype(dt),)  # noqa: E731

CASES = [
    # the name is inside the checkpoint's own staged function, which the coverage walk does not
    # enter: listed
    ("checkpoint[policy=names]",
     fgrad.checkpoint(_named_block, policy=fgrad.checkpoint_policies.save_only_these_names("t")),
     lambda x, y: np.tanh(x * y) * (x @ y.T).sum(), XY, {"prims": ["name", "checkpoint"]}),
    ("checkpoint[policy=dots]",
     fgrad.checkpoint(_named_block, policy=fgrad.checkpoint_policies.dots_saveable),
     lambda x, y: np.tanh(x * y) * (x @ y.T).sum(), XY),
    ("checkpoint_name", lambda x: checkpoint_name(fnp.sin(x), "s") * 2.0, lambda x: np.sin(x) * 2.0, X),
]
