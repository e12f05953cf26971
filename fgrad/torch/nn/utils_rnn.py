"""fgrad.torch.nn.utils.rnn: PyTorch's packed sequences (PackedSequence, pack_padded_sequence,
pad_packed_sequence, pad_sequence, pack_sequence, unpad_sequence, unpack_sequence).

A PackedSequence holds the time steps of a batch of sequences of different lengths back to
back: `data` has the rows of step 0 for every sequence, then those of step 1 for the
sequences that have one, ...; `batch_sizes[t]` counts the rows of step t. Sequences appear
sorted by decreasing length (`sorted_indices[j]` is the original batch index of the j-th);
`unsorted_indices` is the inverse permutation.

Each conversion is one gather (fgrad.numpy.take) with indices computed here in NumPy, so it
is differentiable (its pullback is one scatter-add) and works on Tensors, arrays and tracers.
Lengths, batch sizes and permutations are data about the batch, not values to differentiate:
they are int64 Tensors (NumPy arrays when the data are not Tensors).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ...core.trace import xp_of
from ...extend.lax import concatenate, reshape
from .._tensor.tensor import Tensor, wrap
from ._util import concrete_or_none, dtype, shape, torch_call, val

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


def _ints(x, what: str) -> np.ndarray | None:
    """A 1-D int64 NumPy array from a list, array or Tensor (None stays None)."""
    if x is None:
        return None
    v = concrete_or_none(x) if isinstance(x, Tensor) or hasattr(x, "shape") else np.asarray(x)
    if v is None:
        raise FgradTypeError(f"{what} must be concrete integers (a list or an int64 tensor), not a traced "
                        "value: they decide the shapes of the result")
    v = np.asarray(v)
    if v.ndim != 1 or (v.size and v.dtype.kind not in "iu"):
        raise FgradTypeError(f"{what} must be a 1-D sequence of integers, got shape {v.shape} and dtype "
                        f"{v.dtype}")
    return v.astype(np.int64, copy=False)


def _like(values: np.ndarray, like) -> Any:
    """An int64 Tensor of `values` when `like` is a Tensor, else the NumPy array."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return wrap(values) if isinstance(like, Tensor) else values


def _on_device_of(ref, a: np.ndarray):
    """A NumPy constant (pad rows, gather indices) on the device of ref's value."""
    xp = xp_of((val(ref),))
    return a if xp is np else xp.asarray(a)


def _gather_rows(x, idx: np.ndarray):
    """x[idx] along axis 0 (differentiable: its pullback is a scatter-add)."""
    return fnp.take(x, _on_device_of(x, idx), axis=0)


def invert_permutation(permutation):
    """The inverse of a permutation (None stays None): out[permutation[i]] = i."""
    if permutation is None:
        return None
    p = _ints(permutation, "permutation")
    out = np.empty_like(p)
    out[p] = np.arange(p.size, dtype=np.int64)
    return _like(out, permutation)


class PackedSequence(NamedTuple):
    """Sequences of different lengths packed step by step (see the module docstring).
    Build one with pack_padded_sequence or pack_sequence; recurrent layers take and return them."""
    data: Any
    batch_sizes: Any = None
    sorted_indices: Any = None
    unsorted_indices: Any = None

    def _replace_data(self, data) -> "PackedSequence":
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """The packed data moved/cast with Tensor.to (the index tensors stay int64)."""
        return self._replace_data(self.data.to(*args, **kwargs))

    def cpu(self) -> "PackedSequence":
        """The data on the CPU."""
        return self._replace_data(self.data.cpu())

    def cuda(self, *args, **kwargs) -> "PackedSequence":
        """The data on the GPU (Tensor.cuda's arguments)."""
        return self._replace_data(self.data.cuda(*args, **kwargs))

    def double(self) -> "PackedSequence":
        """The data as float64."""
        return self._replace_data(self.data.double())

    def float(self) -> "PackedSequence":
        """The data as float32."""
        return self._replace_data(self.data.float())

    def half(self) -> "PackedSequence":
        """The data as float16."""
        return self._replace_data(self.data.half())

    def long(self) -> "PackedSequence":
        """The data as int64."""
        return self._replace_data(self.data.long())

    def int(self) -> "PackedSequence":
        """The data as int32."""
        return self._replace_data(self.data.int())

    @property
    def is_cuda(self) -> bool:
        """Whether the data live on a GPU."""
        return bool(getattr(self.data, "is_cuda", False))


def _make_packed(data, batch_sizes, sorted_indices, unsorted_indices=None) -> PackedSequence:
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    return PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)


def _batch_sizes(lengths: np.ndarray) -> np.ndarray:
    """batch_sizes[t] = how many of the (sorted) sequences have a step t."""
    T = int(lengths.max()) if lengths.size else 0
    return (lengths[None, :] > np.arange(T)[:, None]).sum(axis=1).astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch [T, B, *] ([B, T, *] with batch_first) of sequences with the given
    lengths. With enforce_sorted the lengths must decrease; otherwise the batch is sorted
    here and the permutation kept in the result."""
    lens = _ints(lengths, "lengths")
    s = shape(input)
    if len(s) < 2:
        raise FgradValueError(f"pack_padded_sequence: expected an input with at least 2 dimensions "
                         f"([T, B, *] or [B, T, *]), got shape {s}")
    T, B = (s[1], s[0]) if batch_first else (s[0], s[1])
    if lens.size != B:
        raise FgradRuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
                           f"(batch_size={B})")
    if lens.size and lens.min() <= 0:
        raise FgradRuntimeError("Length of all samples has to be greater than 0, but found an element in "
                           "'lengths' that is <= 0")
    if lens.size and lens.max() > T:
        raise FgradRuntimeError(f"pack_padded_sequence: a length of {int(lens.max())} exceeds the "
                           f"{T} time steps of the input (shape {s}, batch_first={batch_first})")
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise FgradRuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                               "is True. You can pass `enforce_sorted=False` to pack_padded_sequence "
                               "and/or pack_sequence to sidestep this requirement if you do not need "
                               "ONNX exportability.")
        order, sorted_indices = np.arange(B), None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = order
    lens_sorted = lens[order]
    bs = _batch_sizes(lens_sorted)
    # row t*B + b of the time-major input (b*T + t batch-first), step by step
    rows = [order[:n] * T + t if batch_first else t * B + order[:n] for t, n in enumerate(bs)]
    idx = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    # one torch op on Tensors, PyTorch's PackPaddedSequenceBackward0
    data = torch_call("PackPaddedSequenceBackward0", _rows_of, (input, idx, (T * B,) + tuple(s[2:])))
    like = input if isinstance(input, Tensor) else None
    si = None if sorted_indices is None else _like(sorted_indices, like)
    return _make_packed(data, _like(bs, like), si)


def _padded_index(bs: np.ndarray, unsorted: np.ndarray | None, total: int, pad_row: int,
                  batch_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """Gather indices [total, B] (or [B, total]) into the packed rows (pad_row where a
    sequence has ended), and each original sequence's length."""
    B, T = int(bs[0]), bs.size
    offsets = np.concatenate([[0], np.cumsum(bs)[:-1]]).astype(np.int64)
    j = np.arange(B) if unsorted is None else unsorted  # sorted position of original sequence b
    t = np.minimum(np.arange(total), T - 1)[:, None]       # steps past T are padding anyway
    valid = (np.arange(total)[:, None] < T) & (j[None, :] < bs[t])
    idx = np.where(valid, offsets[t] + j[None, :], pad_row)
    lens_sorted = (bs[None, :] > np.arange(B)[:, None]).sum(axis=1)
    lengths = lens_sorted[j]
    return (idx.T if batch_first else idx), lengths.astype(np.int64)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple:
    """The inverse of pack_padded_sequence: (padded [T, B, *] or [B, T, *], lengths), in the
    original batch order; steps after a sequence's end hold padding_value. total_length pads
    to that many steps (at least the longest sequence)."""
    data, batch_sizes, _, unsorted_indices = sequence
    bs = _ints(batch_sizes, "batch_sizes")
    T = bs.size
    if T == 0:
        raise FgradValueError("pad_packed_sequence: the PackedSequence has no time steps (empty batch_sizes)")
    if total_length is not None:
        if total_length < T:
            raise FgradValueError(f"Expected total_length to be at least the length of the longest sequence "
                             f"in input, but got total_length={total_length} and max sequence length "
                             f"being {T}")
    else:
        total_length = T
    s = shape(data)
    N = s[0]
    idx, lengths = _padded_index(bs, _ints(unsorted_indices, "unsorted_indices"), total_length, N,
                                 batch_first)
    pad = np.full((1,) + tuple(s[1:]), padding_value, dtype(data))
    # one torch op on Tensors, named as PyTorch's last node
    name = "IndexSelectBackward0" if unsorted_indices is not None else \
        "TransposeBackward0" if batch_first else "CopySlices"
    padded = torch_call(name, _padded, ([data], pad, idx))
    return padded, _like(lengths, data if isinstance(data, Tensor) else None)


def pad_sequence(sequences: Sequence, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stack sequences [L_i, *] into one padded batch [max L, B, *] ([B, max L, *] with
    batch_first), filling with padding_value on the right (or the left)."""
    if padding_side not in ("right", "left"):
        raise FgradValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    seqs = list(sequences)
    if not seqs:
        raise FgradRuntimeError("pad_sequence: received an empty list of sequences")
    shapes = [shape(v) for v in seqs]
    tail = shapes[0][1:]
    for k, sh in enumerate(shapes):
        if len(sh) < 1 or sh[1:] != tail:
            raise FgradRuntimeError(f"pad_sequence: sequence {k} has shape {sh} but sequence 0 has shape "
                               f"{shapes[0]}; all must be [L_i, {', '.join(map(str, tail)) or '*'}] "
                               "(equal but for the first dimension)")
    lens = np.array([sh[0] for sh in shapes], np.int64)
    L = int(lens.max())
    offsets = np.concatenate([[0], np.cumsum(lens)[:-1]])
    N = int(lens.sum())
    t = np.arange(L)[:, None]
    if padding_side == "right":
        valid, step = t < lens[None, :], t
    else:
        shift = (L - lens)[None, :]
        valid, step = t >= shift, t - shift
    idx = np.where(valid, offsets[None, :] + step, N)
    if batch_first:
        idx = idx.T
    pad = np.full((1,) + tuple(tail), padding_value, dtype(seqs[0]))
    return torch_call("CopySlices", _padded, (seqs, pad, idx))  # PyTorch's node: CopySlices


def _rows_of(x, idx: np.ndarray, flat_shape: tuple):
    """Rows idx of x viewed as [flat_shape[0], *] (plain values)."""
    return _gather_rows(reshape(x, flat_shape), idx)


def _padded(seqs: list, pad: np.ndarray, idx: np.ndarray):
    """The rows idx (shape [T, B] or [B, T]) of the sequences stacked with one pad row last."""
    src = concatenate(list(seqs) + [_on_device_of(seqs[0], pad)], 0)
    return reshape(_gather_rows(src, idx.reshape(-1)), idx.shape + tuple(shape(seqs[0])[1:]))


def pack_sequence(sequences: Sequence, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences [L_i, *] (decreasing lengths unless enforce_sorted=False)."""
    seqs = list(sequences)
    lengths = [shape(v)[0] for v in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """The inverse of pad_sequence: the list of sequences [L_i, *]."""
    lens = _ints(lengths, "lengths")
    x = padded_sequences
    if not batch_first:
        x = x.transpose(0, 1) if isinstance(x, Tensor) else fnp.swapaxes(x, 0, 1)
    return [x[b, :int(n)] for b, n in enumerate(lens)]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The inverse of pack_sequence: the list of sequences [L_i, *] in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
