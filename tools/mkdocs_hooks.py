"""MkDocs hook (mkdocs.yml `hooks:`): adds the generated API reference pages to the site at build
time, without writing them into docs/ (tools/gen_api_docs.py makes them from the docstrings)."""
from __future__ import annotations

import pathlib
import sys

from mkdocs.structure.files import File, Files

# tools/ for the generator; the repository root so that a build from a checkout documents that
# checkout's fgrad even where another one is installed
_HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE), str(_HERE.parent)]
import gen_api_docs  # noqa: E402


def on_files(files: Files, config) -> Files:
    """Add one generated page per public module, and the reference's index.

    Args:
        files: the site's files so far (docs/).
        config: the MkDocs configuration.

    Returns:
        ``files`` with the API pages added.
    """
    for rel, text in gen_api_docs.pages():
        files.append(File.generated(config, rel, content=text))
    return files
