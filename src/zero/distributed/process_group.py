"""The default process group: the processes that train together, and the backend they talk through.

    init_process_group("mpi")     CPU tensors, over MPI (mpi4py)
    init_process_group("nccl")    CUDA tensors, over NCCL (CuPy), bootstrapped over MPI

One group per process, as PyTorch's default group (``group=None`` everywhere; the
collectives take ``group`` only to accept PyTorch's calls). Where ranks and sizes come
from is ``rendezvous``'s rule: MPI's, checked against what the program and the
environment say.

No rank waits forever for a peer that is gone. ``mpirun`` ends the job when one process
is killed or exits with an error status; ``init_process_group`` adds the two cases it
does not see: an uncaught exception on one rank (Python would then call MPI_Finalize
and exit, leaving the others waiting in a collective) takes every rank down through
MPI_Abort, and a collective that has not finished after ``timeout`` (PyTorch's default,
30 minutes) aborts the job with a message naming it.
"""
from __future__ import annotations

import datetime
import importlib.util
import sys
import traceback
import warnings
from typing import Any

from ..errors import DistributedError
from .rendezvous import World, rendezvous

BACKENDS = ("mpi", "nccl")
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # PyTorch's default_pg_timeout


class Backend:
    """PyTorch's backend names: ``dist.Backend.MPI == "mpi"``."""

    MPI = "mpi"
    NCCL = "nccl"


class GroupMember:
    WORLD = None  # PyTorch's name for the default group: group=GroupMember.WORLD is group=None


group = GroupMember  # dist.group.WORLD


class ProcessGroup:
    def __init__(self, backend, world: World, timeout: datetime.timedelta):
        self.backend = backend  # MPIBackend or NCCLBackend
        self.world = world
        self.timeout = timeout
        self.rank, self.size = world.rank, world.size


_default: ProcessGroup | None = None
_hook_before: list = []  # sys.excepthook as init_process_group found it


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Join this process to the job's default group (PyTorch's signature). ``backend`` is
    "mpi" (CPU tensors) or "nccl" (CUDA tensors); launch the job with ``mpirun -n N``."""
    global _default
    if _default is not None:
        raise DistributedError("init_process_group: the default process group is already initialized; "
                               "call destroy_process_group() first to make a new one")
    name = _check_backend(backend)
    if init_method not in (None, "env://"):
        raise ValueError(f"init_process_group: init_method={init_method!r}: Zero's processes meet through MPI "
                         "(launch with mpirun), so init_method must be None or 'env://'")
    if store is not None:
        raise ValueError("init_process_group: store= is not supported: the processes meet through MPI")
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if not isinstance(timeout, datetime.timedelta) or timeout.total_seconds() <= 0:
        raise TypeError(f"init_process_group: timeout must be a positive datetime.timedelta, got {timeout!r}")
    for label, value in (("world_size", world_size), ("rank", rank)):
        if not isinstance(value, int) or isinstance(value, bool) or value < -1:
            raise ValueError(f"init_process_group: {label} must be a non-negative int (or -1: MPI's), got {value!r}")
    if device_id is not None and str(device_id) not in ("0", "cuda", "cuda:0"):
        raise ValueError(f"init_process_group: device_id={device_id!r}: each rank computes on its cuda:0")
    world = rendezvous(name, world_size, rank)
    made: Any
    if name == "mpi":
        from .mpi import MPIBackend
        made = MPIBackend(world, timeout.total_seconds())
    else:
        from .nccl import create_backend
        made = create_backend(world, timeout.total_seconds())
    _default = ProcessGroup(made, world, timeout)
    if world.size > 1:
        _hook_before.append(sys.excepthook)
        sys.excepthook = _abort_on_uncaught_exception


def destroy_process_group(group=None) -> None:
    """Leave the default group (MPI itself stays initialised until the process exits)."""
    global _default
    default_group("destroy_process_group", group)
    assert _default is not None
    if _hook_before:
        sys.excepthook = _hook_before.pop()
    backend, _default = _default.backend, None
    backend.destroy()


def _abort_on_uncaught_exception(exc_type, exc, tb) -> None:
    """sys.excepthook while a group of several ranks is up: print the traceback, then end the
    job. (Left to itself, Python would call MPI_Finalize and exit; the other ranks would
    wait in their next collective forever.)"""
    traceback.print_exception(exc_type, exc, tb)
    group = _default
    if group is None:  # (the group was destroyed; the hook is on its way out)
        return
    group.world.abort(f"stopped on an uncaught {exc_type.__name__}; aborting all {group.size} ranks "
                      "(MPI_Abort) so that none waits for it in a collective")


def _check_backend(backend) -> str:
    if backend is None:
        raise ValueError("init_process_group: name the backend: 'mpi' (CPU tensors) or 'nccl' (CUDA tensors)")
    name = str(backend).lower()
    if name not in BACKENDS:
        raise ValueError(f"init_process_group: unknown backend {backend!r}; Zero has 'mpi' (CPU tensors) and "
                         "'nccl' (CUDA tensors)")
    return name


def default_group(function: str, group=None) -> ProcessGroup:
    """The default group, or the error a collective raises without one."""
    if group is not None and group is not _default:
        raise ValueError(f"{function}: Zero has one process group, the default one; pass group=None")
    if _default is None:
        raise DistributedError(f"{function}: the default process group has not been initialized; call "
                               "zero.distributed.init_process_group('mpi' or 'nccl') first")
    return _default


# -- questions about the group -----------------------------------------------------------------------
def is_initialized() -> bool:
    return _default is not None


def get_rank(group=None) -> int:
    return default_group("get_rank", group).rank


def get_world_size(group=None) -> int:
    return default_group("get_world_size", group).size


def get_backend(group=None) -> str:
    return default_group("get_backend", group).backend.name


def is_mpi_available() -> bool:
    """Whether mpi4py is installed (without importing it: that would start MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available() -> bool:
    """Whether CuPy can load NCCL (not whether a GPU is there)."""
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        with warnings.catch_warnings():  # CuPy warns when it finds no NCCL library: that is the answer here
            warnings.simplefilter("ignore")
            from cupy.cuda import nccl
    except ImportError:
        return False
    return bool(getattr(nccl, "available", False))


def is_available() -> bool:
    """PyTorch's: whether the distributed package can be used here (a backend is installed)."""
    return is_mpi_available() or is_nccl_available()
