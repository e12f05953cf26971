"""Every entry of the error catalogue: type, message, and a correct computation after it."""
import re
from pathlib import Path

import pytest

from .error_catalogue import ENTRIES


@pytest.mark.parametrize("entry", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_catalogued_error(entry):
    eid, title, trigger, exc, pattern, fix, recovery = entry
    with pytest.raises(exc) as info:
        trigger()
    assert re.search(pattern, str(info.value), re.S), f"{eid}: message was {info.value}"
    recovery()


def test_catalogue_is_large_and_documented():
    assert len(ENTRIES) >= 25
    doc = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text()
    for eid, *_ in ENTRIES:
        assert f"(`{eid}`)" in doc, f"docs/errors.md lacks {eid}: run python tests/error_catalogue.py"
