"""`mpirun -n 2 zero gpt train` and `mpirun -n 2 zero mnist` (programs/cli_job.py runs the
command line's main() on each rank): data-parallel training in which rank 0 alone prints,
writes metrics and checkpoints; --resume on 2 ranks continues exactly, on 1 and from 1 it
goes on; a rank that dies, hangs or fails ends the job with an error."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from mpi_support import launch, needs_mpi

import zero
from zero.cli.main import main
from zero.data import write_idx

pytestmark = needs_mpi

TINY = ("--batch-size", "4", "--block-size", "16", "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
        "--dropout", "0.1", "--warmup", "2", "--eval-iters", "2", "--log-interval", "1", "--sample-tokens", "8",
        "--eval-interval", "3", "--checkpoint-minutes", "0")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    where = tmp_path_factory.mktemp("text")
    (where / "input.txt").write_text("To be, or not to be, that is the question:\n" * 40, encoding="utf-8")
    assert main(["gpt", "prepare", str(where / "input.txt"), "--out", str(where / "data"), "--tokenizer", "char"]) == 0
    return where / "data"


def gpt(out, nprocs, run, *extra, data, check=True, use_mpirun=True):
    argv = ["gpt", "train", "--data", str(data), "--out", str(run), *TINY, "--metrics", str(run / "metrics.jsonl"),
            *extra]
    return launch("cli_job.py", nprocs, *argv, out=out, check=check, use_mpirun=use_mpirun)


def records(run) -> dict:
    lines = (run / "metrics.jsonl").read_text().splitlines()
    return {r["step"]: r for r in map(json.loads, lines)}


@pytest.fixture(scope="module")
def whole(tmp_path_factory, data):
    """6 steps on 2 ranks, checkpoints at steps 3 and 6."""
    where = tmp_path_factory.mktemp("whole")
    result = gpt(where / "ranks", 2, where / "run", "--steps", "6", data=data)
    return result, where / "run"


def test_two_ranks_train_and_rank_0_alone_logs_and_saves(whole):
    result, run = whole
    assert [r["status"] for r in result.ranks] == [0, 0]
    assert "data parallel: 2 ranks, each on its own batches of 4: 8 sequences a step" in result.stdout
    for step in range(1, 7):
        assert result.stdout.count(f"step {step:5d}  loss") == 1, result.stdout  # printed once: by rank 0
    assert result.stdout.count("--- sample ---") == 2 and result.stdout.count("resumed") == 0
    assert sorted(records(run)) == [1, 2, 3, 4, 5, 6]  # one writer
    assert all(r["tokens_per_s"] > 0 for r in records(run).values())
    checkpoint = zero.load(run / "checkpoint.safetensors")
    assert checkpoint["step"] == 6 and checkpoint["world_size"] == 2
    first, second = checkpoint["rng"]["ranks"]
    assert first["batches"] != second["batches"] and first["default"] != second["default"]  # streams of their own
    assert not any(key.startswith("module.") for key in checkpoint["model"])  # the model's own state dict


def _from_step_3(whole, where):
    """A copy of the whole run as it stood after its checkpoint of step 3."""
    _, run = whole
    copy = where / "run"
    shutil.copytree(run, copy)
    for numbered in copy.glob("checkpoint-0*.safetensors"):
        if numbered.name != "checkpoint-000003.safetensors":
            numbered.unlink()
    (copy / "checkpoint.safetensors").unlink()
    shutil.copy(copy / "checkpoint-000003.safetensors", copy / "checkpoint.safetensors")
    return copy


def test_resumed_on_two_ranks_the_run_goes_on_exactly(whole, data, tmp_path):
    run = _from_step_3(whole, tmp_path)
    result = gpt(tmp_path / "ranks", 2, run, "--steps", "6", "--resume", data=data)
    assert "resumed from" in result.stdout and "written by" not in result.stdout
    again, before = records(run), records(whole[1])
    assert sorted(again) == [1, 2, 3, 4, 5, 6]
    for step in (4, 5, 6):
        assert again[step]["train_loss"] == before[step]["train_loss"], step
        assert again[step]["grad_norm"] == before[step]["grad_norm"], step
    assert again[6]["val_loss"] == before[6]["val_loss"]


def test_a_checkpoint_of_two_ranks_resumes_on_one_process_and_back_on_two(whole, data, tmp_path):
    run = _from_step_3(whole, tmp_path)
    one = gpt(tmp_path / "one", 1, run, "--steps", "4", "--resume", data=data, use_mpirun=False)
    assert one.ranks[0]["status"] == 0
    assert "was written by 2 rank(s) and this run has 1: a step now trains on 4 sequences" in one.stdout
    assert "step     4  loss" in one.stdout and zero.load(run / "checkpoint.safetensors")["world_size"] == 1
    two = gpt(tmp_path / "two", 2, run, "--steps", "5", "--resume", data=data)
    assert "was written by 1 rank(s) and this run has 2" in two.stdout
    assert sorted(records(run)) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("mode, says", [
    ("kill", ["exited on signal 9 (Killed)"]),
    ("hang", ["did not complete within 3 s (the process group's timeout)"]),
    ("raise", ["zero gpt train: error: [Errno 28] No space left on device (on purpose) (rank 1 of 2: ending the job)"]),
])
def test_a_rank_that_goes_wrong_ends_the_job_with_an_error(data, tmp_path, mode, says):
    result = launch("cli_job.py", 2, "--fault", f"{mode}:1:2", "gpt", "train", "--data", str(data),
                    "--out", str(tmp_path / "run"), *TINY, "--steps", "50", "--dist-timeout", "3",
                    out=tmp_path / "ranks", check=False, timeout=180)
    output = " ".join((result.stdout + result.stderr).split())  # (mpirun wraps its lines)
    assert result.returncode != 0 and result.ranks == [None, None], output
    assert "step 1 loss" in output and "step 5 loss" not in output
    for text in says:
        assert text in output, output


def write_tiny_mnist(where) -> None:
    """Two classes an MLP separates at once: bright left half or bright right half."""
    rng = np.random.default_rng(0)
    for split, n in (("train", 256), ("t10k", 64)):
        labels = rng.integers(0, 2, n).astype(np.uint8)
        images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        images[labels == 0, :, :14] += 150
        images[labels == 1, :, 14:] += 150
        write_idx(where / f"{split}-images-idx3-ubyte", images)
        write_idx(where / f"{split}-labels-idx1-ubyte", labels)


def test_mnist_trains_on_two_ranks_sharing_each_epoch(tmp_path, capsys):
    (tmp_path / "mnist").mkdir()
    write_tiny_mnist(tmp_path / "mnist")
    save = tmp_path / "run" / "mlp.safetensors"
    result = launch("cli_job.py", 2, "mnist", "--data", str(tmp_path / "mnist"), "--epochs", "2", "--batch-size",
                    "16", "--hidden", "16", "--save", str(save), "--metrics", str(tmp_path / "m.jsonl"),
                    "--checkpoint-minutes", "0", out=tmp_path / "ranks")
    assert [r["status"] for r in result.ranks] == [0, 0]
    assert "2 ranks, each on its share of an epoch in batches of 16: 32 images a step, 8 steps" in result.stdout
    assert result.stdout.count("epoch 1/2") == 1 and result.stdout.count("epoch 2/2") == 1
    epochs = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in epochs] == [1, 2] and epochs[1]["test_acc"] > 0.9
    checkpoint = zero.load(save)
    assert checkpoint["world_size"] == 2 and checkpoint["step"] == 16 and len(checkpoint["positions"]) == 2

    # inside an epoch the ranks' shares only fit as many ranks: one process refuses it, saying so
    checkpoint["position"]["batch"] = checkpoint["positions"][1]["batch"] = 3
    zero.save(checkpoint, tmp_path / "inside.safetensors")
    status = main(["mnist", "--data", str(tmp_path / "mnist"), "--epochs", "3", "--resume",
                   str(tmp_path / "inside.safetensors")])
    assert status == 2
    assert ("written inside an epoch by 2 rank(s), which split the epoch's batches between them; resume it on 2 "
            "(mpirun -n 2)") in capsys.readouterr().err


def test_a_bad_argument_stops_every_rank_with_one_line(data, tmp_path):
    result = launch("cli_job.py", 2, "gpt", "train", "--data", str(data), "--out", str(tmp_path / "run"),
                    "--steps", "0", out=tmp_path / "ranks", check=False)
    assert [r["status"] for r in result.ranks] == [2, 2]  # both ended (no abort: rank 0 handed its error on)
    assert result.stderr.count("zero gpt train: error: --steps must be at least 1") == 1, result.stderr
    assert not (tmp_path / "run").exists()


def test_sigterm_to_one_rank_stops_every_rank_after_the_step_with_a_checkpoint(data, tmp_path):
    """(SIGTERM to mpirun itself kills the ranks at once: Open MPI's choice; the README says so.)"""
    run = tmp_path / "run"
    result = launch("cli_job.py", 2, "--fault", "term:1:4", "gpt", "train", "--data", str(data), "--out", str(run),
                    *TINY, "--steps", "50", out=tmp_path / "ranks", check=False)
    assert [r["status"] for r in result.ranks] == [143, 143], result.stderr
    assert "zero gpt train: SIGTERM: stopped after step 4: checkpoint" in " ".join(result.stderr.split())
    assert zero.load(run / "checkpoint.safetensors")["step"] == 4


@pytest.mark.parametrize("job", ["gpt", "mnist"])
def test_a_signal_during_the_agreement_is_decided_alike_on_every_rank(data, tmp_path, job):
    """SIGTERM to rank 1 while the ranks' all-reduce of step 4's stop flags runs: its flag
    missed that reduction, so no rank stops after step 4 -- and every rank stops after step
    5, with a checkpoint (before, rank 1 alone went to the checkpoint: the job hung)."""
    run = tmp_path / "run"
    if job == "gpt":
        argv = ["gpt", "train", "--data", str(data), "--out", str(run), *TINY, "--steps", "50"]
    else:
        (tmp_path / "mnist").mkdir()
        write_tiny_mnist(tmp_path / "mnist")
        argv = ["mnist", "--data", str(tmp_path / "mnist"), "--save", str(run / "mlp.safetensors"), "--epochs", "2",
                "--batch-size", "4", "--hidden", "8", "--checkpoint-minutes", "0"]
    result = launch("cli_job.py", 2, "--fault", "term-in-agree:1:4", *argv, out=tmp_path / "ranks", check=False,
                    timeout=120)
    assert [r and r["status"] for r in result.ranks] == [143, 143], result.stderr
    assert "SIGTERM: stopped after step 5" in " ".join(result.stderr.split())
