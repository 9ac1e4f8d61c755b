"""Storage: one block of device memory (the book's ``TensorNode``).

A storage only owns bytes. It takes a block from its device's allocator when
made and gives it back when the last tensor using it goes away (Python's
reference count plays the book's ``shared_ptr<TensorNode>``). Views share one
storage and interpret it through their own metadata.

``version`` counts in-place writes, so an op that saved a tensor for backward
can tell that it was overwritten since (PyTorch's version counter). ``serial``
numbers storages in the order they were made, which tells the backward engine
which gradient buffers came into being during its own pass.
"""
from __future__ import annotations

import itertools

from ..backends.device import Device

_serials = itertools.count()


def new_serial() -> int:
    """A serial number larger than that of every storage made so far and smaller than that
    of every storage made from now on."""
    return next(_serials)


class Storage:
    __slots__ = ("block", "nbytes", "device", "_allocator", "version", "serial", "__weakref__")

    def __init__(self, nbytes: int, device: Device):
        allocator = device.backend.allocator
        self.block = allocator.allocate(nbytes)
        self._allocator = allocator
        self.nbytes = nbytes
        self.device = device
        self.version = 0
        self.serial = next(_serials)

    @classmethod
    def wrap(cls, block, nbytes: int, device: Device) -> Storage:
        """Memory Zero did not allocate (``from_numpy``): never returned to an allocator."""
        storage = object.__new__(cls)
        storage.block = block
        storage._allocator = None
        storage.nbytes = nbytes
        storage.device = device
        storage.version = 0
        storage.serial = next(_serials)
        return storage

    @property
    def handle(self):
        """What the device's kernels address: a uint8 NumPy array on CPU, a pointer on CUDA."""
        return self.block.handle

    def __del__(self):
        allocator = getattr(self, "_allocator", None)  # unset when __init__ failed (no such device)
        if allocator is not None:
            try:
                allocator.release(self.block)
            except Exception:  # interpreter shutdown: modules may already be gone
                pass

    def __repr__(self) -> str:
        return f"Storage({self.nbytes} bytes on {self.device})"
