"""Collectives of Python objects (PyTorch's ``broadcast_object_list``, ``all_gather_object``).

An object travels pickled, as the bytes of a uint8 tensor on the backend's device, in
two collectives: the sizes first (so that every rank can make room), then the bytes.
Tensors inside the objects pickle as their values (``Tensor.__reduce__``) and come back
on the device they were on. Pickle runs code when it loads: use these between the ranks
of one job, as PyTorch says of its own.
"""
from __future__ import annotations

import pickle

import numpy as np

from .. import dtypes
from ..tensors.creation import tensor, zeros
from .collectives import all_gather_into_tensor, broadcast
from .process_group import default_group


def _device(function: str, group):
    return "cuda" if default_group(function, group).backend.device_type == "cuda" else "cpu"


def _as_tensor(payload: bytes, device: str):
    return tensor(np.frombuffer(payload, dtype=np.uint8), device=device)


def _bytes_of(t) -> bytes:
    return t.cpu().numpy().tobytes()


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None) -> None:
    """Rank ``src``'s ``object_list`` into every rank's ``object_list`` (a list of the same
    length, overwritten in place)."""
    backend = default_group("broadcast_object_list", group).backend
    where = _device("broadcast_object_list", group)
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list: object_list must be a list, got {type(object_list).__name__}")
    mine = pickle.dumps(object_list) if backend.rank == src else b""
    size = tensor([len(mine)], dtype=dtypes.int64, device=where)
    broadcast(size, src)
    payload = _as_tensor(mine, where) if backend.rank == src else zeros(int(size.item()), dtype=dtypes.uint8,
                                                                         device=where)
    broadcast(payload, src)
    if backend.rank != src:
        received = pickle.loads(_bytes_of(payload))
        if len(received) != len(object_list):
            raise ValueError(f"broadcast_object_list: rank {src} sent {len(received)} objects, this rank's "
                             f"object_list has room for {len(object_list)}")
        object_list[:] = received


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Every rank's ``obj`` into ``object_list`` (one entry per rank, overwritten in place)."""
    backend = default_group("all_gather_object", group).backend
    where = _device("all_gather_object", group)
    if not isinstance(object_list, list) or len(object_list) != backend.size:
        raise ValueError(f"all_gather_object: object_list must be a list of {backend.size} entries (one per rank)")
    mine = pickle.dumps(obj)
    sizes = zeros(backend.size, dtype=dtypes.int64, device=where)
    all_gather_into_tensor(sizes, tensor([len(mine)], dtype=dtypes.int64, device=where))
    lengths = [int(n) for n in sizes.tolist()]
    longest = max(lengths)
    padded = zeros(longest, dtype=dtypes.uint8, device=where)
    if mine:
        padded[:len(mine)] = _as_tensor(mine, where)
    gathered = zeros(backend.size * longest, dtype=dtypes.uint8, device=where)
    all_gather_into_tensor(gathered, padded)
    data = _bytes_of(gathered)
    for r, n in enumerate(lengths):
        object_list[r] = pickle.loads(data[r * longest:r * longest + n])
