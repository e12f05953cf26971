"""repr of Tensors, printed as PyTorch prints them (same number formatting rules)."""
from __future__ import annotations

import math

import numpy as np

from ...core.trace import Tracer
from . import _dtypes as D
from ._device import is_cupy, is_meta


class PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


OPTS = PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """torch.set_printoptions."""
    if profile is not None:
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = {
            "default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(OPTS, name, value)
    OPTS.sci_mode = sci_mode


class _Formatter:
    def __init__(self, arr: np.ndarray) -> None:
        self.floating = arr.dtype.kind in "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absd = np.abs(vals).astype(np.float64)
        lo, hi = absd.min(), absd.max()
        self.int_mode = bool((vals == np.ceil(vals)).all())
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if OPTS.sci_mode is None \
            else OPTS.sci_mode
        p = OPTS.precision
        for v in vals.tolist():
            if self.sci_mode:
                w = len(f"{v:.{p}e}")
            elif self.int_mode:
                w = len(f"{v:.0f}") + 1
            else:
                w = len(f"{v:.{p}f}")
            self.max_width = max(self.max_width, w)

    def format(self, value) -> str:
        if self.floating:
            p = OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _vector_str(arr, indent, summarize, fmt) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((OPTS.linewidth - indent) / element_length))
    e = OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * e:
        data = [fmt.format(v) for v in arr[:e].tolist()] + [" ..."] + [fmt.format(v) for v in arr[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _str_with(arr, indent, summarize, fmt) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    e = OPTS.edgeitems
    if summarize and arr.shape[0] > 2 * e:
        slices = ([_str_with(arr[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                  + [_str_with(arr[i], indent + 1, summarize, fmt) for i in range(arr.shape[0] - e, arr.shape[0])])
    else:
        slices = [_str_with(arr[i], indent + 1, summarize, fmt) for i in range(arr.shape[0])]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(arr):
    if arr.ndim == 0:
        return arr
    e = OPTS.edgeitems
    if arr.ndim == 1:
        return np.concatenate([arr[:e], arr[-e:]]) if arr.shape[0] > 2 * e else arr
    if not e:
        return arr[(slice(0, 0),) * arr.ndim]
    rows = list(range(e)) + list(range(arr.shape[0] - e, arr.shape[0])) if arr.shape[0] > 2 * e \
        else range(arr.shape[0])
    return np.stack([_summarized(arr[i]) for i in rows])


def tensor_str(arr: np.ndarray, indent: int) -> str:
    if arr.size == 0:
        return "[]"
    summarize = arr.size > OPTS.threshold
    if arr.dtype == np.float16 or arr.dtype.kind == "V":  # (bfloat16, float8_*: printed as their float32 values)
        arr = arr.astype(np.float32)
    elif arr.dtype.kind == "c" and arr.dtype.itemsize == 4:  # complex32
        arr = arr.astype(np.complex64)
    if arr.dtype.kind == "c":
        return np.array2string(arr, separator=", ", prefix=" " * indent)
    fmt = _Formatter(_summarized(arr) if summarize else arr)
    return _str_with(arr, indent, summarize, fmt)


def _add_suffixes(text, suffixes, indent) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    v = t._value
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if isinstance(v, Tracer):
        body = f"<traced {v.aval}>" if hasattr(v, "aval") else repr(v)
    elif is_meta(v):  # no values: PyTorch prints `...` with the device and the size
        body = "..."
        suffixes.append("device='meta'")
        suffixes.append(f"size={tuple(v.shape)}")
        if v.dtype != D.TORCH.default_float:
            suffixes.append(f"dtype={D.of_np(v.dtype)!r}")
    else:
        if is_cupy(v):
            suffixes.append(f"device='{t.device}'")
            v = v.get()
        dt = v.dtype
        if v.size == 0:
            if v.ndim != 1:
                suffixes.append(f"size={tuple(v.shape)}")
            if dt != D.TORCH.default_float:
                suffixes.append(f"dtype={D.of_np(dt)!r}")
            body = "[]"
        else:
            if dt != D.TORCH.python_dtype(dt.kind):  # not the dtype Python numbers of its kind get
                suffixes.append(f"dtype={D.of_np(dt)!r}")
            body = tensor_str(v, indent)
    if t._node is not None:
        suffixes.append(f"grad_fn=<{type(t._node).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
