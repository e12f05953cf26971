"""Placeholder module filled in by the _creation work (see fgrad/numpy/__init__.py)."""
__all__: list = []
