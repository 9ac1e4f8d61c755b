"""The ``nccl`` backend: collectives on CUDA tensors through NCCL (CuPy's ``cupy.cuda.nccl``).

Set-up, as llm.c does it: rank 0 asks NCCL for a unique id (128 bytes naming the
communicator to be), MPI broadcasts it to every rank, and each rank joins with
``ncclCommInitRank(size, id, rank)``. A job of one process needs no MPI: its id stays
where it was made.

One GPU per process: Zero's CUDA backend computes on ``cuda:0`` of its process, so with
several ranks on one machine each must see a different GPU as its ``cuda:0``.
``init_process_group`` arranges that when it runs before CUDA is first used: it sets
``CUDA_VISIBLE_DEVICES`` to the GPU of this process's local rank (the local-rank-th of
those already listed there, or GPU number local rank). Called after CUDA is in use, with
several ranks here and no single GPU chosen per rank, it refuses.

Collectives are queued on the stream Zero's kernels run on (CuPy's current stream), so
they come after the kernels that wrote their inputs and before those that read their
outputs, and the host does not wait: ``wait()`` returns at once (the stream keeps the
order, as PyTorch's ``wait()`` makes the current stream wait), ``is_completed()`` asks an
event recorded behind the collective.
"""
from __future__ import annotations

import os
import warnings

from ..backends.device import Device
from ..errors import DeviceError, DistributedError, DTypeError, describe
from .reduce_op import ReduceOp
from .rendezvous import World
from .mpi import CommThread, MPIWork
from .work import Work

NCCL_HINT = "install NCCL for CUDA 13: pip install 'nvidia-nccl-cu13>=2.27.7,<3' (CuPy's bindings load it)"


def nccl_library():
    """CuPy's NCCL bindings, or a DistributedError saying what is missing."""
    try:
        with warnings.catch_warnings():  # CuPy warns when it finds no NCCL library: the error below says it
            warnings.simplefilter("ignore")
            from cupy.cuda import nccl
    except ImportError as e:
        raise DistributedError(f"the nccl backend needs CuPy ({e}); install the CUDA extra: "
                               "pip install 'zero-dl[cuda]'") from None
    if not getattr(nccl, "available", False):
        raise DistributedError(f"the nccl backend: CuPy cannot load the NCCL library; {NCCL_HINT}")
    return nccl


def exchange_unique_id(world: World, make_id) -> bytes:
    """NCCL's unique id, made by rank 0 (``make_id()``) and broadcast to the others over MPI."""
    unique_id = make_id() if world.rank == 0 else None
    if world.comm is not None:
        unique_id = world.comm.bcast(unique_id, root=0)
    if not isinstance(unique_id, (bytes, tuple)) or len(unique_id) != 128:
        raise DistributedError(f"rank {world.rank}: received {type(unique_id).__name__} as NCCL's unique id, "
                               "expected 128 bytes from rank 0")
    return bytes(unique_id) if isinstance(unique_id, tuple) else unique_id


def select_gpu(world: World, cuda_in_use: bool) -> None:
    """Give this rank its own GPU as ``cuda:0`` (see the module's docstring)."""
    if world.local_size == 1:
        return
    listed = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if len(listed) == 1 and "CUDA_VISIBLE_DEVICES" in os.environ:
        return  # the launcher chose one GPU for this rank
    if cuda_in_use:
        raise DistributedError(
            f"init_process_group(backend='nccl'): {world.local_size} ranks share this machine and CUDA was in use "
            "before init_process_group, so each sees the same GPU as cuda:0; call init_process_group before "
            "making CUDA tensors, or give each rank its GPU with CUDA_VISIBLE_DEVICES")
    if listed and world.local_rank >= len(listed):
        raise DistributedError(f"init_process_group(backend='nccl'): local rank {world.local_rank} has no GPU: "
                               f"CUDA_VISIBLE_DEVICES={','.join(listed)} lists {len(listed)}")
    os.environ["CUDA_VISIBLE_DEVICES"] = listed[world.local_rank] if listed else str(world.local_rank)


def create_backend(world: World, timeout: float) -> NCCLBackend:
    """The nccl backend of ``init_process_group``: this rank's GPU chosen, Zero's CUDA backend
    set up on it, NCCL's communicator made."""
    from ..backends.cuda import runtime

    select_gpu(world, cuda_in_use=runtime.cuda_in_use())
    library = nccl_library()
    try:
        Device("cuda").backend  # noqa: B018 (sets Zero's CUDA backend up: cuda:0 current, its allocator)
    except DeviceError as e:
        raise DistributedError(f"init_process_group(backend='nccl') needs a GPU: {e}") from None
    return NCCLBackend(world, timeout, library)


class CuPyStream:
    """Where the collectives go: the stream Zero's kernels use, and events on it."""

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy

    def pointer(self) -> int:
        return self.cupy.cuda.get_current_stream().ptr

    def record_event(self):
        event = self.cupy.cuda.Event(block=False, disable_timing=True)
        event.record()
        return event


class NCCLWork(Work):
    """Queued on the stream: what comes later on it sees the result, so ``wait`` has nothing
    to wait for and the finish steps (queued kernels too) run at once."""

    def __init__(self, name: str, outputs: list, event, finish=None):
        super().__init__(name, outputs, finish)
        self._event = event
        self._complete()

    def is_completed(self) -> bool:
        return bool(self._event.done)


class NCCLBackend:
    name = "nccl"
    device_type = "cuda"

    def __init__(self, world: World, timeout: float, library=None, stream=None):
        nccl = library if library is not None else nccl_library()
        self.nccl = nccl
        self.world = world
        self.rank, self.size = world.rank, world.size
        self.timeout = timeout
        self.stream = stream if stream is not None else CuPyStream()
        self.host = CommThread(f"zero.distributed rank {world.rank}") if world.comm is not None else None  # barrier
        unique_id = exchange_unique_id(world, nccl.get_unique_id)
        self.comm = nccl.NcclCommunicator(world.size, unique_id, world.rank)
        self._types = {"float32": nccl.NCCL_FLOAT32, "float64": nccl.NCCL_FLOAT64, "float16": nccl.NCCL_FLOAT16,
                       "bfloat16": nccl.NCCL_BFLOAT16, "int32": nccl.NCCL_INT32, "int64": nccl.NCCL_INT64,
                       "uint8": nccl.NCCL_UINT8}
        self._ops = {ReduceOp.SUM: nccl.NCCL_SUM, ReduceOp.AVG: nccl.NCCL_AVG, ReduceOp.PRODUCT: nccl.NCCL_PROD,
                     ReduceOp.MIN: nccl.NCCL_MIN, ReduceOp.MAX: nccl.NCCL_MAX}

    def check_reducible(self, function: str, tensor) -> None:
        if tensor._meta.dtype.name not in self._types:
            raise DTypeError(f"{function}: the nccl backend cannot reduce {describe(tensor)}")

    def _typed(self, tensor) -> tuple:
        """(address, count, NCCL type) of a tensor's elements."""
        return tensor.data_ptr(), tensor.numel(), self._types[tensor._meta.dtype.name]

    @staticmethod
    def _bytes(tensor) -> tuple:
        return tensor.data_ptr(), tensor.nbytes

    def _work(self, name: str, outputs: list) -> Work:
        return NCCLWork(name, outputs, self.stream.record_event())

    # -- the collectives (the caller has checked the arguments) ---------------------------------
    def all_reduce(self, tensor, op: ReduceOp) -> Work:
        address, count, kind = self._typed(tensor)
        self.comm.allReduce(address, address, count, kind, self._ops[op], self.stream.pointer())
        return self._work("all_reduce", [tensor])

    def broadcast(self, tensor, src: int) -> Work:
        address, nbytes = self._bytes(tensor)
        self.comm.broadcast(address, address, nbytes, self.nccl.NCCL_UINT8, src, self.stream.pointer())
        return self._work("broadcast", [tensor])

    def all_gather_into(self, output, input) -> Work:  # noqa: A002 (PyTorch's name)
        source, nbytes = self._bytes(input)
        self.comm.allGather(source, output.data_ptr(), nbytes, self.nccl.NCCL_UINT8, self.stream.pointer())
        return self._work("all_gather", [output, input])

    def reduce_scatter_into(self, output, input, op: ReduceOp) -> Work:  # noqa: A002
        address, count, kind = self._typed(output)
        self.comm.reduceScatter(input.data_ptr(), address, count, kind, self._ops[op], self.stream.pointer())
        return self._work("reduce_scatter", [output, input])

    def barrier(self) -> Work:
        if self.host is None:
            return self._work("barrier", [])
        return MPIWork("barrier", self.host.submit(self.world.comm.Barrier), [], self)  # the hosts meet

    def destroy(self) -> None:
        self.comm.destroy()
        if self.host is not None:
            self.host.stop(self.timeout)
            self.world.comm.Free()
