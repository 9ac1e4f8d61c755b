"""zero.distributed.optim.ZeroRedundancyOptimizer on 2 ranks (programs/training.py): the same
training as one process with the plain optimizer, with about half the state on each rank."""
from __future__ import annotations

import pytest
from mpi_support import assert_close, needs_mpi
from scenarios import MODELS

import zero
import zero.distributed as dist
from zero.distributed.optim import ZeroRedundancyOptimizer
from zero.errors import DistributedError


@needs_mpi
@pytest.mark.parametrize("kind", list(MODELS))
def test_two_ranks_with_sharded_state_train_as_one_process(training_ranks, one_process, kind):
    losses, final = one_process[kind]
    for report in training_ranks:
        assert_close(report[f"{kind} zero losses"], losses, "losses")
        assert_close(report[f"{kind} zero weights"], final, "weights")
    assert training_ranks[0][f"{kind} zero weights"] == training_ranks[1][f"{kind} zero weights"]


@needs_mpi
@pytest.mark.parametrize("kind", list(MODELS))
def test_each_rank_keeps_about_half_the_state(training_ranks, kind):
    """AdamW keeps two values per parameter value; each rank those of its own shard, which is
    half the model to within one parameter (shards are whole parameters)."""
    total = training_ranks[0][f"{kind} parameters"]
    owned = [r[f"{kind} zero owned"] for r in training_ranks]
    assert sum(owned) == total
    for report, mine in zip(training_ranks, owned):
        assert report[f"{kind} zero state"] == 2 * mine            # exactly its shard's state, nothing else
        assert abs(mine - total / 2) <= report[f"{kind} zero largest"] / 2
        assert report[f"{kind} zero state"] < 0.6 * 2 * total     # measured: see the report's figures


def test_zero_redundancy_optimizer_needs_a_group():
    with pytest.raises(DistributedError, match="^ZeroRedundancyOptimizer: the default process group has not"):
        ZeroRedundancyOptimizer([zero.nn.Parameter(zero.ones(2))], lr=0.1)
    assert not dist.is_initialized()
