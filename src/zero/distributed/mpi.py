"""The ``mpi`` backend: collectives on CPU tensors through mpi4py, on the tensors' own memory.

A contiguous CPU tensor's ``_array`` is a NumPy view of its storage, so MPI reads and
writes the tensor itself: no copy in or out.

The MPI calls are made by one thread per group, one at a time, in the order the program
asked for them (PyTorch's ProcessGroupMPI does the same): a collective puts its call on
that thread's queue and returns a ``Work``; a blocking collective waits for it at once.
Three things follow. Every rank calls the collectives in the same order, as MPI requires.
A collective with ``async_op=True`` really runs while the program goes on (mpi4py
releases the GIL inside MPI), where MPI's own non-blocking collectives would not: Open
MPI moves those on only inside MPI calls. And a wait has a deadline: a collective that has
not finished after the group's ``timeout`` means a peer is gone or stuck (it died, it
skipped the collective, it waits for something else), and the job is aborted with a
message that says so instead of hanging. (The thread costs a collective what MPI's
blocking call does, where the first design of this module, MPI_Iallreduce polled with
sleeps, took several times that: RESULTS.md, "Figures that were in docstrings".)

Reductions need an MPI type for the elements: float32, float64, int32, int64 and uint8
have one. float16 and bfloat16 have none (moving them -- broadcast, all-gather -- goes as
bytes and works). MPI has no average: AVG is a SUM followed by a division by the world size.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable

import numpy as np

from ..errors import DistributedError, DTypeError, describe
from .reduce_op import ReduceOp
from .rendezvous import World, mpi_module
from .work import Work


class Job:
    """One MPI call for the thread to make; ``done`` is set when it has returned."""

    __slots__ = ("call", "done", "error")

    def __init__(self, call: Callable[[], None]):
        self.call = call
        self.done = threading.Event()
        self.error: BaseException | None = None


class CommThread:
    """The thread that makes a group's MPI calls, one at a time, in the order submitted."""

    def __init__(self, name: str):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, call: Callable[[], None]) -> Job:
        job = Job(call)
        self._jobs.put(job)
        return job

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job.call()
            except BaseException as e:  # handed to the waiting thread, which raises it
                job.error = e
            job.done.set()

    def stop(self, timeout: float) -> bool:
        """Let the calls queued so far finish, then end the thread; whether it ended in time."""
        self._jobs.put(None)
        self._thread.join(timeout)
        return not self._thread.is_alive()


class MPIWork(Work):
    def __init__(self, name: str, job: Job, outputs: list, backend):  # backend: its world and timeout
        super().__init__(name, outputs)
        self._job = job
        self._backend = backend

    def _test(self) -> bool:
        return self._job.done.is_set()

    def _wait(self, timeout: float | None) -> None:
        limit = self._backend.timeout if timeout is None else timeout
        if not self._job.done.wait(limit):
            self._backend.world.abort(
                f"{self.name} did not complete within {limit:g} s (the process group's timeout): another "
                "rank has died, is stuck, or did not call the same collective; aborting the job")

    def _complete(self) -> None:
        if self._job.error is not None:
            error, self._job.error = self._job.error, None
            raise DistributedError(f"{self.name} failed in MPI: {type(error).__name__}: {error}") from error
        super()._complete()


class MPIBackend:
    name = "mpi"
    device_type = "cpu"

    def __init__(self, world: World, timeout: float):
        self.MPI = MPI = mpi_module()
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:  # the thread's calls, and an abort from the program's thread
            raise DistributedError("the mpi backend calls MPI from its own thread while the program's thread may "
                                   "abort the job, and this MPI was not initialised for several threads; leave "
                                   "mpi4py.rc.thread_level at its default ('multiple')")
        self.world = world
        self.comm = world.comm
        self.rank, self.size = world.rank, world.size
        self.timeout = timeout
        self.thread = CommThread(f"zero.distributed rank {world.rank}")
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

    def _submit(self, name: str, call: Callable[[], None], outputs: list) -> Work:
        return MPIWork(name, self.thread.submit(call), outputs, self)

    def _reduced(self, call: Callable[[], None], op: ReduceOp, result) -> Callable[[], None]:
        """``call``, then (AVG) the division of ``result`` by the world size, on the thread."""
        if op is not ReduceOp.AVG:
            return call
        array, size = result._array, self.size

        def call_and_divide() -> None:
            call()
            np.divide(array, size, out=array)
        return call_and_divide

    # -- the collectives (the caller has checked the arguments) ---------------------------------
    def all_reduce(self, tensor, op: ReduceOp) -> Work:
        buffer, mpi_op = self._typed(tensor), self._ops[op]
        call = self._reduced(lambda: self.comm.Allreduce(self.MPI.IN_PLACE, buffer, op=mpi_op), op, tensor)
        return self._submit("all_reduce", call, [tensor])

    def broadcast(self, tensor, src: int) -> Work:
        buffer = self._bytes(tensor)
        return self._submit("broadcast", lambda: self.comm.Bcast(buffer, root=src), [tensor])

    def all_gather_into(self, output, input) -> Work:  # noqa: A002 (PyTorch's name)
        source, target = self._bytes(input), self._bytes(output)
        return self._submit("all_gather", lambda: self.comm.Allgather(source, target), [output, input])

    def reduce_scatter_into(self, output, input, op: ReduceOp) -> Work:  # noqa: A002
        source, target, mpi_op = self._typed(input), self._typed(output), self._ops[op]
        call = self._reduced(lambda: self.comm.Reduce_scatter_block(source, target, op=mpi_op), op, output)
        return self._submit("reduce_scatter", call, [output, input])

    def barrier(self) -> Work:
        return self._submit("barrier", self.comm.Barrier, [])

    def destroy(self) -> None:
        if not self.thread.stop(self.timeout):
            self.world.abort("destroy_process_group: a collective still running after the group's timeout")
        self.comm.Free()
