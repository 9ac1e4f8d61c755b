"""A PyTorch program runs on Zero as shipped, and is PyTorch's with one line changed (issues 11, 40).

``examples/pytorch_gpt.py`` is written the way PyTorch programs are, its one line that
names a framework being ``import zero as torch``. Here it runs as shipped, on Zero, the
way a user runs it (``python examples/pytorch_gpt.py --out DIR``); where PyTorch is
installed, the same source with that line changed to ``import torch`` runs too, and the
two give the same losses step by step.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).resolve().parents[1] / "examples" / "pytorch_gpt.py"
ZERO_LINE, TORCH_LINE = "import zero as torch", "import torch"
TINY = ["--steps", "24", "--save-at", "12", "--batch-size", "4", "--block-size", "12", "--n-embd", "16"]


def torch_version(source: str) -> str:
    """The program with its one framework line (a whole line) changed to PyTorch's."""
    lines = source.splitlines(keepends=True)
    where = [i for i, line in enumerate(lines) if line.rstrip("\n") == ZERO_LINE]
    assert len(where) == 1, ZERO_LINE
    lines[where[0]] = TORCH_LINE + "\n"
    return "".join(lines)


def run(script: Path, out: Path, *options: str) -> dict:
    result = subprocess.run([sys.executable, str(script), "--out", str(out), *TINY, *options],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def zero_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("zero") / "not" / "yet" / "there"   # --out is created by the program
    result = run(PROGRAM, out)
    assert (out / "ckpt.pt").is_file()
    return result


def test_the_program_runs_as_shipped_on_zero_trains_resumes_and_samples(zero_run):
    losses = zero_run["losses"]
    assert zero_run["steps"] == 24 and len(losses) == 24
    assert losses[-1] < losses[0] - 0.2           # it learns
    assert abs(zero_run["eval"] - losses[-1]) < 0.5


def test_its_one_framework_line_is_the_only_change():
    source = PROGRAM.read_text()
    assert re.findall(r"^(?:import|from) (torch|zero)\b.*$", source, re.MULTILINE) == ["zero"]
    changed = [(a, b) for a, b in zip(source.splitlines(), torch_version(source).splitlines()) if a != b]
    assert changed == [(ZERO_LINE, TORCH_LINE)]


@pytest.mark.parametrize("flash", ["1", "0"], ids=["sdpa", "masked-softmax"])
def test_the_losses_are_pytorchs(tmp_path, zero_run, flash):
    pytest.importorskip("torch")
    script = tmp_path / "pytorch_gpt_torch.py"
    script.write_text(torch_version(PROGRAM.read_text()))
    theirs = run(script, tmp_path / "torch", "--flash", flash)
    ours = zero_run if flash == "1" else run(PROGRAM, tmp_path / "zero", "--flash", flash)
    for step, (a, b) in enumerate(zip(ours["losses"], theirs["losses"], strict=True)):
        assert a == pytest.approx(b, rel=2e-4, abs=2e-4), f"step {step}: Zero {a}, PyTorch {b}"
    assert ours["eval"] == pytest.approx(theirs["eval"], rel=2e-4)


def test_a_checkpoint_that_cannot_be_written_is_named_by_the_path_given(tmp_path):
    """Where --out cannot be a directory (a file is in the way), the error names the path
    the program asked for -- never a temporary file beside it."""
    (tmp_path / "taken").write_text("a file, not a directory")
    result = subprocess.run([sys.executable, str(PROGRAM), "--out", str(tmp_path / "taken"), *TINY],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert str(tmp_path / "taken") in last and ".tmp" not in last
