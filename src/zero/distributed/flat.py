"""Many tensors in one collective: laid end to end in a flat buffer (PyTorch's "coalesced").

A collective costs a latency per call, so DistributedDataParallel all-reduces its
gradients in buckets and the ZeRO optimizer broadcasts each rank's parameters as one
buffer. ``FlatBuffer`` holds the layout (one dtype, one device); ``broadcast_coalesced``
groups tensors by dtype and device and broadcasts each group as one buffer.
"""
from __future__ import annotations

from ..grad_mode import no_grad
from ..tensors.creation import empty
from ..tensors.tensor import Tensor
from .collectives import broadcast
from .process_group import default_group


class FlatBuffer:
    """``tensors`` (of one dtype and device) end to end in ``buffer``, a 1-D tensor."""

    def __init__(self, tensors: list[Tensor]):
        first = tensors[0]
        if any(t.dtype is not first.dtype or t.device is not first.device for t in tensors):
            raise ValueError("FlatBuffer: the tensors of one buffer must share a dtype and a device")
        self.tensors = list(tensors)
        self.offsets = [0]
        for t in tensors:
            self.offsets.append(self.offsets[-1] + t.numel())
        self.buffer = empty(self.offsets[-1], dtype=first.dtype, device=first.device)

    def view(self, i: int) -> Tensor:
        """Tensor ``i``'s part of the buffer, in its shape."""
        return self.buffer[self.offsets[i]:self.offsets[i + 1]].view(self.tensors[i].shape)

    def pack(self, sources: list[Tensor] | None = None) -> None:
        """Copy ``sources`` (default: the tensors themselves) into the buffer."""
        with no_grad():
            for i, source in enumerate(sources if sources is not None else self.tensors):
                self.view(i).copy_(source)

    def unpack(self) -> None:
        """Copy the buffer back into the tensors."""
        with no_grad():
            for i, t in enumerate(self.tensors):
                t.copy_(self.view(i))


def group_by_kind(tensors: list[Tensor]) -> list[list[Tensor]]:
    """The tensors in groups of one dtype and device, each in the order given."""
    groups: dict[tuple, list[Tensor]] = {}
    for t in tensors:
        groups.setdefault((t.dtype.name, str(t.device)), []).append(t)
    return list(groups.values())


def broadcast_coalesced(tensors: list[Tensor], src: int) -> None:
    """Rank ``src``'s values of ``tensors`` into every rank's, one broadcast per dtype and device."""
    broadcast_from_owners({src: tensors})


def broadcast_from_owners(owned: dict[int, list[Tensor]]) -> None:
    """For each rank r, rank r's values of ``owned[r]`` into every rank's: all the broadcasts
    started first, then waited for (the same ``owned`` on every rank)."""
    rank = default_group("broadcast_coalesced").rank
    started = []
    for src in sorted(owned):
        for group in group_by_kind(owned[src]):
            flat = FlatBuffer(group)
            if rank == src:
                flat.pack()
            started.append((src, flat, broadcast(flat.buffer, src, async_op=True)))
    for src, flat, work in started:
        assert work is not None
        work.wait()
        if rank != src:
            flat.unpack()
