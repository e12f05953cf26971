"""Where the PyTorch sources these tests run come from.

The scripts are PyTorch's, not fgrad's, so they are not copied into this repository: each test
exports them from a git checkout of their repository at a pinned commit, and skips when no
checkout is found. Point FGRAD_PYTORCH_EXAMPLES at a clone of github.com/pytorch/examples and
FGRAD_PYTORCH_TUTORIALS at one of the tutorials (a .git folder or a work tree) holding the pinned
commit.

The tutorials come from github.com/PyTorch-China/tutorials, the Chinese translation of
pytorch/tutorials: its prose is translated, its code is PyTorch's, and its repository is small
enough to clone here (pytorch/tutorials' is not).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

EXAMPLES_PIN = "77f55b912142e11fcfdf5b530231fb9c52f181e8"  # pytorch/examples, 2025-08-25
_EXAMPLES_DEFAULTS = ("/work/.mirror/pytorch+examples/repo",)
TUTORIALS_PIN = "40db1c688927f23b949c16fb1b4531d5ac918180"  # PyTorch-China/tutorials, 2025-01-06
_TUTORIALS_DEFAULTS = ("/work/.mirror/PyTorch-China+tutorials/repo",)


def _git_dir(env: str, defaults: tuple[str, ...], pin: str) -> str | None:
    """The first candidate git directory that holds commit `pin`, or None."""
    candidates = [os.environ[env]] if os.environ.get(env) else list(defaults)
    for candidate in candidates:
        ok = subprocess.run(["git", "-C", candidate, "cat-file", "-e", pin + "^{commit}"],
                            capture_output=True).returncode == 0
        if ok:
            return candidate
    return None


def export_example(folder: str, dest: Path) -> Path:
    """Write pytorch/examples' `folder` at EXAMPLES_PIN under `dest`; skip the test without a clone.

    Args:
        folder: a top-level folder of pytorch/examples ("regression", "word_language_model", ...).
        dest: an empty directory.

    Returns:
        The exported folder, dest / folder. Files the clone stores only as missing large blobs
        are left out (the caller makes its own data).
    """
    git = _git_dir("FGRAD_PYTORCH_EXAMPLES", _EXAMPLES_DEFAULTS, EXAMPLES_PIN)
    if git is None:
        pytest.skip(f"no clone of pytorch/examples at {EXAMPLES_PIN[:12]}: set FGRAD_PYTORCH_EXAMPLES")
    names = subprocess.run(["git", "-C", git, "ls-tree", "-r", "--name-only", EXAMPLES_PIN, folder],
                           capture_output=True, text=True, check=True).stdout.split()
    for name in names:
        blob = subprocess.run(["git", "-C", git, "show", f"{EXAMPLES_PIN}:{name}"], capture_output=True)
        if blob.returncode != 0:
            continue
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob.stdout)
    return dest / folder


def export_tutorial(path: str, dest: Path) -> Path:
    """Write the tutorial at `path` (a .py file of the tutorials repository) at TUTORIALS_PIN into
    `dest`; skip the test without a clone.

    Args:
        path: the tutorial's path in the repository ("intermediate_source/ensembling.py", ...).
        dest: a directory.

    Returns:
        The written script, dest / its file name.
    """
    git = _git_dir("FGRAD_PYTORCH_TUTORIALS", _TUTORIALS_DEFAULTS, TUTORIALS_PIN)
    if git is None:
        pytest.skip(f"no clone of the tutorials at {TUTORIALS_PIN[:12]}: set FGRAD_PYTORCH_TUTORIALS")
    text = subprocess.run(["git", "-C", git, "show", f"{TUTORIALS_PIN}:{path}"], capture_output=True,
                          check=True).stdout
    script = dest / Path(path).name
    script.write_bytes(text)
    return script
