"""Runs never silently lose work: signals save, divergence stops, one trainer per run,
rotated checkpoints, metrics cut back on resume."""
import json
import math
import os
import signal
import time

import numpy as np
import pytest
from cli_helpers import TINY_GPT, gpt, mnist, run_child

import zero
from zero.cli.checkpoints import CheckpointSet
from zero.cli.run_control import TrainerLock

CKPT = "checkpoint.safetensors"


def _train(prepared, out, *extra):
    return gpt("train", "--data", prepared, "--out", out, *TINY_GPT, *extra)


def _tensors(path) -> dict:
    """Every tensor of a checkpoint, by a flat key, as NumPy arrays."""
    flat = {}

    def walk(node, key):
        if isinstance(node, zero.Tensor):
            flat[key] = node.numpy()
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{key}.{k}")
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                walk(v, f"{key}.{i}")

    checkpoint = zero.load(path)
    walk({k: checkpoint[k] for k in ("model", "optimizer")}, "")
    return flat


def _assert_same_tensors(a, b):
    a, b = _tensors(a), _tensors(b)
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def _losses(path):
    return [(r["step"], r["train_loss"], r.get("val_loss")) for r in map(json.loads, path.read_text().splitlines())]


# -- interrupt = save -------------------------------------------------------------------------


@pytest.mark.parametrize("signal_name, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_mid_interval_saves_and_resume_is_exact(prepared, tmp_path, signal_name, status):
    """A real signal inside step 5 (eval and checkpoint every 4): the step finishes, step 5 is
    saved, the exit status is 128 + the signal; --resume ends bit for bit where a run never
    stopped ends, with the same metrics and no record twice."""
    common = ("--steps", 8, "--eval-interval", 4)
    assert _train(prepared, tmp_path / "a", *common, "--metrics", tmp_path / "a.jsonl") == 0
    code, _, err = run_child("gpt", "train", "--data", prepared, "--out", tmp_path / "b", *TINY_GPT, *common,
                             "--metrics", tmp_path / "b.jsonl", signal_at=f"{signal_name}:5")
    assert code == status, err
    latest = tmp_path / "b" / CKPT
    assert f"{signal_name}: stopped after step 5: checkpoint {latest} (step 5); continue with --resume" in err
    assert zero.load(latest)["step"] == 5
    assert _train(prepared, tmp_path / "b", *common, "--metrics", tmp_path / "b.jsonl", "--resume") == 0
    _assert_same_tensors(tmp_path / "a" / CKPT, latest)
    assert _losses(tmp_path / "b.jsonl") == _losses(tmp_path / "a.jsonl")


def test_a_signal_from_outside_stops_a_running_trainer(prepared, tmp_path):
    """SIGTERM sent by another process at whatever moment it lands; the resumed run still
    equals the uninterrupted one."""
    common = ("--steps", 40, "--eval-interval", 20, "--sample-tokens", 0)
    assert _train(prepared, tmp_path / "a", *common) == 0
    metrics = tmp_path / "b.jsonl"
    child = run_child("gpt", "train", "--data", prepared, "--out", tmp_path / "b", *TINY_GPT, *common,
                      "--metrics", metrics, step_sleep=0.05, wait=False)
    deadline = time.monotonic() + 120
    while not (metrics.exists() and len(metrics.read_text().splitlines()) >= 3):
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.02)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 143, err
    step = zero.load(tmp_path / "b" / CKPT)["step"]
    assert 3 <= step < 40 and f"stopped after step {step}" in err
    assert _train(prepared, tmp_path / "b", *common, "--resume") == 0
    _assert_same_tensors(tmp_path / "a" / CKPT, tmp_path / "b" / CKPT)


def test_a_second_signal_stops_at_once_without_saving(prepared, tmp_path):
    """Ctrl-C twice: out now. Here both arrive inside step 3, before any checkpoint."""
    code, _, err = run_child("gpt", "train", "--data", prepared, "--out", tmp_path / "b", *TINY_GPT, "--steps", 8,
                             "--eval-interval", 100, "--sample-tokens", 0, signal_at="SIGINT:3")
    assert code == 130 and zero.load(tmp_path / "b" / CKPT)["step"] == 3  # one signal: saved
    code, _, err = run_child("gpt", "train", "--data", prepared, "--out", tmp_path / "c", *TINY_GPT, "--steps", 8,
                             "--eval-interval", 100, "--sample-tokens", 0, "--checkpoint-minutes", 0,
                             signal_at="SIGINT:3,SIGINT:3")
    assert code == 130, err
    assert "again: stopped at once, without a checkpoint" in err
    assert not (tmp_path / "c" / CKPT).exists()


def test_checkpoints_on_a_wall_clock_interval(prepared, tmp_path):
    """--checkpoint-minutes: here a tiny interval, so every step is due; 0 turns it off."""
    assert _train(prepared, tmp_path / "a", "--steps", 5, "--eval-interval", 100, "--keep-checkpoints", 10,
                  "--checkpoint-minutes", 1e-9) == 0
    assert [s for s, _ in CheckpointSet(tmp_path / "a" / CKPT).numbered_files()] == [1, 2, 3, 4, 5]
    assert _train(prepared, tmp_path / "b", "--steps", 5, "--eval-interval", 100, "--keep-checkpoints", 10,
                  "--checkpoint-minutes", 0) == 0
    assert [s for s, _ in CheckpointSet(tmp_path / "b" / CKPT).numbered_files()] == [5]


# -- rotation ---------------------------------------------------------------------------------


def test_rotation_keeps_the_latest_the_newest_few_and_the_best(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert _train(prepared, run, "--steps", 10, "--eval-interval", 2, "--keep-checkpoints", 2,
                  "--metrics", tmp_path / "m.jsonl") == 0
    names = sorted(p.name for p in run.iterdir())
    assert names == [".checkpoint.safetensors.manifest", "checkpoint-000008.safetensors",
                     "checkpoint-000010.safetensors", "checkpoint-best.safetensors", CKPT]
    newest = run / "checkpoint-000010.safetensors"
    assert (run / CKPT).read_bytes() == newest.read_bytes()  # the latest: a copy of the newest ...
    assert not os.path.samefile(run / CKPT, newest)          # ... of its own (issue 39, item 13)
    val = {r["step"]: r["val_loss"] for r in map(json.loads, (tmp_path / "m.jsonl").read_text().splitlines())
           if "val_loss" in r}
    best_step = min(val, key=val.get)
    best = zero.load(run / "checkpoint-best.safetensors")
    assert best["step"] == best_step and best["run"]["val_loss"] == val[best_step]
    assert zero.load(run / CKPT)["run"]["best_val_loss"] == val[best_step]
    capsys.readouterr()
    assert gpt("sample", "--run", run, "--checkpoint", "best", "--tokens", 5, "--prompt", "To") == 0
    assert gpt("sample", "--run", run, "--checkpoint", 8, "--tokens", 5, "--prompt", "To") == 0
    assert gpt("sample", "--run", run, "--checkpoint", 2, "--tokens", 5) == 2
    assert "holds no checkpoint of step 2 (a run keeps only its newest" in capsys.readouterr().err


# -- divergence -------------------------------------------------------------------------------


def test_divergence_stops_and_keeps_the_last_good_checkpoint(prepared, tmp_path, capsys):
    """The issue's case: --lr 1000 trained on with loss nan and replaced the last good
    checkpoint with an all-NaN one. Now: exit status 3 at the first non-finite value, the
    message names the step and the good checkpoint, and that checkpoint stays as it was."""
    run = tmp_path / "run"
    assert _train(prepared, run, "--steps", 2, "--eval-interval", 2) == 0
    good = (run / CKPT).read_bytes()
    capsys.readouterr()
    assert _train(prepared, run, "--steps", 40, "--eval-interval", 1, "--lr", 1000, "--resume") == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("zero gpt train: diverged: step ")
    assert f"the last good checkpoint is {run / CKPT} (step " in err
    step = int(err.split("step ")[1].split(":")[0])
    latest = zero.load(run / CKPT)
    assert latest["step"] == step - 1 and f"(step {step - 1})" in err  # saved every step until it went bad
    for name, t in latest["model"].items():
        assert np.isfinite(t.numpy()).all(), name
    assert (run / CKPT).read_bytes() != good


def test_the_step_guard_stops_at_the_first_non_finite_loss_or_gradient_norm(prepared, tmp_path, capsys):
    """No checkpoint before the end here: the guard itself must stop the run, at the step whose
    loss or gradient norm is not finite (without it the run would train on to step 40)."""
    run = tmp_path / "run"
    assert _train(prepared, run, "--steps", 40, "--eval-interval", 1000, "--lr", 1000) == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert any(f"the {what} is {value}" in err for what in ("gradient norm", "loss") for value in ("nan", "inf")), err
    assert "stopped before applying the update; no checkpoint was written before it" in err
    assert int(err.split("step ")[1].split(":")[0]) < 10
    assert list(run.glob("*.safetensors")) == []


@pytest.mark.parametrize("job", ["gpt", "mnist"])
def test_a_model_holding_nan_is_never_saved(prepared, tiny_mnist, tmp_path, capsys, monkeypatch, job):
    """Whatever the step guard let through, the check before each save refuses NaN weights."""
    import zero.cli.training_run as training_run

    real = training_run.TrainingRun.save

    def save_after_nan(self, state, step, parameters, val_loss=None):
        parameters = list(parameters)
        with zero.no_grad():
            parameters[-1][1].fill_(math.nan)
        return real(self, state, step, parameters, val_loss)

    monkeypatch.setattr(training_run.TrainingRun, "save", save_after_nan)
    if job == "gpt":
        status = _train(prepared, tmp_path / "run", "--steps", 2, "--eval-interval", 1)
        written = list((tmp_path / "run").glob("*.safetensors"))  # (the metrics of step 1 are there)
    else:
        status = mnist("--data", tiny_mnist, "--batch-size", 64, "--hidden", 8, "--save", tmp_path / "m.safetensors")
        written = list(tmp_path.glob("m*"))
    assert status == 3
    assert "parameter tensors hold inf or NaN" in capsys.readouterr().err
    assert written == []


def test_mnist_divergence_names_the_step(tiny_mnist, tmp_path, capsys):
    assert mnist("--data", tiny_mnist, "--batch-size", 32, "--hidden", 16, "--epochs", 3, "--lr", 1e6,
                 "--save", tmp_path / "m.safetensors") == 3
    err = capsys.readouterr().err
    assert "zero mnist: diverged: step " in err and "try a lower --lr" in err
    assert "the loss is" in err or "ZeroDivisionError" in err or "OverflowError" in err, err


# -- one trainer per run ----------------------------------------------------------------------


def test_a_second_trainer_is_refused_with_the_holders_pid(prepared, tmp_path):
    run = tmp_path / "run"
    first = run_child("gpt", "train", "--data", prepared, "--out", run, *TINY_GPT, "--steps", 400,
                      "--eval-interval", 1000, "--sample-tokens", 0, step_sleep=0.05, wait=False)
    lock = run / f".{CKPT}.lock"
    deadline = time.monotonic() + 120
    while not (lock.exists() and lock.read_text().strip()):
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.02)
    try:
        code, _, err = run_child("gpt", "train", "--data", prepared, "--out", run, *TINY_GPT, "--steps", 4)
        assert code == 2, err
        assert f"is in use by another trainer (PID {first.pid}" in err and len(err.strip().splitlines()) == 1
    finally:
        first.send_signal(signal.SIGKILL)  # killed: the kernel drops the lock; no checkpoint was written
        first.communicate()
    assert lock.exists()  # the file stays behind a killed trainer, but it locks nothing
    assert _train(prepared, run, "--steps", 2, "--eval-interval", 2) == 0
    assert not lock.exists()  # a clean exit removes it


def test_the_lock_is_exclusive_in_one_process_too(tmp_path):
    with TrainerLock(tmp_path / "lock", "RUN"):
        with pytest.raises(zero.errors.ZeroError, match=rf"RUN is in use by another trainer \(PID {os.getpid()}"):
            with TrainerLock(tmp_path / "lock", "RUN"):
                pass
    with TrainerLock(tmp_path / "lock", "RUN"):  # released
        pass


def test_training_into_an_existing_run_needs_resume_or_overwrite(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert _train(prepared, run, "--steps", 2, "--eval-interval", 2) == 0
    before = (run / CKPT).read_bytes()
    capsys.readouterr()
    assert _train(prepared, run, "--steps", 2) == 2
    err = capsys.readouterr().err
    assert "already holds checkpoints" in err and "--resume" in err and "--overwrite" in err
    assert (run / CKPT).read_bytes() == before
    assert _train(prepared, run, "--steps", 3, "--eval-interval", 3, "--overwrite") == 0
    assert sorted(p.name for p in run.glob("*.safetensors")) == ["checkpoint-000003.safetensors",
                                                                 "checkpoint-best.safetensors", CKPT]
    assert [r["step"] for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())] == [1, 2, 3]
    assert _train(prepared, run, "--steps", 3, "--resume", "--overwrite") == 2


def test_mnist_save_into_another_runs_checkpoint_needs_overwrite(tiny_mnist, tmp_path, capsys):
    common = ("--data", tiny_mnist, "--batch-size", 64, "--hidden", 8)
    save = tmp_path / "m.safetensors"
    assert mnist(*common, "--save", save) == 0
    assert mnist(*common, "--save", save) == 2
    assert "already holds checkpoints" in capsys.readouterr().err
    assert mnist(*common, "--save", save, "--overwrite") == 0
    assert mnist(*common, "--epochs", 2, "--resume", save, "--save", save) == 0  # continuing it: fine
    assert mnist(*common, "--epochs", 3, "--resume", save, "--save", save, "--overwrite") == 2


# -- metrics ----------------------------------------------------------------------------------


def test_resume_cuts_the_metrics_back_to_the_checkpoint(prepared, tmp_path):
    """After a crash (SIGKILL: no save) the metrics file holds steps past the checkpoint and
    maybe a torn line; --resume re-runs those steps, so it cuts them first."""
    metrics = tmp_path / "m.jsonl"
    assert _train(prepared, tmp_path / "a", "--steps", 8, "--eval-interval", 4, "--metrics", tmp_path / "a.jsonl") == 0
    assert _train(prepared, tmp_path / "b", "--steps", 8, "--eval-interval", 4, "--metrics", metrics) == 0
    with open(metrics, "a") as f:
        f.write('{"step": 9, "train_loss": 1.0}\n{"step": 10, "tra')  # what a crash leaves behind
    (tmp_path / "b" / CKPT).unlink()
    os.link(tmp_path / "b" / "checkpoint-000004.safetensors", tmp_path / "b" / CKPT)  # the last save: step 4
    assert _train(prepared, tmp_path / "b", "--steps", 8, "--eval-interval", 4, "--metrics", metrics,
                  "--resume") == 0
    assert [s for s, _, _ in _losses(metrics)] == list(range(1, 9))
    assert _losses(metrics) == _losses(tmp_path / "a.jsonl")


def test_two_trainers_never_share_a_metrics_file(prepared, tmp_path, capsys):
    import fcntl

    metrics = tmp_path / "m.jsonl"
    metrics.write_text('{"step": 1}\n')
    with open(metrics, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        assert _train(prepared, tmp_path / "run", "--steps", 2, "--metrics", metrics) == 2
    assert "another trainer is writing this file" in capsys.readouterr().err
    assert metrics.read_text() == '{"step": 1}\n'


# -- crashes ----------------------------------------------------------------------------------


def test_kill_9_at_random_moments_loses_nothing(prepared, tmp_path):
    """The issue's test of trust: SIGKILL at random moments (checkpointing every step, so many
    land mid-save); after each, the latest checkpoint loads and --resume goes on; the end
    equals a run never killed, weights and metrics alike."""
    common = ("--steps", 12, "--eval-interval", 4, "--sample-tokens", 0, "--keep-checkpoints", 2,
              "--checkpoint-minutes", 1e-9)
    assert _train(prepared, tmp_path / "a", *common, "--metrics", tmp_path / "a.jsonl") == 0
    run, metrics = tmp_path / "b", tmp_path / "b.jsonl"
    rng = np.random.default_rng(13)
    argv = ["gpt", "train", "--data", prepared, "--out", run, *TINY_GPT, *common, "--metrics", metrics]
    checkpoints = CheckpointSet(run / CKPT)
    kills = 0
    for _ in range(40):
        reached = max((step for step, _ in checkpoints.numbered_files()), default=0)
        if reached == 12 and zero.load(checkpoints.resumable())["step"] == 12:
            break  # killed after its last save: nothing left to do
        child = run_child(*argv, *(["--resume"] if checkpoints.existing() else []), step_sleep=0.01, wait=False)
        # once this child has saved a step of its own, kill it a random moment later
        while child.poll() is None and max((s for s, _ in checkpoints.numbered_files()), default=0) <= reached:
            time.sleep(0.002)
        time.sleep(0.15 * rng.random())
        if child.poll() is not None:
            assert child.returncode == 0, child.communicate()
            break
        child.send_signal(signal.SIGKILL)
        child.communicate()
        kills += 1
        assert 1 <= zero.load(checkpoints.resumable())["step"] <= 12  # always a whole checkpoint
    assert kills >= 2, kills
    assert not list(run.glob(".*.tmp"))  # the last run's saves removed what the kills left
    _assert_same_tensors(tmp_path / "a" / CKPT, run / CKPT)
    assert _losses(metrics) == _losses(tmp_path / "a.jsonl")


def test_a_save_removes_what_a_killed_save_left(prepared, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    orphans = [run / ".checkpoint.safetensors.k1ll3d.tmp", run / ".checkpoint-000002.safetensors.x.tmp"]
    for orphan in orphans:
        orphan.write_bytes(b"half")
    assert _train(prepared, run, "--steps", 2, "--eval-interval", 2) == 0
    assert not any(p.exists() for p in orphans)


def test_resume_reads_the_numbered_file_a_cut_first_save_left(prepared, tmp_path):
    """Killed between writing checkpoint-000002 and naming it checkpoint.safetensors."""
    common = ("--steps", 4, "--eval-interval", 2, "--keep-checkpoints", 5)
    assert _train(prepared, tmp_path / "a", *common) == 0
    assert _train(prepared, tmp_path / "b", *common, "--steps", 2) == 0
    (tmp_path / "b" / CKPT).unlink()
    (tmp_path / "b" / "checkpoint-best.safetensors").unlink()
    assert _train(prepared, tmp_path / "b", *common, "--resume") == 0
    _assert_same_tensors(tmp_path / "a" / CKPT, tmp_path / "b" / CKPT)
