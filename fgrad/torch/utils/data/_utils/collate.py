"""Collating samples into batches, as PyTorch's torch.utils.data._utils.collate does.

default_collate maps, by the type of a batch's first element:
Tensor -> the samples stacked on a new first axis; NumPy array -> stacked into a Tensor (its
dtype kept); NumPy scalar -> a Tensor of its dtype; float -> float64 Tensor; int -> int64
Tensor (bool -> bool); str/bytes -> the list unchanged; Mapping -> the same mapping of collated
values; namedtuple -> the same namedtuple; tuple -> a list (PyTorch's choice) and other
sequences -> the same type, of collated columns. `default_collate_fn_map` may be extended.
"""
from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .....core.errors import FgradIndexError, FgradRuntimeError, FgradTypeError
from ...._tensor import Tensor, float64
from ...._tensor import stack as _tensor_stack
from ...._tensor.creation import as_tensor
from ...._tensor.creation import tensor as _new_tensor
from ...._tensor.tensor import wrap

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map", "collate_tensor_fn",
           "collate_numpy_array_fn", "collate_numpy_scalar_fn", "collate_float_fn", "collate_int_fn",
           "collate_str_fn"]

# NumPy dtypes of strings and objects: not numbers, never made tensors
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _as_list(batch: Iterable) -> list:
    """The batch as a list: it is indexed and transposed, so a generator is read once here."""
    return batch if isinstance(batch, (list, tuple)) else list(batch)


def _like_mapping(like: Any, values: dict) -> Any:
    """`values` in a mapping of like's type (PyTorch's rule): a copy of a mutable `like` updated,
    so that its other state is kept, or the type built from a dict; the dict where neither works."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:  # a mapping type that cannot be built from a dict
        return values


def _like_sequence(like: Any, values: list) -> Any:
    """`values` in a sequence of like's type: a copy of a mutable `like` with its items replaced,
    or the type built from a list; the list where neither works."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(like)(values)
    except TypeError:  # a sequence type that cannot be built from a list
        return values


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays and scalars inside `data` (recursing into mappings, namedtuples and
    sequences; tuples become lists) into Tensors; leave everything else as it is. The DataLoader
    applies it to each sample when automatic batching is off (batch_size=None)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_", "bytes_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _like_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _like_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch: Iterable, *, collate_fn_map: dict | None = None) -> Any:
    """Collate `batch` (a list of samples), looking the first sample's type up in
    `collate_fn_map` (exact type first, then isinstance in insertion order) and recursing into
    mappings, namedtuples and sequences."""
    batch = _as_list(batch)
    if not batch:
        raise FgradIndexError("collate: the batch is empty; a batch needs at least one sample")
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _like_mapping(elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                                    for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(list(samples), collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            sizes = sorted({len(e) for e in batch})
            raise FgradRuntimeError(f"each element in list of batch should be of equal size (got sizes {sizes}); "
                               "pad the samples or pass a collate_fn that handles ragged ones")
        columns = [collate(list(samples), collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch's choice: tuples of samples collate into a list
        return _like_sequence(elem, columns)
    raise FgradTypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """Stack equally shaped Tensors on a new first axis (`torch.stack(batch, 0)`)."""
    elem = batch[0]
    shape = tuple(elem.shape)
    for i, t in enumerate(batch):
        if tuple(t.shape) != shape:
            raise FgradRuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                               f"and {list(t.shape)} at entry {i}; pad the samples or pass a collate_fn "
                               "that handles ragged ones")
    if all(type(t) is Tensor and not t.requires_grad and t.dtype == elem.dtype and t.device == elem.device
           for t in batch):
        # the common case, one copy in NumPy (CuPy arrays dispatch to cupy.stack): no graph to record
        return wrap(np.stack([t._value for t in batch]))
    # tensors that need a graph, a dtype promotion or a device check: the facade's stack
    return _tensor_stack(batch, 0)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """Stack NumPy arrays into one Tensor of their dtype; arrays of strings/objects are an error."""
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise FgradTypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """NumPy scalars into a Tensor of their dtype (`torch.as_tensor(batch)`)."""
    return as_tensor(list(batch))


def collate_float_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """Python floats into a float64 Tensor (PyTorch's choice: the full precision of a float)."""
    return _new_tensor(list(batch), dtype=float64)


def collate_int_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """Python ints into an int64 Tensor (bools into a bool one): `torch.tensor(batch)`."""
    return _new_tensor(list(batch))


def collate_str_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """Strings and bytes stay as they are: the batch is their list."""
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Iterable) -> Any:
    """Put a list of samples together into a batch, the way PyTorch's default_collate does (see
    the module doc): e.g. [(x0, 0), (x1, 1)] -> [stack([x0, x1]), tensor([0, 1])]. The DataLoader's
    default `collate_fn` when it batches (batch_size or batch_sampler given)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
