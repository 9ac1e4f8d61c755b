"""The nccl backend without a GPU: the unique id's exchange, the choice of GPU, and what each
collective hands NCCL (addresses, counts, types, operations, the stream), against a fake
NCCL library on "cuda" tensors that the CPU backend plays (the suite's second_device).
A GPU runs the real thing: tests/backends/cuda/test_gpu.py::test_nccl_on_one_gpu."""
from __future__ import annotations

import datetime
import os

import pytest

import zero
import zero.distributed as dist
from zero.distributed import nccl, process_group, rendezvous
from zero.distributed.rendezvous import World
from zero.errors import DeviceError, DistributedError, DTypeError

UNIQUE_ID = bytes(range(128))


class FakeNccl:
    """The parts of ``cupy.cuda.nccl`` the backend uses; a communicator that records its calls."""

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
        self.made_with = (ndev, unique_id, rank)
        self.calls = []
        self.destroyed = False

    def __getattr__(self, name):  # allReduce, broadcast, allGather, reduceScatter
        return lambda *args: self.calls.append((name, *args))

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


@pytest.fixture
def fake_group(second_device):
    """A default group of one rank on the fake NCCL; yields (library, stream, the cuda device)."""
    library, stream = FakeNccl(), FakeStream()
    world = World(0, 1, 0, 1, None)
    backend = nccl.NCCLBackend(world, 60.0, library=library, stream=stream)
    process_group._default = process_group.ProcessGroup(backend, world, datetime.timedelta(seconds=60))
    try:
        yield library, stream, second_device
    finally:
        process_group._default = None


def test_the_communicator_is_made_from_rank_0s_id(fake_group):
    library, _, _ = fake_group
    assert library.made_ids == 1
    assert library.communicators[0].made_with == (1, UNIQUE_ID, 0)
    assert dist.get_backend() == "nccl" and dist.get_rank() == 0 and dist.get_world_size() == 1


def test_each_collective_hands_nccl_the_tensors_memory_on_the_stream(fake_group):
    library, stream, cuda = fake_group
    calls = library.communicators[0].calls
    t = zero.ones(3, 4, device=cuda)
    dist.all_reduce(t)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)  # NCCL averages itself: no division afterwards
    h = zero.ones(5, dtype=zero.float16, device=cuda)
    dist.all_reduce(h, op=dist.ReduceOp.MAX)
    dist.broadcast(t, src=0)
    small, large = zero.ones(6, dtype=zero.int64, device=cuda), zero.ones(6, dtype=zero.int64, device=cuda)
    dist.all_gather_into_tensor(large, small)
    dist.reduce_scatter_tensor(small, large, op=dist.ReduceOp.PRODUCT)
    s = FakeStream.POINTER
    assert calls == [
        ("allReduce", t.data_ptr(), t.data_ptr(), 12, library.NCCL_FLOAT32, library.NCCL_SUM, s),
        ("allReduce", t.data_ptr(), t.data_ptr(), 12, library.NCCL_FLOAT32, library.NCCL_AVG, s),
        ("allReduce", h.data_ptr(), h.data_ptr(), 5, library.NCCL_FLOAT16, library.NCCL_MAX, s),
        ("broadcast", t.data_ptr(), t.data_ptr(), 48, library.NCCL_UINT8, 0, s),       # bytes: any dtype moves
        ("allGather", small.data_ptr(), large.data_ptr(), 48, library.NCCL_UINT8, s),
        ("reduceScatter", large.data_ptr(), small.data_ptr(), 6, library.NCCL_INT64, library.NCCL_PROD, s),
    ]
    assert t.tolist() == [[1.0] * 4] * 3  # nothing divided on the host


def test_a_work_on_the_stream_is_waited_for_by_the_stream(fake_group):
    _, stream, cuda = fake_group
    stream.done = False
    work = dist.all_reduce(zero.ones(2, device=cuda), async_op=True)
    assert type(work).__name__ == "NCCLWork"
    assert work.is_completed() is False  # the event behind it has not been reached
    assert work.wait() is True           # returns at once: later kernels on the stream come after it
    stream.done = True
    assert work.is_completed() is True


def test_the_nccl_backend_refuses_cpu_tensors_and_what_it_cannot_reduce(fake_group):
    _, _, cuda = fake_group
    with pytest.raises(DeviceError, match=r"the nccl backend works on CUDA tensors, got tensor float32\[2\] on cpu; "
                                          "use backend 'mpi'"):
        dist.all_reduce(zero.ones(2))
    with pytest.raises(DTypeError, match="cannot reduce a bool tensor"):
        dist.all_reduce(zero.ones(2, dtype=zero.bool, device=cuda))
    dist.broadcast(zero.ones(2, dtype=zero.bool, device=cuda), src=0)  # moving bools is fine


def test_destroy_destroys_the_communicator(fake_group):
    library, _, _ = fake_group
    dist.destroy_process_group()
    assert library.communicators[0].destroyed and not dist.is_initialized()


class FakeBootstrap:
    """MPI's object broadcast, as rank 0 would send it."""

    def __init__(self, sent):
        self.sent = sent
        self.calls = []

    def bcast(self, obj, root):
        self.calls.append((obj, root))
        return self.sent


def test_the_unique_id_goes_from_rank_0_to_the_others_over_mpi():
    made = []
    make = lambda: made.append(1) or UNIQUE_ID  # noqa: E731
    on_0 = FakeBootstrap(UNIQUE_ID)
    assert nccl.exchange_unique_id(World(0, 2, 0, 2, on_0), make) == UNIQUE_ID
    assert on_0.calls == [(UNIQUE_ID, 0)] and made == [1]
    on_1 = FakeBootstrap(UNIQUE_ID)
    assert nccl.exchange_unique_id(World(1, 2, 1, 2, on_1), make) == UNIQUE_ID
    assert on_1.calls == [(None, 0)] and made == [1]  # rank 1 makes none of its own
    assert nccl.exchange_unique_id(World(0, 1, 0, 1, None), make) == UNIQUE_ID  # alone: no MPI at all
    with pytest.raises(DistributedError, match="rank 1: received NoneType as NCCL's unique id, expected 128 bytes"):
        nccl.exchange_unique_id(World(1, 2, 1, 2, FakeBootstrap(None)), make)


@pytest.mark.parametrize("visible, local_rank, in_use, result", [
    (None, 1, False, "1"),          # GPU number local rank
    ("4,5,6", 2, False, "6"),       # the local rank's entry of the list given
    ("5", 1, True, "5"),            # the launcher chose one GPU per rank: kept
    (None, 1, True, DistributedError("CUDA was in use before init_process_group")),
    ("4,5", 3, False, DistributedError("local rank 3 has no GPU: CUDA_VISIBLE_DEVICES=4,5 lists 2")),
])
def test_each_rank_on_a_machine_gets_its_own_gpu(monkeypatch, visible, local_rank, in_use, result):
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    world = World(local_rank, 4, local_rank, 4, None)
    if isinstance(result, Exception):
        with pytest.raises(DistributedError, match=str(result)):
            nccl.select_gpu(world, cuda_in_use=in_use)
    else:
        nccl.select_gpu(world, cuda_in_use=in_use)
        assert os.environ["CUDA_VISIBLE_DEVICES"] == result


def test_one_rank_per_machine_changes_nothing(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    nccl.select_gpu(World(3, 4, 0, 1, None), cuda_in_use=True)
    assert "CUDA_VISIBLE_DEVICES" not in os.environ


@pytest.mark.skipif(zero.cuda.is_available(), reason="a GPU is here: the real nccl backend is tested on it")
def test_init_process_group_nccl_without_a_gpu_says_why(monkeypatch):
    monkeypatch.setattr(rendezvous, "mpi_module", lambda: None)  # one process, and no MPI in pytest's
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(DistributedError, match="nccl"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()
