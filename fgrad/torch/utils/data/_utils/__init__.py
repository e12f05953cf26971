"""The DataLoader's machinery, laid out as PyTorch's torch.utils.data._utils (collate, fetch,
worker), so that scripts importing e.g. `torch.utils.data._utils.collate.default_collate` work."""
from __future__ import annotations

import atexit

# How often (seconds) a blocked DataLoader or worker wakes to check that the other side is alive.
MP_STATUS_CHECK_INTERVAL = 0.5

# Set at interpreter exit: workers are daemons then, shutting them down politely is not needed
# (and the queues they would use may already be torn down).
python_exit_status = False


def _set_python_exit_flag() -> None:
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)

from . import collate, fetch, worker  # noqa: E402,F401  (after the flags above, which worker reads)
