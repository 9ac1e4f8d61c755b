"""A checkpoint written under DistributedDataParallel by rank 0 (with zero.save; with ZeRO after
consolidate_state_dict) resumes in one process and on 2 ranks with the losses the run that
wrote it went on to have (programs/checkpoint.py)."""
from __future__ import annotations

import pytest
from mpi_support import assert_close, launch, needs_mpi

import zero

pytestmark = needs_mpi


@pytest.mark.parametrize("variant", ["ddp", "zero"])
def test_a_checkpoint_from_two_ranks_resumes_on_one_process_and_on_two(tmp_path, variant):
    path = str(tmp_path / "checkpoint.zero")
    written = launch("checkpoint.py", 2, "train", variant, path, out=tmp_path / "train").ranks
    expected = written[0]["next losses"]
    assert written[1]["next losses"] == expected
    saved = zero.load(path)
    assert saved["step"] == 5 and len(saved["optimizer"]["state"]) == len(saved["model"])  # the whole state
    alone = launch("checkpoint.py", 1, "alone", variant, path, out=tmp_path / "one", use_mpirun=False).ranks[0]
    assert alone["world"] == 1
    assert_close(alone["next losses"], expected, "one process")
    pair = launch("checkpoint.py", 2, "resume", variant, path, out=tmp_path / "two").ranks
    for report in pair:
        assert report["world"] == 2
        assert_close(report["next losses"], expected, "two ranks")
