"""Programs in PyTorch's idiom off the GPT path run on Zero as shipped, and -- with their one
framework line, ``import zero as torch``, changed to ``import torch``
(``test_pytorch_programs.torch_version``) -- give PyTorch's losses from the same weights.

Each program in ``examples/`` below writes its initial weights (``--save-init``) when run
on Zero; the PyTorch run loads them (``--load-init``), so the comparison also checks that
Zero's state_dict names and shapes are PyTorch's. Random numbers the programs need at
run time (noise) come from NumPy, so the two runs see the same values.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_pytorch_programs import torch_version

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# program: tiny settings for CI, tolerance of the loss comparison
PROGRAMS = {
    "char_lstm.py": (["--steps", "12", "--hidden", "24", "--embed", "8", "--batch-size", "4", "--seq-len", "10"],
                     2e-4),
    "transformer_classifier.py": (["--steps", "12", "--d-model", "16", "--max-len", "10", "--batch-size", "8"],
                                  2e-4),
    "dcgan.py": (["--steps", "6", "--batch-size", "8", "--nz", "8", "--ngf", "8", "--ndf", "8"], 5e-4),
    "vae.py": (["--epochs", "2", "--samples", "256", "--hidden", "32"], 2e-4),
}


def run(script: Path, *options: str) -> dict:
    result = subprocess.run([sys.executable, str(script), *options], capture_output=True, text=True,
                            timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_the_program_runs_on_zero_and_matches_pytorch(tmp_path, program):
    options, tolerance = PROGRAMS[program]
    weights = tmp_path / "init.npz"
    ours = run(EXAMPLES / program, *options, "--save-init", str(weights))
    assert all(loss == loss for loss in ours["losses"]), "a loss is NaN"
    pytest.importorskip("torch")
    script = tmp_path / program
    script.write_text(torch_version((EXAMPLES / program).read_text()))
    theirs = run(script, *options, "--load-init", str(weights))
    for key in ("losses", "losses_G"):
        for step, (a, b) in enumerate(zip(ours.get(key, []), theirs.get(key, []), strict=True)):
            assert a == pytest.approx(b, rel=tolerance, abs=tolerance), f"{key}, step {step}: Zero {a}, PyTorch {b}"
