"""A fake of CuPy's NCCL bindings for one rank, for the nccl backend's tests without a GPU.

Its communicator records each call and does what NCCL does with one rank -- the result is
the input -- by copying the bytes between the addresses it is given (``ctypes.memmove``),
so a wrong address, count or type shows as wrong values. The "cuda" tensors it works on
are the suite's CPU-played ones (their addresses are host memory).
"""
from __future__ import annotations

import ctypes

UNIQUE_ID = bytes(range(128))
ITEMSIZE = {0: 4, 1: 8, 2: 2, 3: 2, 4: 4, 5: 8, 6: 1}  # by NCCL type below


class FakeNccl:
    available = True
    (NCCL_FLOAT32, NCCL_FLOAT64, NCCL_FLOAT16, NCCL_BFLOAT16, NCCL_INT32, NCCL_INT64, NCCL_UINT8) = range(7)
    NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = range(10, 15)

    def __init__(self):
        self.made_ids = 0
        self.communicators = []

    def get_unique_id(self):
        self.made_ids += 1
        return UNIQUE_ID

    def NcclCommunicator(self, ndev, unique_id, rank):  # (CuPy's name)
        communicator = FakeCommunicator(ndev, unique_id, rank)
        self.communicators.append(communicator)
        return communicator


class FakeCommunicator:
    def __init__(self, ndev, unique_id, rank):
        assert ndev == 1, "the fake plays one rank"
        self.made_with = (ndev, unique_id, rank)
        self.calls = []
        self.destroyed = False

    def allReduce(self, send, receive, count, kind, op, stream):  # (NCCL's names, below too)
        self.calls.append(("allReduce", send, receive, count, kind, op, stream))
        ctypes.memmove(receive, send, count * ITEMSIZE[kind])

    def broadcast(self, send, receive, count, kind, root, stream):
        self.calls.append(("broadcast", send, receive, count, kind, root, stream))
        ctypes.memmove(receive, send, count * ITEMSIZE[kind])

    def allGather(self, send, receive, count, kind, stream):
        self.calls.append(("allGather", send, receive, count, kind, stream))
        ctypes.memmove(receive, send, count * ITEMSIZE[kind])

    def reduceScatter(self, send, receive, count, kind, op, stream):
        self.calls.append(("reduceScatter", send, receive, count, kind, op, stream))
        ctypes.memmove(receive, send, count * ITEMSIZE[kind])

    def destroy(self):
        self.destroyed = True


class FakeStream:
    POINTER = 0xABC

    def __init__(self):
        self.done = True

    def pointer(self):
        return self.POINTER

    def record_event(self):
        return self


def install():
    """Make ``init_process_group("nccl")`` in this process build its backend on the fake, on
    a "cuda" device the CPU backend plays, as one rank without MPI. Returns the library."""
    from rank_common import pretend_cuda

    from zero.distributed import nccl, rendezvous

    library = FakeNccl()
    pretend_cuda()
    rendezvous.mpi_module = lambda: None
    nccl.create_backend = lambda world, timeout: nccl.NCCLBackend(world, timeout, library=library,
                                                                   stream=FakeStream())
    return library
