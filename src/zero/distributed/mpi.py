"""The ``mpi`` backend: collectives on CPU tensors through mpi4py, on the tensors' own memory.

A contiguous CPU tensor's ``_array`` is a NumPy view of its storage, so MPI reads and
writes the tensor itself: no copy in or out. Every collective is MPI's non-blocking one
(``Iallreduce``, ``Ibcast``, ``Iallgather``, ``Ireduce_scatter_block``, ``Ibarrier``); a
blocking call is the non-blocking one and a wait.

The wait polls (``MPI_Test``, then a sleep that grows from 10 µs to 1 ms) instead of
calling the blocking ``MPI_Wait``, for two reasons. A deadline: a collective that has not
finished after the group's ``timeout`` means a peer is gone or stuck (it died, it skipped
the collective, it waits for something else), and the job is aborted with a message that
says so instead of hanging. And the CPU: Open MPI's blocking wait spins, which on a
machine with fewer cores than ranks takes the core the peer needs (measured here: a
64-byte all-reduce between two ranks on two busy cores took 8.8 ms blocking, 0.34 ms
polled).

Reductions need an MPI type for the elements: float32, float64, int32, int64 and uint8
have one. float16 and bfloat16 have none (moving them -- broadcast, all-gather -- goes as
bytes and works). MPI has no average: AVG is a SUM followed by a division by the world size.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import DTypeError, describe
from .reduce_op import ReduceOp
from .rendezvous import World, mpi_module
from .work import Work


class MPIWork(Work):
    def __init__(self, name: str, request, outputs: list, backend, finish=None):  # backend: its world, timeout
        super().__init__(name, outputs, finish)
        self._request = request
        self._backend = backend

    def _test(self) -> bool:
        return bool(self._request.Test())

    def _wait(self, timeout: float | None) -> None:
        limit = self._backend.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        delay = 0.0
        while not self._request.Test():
            if time.monotonic() > deadline:
                self._backend.world.abort(
                    f"{self.name} did not complete within {limit:g} s (the process group's timeout): another "
                    "rank has died, is stuck, or did not call the same collective; aborting the job")
            time.sleep(delay)
            delay = min(max(2 * delay, 1e-5), 1e-3)


class MPIBackend:
    name = "mpi"
    device_type = "cpu"

    def __init__(self, world: World, timeout: float):
        self.MPI = mpi_module()
        self.world = world
        self.comm = world.comm
        self.rank, self.size = world.rank, world.size
        self.timeout = timeout
        MPI = self.MPI
        self._types = {"float32": MPI.FLOAT, "float64": MPI.DOUBLE, "int32": MPI.INT32_T, "int64": MPI.INT64_T,
                       "uint8": MPI.UINT8_T}
        self._ops = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
                     ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}

    def check_reducible(self, function: str, tensor) -> None:
        if tensor._meta.dtype.name not in self._types:
            raise DTypeError(f"{function}: the mpi backend cannot reduce {describe(tensor)}: MPI has no "
                             f"{tensor.dtype.name} type (it reduces {', '.join(self._types)}); reduce a float32 copy")

    def _typed(self, tensor) -> list:
        """The tensor's memory as MPI sees it for a reduction: [array, type] (mpi4py counts the elements)."""
        return [tensor._array.reshape(-1), self._types[tensor._meta.dtype.name]]

    @staticmethod
    def _bytes(tensor) -> np.ndarray:
        """The tensor's memory as bytes, for the collectives that only move it."""
        return tensor._array.reshape(-1).view(np.uint8)

    def _average(self, tensor):
        array = tensor._array
        return lambda: np.divide(array, self.size, out=array)

    # -- the collectives (the caller has checked the arguments) ---------------------------------
    def all_reduce(self, tensor, op: ReduceOp) -> Work:
        request = self.comm.Iallreduce(self.MPI.IN_PLACE, self._typed(tensor), op=self._ops[op])
        finish = [self._average(tensor)] if op is ReduceOp.AVG else None
        return MPIWork("all_reduce", request, [tensor], self, finish)

    def broadcast(self, tensor, src: int) -> Work:
        return MPIWork("broadcast", self.comm.Ibcast(self._bytes(tensor), root=src), [tensor], self)

    def all_gather_into(self, output, input) -> Work:  # noqa: A002 (PyTorch's name)
        request = self.comm.Iallgather(self._bytes(input), self._bytes(output))
        return MPIWork("all_gather", request, [output, input], self)

    def reduce_scatter_into(self, output, input, op: ReduceOp) -> Work:  # noqa: A002
        request = self.comm.Ireduce_scatter_block(self._typed(input), self._typed(output), op=self._ops[op])
        finish = [self._average(output)] if op is ReduceOp.AVG else None
        return MPIWork("reduce_scatter", request, [output, input], self, finish)

    def barrier(self) -> Work:
        return MPIWork("barrier", self.comm.Ibarrier(), [], self)

    def destroy(self) -> None:
        self.comm.Free()
