"""Error messages end with "See docs/errors.md#<id>": the page ships inside the package
(fgrad/docs/errors.md) and holds an anchor for every id fgrad's source raises with."""
from __future__ import annotations

import pathlib
import re
import tomllib

import fgrad
from fgrad.core.errors import DOCS_PAGE, FgradValueError

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(fgrad.__file__).resolve().parent
# doc="<id>" as a keyword argument or a class attribute; ids are lowercase words joined by "-"
_DOC_ID = re.compile(r'\bdoc\s*=\s*"([a-z0-9]+(?:-[a-z0-9]+)*)"')


def referenced_ids() -> set[str]:
    """Every errors-page id written in fgrad's source."""
    ids: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        ids.update(_DOC_ID.findall(path.read_text(encoding="utf-8")))
    return ids


def shipped_page() -> str:
    # the file beside the installed package's modules (importlib.resources cannot open it
    # through setuptools' editable finder: "Can't open orphan path")
    return (PACKAGE / DOCS_PAGE).read_text(encoding="utf-8")


def test_the_page_is_package_data_and_the_repository_page():
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert DOCS_PAGE in package_data["fgrad"], "pyproject.toml must ship docs/errors.md in the wheel"
    # one page: what the package ships is what the site shows
    assert shipped_page() == (ROOT / DOCS_PAGE).read_text(encoding="utf-8")


def test_every_referenced_id_has_an_anchor_in_the_shipped_page():
    ids = referenced_ids()
    assert len(ids) > 50, sorted(ids)  # the scan finds the raises (about 80 ids when written)
    page = shipped_page()
    missing = sorted(i for i in ids if f'<a id="{i}"></a>' not in page)
    assert not missing, f"ids raised in fgrad/ without an entry in {DOCS_PAGE}: {missing}"


def test_the_message_names_the_shipped_page():
    message = str(FgradValueError("what happened.", doc="broadcast"))
    link = message.rsplit("See ", 1)[1]
    page, anchor = link.split("#")
    assert (PACKAGE / page).is_file()
    assert f'<a id="{anchor}"></a>' in (PACKAGE / page).read_text(encoding="utf-8")
