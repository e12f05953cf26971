"""load's weights_only default follows PyTorch's environment overrides (pytorch/examples'
time_sequence_prediction loads a pickled NumPy array and runs under TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


@pytest.fixture
def numpy_file(tmp_path):
    path = tmp_path / "data.pt"
    ftorch.save(np.arange(6.0).reshape(2, 3), str(path))
    return str(path)


@pytest.mark.parametrize("lib", [ftorch, torch], ids=["fgrad", "torch"])
def test_default_refuses_then_env_allows(lib, numpy_file, monkeypatch):
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    with pytest.raises(pickle.UnpicklingError):
        lib.load(numpy_file)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        loaded = lib.load(numpy_file)
    np.testing.assert_array_equal(loaded, np.arange(6.0).reshape(2, 3))
    with pytest.raises(pickle.UnpicklingError):  # an explicit weights_only=True is kept
        lib.load(numpy_file, weights_only=True)


@pytest.mark.parametrize("lib", [ftorch, torch], ids=["fgrad", "torch"])
def test_force_weights_only_and_both_set(lib, numpy_file, monkeypatch):
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(pickle.UnpicklingError):
        lib.load(numpy_file, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(RuntimeError, match="Only one of"):
        lib.load(numpy_file)
