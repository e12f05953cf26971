"""Run documentation cells in order in one namespace, as a notebook kernel would.

Used twice: by extract.py under real JAX (to record the pinned release's output) and by
test_jax_docs.py under the alias package that makes ``import jax`` load fgrad.
"""
from __future__ import annotations

import ast
import contextlib
import io
import re
import traceback

# IPython line magics that only time or configure the kernel: the statement after the
# timing magic runs once, untimed; the rest are dropped.
_TIMING = re.compile(r"^(\s*)%%?(timeit|time)\b((\s+-\w+(\s+\d+)?)*)\s*(.*)$")
_DROPPED = re.compile(r"^\s*(%|!)")


def strip_magics(source: str) -> tuple[str, bool]:
    """Rewrite a cell's IPython magics into plain Python.

    Args:
        source: the cell's code.
    Returns:
        (python source, whether the cell used a timing magic, whose output is a measurement).
    """
    out, timed = [], False
    for line in source.splitlines():
        m = _TIMING.match(line)
        if m:
            timed = True
            if m.group(6):
                out.append(m.group(1) + m.group(6))
            continue
        if _DROPPED.match(line):
            continue
        out.append(line)
    return "\n".join(out), timed


def run_cell(source: str, namespace: dict) -> dict:
    """Execute one cell in ``namespace``.

    Args:
        source: the cell's code (IPython magics allowed, see strip_magics).
        namespace: the notebook's globals, updated in place.
    Returns:
        ``stdout`` (what it printed), ``shown`` (repr of a trailing expression's value, as a
        notebook shows it, or None), ``error`` (the name of the exception's built-in base
        class, or None), ``error_bases`` (every built-in class it derives from),
        ``message`` (the exception's last traceback line) and ``timed``.
    """
    code, timed = strip_magics(source)
    buf = io.StringIO()
    shown = error = message = None
    bases: list[str] = []
    try:
        tree = ast.parse(code)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
            last = ast.Expression(tree.body.pop().value)
        with contextlib.redirect_stdout(buf):
            exec(compile(tree, "<cell>", "exec"), namespace)
            if last is not None:
                value = eval(compile(last, "<cell>", "eval"), namespace)
                if value is not None:
                    shown = repr(value)
    except BaseException as e:  # noqa: BLE001 - a cell's failure is data for the caller
        if isinstance(e, KeyboardInterrupt):
            raise
        error = builtin_base(type(e)).__name__
        bases = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins" and c is not object]
        message = traceback.format_exception_only(type(e), e)[0].strip()[:500]
    return {"stdout": buf.getvalue(), "shown": shown, "error": error, "message": message,
            "error_bases": bases, "timed": timed}


def builtin_base(cls: type) -> type:
    """The first built-in exception class in ``cls``'s MRO (JAX and fgrad name their own
    subclasses differently; the runner compares the built-in class they share)."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def run_cells(sources: list[str]) -> list[dict]:
    """Run a page's cells in order in a fresh namespace; see run_cell for each result."""
    namespace: dict = {"__name__": "__main__"}
    return [run_cell(src, namespace) for src in sources]
