"""Collation: from a list of samples to one batch (``default_collate``), and ``default_convert``.

``default_collate`` follows PyTorch's rules, recursively, by the type of the
first sample:

    zero tensors               -> stacked: one tensor with a new first dimension
    NumPy arrays               -> stacked into one tensor of the array's dtype
    NumPy scalars (np.float32) -> a 1-d tensor of their dtype
    Python floats / ints / bools -> a float64 / int64 / bool tensor
    str, bytes                 -> left as a list
    dict (any mapping)         -> a dict of the same type, each key collated
    namedtuple                 -> the same namedtuple, each field collated
    tuple, list (any sequence) -> a list, position by position (a tuple becomes a list,
                                  as in PyTorch; samples must have the same length)

So a batch of ``(image, label)`` tuples becomes ``[images, labels]``, and of
``{"x": array, "y": 3}`` dicts becomes ``{"x": tensor, "y": tensor}``.
Anything else (None, an arbitrary object) raises ``TypeError``.

``collate(batch, collate_fn_map=...)`` is the engine: a map from a type to the
function that collates a batch of that type; ``default_collate`` is it with
``default_collate_fn_map``. Extend a copy of the map for your own types.

``default_convert`` is what a DataLoader applies when automatic batching is
off (``batch_size=None``): NumPy arrays become tensors, containers are walked,
everything else is left as it is.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, MutableMapping, MutableSequence, Sequence

import numpy as np

from ..dtypes import float64
from ..ops.joining import stack
from ..tensors.creation import as_tensor, from_numpy, tensor
from ..tensors.tensor import Tensor

_NOT_NUMERIC = "SaUO"  # NumPy dtype characters of bytes, strings and objects: nothing to put in a tensor


def _unsupported(what) -> TypeError:
    return TypeError(f"default_collate: a batch must hold tensors, NumPy arrays, numbers, strings, dicts or "
                     f"sequences of them; found {what}")


def _collate_tensors(batch, *, collate_fn_map=None):
    return stack(batch)


def _collate_arrays(batch, *, collate_fn_map=None):
    if batch[0].dtype.char in _NOT_NUMERIC:
        raise _unsupported(f"a NumPy array of dtype {batch[0].dtype}")
    return from_numpy(np.stack(batch))  # one copy, not one tensor per sample


def _collate_numpy_scalars(batch, *, collate_fn_map=None):
    return from_numpy(np.array(batch))


def _collate_floats(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=float64)


def _collate_ints(batch, *, collate_fn_map=None):
    return tensor(batch)  # int64, or bool for bools


def _collate_strings(batch, *, collate_fn_map=None):
    return batch


CollateFnMap = dict[type | tuple[type, ...], Callable]

default_collate_fn_map: CollateFnMap = {
    Tensor: _collate_tensors,
    np.ndarray: _collate_arrays,
    (np.bool_, np.number): _collate_numpy_scalars,
    float: _collate_floats,
    int: _collate_ints,
    (str, bytes): _collate_strings,
}


def _lookup(kind: type, collate_fn_map: CollateFnMap):
    if kind in collate_fn_map:
        return collate_fn_map[kind]
    for key, fn in collate_fn_map.items():
        if issubclass(kind, key):  # key may be a tuple of types
            return fn
    return None


def collate(batch, *, collate_fn_map: CollateFnMap | None = None):
    """Collate ``batch`` (a list of samples), dispatching on the type of its first sample."""
    if collate_fn_map is None:
        collate_fn_map = default_collate_fn_map
    first = batch[0]
    kind = type(first)
    fn = _lookup(kind, collate_fn_map)
    if fn is not None:
        return fn(batch, collate_fn_map=collate_fn_map)

    def again(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(first, Mapping):
        fields = {key: again([sample[key] for sample in batch]) for key in first}
        return _rebuild_mapping(first, fields)
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return kind(*(again(list(samples)) for samples in zip(*batch)))
    if isinstance(first, Sequence):
        size = len(first)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError(f"default_collate: every sample in a batch of sequences must have the same "
                               f"length; got lengths {[len(sample) for sample in batch]}")
        columns = [again(list(samples)) for samples in zip(*batch)]
        return columns if isinstance(first, tuple) else _rebuild_sequence(first, columns)
    raise _unsupported(kind)


def _rebuild_mapping(first: Mapping, fields: dict):
    """A mapping of the first sample's type holding ``fields`` (a plain dict if it cannot be built)."""
    try:
        if isinstance(first, MutableMapping):
            clone = copy.copy(first)  # keeps the type's own attributes (an OrderedDict, a defaultdict ...)
            clone.update(fields)
            return clone
        return type(first)(fields)  # type: ignore[call-arg]
    except TypeError:
        return fields


def _rebuild_sequence(first: Sequence, items: list):
    """A sequence of the first sample's type holding ``items`` (a plain list if it cannot be built)."""
    try:
        if isinstance(first, MutableSequence):
            clone = copy.copy(first)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(first)(items)  # type: ignore[call-arg]
    except TypeError:
        return items


def default_collate(batch):
    """Stack a list of samples into a batch by PyTorch's rules (see the module's docstring)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """NumPy arrays and scalars in ``data`` become tensors, recursively; everything else is kept.

    Containers are rebuilt as ``default_collate`` rebuilds them (a tuple becomes
    a list, as in PyTorch). Arrays of strings or objects are left alone.
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.bool_, np.number)):
        return data if np.asarray(data).dtype.char in _NOT_NUMERIC else as_tensor(np.asarray(data))
    if isinstance(data, Mapping):
        return _rebuild_mapping(data, {key: default_convert(value) for key, value in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data
