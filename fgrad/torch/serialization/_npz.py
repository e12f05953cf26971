"""Reading fgrad's first checkpoint format (before it wrote PyTorch's): a NumPy .npz archive whose
arrays are .npy members and whose structure is a JSON record, read without unpickling."""
from __future__ import annotations

import json
from collections import OrderedDict

import numpy as np

from ...core.errors import FgradValueError
from .. import _tensor as T  # the facade namespace: T.from_numpy, ...
from .._tensor._device import device as _Device
from ..nn.parameter import Parameter

STRUCTURE = "__fgrad_structure__"
_FORMAT = "fgrad-state-v1"


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


def read_npz(fileobj, map_location):
    """The object an fgrad .npz checkpoint holds (`map_location`: None or one device)."""
    with np.load(fileobj, allow_pickle=False) as npz:
        structure = json.loads(bytes(npz[STRUCTURE]).decode("utf-8"))
        arrays = {int(name[1:]): npz[name] for name in npz.files if name != STRUCTURE}
    if structure.get("format") != _FORMAT:
        raise FgradValueError(f"fgrad.torch.load: unsupported format {structure.get('format')!r}")
    if map_location is not None and not isinstance(map_location, str):
        # a device names one place; a dict or callable (per-location choices) keeps the saved devices
        map_location = str(map_location) if isinstance(map_location, _Device) else None
    return _decode(structure["root"], arrays, map_location)
