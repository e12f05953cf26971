"""`python -m fgrad.run script.py [args ...]`: run a PyTorch script unmodified on fgrad.torch.

Every `import torch` and `import torch.<sub>` in the script (and in what it imports) gives
fgrad.torch's module (see fgrad.torch._alias). The script runs as `__main__` with
`sys.argv` = [script.py, args ...] and its own directory first on `sys.path`, as
`python script.py` would run it. `python -m fgrad.run -m package.module [args ...]` runs a
module the same way.
"""
from __future__ import annotations

import os
import runpy
import sys

from .torch import _alias

USAGE = "usage: python -m fgrad.run script.py [args ...]  |  python -m fgrad.run -m module [args ...]"


def main(argv: list[str] | None = None) -> None:
    """Install the `torch` alias, then run the script or module named by `argv` as __main__."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr if not argv or argv[0] == "-m" else sys.stdout)
        raise SystemExit(0 if argv and argv[0] in ("-h", "--help") else 2)
    _alias.install()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        path = argv[0]
        if not os.path.exists(path):
            raise SystemExit(f"python -m fgrad.run: can't open file {path!r}: no such file")
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main()
