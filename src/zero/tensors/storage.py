"""Storage: one block of device memory (the book's ``TensorNode``).

A storage holds a lease on a block of its device's memory (``device.backend.lease``).
The backend gives the block back to the allocator's pool when the lease and every
array built on the memory are gone -- the storage, the tensors' arrays, a NumPy array
the user took -- so nothing happens here when a storage is deleted. Views share one
storage and interpret it through their own metadata.

``version`` counts in-place writes, so an op that saved a tensor for backward
can tell that it was overwritten since (PyTorch's version counter). ``serial``
numbers storages in the order they were made, which tells the backward engine
which gradient buffers came into being during its own pass.
"""
from __future__ import annotations

import itertools
from typing import Any

from ..backends.device import Device

_serials = itertools.count()


def new_serial() -> int:
    """A serial number larger than that of every storage made so far and smaller than that
    of every storage made from now on."""
    return next(_serials)


class Storage:
    __slots__ = ("handle", "nbytes", "device", "version", "serial", "__weakref__")

    handle: Any      # the backend's lease on the memory: an anchor array, a device pointer
    nbytes: int
    device: Device
    version: int     # in-place writes so far
    serial: int

    def __init__(self, nbytes: int, device: Device) -> None:
        self.handle = device.backend.lease(nbytes)  # what the kernels address: an anchor array, a device pointer
        self.nbytes = nbytes
        self.device = device
        self.version = 0
        self.serial = next(_serials)

    @classmethod
    def wrap(cls, handle: Any, nbytes: int, device: Device) -> Storage:
        """Memory Zero did not allocate (``from_numpy``): never leased, never pooled."""
        storage = object.__new__(cls)
        storage.handle = handle
        storage.nbytes = nbytes
        storage.device = device
        storage.version = 0
        storage.serial = next(_serials)
        return storage

    def __repr__(self) -> str:
        return f"Storage({self.nbytes} bytes on {self.device})"
