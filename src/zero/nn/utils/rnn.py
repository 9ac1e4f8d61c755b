"""Sequences of different lengths for the recurrent layers: PyTorch's ``nn.utils.rnn``.

A ``PackedSequence`` holds a batch of sequences sorted by length, longest first, time step by
time step: ``data`` (sum of lengths, *) has at step t the rows of the ``batch_sizes[t]``
sequences still running, and ``batch_sizes`` (a CPU int64 tensor) says how many. With
``sorted_indices`` (the batch's order by decreasing length) and ``unsorted_indices`` (its
inverse) the layers give their results back in the caller's order. A recurrent layer given
one runs each sequence only over its own length (``zero.nn.rnn``).

    pad_sequence            list of (L_i, *) -> (L, B, *) padded (or (B, L, *))
    pack_padded_sequence    padded and lengths -> PackedSequence
    pad_packed_sequence     PackedSequence -> (padded, lengths)
    pack_sequence           list of (L_i, *) -> PackedSequence
    unpad_sequence          padded and lengths -> list of (L_i, *)
    unpack_sequence         PackedSequence -> list of (L_i, *)

The moves between the packed and the padded form are one gather each (``index_select``
over the flattened time and batch dimensions), so gradients flow through them.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ... import dtypes
from ...errors import ShapeError
from ...ops.joining import cat, index_select, stack
from ...tensors.creation import full, tensor
from ...tensors.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence", "unpad_sequence"]


class PackedSequence(NamedTuple):
    """data (sum of lengths, *), batch_sizes (CPU int64, one per time step), sorted_indices and
    unsorted_indices (int64 on data's device, or None when the batch came sorted)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The data moved or cast as ``Tensor.to``; the indices follow it to its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        def move(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(data.device)

        return PackedSequence(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, device: Any = None) -> PackedSequence:
        return self.to("cuda" if device is None else device)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation (an int64 tensor), on its device; None for None."""
    if permutation is None:
        return None
    order = np.asarray(permutation.tolist(), dtype=np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return tensor(inverse, dtype=dtypes.int64, device=permutation.device)


def sizes_of(batch_sizes: Tensor | Any) -> tuple[int, ...]:
    """The batch sizes as Python ints."""
    values = batch_sizes.tolist() if isinstance(batch_sizes, Tensor) else list(batch_sizes)
    return tuple(int(v) for v in values)


def packed_positions(batch_sizes: tuple[int, ...], rows: int) -> np.ndarray:
    """Where each packed row sits in the flattened padded (L, rows) array: t rows + b, in
    packed order (step by step, the active rows of each)."""
    return np.concatenate([t * rows + np.arange(b) for t, b in enumerate(batch_sizes)]).astype(np.int64)


def packed_to_padded(data: Tensor, batch_sizes: tuple[int, ...], length: int | None = None,
                     padding_value: float = 0.0) -> Tensor:
    """(sum of lengths, *) -> (length, N, *) in sorted batch order, padding_value past each end."""
    rows, steps = batch_sizes[0], len(batch_sizes)
    length = steps if length is None else length
    rest = tuple(data.shape[1:])
    source = np.full(length * rows, data.shape[0], dtype=np.int64)      # the padding row, by default
    source[packed_positions(batch_sizes, rows)] = np.arange(data.shape[0])
    padding = full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)
    index = tensor(source, dtype=dtypes.int64, device=data.device)
    return index_select(cat([data, padding]), 0, index).reshape((length, rows) + rest)


def padded_to_packed(padded: Tensor, batch_sizes: tuple[int, ...]) -> Tensor:
    """(L, N, *) in sorted batch order -> (sum of lengths, *): the rows of each step still running."""
    length, rows = padded.shape[0], padded.shape[1]
    rest = tuple(padded.shape[2:])
    index = tensor(packed_positions(batch_sizes, rows), dtype=dtypes.int64, device=padded.device)
    return index_select(padded.reshape((length * rows,) + rest), 0, index)


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,  # noqa: A002  (PyTorch's name)
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (L, B, *) (``batch_first``: (B, L, *)) of sequences of the given
    lengths. ``enforce_sorted``: the lengths must come decreasing (else they are sorted and
    the order kept in the result's indices)."""
    values = _lengths_list(lengths)
    if batch_first:
        input = input.transpose(0, 1)  # noqa: A001
    length, batch = input.shape[0], input.shape[1]
    if len(values) != batch:
        raise ShapeError(f"pack_padded_sequence: got {len(values)} lengths for a batch of {batch} sequences "
                         f"(input {list(input.shape)}, batch_first={batch_first})")
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in zip(values, values[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        order = list(range(batch))
    else:
        order = sorted(range(batch), key=lambda b: -values[b])
        sorted_indices = tensor(order, dtype=dtypes.int64, device=input.device)
        input = index_select(input, 1, sorted_indices)  # noqa: A001
    ordered = [values[b] for b in order]
    if ordered[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if ordered[0] > length:
        raise ShapeError(f"pack_padded_sequence: a length of {ordered[0]} is longer than the input's {length} "
                         f"time steps (input {list(input.shape)})")
    batch_sizes = tuple(sum(1 for v in ordered if v > t) for t in range(ordered[0]))
    data = padded_to_packed(input[:ordered[0]], batch_sizes)
    return PackedSequence(data, tensor(batch_sizes, dtype=dtypes.int64), sorted_indices,
                          invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: (padded (L, B, *) or (B, L, *), lengths (B,) CPU int64),
    in the batch's original order; ``total_length`` pads to that many steps."""
    sizes = sizes_of(sequence.batch_sizes)
    if total_length is not None and total_length < len(sizes):
        raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                         f"got total_length={total_length} and max sequence length being {len(sizes)}")
    padded = packed_to_padded(sequence.data, sizes, total_length, padding_value)
    lengths = np.array([sum(1 for b in sizes if b > row) for row in range(sizes[0])], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 1, sequence.unsorted_indices)
        lengths = lengths[np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, tensor(lengths, dtype=dtypes.int64)


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences (L_i, *) padded to the longest: (L, B, *), or (B, L, *) with
    ``batch_first``; ``padding_side`` "left" pads before each sequence."""
    if padding_side not in ("right", "left"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            fill = full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences: Any, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *) (``enforce_sorted``: longest first)."""
    sequences = list(sequences)
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """The list of sequences (L_i, *) in a padded batch (L, B, *) (or (B, L, *))."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :n] for b, n in enumerate(_lengths_list(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences (L_i, *) in a PackedSequence, in the batch's original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
