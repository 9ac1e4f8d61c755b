"""DistributedDataParallel: one model per process, gradients averaged over the processes.

    dist.init_process_group("mpi")
    model = DistributedDataParallel(MLP())     # rank 0's weights everywhere
    loss = F.cross_entropy(model(x_of_this_rank), y_of_this_rank)
    loss.backward()                            # .grad = the average over the ranks
    optimizer.step()                           # the same step on every rank

Each rank runs forward and backward on its own part of the batch; backward leaves in
every ``.grad`` the mean over the ranks, which for a loss that is a mean over equal
parts is the gradient of the whole batch. The optimizers then take the same step
everywhere, so the replicas stay equal. The all-reduce runs in buckets during backward
(``reducer.py``).

PyTorch's arguments: ``device_ids`` (None, or ``[0]`` for a module on the GPU: a process
computes on its own cuda:0), ``broadcast_buffers`` (rank 0's buffers are broadcast before
each forward), ``bucket_cap_mb``, ``find_unused_parameters``. ``no_sync()`` skips the
all-reduce for the backward of the forwards run inside it: gradients accumulate
locally and the next synced backward averages the sum. ``module`` is the wrapped model,
and the state dict's keys are its keys prefixed with ``module.``.

Accepted for PyTorch's sake, changing nothing: ``output_device``, ``dim``,
``process_group=None`` (the default group), ``check_reduction``, ``gradient_as_bucket_view``
(the gradients are copied into and out of the buckets either way) and ``static_graph``.

Evaluate and sample through ``ddp.module`` on one rank alone: a forward through the
wrapper is a collective when the model has buffers.
"""
from __future__ import annotations

import contextlib

from ... import distributed
from ...distributed.flat import broadcast_coalesced
from ...errors import DeviceError, DistributedError
from ...grad_mode import is_grad_enabled
from ...tensors.creation import tensor
from ..module import Module
from .reducer import Reducer


class DistributedDataParallel(Module):
    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: expected a zero.nn.Module, got {type(module).__name__}")
        group = distributed.process_group.default_group("DistributedDataParallel", process_group)
        bucket_cap_mb = 25 if bucket_cap_mb is None else bucket_cap_mb
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.module = module
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise ValueError("DistributedDataParallel: the module has no parameter that requires grad")
        _check_devices(module, device_ids, group.backend)
        object.__setattr__(self, "device_ids", device_ids)
        object.__setattr__(self, "broadcast_buffers", bool(broadcast_buffers))
        object.__setattr__(self, "find_unused_parameters", bool(find_unused_parameters))
        object.__setattr__(self, "bucket_bytes_cap", int(bucket_cap_mb * (1 << 20)))
        object.__setattr__(self, "require_backward_grad_sync", True)
        _check_same_model(module)
        # rank 0's parameters and buffers everywhere: every replica starts equal
        broadcast_coalesced([p for _, p in module.named_parameters()] + list(module.buffers()), src=0)
        object.__setattr__(self, "reducer", Reducer(list(reversed(named)), self.bucket_bytes_cap,
                                                    self.find_unused_parameters))

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                broadcast_coalesced(buffers, src=0)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare(output)
        else:
            self.reducer.disarm()
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, forwards are not followed by a gradient all-reduce: gradients accumulate
        on each rank, and the first synced backward after averages their sums."""
        before = self.require_backward_grad_sync
        object.__setattr__(self, "require_backward_grad_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "require_backward_grad_sync", before)

    def extra_repr(self) -> str:
        return f"bucket_cap_mb={self.bucket_bytes_cap / (1 << 20):g}, buckets={len(self.reducer.buckets)}"


DDP = DistributedDataParallel


def _check_devices(module: Module, device_ids, backend) -> None:
    devices = {p.device for p in module.parameters()} | {b.device for b in module.buffers()}
    if len(devices) != 1:
        raise DeviceError(f"DistributedDataParallel: the module's tensors are on several devices "
                          f"({', '.join(sorted(map(str, devices)))}); put it on one")
    (device,) = devices
    if device.type != backend.device_type:
        raise DeviceError(f"DistributedDataParallel: the module is on {device}, and the process group's backend "
                          f"({backend.name}) works on {backend.device_type} tensors; move the module, or use "
                          f"backend '{'nccl' if device.type == 'cuda' else 'mpi'}'")
    if device.type == "cpu" and device_ids is not None:
        raise ValueError(f"DistributedDataParallel: device_ids must be None for a module on the CPU, got {device_ids}")
    if device_ids is not None and [str(d) for d in device_ids] not in (["0"], ["cuda"], ["cuda:0"]):
        raise ValueError(f"DistributedDataParallel: device_ids={device_ids}: each process computes on its own "
                         "cuda:0; pass None or [0]")


def _check_same_model(module: Module) -> None:
    """Every rank must wrap the same architecture: the count and sizes of the parameters agree."""
    shapes = [tuple(p.shape) for p in module.parameters()]
    mine = [len(shapes), sum(p.numel() for p in module.parameters()), hash(tuple(shapes)) % (1 << 61)]
    device = next(module.parameters()).device
    size = distributed.get_world_size()
    everyone = tensor([0] * (3 * size), dtype="int64", device=device)
    distributed.all_gather_into_tensor(everyone, tensor(mine, dtype="int64", device=device))
    rows = everyone.view(size, 3).tolist()
    for r, row in enumerate(rows):
        if row != mine:
            raise DistributedError(f"DistributedDataParallel: rank {r} wraps a model of {row[0]} parameters "
                                   f"({row[1]} values), rank {distributed.get_rank()} one of {mine[0]} ({mine[1]}) "
                                   "or of other shapes; every rank must build the same model")
