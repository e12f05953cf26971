"""Placeholder module filled in by the _linalg work (see fgrad/numpy/__init__.py)."""
__all__: list = []
