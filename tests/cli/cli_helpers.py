"""Helpers the job tests share: the jobs in this process, or in a child process to signal."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from zero.cli.main import main

SRC = str(Path(__file__).resolve().parents[2] / "src")

# A GPT small enough that a step takes milliseconds.
TINY_GPT = ("--batch-size", 4, "--block-size", 16, "--n-layer", 1, "--n-head", 2, "--n-embd", 16,
            "--dropout", 0.1, "--warmup", 2, "--eval-iters", 2, "--log-interval", 1, "--sample-tokens", 20)


def gpt(*argv) -> int:
    return main(["gpt", *map(str, argv)])


def mnist(*argv) -> int:
    return main(["mnist", *map(str, argv)])


def child_environment() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


# Runs `zero ARGV...` in a child process. With ZERO_TEST_SIGNAL="NAME:N[,NAME:N...]" the child
# sends itself each real signal NAME from inside its N-th optimizer step, so a test can stop it
# at a chosen step; ZERO_TEST_STEP_SLEEP=S makes each step S seconds slower, for tests that
# signal it from outside.
CHILD = """
import os, signal, sys, time
import zero.optim.optimizer as optimizer
from zero.cli.main import main

plan = [entry.split(":") for entry in os.environ.get("ZERO_TEST_SIGNAL", "").split(",") if entry]
pause = float(os.environ.get("ZERO_TEST_STEP_SLEEP", "0"))
calls = [0]
for cls in optimizer.Optimizer.__subclasses__():
    def step(self, _real=cls.step):
        calls[0] += 1
        _real(self)
        for name, at in plan:
            if calls[0] == int(at):
                os.kill(os.getpid(), getattr(signal, name))
        time.sleep(pause)
    cls.step = step
sys.exit(main(sys.argv[1:]))
"""


def run_child(*argv, signal_at: str | None = None, step_sleep: float = 0.0, wait: bool = True):
    env = child_environment()
    if signal_at:
        env["ZERO_TEST_SIGNAL"] = signal_at
    if step_sleep:
        env["ZERO_TEST_STEP_SLEEP"] = str(step_sleep)
    process = subprocess.Popen([sys.executable, "-c", CHILD, *map(str, argv)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait:
        return process
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err
