"""A PyTorch program runs on Zero with only its import lines changed (issue 11).

``examples/pytorch_gpt.py`` is written for PyTorch. Here its source is rewritten --
the import lines and nothing else -- and run on Zero; where PyTorch is installed the
unchanged program runs too, and the two give the same losses step by step.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).resolve().parents[1] / "examples" / "pytorch_gpt.py"
IMPORTS = [  # (PyTorch's import line, Zero's)
    ("import torch", "import zero as torch"),
    ("import torch.nn as nn", "import zero.nn as nn"),
    ("from torch.nn import functional as F", "from zero.nn import functional as F"),
    ("from torch.utils.data import DataLoader, Dataset, Sampler",
     "from zero.utils.data import DataLoader, Dataset, Sampler"),
]
TINY = ["--steps", "24", "--save-at", "12", "--batch-size", "4", "--block-size", "12", "--n-embd", "16"]


def zero_version(source: str) -> str:
    """The program with each import line (a whole line, not the docstring's mentions) swapped."""
    lines = source.splitlines(keepends=True)
    for torch_line, zero_line in IMPORTS:
        where = [i for i, line in enumerate(lines) if line.rstrip("\n") == torch_line]
        assert len(where) == 1, torch_line
        lines[where[0]] = zero_line + "\n"
    source = "".join(lines)
    assert not re.search(r"^(import|from) torch\b", source, re.MULTILINE), "an import line was missed"
    return source


def run(source: str, out: Path, *options: str) -> dict:
    script = out / "program.py"
    script.write_text(source)
    result = subprocess.run([sys.executable, str(script), "--out", str(out), *TINY, *options],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def zero_run(tmp_path_factory):
    return run(zero_version(PROGRAM.read_text()), tmp_path_factory.mktemp("zero"))


def test_the_program_trains_resumes_and_samples_on_zero(zero_run):
    losses = zero_run["losses"]
    assert zero_run["steps"] == 24 and len(losses) == 24
    assert losses[-1] < losses[0] - 0.2           # it learns
    assert abs(zero_run["eval"] - losses[-1]) < 0.5


def test_only_the_import_lines_differ():
    source = PROGRAM.read_text()
    changed = [a for a, b in zip(source.splitlines(), zero_version(source).splitlines()) if a != b]
    assert len(changed) == len(IMPORTS)


@pytest.mark.parametrize("flash", ["1", "0"], ids=["sdpa", "masked-softmax"])
def test_the_losses_are_pytorchs(tmp_path, zero_run, flash):
    pytest.importorskip("torch")
    source = PROGRAM.read_text()
    (tmp_path / "torch").mkdir()
    theirs = run(source, tmp_path / "torch", "--flash", flash)
    ours = zero_run if flash == "1" else run(zero_version(source), tmp_path, "--flash", flash)
    for step, (a, b) in enumerate(zip(ours["losses"], theirs["losses"])):
        assert a == pytest.approx(b, rel=2e-4, abs=2e-4), f"step {step}: Zero {a}, PyTorch {b}"
    assert ours["eval"] == pytest.approx(theirs["eval"], rel=2e-4)
