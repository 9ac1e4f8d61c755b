"""The nccl backend without a GPU: the unique id's exchange, the choice of GPU, and what each
collective hands NCCL (addresses, counts, types, operations, the stream), against a fake
NCCL library on "cuda" tensors that the CPU backend plays (the suite's cpu_played_cuda, on
a GPU machine too: the fake copies host memory).
A GPU runs the real thing: tests/backends/cuda/test_gpu.py::test_nccl_on_one_gpu."""
from __future__ import annotations

import datetime
import os

import pytest

from fake_nccl import UNIQUE_ID, FakeNccl, FakeStream

import zero
import zero.distributed as dist
from zero.distributed import nccl, process_group, rendezvous
from zero.distributed.rendezvous import World
from zero.errors import DeviceError, DistributedError, DTypeError

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")


@pytest.fixture
def fake_group(cpu_played_cuda):
    """A default group of one rank on the fake NCCL; yields (library, stream, the cuda device)."""
    library, stream = FakeNccl(), FakeStream()
    world = World(0, 1, 0, 1, None)
    backend = nccl.NCCLBackend(world, 60.0, library=library, stream=stream)
    process_group._default = process_group.ProcessGroup(backend, world, datetime.timedelta(seconds=60))
    try:
        yield library, stream, cpu_played_cuda
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


def test_the_values_land_where_they_should(fake_group):
    """(The fake copies the bytes NCCL would move with one rank: a wrong address or count shows.)"""
    _, _, cuda = fake_group
    source = zero.arange(6.0, device=cuda)
    parts = [zero.zeros(6, device=cuda)]
    dist.all_gather(parts, source)
    out = zero.zeros(2, 3, device=cuda)
    dist.reduce_scatter(out, [source.view(2, 3)])
    assert parts[0].tolist() == list(range(6)) and out.view(-1).tolist() == list(range(6))
    gathered: list = [None]
    dist.all_gather_object(gathered, {"on": zero.ones(2, device=cuda)})
    assert gathered[0]["on"].device == cuda and gathered[0]["on"].tolist() == [1.0, 1.0]


def test_the_gpu_program_runs_on_the_fake():
    """programs/nccl_one_gpu.py (what the GPU check runs) through the fake: every collective,
    DDP and ZeRO on CUDA tensors of the nccl backend, end to end."""
    import json
    import subprocess
    import sys
    import tempfile

    here = os.path.dirname(__file__)
    shim = ("import sys, runpy; sys.path[:0] = [%r, %r]; import fake_nccl; fake_nccl.install(); "
            "sys.argv = [%r, sys.argv[1]]; runpy.run_path(%r, run_name='__main__')")
    program = os.path.join(PROGRAMS, "nccl_one_gpu.py")
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run([sys.executable, "-c", shim % (here, PROGRAMS, program, program), out],
                                capture_output=True, text=True, timeout=240, check=False)
        assert result.returncode == 0, result.stderr[-4000:]
        report = json.loads(open(os.path.join(out, "rank0.json")).read())
    assert report["backend"] == "nccl" and report["world"] == 1
    assert report["broadcast"] == report["all_gather"] == report["reduce_scatter_tensor"]
    assert report["ddp losses"] == report["plain losses"] and report["zero state entries"] == 4
    assert report["zero losses"] == report["plain losses"]


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
