"""examples/mnist_cnn.py, a CNN in PyTorch's idiom: it trains on a tiny generated data set,
and -- where PyTorch is installed -- the very same source with PyTorch's imports gives the
same losses from the same weights, step for step (Adadelta and StepLR included)."""
from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zero
from zero.data import write_idx

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "mnist_cnn.py"


@pytest.fixture
def tiny_digits(tmp_path):
    """Two easy classes in MNIST's files: a bright top half or a bright bottom half."""
    rng = np.random.default_rng(0)

    def make(n):
        labels = rng.integers(0, 2, n).astype(np.uint8)
        images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        images[labels == 0, :14] += 150
        images[labels == 1, 14:] += 150
        return images, labels

    for prefix, n in (("train", 192), ("t10k", 64)):
        images, labels = make(n)
        write_idx(tmp_path / f"{prefix}-images-idx3-ubyte", images)
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", labels)
    return tmp_path


def test_the_example_trains_on_a_tiny_data_set(tiny_digits, tmp_path, capsys):
    example = runpy.run_path(str(EXAMPLE), run_name="mnist_cnn")
    saved = tmp_path / "cnn.safetensors"
    accuracy = example["main"](["--data", str(tiny_digits), "--epochs", "2", "--batch-size", "32",
                                "--test-batch-size", "64", "--log-interval", "3", "--save-model", str(saved)])
    out = capsys.readouterr().out
    assert "data: mnist" in out and "Train epoch 2 [96/192]" in out and "epoch 2:" in out
    assert "left" in next(line for line in out.splitlines() if line.startswith("epoch 1:"))  # what the rest takes
    assert accuracy > 0.9
    assert set(zero.load(saved)) == {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
                                     "fc1.bias", "fc2.weight", "fc2.bias"}


def test_the_same_source_on_pytorch_gives_the_same_losses(tmp_path):
    torch = pytest.importorskip("torch")
    benchmark = runpy.run_path(str(ROOT / "benchmarks" / "mnist_cnn.py"), run_name="benchmark")
    pytorch_example = tmp_path / "mnist_cnn_pytorch.py"
    pytorch_example.write_text(benchmark["pytorch_source"](EXAMPLE.read_text()))
    ours, theirs = runpy.run_path(str(EXAMPLE), run_name="ours"), runpy.run_path(str(pytorch_example), run_name="pt")
    assert theirs["torch"] is torch and ours["torch"] is zero

    zero.manual_seed(0)
    model = ours["Net"](dropout1=0.0, dropout2=0.0)   # dropout draws different masks in each framework
    reference = theirs["Net"](dropout1=0.0, dropout2=0.0)
    reference.load_state_dict({name: torch.tensor(value.numpy()) for name, value in model.state_dict().items()})
    losses = {}
    for name, example, net in (("zero", ours, model), ("torch", theirs, reference)):
        lib = example["torch"]
        optimizer = example["optim"].Adadelta(net.parameters(), lr=1.0)
        scheduler = example["StepLR"](optimizer, step_size=1, gamma=0.7)
        rng = np.random.default_rng(1)
        data = lib.tensor(rng.standard_normal((16, 1, 28, 28)).astype(np.float32))
        target = lib.tensor(rng.integers(0, 10, 16))
        losses[name] = []
        for step in range(6):   # one batch again and again: the loss must fall
            optimizer.zero_grad()
            loss = example["F"].nll_loss(net(data), target)
            loss.backward()
            optimizer.step()
            if step % 2 == 1:
                scheduler.step()
            losses[name].append(loss.item())
    np.testing.assert_allclose(losses["zero"], losses["torch"], rtol=2e-5)
    assert losses["zero"][-1] < losses["zero"][0]


def test_its_help_and_the_readme_state_the_default_run_time():
    """14 epochs of several minutes each: a user is told before starting one (issue 40)."""
    result = subprocess.run([sys.executable, str(EXAMPLE), "--help"], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=True)
    epochs = " ".join(result.stdout[result.stdout.index("--epochs EPOCHS"):].split())
    assert "default: 14" in epochs and "minutes" in epochs and "hours" in epochs
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    said = readme[readme.index("`examples/mnist_cnn.py`"):][:400]
    assert "14 epochs" in said and "minutes an epoch" in said
