"""How the processes of a job find each other: MPI, whatever the backend.

``mpirun -n N python train.py`` starts N processes and gives each its rank in
``MPI_COMM_WORLD``; that is where Zero takes a process's rank and the job's size from,
for both backends (the ``nccl`` backend also sends NCCL's unique id from rank 0 to the
others over MPI, as llm.c does). The local rank -- a process's number among those on
its own machine, which picks its GPU -- is its rank in the communicator of the processes
that share memory with it (``MPI_COMM_TYPE_SHARED``), which holds for any MPI and any
host file.

A launcher may also set ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` (torchrun does), and
a program may pass ``rank=`` and ``world_size=`` to ``init_process_group``. MPI's numbers
are what the collectives run on, so those are only checked: one that disagrees with MPI
means the job was launched some other way than the program expects (torchrun instead of
mpirun, a wrong -n), and init_process_group stops with an error naming both values,
rather than letting the ranks deadlock later.

Without mpi4py there is one process: the ``nccl`` backend then runs a job of one rank
(a GPU machine with no MPI), and asking for more says how to get MPI.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from ..errors import DistributedError

INSTALL_HINT = "pip install 'zero-dl[distributed]' (mpi4py and Open MPI), then launch with mpirun -n N"


def mpi_module():
    """mpi4py's ``MPI`` module (importing it initialises MPI), or None when mpi4py is not installed."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI


@dataclass
class World:
    """This process's place in the job."""

    rank: int
    size: int
    local_rank: int   # among the processes on this machine
    local_size: int
    comm: Any         # a duplicate of MPI_COMM_WORLD, or None for a job of one process without MPI

    def abort(self, message: str, code: int = 1) -> None:
        """Print ``message`` and end every process of the job (MPI_Abort): the way out of a
        collective that can no longer complete, for this rank and for the others."""
        print(f"zero.distributed: rank {self.rank} of {self.size}: {message}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        if self.comm is not None:
            mpi_module().COMM_WORLD.Abort(code)
        os._exit(code)


def rendezvous(backend: str, world_size: int = -1, rank: int = -1) -> World:
    """Meet the job's other processes (through MPI) and check what the caller and the
    environment say about the job against what MPI says."""
    MPI = mpi_module()
    if MPI is None:
        return _alone(backend, world_size, rank)
    comm = MPI.COMM_WORLD.Dup()  # the group's own communicator: the program's MPI traffic stays apart
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    world = World(comm.Get_rank(), comm.Get_size(), local.Get_rank(), local.Get_size(), comm)
    local.Free()
    _check_agreement(world, world_size, rank)
    return world


def _alone(backend: str, world_size: int, rank: int) -> World:
    if backend == "mpi":
        raise DistributedError(f"init_process_group(backend='mpi') needs mpi4py, which is not installed; "
                               f"{INSTALL_HINT}")
    size = world_size if world_size != -1 else _environment("WORLD_SIZE", 1)
    if size != 1:
        raise DistributedError(f"init_process_group: a job of {size} processes needs MPI to start them and to "
                               f"hand NCCL's unique id from rank 0 to the others, and mpi4py is not installed; "
                               f"{INSTALL_HINT}")
    world = World(0, 1, 0, 1, None)
    _check_agreement(world, world_size, rank)
    return world


def _environment(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise DistributedError(f"init_process_group: {name}={value!r} in the environment is not an integer") from None


def _check_agreement(world: World, world_size: int, rank: int) -> None:
    claims = [("world_size=", world_size, world.size), ("rank=", rank, world.rank),
              ("WORLD_SIZE=", _environment("WORLD_SIZE", -1), world.size),
              ("RANK=", _environment("RANK", -1), world.rank),
              ("LOCAL_RANK=", _environment("LOCAL_RANK", -1), world.local_rank)]
    for name, claimed, actual in claims:
        if claimed != -1 and claimed != actual:
            where = "passed to init_process_group" if name.islower() else "in the environment"
            raise DistributedError(
                f"init_process_group: {name}{claimed} {where}, but MPI started this process as rank {world.rank} "
                f"of {world.size} (local rank {world.local_rank}); Zero's ranks come from MPI: launch with "
                f"mpirun -n N, and leave out or correct {name.rstrip('=')}")
