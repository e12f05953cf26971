"""What the installed package carries: its license, its typing marker, one version."""
from __future__ import annotations

import pathlib
import tomllib

import fgrad

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_license_typing_marker_and_version_are_declared_once():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    meta = project["project"]
    assert meta["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert meta["license-files"] == ["LICENSE"]
    assert "version" not in meta and meta["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fgrad.__version__"}
    assert (pathlib.Path(fgrad.__file__).parent / "py.typed").exists()
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["fgrad"]
    assert f"({fgrad.__version__})" in (ROOT / "CHANGELOG.md").read_text()
