"""Data-parallel jobs: ``mpirun -n N zero gpt train ...`` and ``mpirun -n N zero mnist ...``.

A job started by mpirun (``OMPI_COMM_WORLD_SIZE``, ``PMI_SIZE`` or ``WORLD_SIZE`` above 1
in the environment) joins a process group (backend ``mpi`` on the CPU, ``nccl`` on CUDA)
and trains its model wrapped in ``DistributedDataParallel``: each rank computes on its own
batches, backward averages the gradients, and every rank takes the same optimizer step.
Started without mpirun (or with one process) a job runs exactly as it always has.

What the ranks share and what only rank 0 does:

- the configuration: rank 0 checks the arguments (and reads a --resume checkpoint) and
  resolves them once into the job's frozen config, then hands the outcome to the others --
  the config and the checkpoint, or the error, which every rank then ends with (rank 0
  alone prints it);
- once per step, the loss averaged over the ranks (what is logged, and what the divergence
  guard reads), whether a stop signal arrived on any rank, whether a checkpoint is due on
  rank 0's clock -- so every rank decides the same;
- rank 0 alone prints, writes the metrics file, evaluates, samples, and writes checkpoints
  (atomic, as in one process), holding the run's lock; the checkpoints hold the module's
  state dict, so one process can resume what N wrote, and N what one wrote;
- a rank that fails ends the job: its error is printed with its rank, then MPI_Abort stops
  every rank (with the job's exit status); a rank that dies is reported by mpirun, which
  stops the others; a rank that hangs leaves the others in a collective that ends the job
  after --dist-timeout seconds. No rank waits forever.
"""
from __future__ import annotations

import contextlib
import datetime
import io
import os
import signal
import sys
from typing import Any

from ..errors import ZeroError

LAUNCHER_SIZES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE", "WORLD_SIZE")
DEFAULT_TIMEOUT = 1800.0  # seconds: PyTorch's default process group timeout


def launched_world_size() -> int:
    """How many processes the launcher started (1 without one), from its environment:
    MPI is not initialised to find out."""
    for name in LAUNCHER_SIZES:
        value = os.environ.get(name, "")
        if value.strip().isdigit():
            return int(value)
    return 1


class AgreedError(Exception):
    """An error every rank of the job ends with at the same point (rank 0's argument error,
    handed to all; a divergence seen in the averaged loss): the job ends without MPI_Abort,
    and rank 0 alone prints it (``show``)."""

    def __init__(self, error: BaseException, show: bool):
        super().__init__(str(error))
        self.error, self.show = error, show


class Ranks:
    """This process's part in the job: ``rank``, ``world``, ``is_main``; the collectives the
    jobs need, which do nothing with one process."""

    def __init__(self, rank: int = 0, world: int = 1, local_rank: int = 0, device: str = "cpu"):
        self.rank, self.world, self.local_rank = rank, world, local_rank
        self.device = device  # where the backend's collectives take tensors

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def wrap(self, model):
        """``model`` in DistributedDataParallel (rank 0's weights everywhere), or itself."""
        if not self.distributed:
            return model
        from ..nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model)

    def from_main(self, compute):
        """``compute()`` on rank 0, its result on every rank; an error it raises ends every
        rank (an ``AgreedError``: rank 0 prints it)."""
        if not self.distributed:
            return compute()
        from .. import distributed as dist

        outcome: list[Any] = [None]   # rank 0's ("ok", result) or ("error", exception), broadcast
        if self.is_main:
            try:
                outcome[0] = ("ok", compute())
            except (ZeroError, OSError, MemoryError) as e:
                outcome[0] = ("error", e)
        dist.broadcast_object_list(outcome, src=0)
        kind, value = outcome[0]
        if kind == "error":
            raise AgreedError(value, show=self.is_main)
        return value

    def agreed(self, error: BaseException) -> BaseException:
        """``error``, which every rank raises at this point, as the job should end with it."""
        return AgreedError(error, show=self.is_main) if self.distributed else error

    def gather(self, value) -> list:
        """Every rank's ``value`` (a picklable object), in rank order, on every rank."""
        if not self.distributed:
            return [value]
        from .. import distributed as dist

        found: list = [None] * self.world
        dist.all_gather_object(found, value)
        return found

    def barrier(self) -> None:
        if self.distributed:
            from .. import distributed as dist

            dist.barrier()

    def agree(self, loss, run, due: bool):
        """The step's loss averaged over the ranks (a tensor), and -- the same on every rank --
        whether to stop (a signal any rank received is adopted by all) and whether a
        checkpoint is due (on rank 0's clock). One all-reduce."""
        if not self.distributed:
            return loss, run.stop_requested, due
        from .. import distributed as dist
        from ..ops.joining import cat
        from ..tensors.creation import tensor

        signum = run.signals.signum
        flags = [float(signum == signal.SIGINT), float(signum == signal.SIGTERM), float(due and self.is_main)]
        values = cat([loss.detach().double().reshape(1), tensor(flags, dtype="float64", device=loss.device)])
        dist.all_reduce(values)
        total, interrupted, terminated, agreed_due = values.tolist()
        stop = interrupted > 0 or terminated > 0
        if stop and run.signals.signum is None:
            run.signals.signum = signal.SIGTERM if terminated else signal.SIGINT
        # what the reduction says, never this rank's flag now: a signal that landed after this
        # rank's flags went in is decided at the next agreement, alike on every rank
        return values[0] / self.world, stop, agreed_due > 0

    def agree_stop(self, run) -> bool:
        """Whether a stop signal arrived on any rank (adopted by all)."""
        if not self.distributed:
            return run.stop_requested
        from ..tensors.creation import tensor

        _, stop, _ = self.agree(tensor(0.0, dtype="float64", device=self.device), run, False)  # (no loss)
        return stop

    def sum(self, values: list[float]) -> list[float]:
        """``values`` summed over the ranks (in float64)."""
        if not self.distributed:
            return list(values)
        from .. import distributed as dist
        from ..tensors.creation import tensor

        total = tensor(values, dtype="float64", device=self.device)
        dist.all_reduce(total)
        return total.tolist()


    def each_machine(self, compute):
        """``compute()`` (which writes a cache) on each machine's local rank 0 first, then on
        the machine's other ranks (which find it written); its result on this rank."""
        if not self.distributed:
            return compute()
        result = compute() if self.local_rank == 0 else None
        self.barrier()
        return compute() if self.local_rank != 0 else result


class RankShare:
    """A sampler: rank ``rank``'s share of each epoch of ``sampler`` (a shuffle drawn from the
    default generator, the same on every rank) -- every ``world``-th index from ``rank``, as
    PyTorch's DistributedSampler deals them; each rank gets ``len // world``, so all run the
    same number of steps."""

    def __init__(self, sampler, rank: int, world: int):
        self.sampler, self.rank, self.world = sampler, rank, world

    def __iter__(self):
        order = list(self.sampler)
        return iter(order[self.rank:len(self) * self.world:self.world])

    def __len__(self) -> int:
        return len(self.sampler) // self.world


def stream_seed(seed: int, rank: int) -> int:
    """The seed of rank ``rank``'s random stream (batches, dropout) in a job seeded ``seed``:
    ``seed`` itself on rank 0, so one process draws what it always drew."""
    return seed + 1_000_003 * rank


def add_arguments(parser) -> None:
    parser.add_argument("--dist-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help="with several ranks (mpirun -n N): a collective that waits longer than this for "
                             "another rank (dead or stuck) ends the job")


_current = Ranks()


def current() -> Ranks:
    return _current


@contextlib.contextmanager
def job(device_name: str, timeout: float = DEFAULT_TIMEOUT):
    """The job's ranks for the block: one process, or (launched with N > 1) the process
    group joined, and stdout silenced on ranks other than 0."""
    global _current
    size = launched_world_size()
    if size <= 1:
        yield _current
        return
    from .. import distributed as dist

    backend = "nccl" if device_name.startswith("cuda") else "mpi"
    if timeout <= 0:
        raise ZeroError(f"--dist-timeout must be positive, got {timeout:g}")
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout))
    group = dist.process_group.default_group("zero")
    _current = Ranks(dist.get_rank(), dist.get_world_size(), group.world.local_rank,
                     "cuda" if backend == "nccl" else "cpu")
    quiet = contextlib.redirect_stdout(io.StringIO()) if not _current.is_main else contextlib.nullcontext()
    with quiet:
        yield _current  # (on an exception the job's Ranks stay current: main() ends the job with them)
    _current = Ranks()
    dist.destroy_process_group()


def leave() -> None:
    """Forget the job's ranks (after main() has ended a failed job)."""
    global _current
    _current = Ranks()


def abort(code: int) -> None:
    """End every rank of the job now, with exit status ``code`` (MPI_Abort)."""
    from .. import distributed as dist

    sys.stdout.flush()
    sys.stderr.flush()
    world = dist.process_group.default_group("zero").world
    if world.comm is not None:
        from ..distributed.rendezvous import mpi_module

        mpi_module().COMM_WORLD.Abort(code)
    os._exit(code)
