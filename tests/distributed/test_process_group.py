"""The process group's rules that need no second process (and no MPI in this process):
refusals before anything starts, where ranks come from, the mpirun command line."""
from __future__ import annotations

import datetime

import pytest

import zero
import zero.distributed as dist
from zero.distributed import rendezvous, run
from zero.distributed.rendezvous import World
from zero.errors import DistributedError


def test_collectives_and_questions_need_a_group():
    assert not dist.is_initialized()
    for call, name in [(lambda: dist.all_reduce(zero.ones(2)), "all_reduce"), (dist.get_rank, "get_rank"),
                       (dist.get_world_size, "get_world_size"), (dist.barrier, "barrier"),
                       (lambda: dist.broadcast_object_list([1]), "broadcast_object_list"),
                       (dist.destroy_process_group, "destroy_process_group"),
                       (lambda: zero.nn.parallel.DistributedDataParallel(zero.nn.Linear(2, 2)),
                        "DistributedDataParallel")]:
        with pytest.raises(DistributedError, match=f"^{name}: the default process group has not been initialized; "
                                                   r"call zero.distributed.init_process_group"):
            call()


@pytest.mark.parametrize("kwargs, error, message", [
    ({}, ValueError, "name the backend: 'mpi' \\(CPU tensors\\) or 'nccl' \\(CUDA tensors\\)"),
    ({"backend": "gloo"}, ValueError, "unknown backend 'gloo'; Zero has 'mpi'"),
    ({"backend": "mpi", "init_method": "tcp://10.0.0.1:23456"}, ValueError, "meet through MPI"),
    ({"backend": "mpi", "store": object()}, ValueError, "store= is not supported"),
    ({"backend": "mpi", "timeout": 30}, TypeError, "timeout must be a positive datetime.timedelta, got 30"),
    ({"backend": "mpi", "timeout": datetime.timedelta(0)}, TypeError, "positive datetime.timedelta"),
    ({"backend": "mpi", "rank": -2}, ValueError, "rank must be a non-negative int"),
    ({"backend": "mpi", "world_size": 1.5}, ValueError, "world_size must be a non-negative int"),
    ({"backend": "nccl", "device_id": 1}, ValueError, "each rank computes on its cuda:0"),
])
def test_init_process_group_refuses_bad_arguments_before_starting_anything(kwargs, error, message):
    with pytest.raises(error, match=message):
        dist.init_process_group(**kwargs)
    assert not dist.is_initialized()


def test_the_backend_names_and_availability():
    assert dist.Backend.MPI == "mpi" and dist.Backend.NCCL == "nccl" and dist.group.WORLD is None
    assert dist.is_available() == (dist.is_mpi_available() or dist.is_nccl_available())
    assert repr(dist.ReduceOp.AVG) == "ReduceOp.AVG"


@pytest.mark.parametrize("name, value, says", [
    ("WORLD_SIZE", "3", "WORLD_SIZE=3 in the environment, but MPI started this process as rank 1 of 2"),
    ("RANK", "0", "RANK=0 in the environment, but MPI started this process as rank 1"),
    ("LOCAL_RANK", "0", "LOCAL_RANK=0 in the environment"),
    ("RANK", "one", "RANK='one' in the environment is not an integer"),
])
def test_what_the_environment_says_must_agree_with_mpi(monkeypatch, name, value, says):
    monkeypatch.setenv(name, value)
    with pytest.raises(DistributedError, match=says):
        rendezvous._check_agreement(World(1, 2, 1, 2, None), -1, -1)


def test_what_the_program_says_must_agree_with_mpi(monkeypatch):
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    rendezvous._check_agreement(World(1, 2, 1, 2, None), 2, 1)  # agreeing values pass
    monkeypatch.setenv("RANK", "1")
    rendezvous._check_agreement(World(1, 2, 1, 2, None), -1, -1)
    with pytest.raises(DistributedError, match="world_size=4 passed to init_process_group, but MPI started this "
                                               "process as rank 1 of 2.*launch with mpirun -n N"):
        rendezvous._check_agreement(World(1, 2, 1, 2, None), 4, -1)


def test_without_mpi4py_only_nccl_on_one_process_goes_on(monkeypatch):
    monkeypatch.setattr(rendezvous, "mpi_module", lambda: None)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(DistributedError, match=r"backend='mpi'\) needs mpi4py, which is not installed; pip install"):
        rendezvous.rendezvous("mpi")
    assert rendezvous.rendezvous("nccl") == World(0, 1, 0, 1, None)
    with pytest.raises(DistributedError, match="a job of 2 processes needs MPI to start them and to hand NCCL's"):
        rendezvous.rendezvous("nccl", world_size=2)
    monkeypatch.setenv("WORLD_SIZE", "4")
    with pytest.raises(DistributedError, match="a job of 4 processes"):
        rendezvous.rendezvous("nccl")


def test_the_mpirun_command_line(monkeypatch):
    monkeypatch.setattr(run, "find_mpirun", lambda: "/venv/bin/mpirun")
    monkeypatch.setattr(run, "_is_open_mpi", lambda mpirun: True)
    monkeypatch.setattr(run.os, "geteuid", lambda: 0)
    assert run.mpirun_command(2, ["python", "a.py"]) == [
        "/venv/bin/mpirun", "-n", "2", "--oversubscribe", "--allow-run-as-root", "python", "a.py"]
    monkeypatch.setattr(run.os, "geteuid", lambda: 1000)
    assert run.mpirun_command(4, ["x"], hostfile="hosts") == [
        "/venv/bin/mpirun", "-n", "4", "--oversubscribe", "--hostfile", "hosts", "x"]
    monkeypatch.setattr(run, "_is_open_mpi", lambda mpirun: False)  # MPICH's mpiexec knows neither flag
    assert run.mpirun_command(2, ["x"]) == ["/venv/bin/mpirun", "-n", "2", "x"]
    monkeypatch.setattr(run, "find_mpirun", lambda: None)
    with pytest.raises(DistributedError, match="mpirun was not found"):
        run.mpirun_command(2, ["x"])
    assert run.main(["-n", "2", "a.py"]) == 2  # the launcher says so in one line and exits 2


def test_the_launcher_refuses_a_bad_count(capsys):
    with pytest.raises(SystemExit):
        run.main(["-n", "0", "a.py"])
    assert "-n must be at least 1" in capsys.readouterr().err
