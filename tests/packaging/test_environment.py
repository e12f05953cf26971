"""fgrad.print_environment_info (fgrad/_environment.py): the report a bug report needs."""
from __future__ import annotations

import importlib.metadata

import numpy as np

import fgrad


def test_report_names_versions_blas_and_cache(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("FGRAD_CACHE_DIR", str(tmp_path))
    text = fgrad.print_environment_info(return_string=True)
    lines = dict(line.split(":", 1) for line in text.splitlines() if not line.startswith(" ") and ":" in line)
    assert lines["fgrad"].strip() == fgrad.__version__
    assert lines["numpy"].strip() == np.__version__
    assert lines["numba"].strip() == importlib.metadata.version("numba")
    assert lines["cache dir"].strip() == str(tmp_path)
    assert f"FGRAD_CACHE_DIR={tmp_path}" in text
    assert "BLAS / OpenMP:" in text
    assert fgrad.print_environment_info() is None
    assert capsys.readouterr().out.strip() == text


def test_version_has_one_source():
    # pyproject.toml reads fgrad.__version__ (setuptools' dynamic version), so the installed
    # distribution's metadata and the module agree
    assert importlib.metadata.version("fgrad") == fgrad.__version__
    assert "print_environment_info" in dir(fgrad)
