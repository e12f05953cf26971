"""fgrad.torch.save / fgrad.torch.load: state dicts (nested dicts, lists and tuples of tensors, arrays,
numbers, strings, None) in a NumPy .npz archive. Arrays are stored as .npy members and the
structure as JSON, so loading never unpickles (np.load(allow_pickle=False)) and runs no code
from the file."""
from __future__ import annotations

import io
import json
import os
import zipfile
from collections import OrderedDict

import numpy as np

from . import _tensor as T  # the facade namespace: T.from_numpy, ...
from ..core.errors import FgradTypeError, FgradValueError
from ..core.trace import Tracer
from ._tensor.tensor import Tensor
from .nn.parameter import Parameter

__all__ = ["save", "load"]

_FORMAT = "fgrad-state-v1"
_STRUCTURE = "__fgrad_structure__"


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _encode_key(k):
    if isinstance(k, bool) or not isinstance(k, (str, int)):
        raise FgradTypeError(f"fgrad.torch.save: dict keys must be str or int, got {type(k).__name__} {k!r}")
    return ["s", k] if isinstance(k, str) else ["i", k]


def _encode(obj, arrays: list):
    if _is_tensor(obj):
        v = obj._value
        if isinstance(v, Tracer):
            raise FgradTypeError("fgrad.torch.save: cannot save a traced value (inside fgrad.grad/jit/vmap); "
                            "save concrete tensors")
        device = str(obj.device)
        arr = v.get() if hasattr(v, "get") and not isinstance(v, np.ndarray) else np.asarray(v)
        arrays.append(arr)
        return {"t": "tensor", "a": len(arrays) - 1, "rg": bool(obj.requires_grad),
                "param": isinstance(obj, Parameter), "device": device}
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "OV":
            raise FgradTypeError(f"fgrad.torch.save: cannot save arrays of dtype {obj.dtype}")
        arrays.append(obj)
        return {"t": "ndarray", "a": len(arrays) - 1}
    if isinstance(obj, np.generic):
        arrays.append(np.asarray(obj))
        return {"t": "npscalar", "a": len(arrays) - 1}
    if obj is None or isinstance(obj, (bool, int, str)):
        return {"t": "py", "v": obj}
    if isinstance(obj, float):
        return {"t": "float", "v": repr(obj)}
    if isinstance(obj, dict):
        kind = "odict" if isinstance(obj, OrderedDict) else "dict"
        return {"t": kind, "items": [[_encode_key(k), _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"t": "list" if isinstance(obj, list) else "tuple",
                "items": [_encode(v, arrays) for v in obj]}
    raise FgradTypeError(f"fgrad.torch.save: cannot save an object of type {type(obj).__name__}; supported are "
                    "tensors, NumPy arrays, numbers, strings, None and dicts/lists/tuples of them "
                    "(e.g. model.state_dict(), optimizer.state_dict())")


def _decode(node, arrays, map_location):
    t = node["t"]
    if t == "tensor":
        arr = arrays[node["a"]]
        value = T.from_numpy(arr)
        device = map_location if map_location is not None else node.get("device", "cpu")
        if str(device) != "cpu":
            value = value.to(device)
        if node.get("param"):
            return Parameter(value, node["rg"])
        if node["rg"]:
            value.requires_grad_(True)
        return value
    if t == "ndarray":
        return arrays[node["a"]]
    if t == "npscalar":
        return arrays[node["a"]][()]
    if t == "py":
        return node["v"]
    if t == "float":
        return float(node["v"])
    if t in ("dict", "odict"):
        out = OrderedDict() if t == "odict" else {}
        for (kt, k), v in node["items"]:
            out[k if kt == "s" else int(k)] = _decode(v, arrays, map_location)
        return out
    if t in ("list", "tuple"):
        items = [_decode(v, arrays, map_location) for v in node["items"]]
        return items if t == "list" else tuple(items)
    raise FgradValueError(f"fgrad.torch.load: unknown entry type {t!r} (file written by a newer fgrad?)")


def save(obj, f) -> None:
    """Write `obj` (a state dict or any nesting of dicts/lists/tuples of tensors, arrays and
    plain values) to the path or binary file `f`."""
    arrays: list = []
    structure = {"format": _FORMAT, "root": _encode(obj, arrays)}
    members = {f"a{i}": a for i, a in enumerate(arrays)}
    members[_STRUCTURE] = np.frombuffer(json.dumps(structure).encode("utf-8"), np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            np.savez(fh, **members)
    else:
        np.savez(f, **members)


def load(f, map_location=None, weights_only: bool = True, **kwargs):
    """Read what fgrad.torch.save wrote. `map_location` ('cpu', 'cuda', ...) moves tensors there.
    Only data is read (no pickle), whatever `weights_only` says."""
    if isinstance(f, (str, os.PathLike)):
        if not os.path.exists(f):
            raise FileNotFoundError(f"fgrad.torch.load: no such file: {os.fspath(f)!r}")
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            if _STRUCTURE not in npz.files:
                raise FgradValueError("fgrad.torch.load: not a file written by fgrad.torch.save (no structure record)")
            structure = json.loads(bytes(npz[_STRUCTURE]).decode("utf-8"))
            arrays = {}
            for name in npz.files:
                if name != _STRUCTURE:
                    arrays[int(name[1:])] = npz[name]
    except (zipfile.BadZipFile, OSError) as e:
        raise FgradValueError(f"fgrad.torch.load: not a file written by fgrad.torch.save ({e})") from None
    if structure.get("format") != _FORMAT:
        raise FgradValueError(f"fgrad.torch.load: unsupported format {structure.get('format')!r}")
    ml = None if map_location is None else str(map_location)
    return _decode(structure["root"], arrays, ml)


# PyTorch's allow-list for weights_only unpickling. fgrad.torch.load never unpickles (files hold
# only data), so there is nothing to allow; the list is kept for scripts that set it.
_SAFE_GLOBALS: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Accepted for PyTorch's API (fgrad.torch.load reads data only, never code)."""
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_SAFE_GLOBALS)


def clear_safe_globals() -> None:
    _SAFE_GLOBALS.clear()


class safe_globals:
    """`with fgrad.torch.serialization.safe_globals([...]):` (accepted; see add_safe_globals)."""

    def __init__(self, safe_globals: list) -> None:
        self._globals = list(safe_globals)

    def __enter__(self) -> "safe_globals":
        _SAFE_GLOBALS.extend(self._globals)
        return self

    def __exit__(self, *exc) -> None:
        for g in self._globals:
            if g in _SAFE_GLOBALS:
                _SAFE_GLOBALS.remove(g)
