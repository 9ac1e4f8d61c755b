"""zero.distributed's collectives on 2 ranks over MPI, each result against NumPy (programs/collectives.py)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from mpi_support import launch, needs_mpi
from scenarios import rank_values

pytestmark = needs_mpi
WORLD = 2
REDUCE = {"SUM": np.sum, "AVG": np.mean, "PRODUCT": np.prod, "MIN": np.min, "MAX": np.max}


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    return launch("collectives.py", WORLD, out=tmp_path_factory.mktemp("collectives")).ranks


def everyone(shape, dtype="float64") -> np.ndarray:
    """(WORLD, *shape): every rank's input."""
    return np.stack([rank_values(r, shape, dtype) for r in range(WORLD)])


def each_rank(ranks, key):
    return [np.asarray(report[key]) for report in ranks]


def test_every_rank_knows_the_group(ranks):
    assert [(r["rank"], r["world"], r["backend"], r["initialized"]) for r in ranks] == [
        (0, 2, "mpi", True), (1, 2, "mpi", True)]


@pytest.mark.parametrize("op, dtype", [(op, dtype) for op in REDUCE
                                       for dtype in ("float32", "float64", "int64", "int32", "uint8")
                                       if op != "AVG" or dtype.startswith("float")])  # (AVG of ints: refused)
def test_all_reduce(ranks, op, dtype):
    expected = REDUCE[op](everyone((3, 4), dtype), axis=0)
    if not dtype.startswith("float"):
        expected = expected.astype(dtype)  # (uint8's product wraps around, as MPI's does)
    for got in each_rank(ranks, f"all_reduce {op} {dtype}"):
        np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == "float32" else 1e-12)


def test_async_all_reduce_returns_a_work_that_waits(ranks):
    for report in ranks:
        assert report["async returns"] == "MPIWork" and report["async wait"] is True
        assert report["async completed"] is True and report["blocking returns"] == "None"
        np.testing.assert_allclose(report["async result"], everyone((5,)).sum(0))


def test_all_reduce_writes_into_the_callers_memory(ranks):
    rows = everyone((4,))
    for r, report in enumerate(ranks):
        np.testing.assert_allclose(report["in place row"], [rows[r], rows.sum(0) * 10])  # row 0 untouched
        assert report["same memory"] and report["version moved"]
        assert report["0-d"] == 2.0


@pytest.mark.parametrize("src", range(WORLD))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16", "bool"])
def test_broadcast(ranks, src, dtype):
    values = rank_values(src, (2, 3))
    if dtype == "bool":
        expected = (values > 1.0).astype(np.float64)
    elif dtype == "int64":
        expected = values.astype(np.int64)
    else:
        expected = values.astype(np.float32 if dtype == "float32" else np.float64)
    for got in each_rank(ranks, f"broadcast {src} {dtype}"):
        np.testing.assert_allclose(got, expected, rtol=1e-2 if dtype == "bfloat16" else 1e-6)


def test_all_gather(ranks):
    expected = everyone((2, 3))
    for report in ranks:
        np.testing.assert_allclose(report["all_gather"], expected)
        np.testing.assert_allclose(report["all_gather_into_tensor"], expected.reshape(WORLD * 2, 3))
        np.testing.assert_allclose(report["all_gather_into_tensor stacked async"], expected)
        assert report["all_gather async int64"] == everyone((3,), "int64").tolist()


@pytest.mark.parametrize("op", ["SUM", "AVG", "MAX"])
def test_reduce_scatter(ranks, op):
    reduced = REDUCE[op](everyone((WORLD * 2, 3)), axis=0)  # each rank's input, reduced over the ranks
    for r, report in enumerate(ranks):
        np.testing.assert_allclose(report[f"reduce_scatter_tensor {op}"], reduced[2 * r:2 * r + 2])
        np.testing.assert_allclose(report[f"reduce_scatter {op}"], REDUCE[op](everyone((WORLD, 2, 3))[:, r], axis=0))


def test_object_collectives(ranks):
    for report in ranks:
        assert report["broadcast_object_list"] == [[3.0, 3.0], "rank0", [1, "two"]]
        assert report["all_gather_object"] == [{"rank": 0, "text": ""}, {"rank": 1, "text": "xxx"}]
        assert report["barrier async"] is True


REFUSALS = {
    "not contiguous": r"^ShapeError: all_reduce: tensor float32\[4, 3\] on cpu must be contiguous",
    "not a tensor": r"^TypeError: all_reduce: tensor must be a zero.Tensor, got ndarray",
    "wrong device": r"^DeviceError: all_reduce: the mpi backend works on CPU tensors, got tensor float32\[3\] on "
                    r"cuda:0; use backend 'nccl'",
    "op not a ReduceOp": r"^TypeError: all_reduce: op must be a zero.distributed.ReduceOp",
    "AVG of ints": r"^DTypeError: all_reduce: ReduceOp.AVG needs a floating-point tensor",
    "bool reduce": r"^DTypeError: all_reduce: cannot reduce a bool tensor",
    "float16 reduce": r"^DTypeError: all_reduce: the mpi backend cannot reduce float16\[3\] on cpu: MPI has no",
    "src out of range": r"^ValueError: broadcast: src=2 is not a rank of this group \(0 to 1\)",
    "list length": r"^ValueError: all_gather: tensor_list must be a list of 2 tensors \(one per rank\), got 1",
    "list shape": r"^ShapeError: all_gather: tensor_list\[1\] is float32\[4\] on cpu.*shapes must match",
    "list dtype": r"^DTypeError: all_gather: tensor_list\[0\] is float64\[3\] on cpu.*dtypes must match",
    "gather size": r"^ShapeError: all_gather_into_tensor: output float32\[7\] on cpu must have world size \(2\) "
                   r"times the elements of the input float32\[3\]",
    "gather dtype": r"^DTypeError: all_gather_into_tensor: output is float64\[6\]",
    "scatter size": r"^ShapeError: reduce_scatter_tensor: input float32\[7\] on cpu must have world size \(2\)",
    "other group": r"^ValueError: all_reduce: Zero has one process group, the default one; pass group=None",
    "init twice": r"^DistributedError: init_process_group: the default process group is already initialized",
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_refusals(ranks, name):
    for report in ranks:
        message = report["errors"][name]
        assert message is not None, f"{name}: nothing was raised"
        assert "\n" not in message
        assert re.search(REFUSALS[name], message), message


def test_after_destroy_nothing_runs(ranks):
    for report in ranks:
        initialized, collective, rank = report["after destroy"]
        assert initialized is False
        assert collective.startswith("DistributedError: all_reduce: the default process group has not been init")
        assert rank.startswith("DistributedError: get_rank: the default process group has not been initialized")
