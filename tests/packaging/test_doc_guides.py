"""The code on the documentation site's pages (docs/**/*.md) runs, and shows what it says.

A page's ```python blocks run in order in one namespace, as a reader pasting them would run
them. A block written as a session (``>>>`` lines followed by their output) is a doctest: the
output shown must be the output printed. A block that cannot run here (it needs a GPU, mpirun,
or names the reader supplies) is marked on the line before it with
``<!-- not run: <why> -->`` and must still compile.
"""
from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# the generated pages (API reference, coverage tables) hold no code blocks of their own
PAGES = sorted(p for p in DOCS.rglob("*.md") if not p.relative_to(DOCS).parts[0] == "api")

_BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)^```", re.S | re.M)
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<why>\S.*?)\s*-->")
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def python_blocks(text: str) -> list[tuple[int, str, str | None]]:
    """The ```python blocks of a Markdown page.

    Args:
        text: the page.

    Returns:
        (line number of the opening fence, code, why it is not run or None) for each block.
    """
    blocks = []
    for match in _BLOCK.finditer("\n" + text):
        line = ("\n" + text)[:match.start("code")].count("\n") - 1  # the opening fence's
        not_run = _NOT_RUN.search(match["before"])
        blocks.append((line, match["code"], not_run["why"] if not_run else None))
    return blocks


def run_page(path: Path) -> list[str]:
    """Run every block of a page; the failures, one line each (empty when all pass).

    Args:
        path: the Markdown page.

    Returns:
        ``"page:line: what failed"`` for each block that raised or printed other output.
    """
    name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
    namespace: dict = {"__name__": "__docs__"}
    failures = []
    for line, code, why_not in python_blocks(path.read_text()):
        where = f"{name}:{line}"
        if why_not is not None:
            if ">>>" in code:
                code = doctest.script_from_examples(code)
            try:
                compile(code, where, "exec")
            except SyntaxError as e:
                failures.append(f"{where}: does not compile ({e})")
            continue
        if ">>>" in code:
            test = doctest.DocTestParser().get_doctest(code, namespace, where, name, line)
            report: list[str] = []
            runner = doctest.DocTestRunner(optionflags=_FLAGS)
            runner.run(test, out=report.append, clear_globs=False)
            if runner.failures:
                failures.append(f"{where}: the output shown differs from the output printed\n"
                                + "".join(report))
            continue
        try:
            exec(compile(code, where, "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - any exception is the page's failure
            failures.append(f"{where}: {type(e).__name__}: {e}")
    return failures


PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p.read_text())]


def test_the_guides_have_code():
    runnable = [b for p in PAGES for b in python_blocks(p.read_text()) if b[2] is None]
    assert len(runnable) >= 5, "the guides' code blocks were not found (is the fence ```python?)"


@pytest.mark.parametrize("path", PAGES_WITH_CODE, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_code_runs(path):
    failures = run_page(path)
    assert not failures, "\n".join(failures)


def test_a_wrong_page_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Text.\n\n```python\n>>> 1 + 1\n3\n```\n\n```python\nundefined_name\n```\n\n"
                    "<!-- not run: a fragment -->\n```python\nmodel.to('cuda')\n```\n\n"
                    "<!-- not run: a typo -->\n```python\ndef f(:\n```\n")
    failures = run_page(page)
    assert [f.split(":")[1] for f in failures] == ["3", "8", "18"], failures  # the fences
    assert "NameError" in failures[1] and "does not compile" in failures[2]
