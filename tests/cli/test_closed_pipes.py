"""A reader that closes the job's output (``| tee log`` ended by the same Ctrl-C, ``| head``)
costs only the printing: training finishes its step, saves and says how to resume;
sampling stops quietly (issue 39, item 1)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from cli_helpers import CHILD, TINY_GPT, child_environment, gpt, run_child

import zero

CKPT = "checkpoint.safetensors"


def test_ctrl_c_after_the_pipe_closed_still_saves_and_says_how_to_resume(prepared, tmp_path):
    child = run_child("gpt", "train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 400,
                      "--eval-interval", 1000, "--sample-tokens", 0, step_sleep=0.05, wait=False)
    lines = [child.stdout.readline() for _ in range(4)]        # (the reader reads a little ...)
    assert all(lines), child.communicate()
    child.stdout.close()                                        # ... and goes, as tee does on Ctrl-C
    time.sleep(0.3)                                             # a few log lines meet the closed pipe
    child.send_signal(signal.SIGINT)
    err = child.stderr.read()
    child.wait(timeout=120)
    assert child.returncode == 130, err
    assert "Broken pipe" not in err and "Traceback" not in err
    step = zero.load(tmp_path / "run" / CKPT)["step"]
    assert f"stopped after step {step}" in err and "--resume" in err


def test_ctrl_c_to_a_pipeline_into_tee_saves_and_exits_130(prepared, tmp_path):
    """`zero gpt train ... | tee log`, then Ctrl-C: the terminal sends SIGINT to the whole
    process group, which ends tee at once; the trainer finishes its step and saves."""
    env = dict(child_environment(), ZERO_TEST_STEP_SLEEP="0.05")
    argv = ["gpt", "train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 400,
            "--eval-interval", 1000, "--sample-tokens", 0]
    trainer = subprocess.Popen([sys.executable, "-c", CHILD, *map(str, argv)], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, process_group=0)
    log = tmp_path / "log"
    with open(log, "w") as sink:
        tee = subprocess.Popen(["tee", str(tmp_path / "tee.log")], stdin=trainer.stdout, stdout=sink,
                               process_group=trainer.pid)
    trainer.stdout.close()                                      # (tee alone reads the pipe now)
    deadline = time.monotonic() + 120
    while log.read_text().count("step ") < 3:
        assert trainer.poll() is None and time.monotonic() < deadline, trainer.communicate()
        time.sleep(0.05)
    os.killpg(trainer.pid, signal.SIGINT)                       # Ctrl-C: the foreground process group
    err = trainer.stderr.read()
    assert trainer.wait(timeout=120) == 130, err
    assert tee.wait(timeout=10) != 0                           # tee was ended by the same Ctrl-C
    assert "Broken pipe" not in err and "Traceback" not in err
    step = zero.load(tmp_path / "run" / CKPT)["step"]
    assert f"stopped after step {step}" in err and "--resume" in err


def test_a_closed_pipe_alone_changes_nothing_but_the_printing(prepared, tmp_path):
    child = run_child("gpt", "train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 12,
                      "--eval-interval", 6, wait=False)
    assert child.stdout.readline()
    child.stdout.close()
    err = child.stderr.read()
    child.wait(timeout=120)
    assert child.returncode == 0 and err == "", err
    assert zero.load(tmp_path / "run" / CKPT)["step"] == 12


def test_sample_into_head_ends_quietly(prepared, tmp_path):
    assert gpt("train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 2,
               "--sample-tokens", 0) == 0
    child = run_child("gpt", "sample", "--run", tmp_path / "run", "--stream", "--tokens", 100000, wait=False)
    assert len(child.stdout.read(20)) == 20                      # head -c 20
    child.stdout.close()
    err = child.stderr.read()
    child.wait(timeout=120)
    assert child.returncode == 0 and err == "", err
