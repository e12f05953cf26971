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
    message = str(info.value)
    assert re.search(pattern, message, re.S), f"{eid}: message was {info.value}"
    # Where: the user's own line (the trigger in error_catalogue.py, fgrad's frames filtered out);
    # and the entry's anchor in docs/errors.md.
    assert re.search(r"\n  at \S*error_catalogue\.py:\d+: \S", message), f"{eid}: no user line in {message}"
    assert f"See docs/errors.md#{eid}" in message, f"{eid}: no docs link in {message}"
    assert message.index(f"See docs/errors.md#{eid}") > message.index("  at "), message
    recovery()


def test_catalogue_is_large_and_documented():
    assert len(ENTRIES) >= 25
    doc = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text()
    for eid, *_ in ENTRIES:
        assert f"(`{eid}`)" in doc, f"docs/errors.md lacks {eid}: run python tests/error_catalogue.py"
        assert f'<a id="{eid}"></a>' in doc, f"docs/errors.md lacks the anchor of {eid}: run python tests/error_catalogue.py"
