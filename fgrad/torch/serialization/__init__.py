"""fgrad.torch.save / fgrad.torch.load in PyTorch's own checkpoint format.

`save` writes what `torch.save` writes: a zip archive with `<name>/data.pkl` (a protocol-2
pickle; tensors are `torch._utils._rebuild_tensor_v2` calls on storages named by persistent
ids) and `<name>/data/<key>` raw little-endian storage records aligned to 64 bytes. Real
`torch.load(f)` reads fgrad's tensors and state dicts (weights_only=True, its default), and
whole fgrad objects (`torch.save(model, f)`) with weights_only=False where fgrad is importable.

`load` reads that format, torch's legacy (pre-zip) format and fgrad's older .npz format,
without importing torch: torch's globals map to fgrad's. As in PyTorch >= 2.6, weights_only=True
(the default) refuses any global beyond tensors, containers, dtypes, sizes and devices; allow
more with `add_safe_globals` / `safe_globals`, or pass weights_only=False for trusted files.

Tensors that share memory (tied weights, views of one tensor) share one storage in the file,
written once, and share memory again after loading (on the CPU).

safetensors: fgrad needs no adapter. With the `safetensors` package installed,
`safetensors.numpy.save_file({k: v.numpy() for k, v in model.state_dict().items()}, path)`
writes a state dict, and `model.load_state_dict({k: fgrad.torch.from_numpy(a) for k, a in
safetensors.numpy.load_file(path).items()})` reads it back (fgrad does not depend on the package).
"""
from __future__ import annotations

import os
import pickle
import warnings
import zipfile

from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from . import _npz, _read, _write

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2  # torch's: readable by every PyTorch release


def save(obj, f, pickle_module=None, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Write `obj` to `f` in PyTorch's zip checkpoint format.

    Args:
        obj: a tensor, a state dict (`model.state_dict()`, `optimizer.state_dict()`), any nesting of
            dicts/lists/tuples of tensors and Python values, or a whole picklable object (an
            nn.Module); tensors are stored by their storages, other objects are pickled.
        f: a path or a writable binary file object.
        pickle_module: accepted for PyTorch's signature; only the standard `pickle` is supported.
        pickle_protocol: the pickle protocol of `data.pkl` (2, torch's default, up to 5).
        _use_new_zipfile_serialization: must be True (fgrad writes only the zip format).
        _disable_byteorder_record: accepted for PyTorch's signature (the record is always written).

    Returns:
        None.

    Example:
        >>> import io
        >>> import fgrad.torch as torch
        >>> buffer = io.BytesIO()
        >>> torch.save({"w": torch.tensor([1.0, 2.0]), "step": 3}, buffer)
        >>> _ = buffer.seek(0)
        >>> torch.load(buffer)
        {'w': tensor([1., 2.]), 'step': 3}
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise FgradValueError(f"fgrad.torch.save: only the standard pickle module is supported, "
                              f"got {pickle_module!r}")
    if not _use_new_zipfile_serialization:
        raise FgradValueError("fgrad.torch.save writes only PyTorch's zip format "
                              "(_use_new_zipfile_serialization=True); fgrad.torch.load reads both")
    protocol = _write.check_protocol(pickle_protocol)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write.write_archive(obj, fh, _write._record_name(f), protocol)
        return
    if not hasattr(f, "write"):
        raise FgradTypeError(f"fgrad.torch.save: expected a path or a binary file object, got {type(f).__name__}")
    _write.write_archive(obj, f, "archive", protocol)


_TRUE = ("1", "y", "yes", "true")


def _weights_only_default(weights_only: bool | None) -> bool:
    """load's weights_only after PyTorch's two environment overrides.

    Args:
        weights_only: what the caller passed (None when not passed).

    Returns:
        True or False.

    Raises:
        FgradRuntimeError: both TORCH_FORCE_WEIGHTS_ONLY_LOAD and TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD are set.
    """
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise FgradRuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                                "should be set, but both were set: unset one of them.")
    if force:
        return True
    if force_no and weights_only is None:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the `weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        return False
    return True if weights_only is None else bool(weights_only)


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args):
    """Read a checkpoint written by fgrad.torch.save or torch.save (zip or legacy format), or by
    older fgrad releases (.npz), without importing torch.

    Args:
        f: a path or a readable binary file object.
        map_location: where tensors go: None (where they were saved), a device or string
            ('cpu', 'cuda:0'), a dict {saved location: new location}, or a callable
            `(storage, location) -> storage or None` as PyTorch's.
        pickle_module: accepted for PyTorch's signature; only the standard `pickle` is supported.
        weights_only: True (the default, None) unpickles only tensors, containers, numbers,
            strings, dtypes, sizes, devices and the globals allowed by `add_safe_globals`;
            False unpickles any object (run only on files you trust). As in PyTorch, the
            environment variable TORCH_FORCE_WEIGHTS_ONLY_LOAD=1 forces True, and
            TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 makes the default (None) False, with a warning.
        mmap: map the file's storages into memory copy-on-write instead of reading them (zip
            checkpoints given by path).
        **pickle_load_args: `encoding='utf-8'` is accepted (the only encoding used).

    Returns:
        The saved object, with fgrad tensors in place of torch's.
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise FgradValueError(f"fgrad.torch.load: only the standard pickle module is supported, "
                              f"got {pickle_module!r}")
    extra = set(pickle_load_args) - {"encoding"}
    if extra:
        raise FgradTypeError(f"fgrad.torch.load: unexpected keyword arguments {sorted(extra)}")
    weights_only = _weights_only_default(weights_only)
    fh, path, close = _read.opened(f)
    try:
        start = fh.tell()
        head = fh.read(4)
        fh.seek(start)
        if head[:4] == b"PK\x03\x04":
            zf = zipfile.ZipFile(fh)
            names = zf.namelist()
            prefix = _read.archive_prefix(names)
            if prefix is not None:
                if mmap and path is None:
                    raise FgradValueError("fgrad.torch.load: mmap=True needs a path, not a file object")
                safe = _read.safe_global_table(_SAFE_GLOBALS)
                return _read.read_zip(zf, fh, prefix, map_location, weights_only, safe, path if mmap else None)
            if _npz.STRUCTURE + ".npy" in names:
                fh.seek(start)
                return _npz.read_npz(fh, map_location)
            raise FgradValueError("fgrad.torch.load: not a file written by fgrad.torch.save or torch.save "
                                  "(a zip archive without a data.pkl record)")
        if _read.is_legacy(head):
            return _read.read_legacy(fh, map_location, weights_only, _read.safe_global_table(_SAFE_GLOBALS))
        raise FgradValueError(f"fgrad.torch.load: not a file written by fgrad.torch.save or torch.save "
                              f"(it starts with {head!r}, neither a zip archive nor a pickle)")
    except zipfile.BadZipFile as e:
        raise FgradValueError(f"fgrad.torch.load: not a file written by fgrad.torch.save or torch.save ({e})") \
            from None
    finally:
        if close:
            fh.close()


# The allow-list for weights_only unpickling: objects, or (object, "module.name") pairs
_SAFE_GLOBALS: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Allow these globals (classes, functions) when loading with weights_only=True.

    Args:
        safe_globals: objects, or (object, "module.qualname") pairs for objects saved under
            another name.
    """
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals() -> list:
    """Returns:
        The globals allowed by add_safe_globals (a copy)."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals() -> None:
    """Forget every global allowed by add_safe_globals."""
    _SAFE_GLOBALS.clear()


class safe_globals:
    """`with fgrad.torch.serialization.safe_globals([...]):` allows these globals inside the block."""

    def __init__(self, safe_globals: list) -> None:
        self._globals = list(safe_globals)

    def __enter__(self) -> "safe_globals":
        _SAFE_GLOBALS.extend(self._globals)
        return self

    def __exit__(self, *exc) -> None:
        for g in self._globals:
            if g in _SAFE_GLOBALS:
                _SAFE_GLOBALS.remove(g)
