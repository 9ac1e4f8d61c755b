"""zero.nn.parallel.DistributedDataParallel on 2 ranks (programs/training.py) against one process
training on the whole batches here. (Kept beside the other tests that launch ranks.)"""
from __future__ import annotations

import re

import numpy as np
import pytest
from mpi_support import assert_close, needs_mpi
from scenarios import LR, MODELS, batches, loss_of, mlp, train, weights

from zero.optim import AdamW

pytestmark = needs_mpi


@pytest.fixture(scope="module")
def ranks(training_ranks):
    return training_ranks


@pytest.mark.parametrize("kind", list(MODELS))
@pytest.mark.parametrize("variant", ["ddp", "ddp small buckets"])
def test_two_ranks_on_half_batches_train_as_one_process_on_whole_ones(ranks, one_process, kind, variant):
    losses, final = one_process[kind]
    for report in ranks:
        assert_close(report[f"{kind} {variant} losses"], losses, "losses")
        assert_close(report[f"{kind} {variant} weights"], final, "weights")
    assert ranks[0][f"{kind} {variant} weights"] == ranks[1][f"{kind} {variant} weights"]  # bit for bit
    buckets = ranks[0][f"{kind} {variant} buckets"]
    assert (buckets == 1) if variant == "ddp" else (buckets >= 3)


def test_a_losing_run_can_fail_this_test(ranks, one_process, float64):
    """(The comparison sees a difference of one step's learning rate.)"""
    losses, _ = one_process["mlp"]
    model = mlp()
    other = train("mlp", model, AdamW(model.parameters(), lr=LR * 1.01), batches("mlp"))
    with pytest.raises(AssertionError):
        assert_close(other, losses, "losses")


def test_tied_weights_are_one_parameter_in_one_bucket(ranks):
    is_embedding_last, bucketed, parameters, distinct = ranks[0]["tied"]
    assert is_embedding_last and bucketed == parameters == distinct  # counted once, all-reduced once
    assert ranks[0]["state_dict keys"][0].startswith("module.token_embedding.")


def test_wrapping_gives_every_rank_rank_0s_weights(ranks, float64):
    for report in ranks:
        assert report["wrapped weights"] == weights(mlp(seed=0))


def test_no_sync_accumulates_locally_and_the_next_backward_averages_the_sums(ranks, float64):
    model = mlp()
    optimizer = AdamW(model.parameters(), lr=LR)
    for x, y in batches("mlp", steps=3, rows=16):
        optimizer.zero_grad()
        loss_of("mlp", model, x, y).backward()
        optimizer.step()
    for report in ranks:
        assert_close(report["no_sync weights"], weights(model), "weights after accumulation")
    first, second = (np.asarray(r["no_sync local grads"]) for r in ranks)
    assert not np.allclose(first, second)  # inside no_sync each rank kept its own gradient


def test_find_unused_parameters_averages_what_some_rank_used_and_leaves_the_rest(ranks):
    used_on_1 = np.asarray(ranks[1]["unused local b grad"])
    assert ranks[0]["unused local b grad"] is None
    for report in ranks:
        b, c = report["unused ddp grads"]
        np.testing.assert_allclose(b, used_on_1 / 2, rtol=1e-12)  # (0 + rank 1's) / 2
        assert c is None  # used by no rank: untouched
    body = [np.asarray(r["unused body grad"][1]) for r in ranks]
    for report in ranks:
        np.testing.assert_allclose(report["unused body grad"][0], (body[0] + body[1]) / 2, rtol=1e-12)


def test_buffers_are_rank_0s_after_wrapping_and_before_each_forward(ranks):
    for report in ranks:
        assert report["buffers"] == [[1.0] * 3, [1.0] * 3]  # rank 1 overwrote its own; the forward restored it


REFUSALS = {
    "different models": r"^DistributedError: DistributedDataParallel: rank [01] wraps a model of 2 parameters "
                        r"\((12|16) values\), rank [01] one of 2 \((12|16)\) or of other shapes",
    "device_ids on cpu": r"^ValueError: DistributedDataParallel: device_ids must be None for a module on the CPU",
    "bucket_cap_mb": r"^ValueError: DistributedDataParallel: bucket_cap_mb must be positive, got 0",
    "not a module": r"^TypeError: DistributedDataParallel: expected a zero.nn.Module, got function",
    "unused without find_unused_parameters": r"^DistributedError: DistributedDataParallel: parameters received no "
                                             r"gradient in this backward: c.bias, c.weight, b.bias, b.weight; if the "
                                             r"forward does not use them, pass find_unused_parameters=True",
    "two backwards after one forward": r"^DistributedError: DistributedDataParallel: a second backward after one "
                                       r"forward",
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_refusals(ranks, name):
    for report in ranks:
        message = report["errors"][name]
        assert message is not None and re.search(REFUSALS[name], message), message
