"""A rank that raises, dies, hangs or leaves makes the job end with an error in bounded time
(programs/failures.py); a job launched wrongly stops at init_process_group.

The bound is the process group's timeout (3 s in the program) plus start-up. No test
times it (the machine may be loaded): a hang runs into launch()'s own limit, which fails
the test, and each case checks the message of the path that ended the job."""
from __future__ import annotations

import pytest
from mpi_support import launch, needs_mpi

pytestmark = needs_mpi


@pytest.mark.parametrize("mode, says", [
    ("raise", ["RuntimeError: rank 1 fails on purpose",
               "zero.distributed: rank 1 of 2: stopped on an uncaught RuntimeError; aborting all 2 ranks (MPI_Abort)"]),
    ("kill", ["process rank 1 with PID", "exited on signal 9 (Killed)"]),
    ("hang", ["zero.distributed: rank 0 of 2: all_reduce did not complete within 3 s (the process group's "
              "timeout): another rank has died, is stuck, or did not call the same collective; aborting the job"]),
    ("leave", ["rank 0 of 2: all_reduce did not complete within 3 s"]),
    ("backward", ["ZeroDivisionError", "rank 1 of 2: stopped on an uncaught ZeroDivisionError"]),
])
def test_the_job_ends_with_an_error_and_says_why(tmp_path, mode, says):
    result = launch("failures.py", 2, mode, out=tmp_path, timeout=120, check=False)
    output = " ".join((result.stdout + result.stderr).split())  # (mpirun wraps its lines)
    assert result.returncode != 0, output
    assert "rank 0 finished" not in output and "rank 0 ready" in output
    for text in says:
        assert text in output, output


def test_a_launch_that_disagrees_with_mpi_stops_at_init(tmp_path):
    result = launch("failures.py", 2, "raise", out=tmp_path, timeout=120, check=False, env={"WORLD_SIZE": "3"})
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "ready" not in output
    # Two ranks print the same traceback at once, unbuffered: the error's name and its message are
    # separate writes, which the other rank's can split (as on a 16-core machine), so each is looked for alone.
    assert "DistributedError" in output, output
    assert "init_process_group: WORLD_SIZE=3 in the environment, but MPI started this process as rank" in output, output
