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

import pytest
from mpi_support import launch

import zero

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
