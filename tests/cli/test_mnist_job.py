"""The `zero mnist` job end to end on a tiny generated data set."""
import json

import numpy as np
import pytest

import zero
from zero.cli.main import main
from zero.data import write_idx


@pytest.fixture
def tiny_mnist(tmp_path):
    """Two easy classes the MLP can separate: bright left half vs bright right half."""
    rng = np.random.default_rng(0)

    def make(n):
        labels = rng.integers(0, 2, n).astype(np.uint8)
        images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        images[labels == 0, :, :14] += 150
        images[labels == 1, :, 14:] += 150
        return images, labels

    train_images, train_labels = make(256)
    test_images, test_labels = make(64)
    write_idx(tmp_path / "train-images-idx3-ubyte.gz", train_images)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", train_labels)
    write_idx(tmp_path / "t10k-images-idx3-ubyte", test_images)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", test_labels)
    return tmp_path


def _run(*argv):
    return main(["mnist", *map(str, argv)])


def test_trains_and_writes_metrics(tiny_mnist, tmp_path, capsys):
    metrics = tmp_path / "metrics.jsonl"
    assert _run("--data", tiny_mnist, "--epochs", 2, "--batch-size", 32, "--hidden", 32,
                "--metrics", metrics) == 0
    out = capsys.readouterr().out
    assert "data: MNIST from" in out and "epoch 2/2" in out
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [r["epoch"] for r in records] == [1, 2]
    for key in ("train_loss", "train_acc", "test_loss", "test_acc", "seconds", "samples_per_s"):
        assert key in records[0]
    assert records[-1]["test_acc"] > 0.9  # the two classes are easy


def test_resume_equals_uninterrupted_run(tiny_mnist, tmp_path, monkeypatch):
    common = ("--data", tiny_mnist, "--batch-size", 32, "--hidden", 16, "--seed", 5, "--epochs", 2)
    straight = tmp_path / "straight.safetensors"
    assert _run(*common, "--save", straight) == 0

    # The same run, interrupted (Ctrl-C) right after its first checkpoint ...
    import zero.cli.mnist as job

    real_save = job.save

    def save_then_interrupt(obj, path):
        real_save(obj, path)
        raise KeyboardInterrupt

    monkeypatch.setattr(job, "save", save_then_interrupt)
    first = tmp_path / "first.safetensors"
    assert _run(*common, "--save", first) == 130
    monkeypatch.setattr(job, "save", real_save)
    assert zero.load(first)["epoch"] == 1
    # ... and resumed from it.
    resumed = tmp_path / "resumed.safetensors"
    assert _run(*common, "--resume", first, "--save", resumed) == 0

    a, b = zero.load(straight), zero.load(resumed)
    assert a["epoch"] == b["epoch"] == 2
    for key in a["model"]:
        np.testing.assert_array_equal(a["model"][key].numpy(), b["model"][key].numpy(), err_msg=key)


def test_a_cpu_checkpoint_resumes_on_another_device(tiny_mnist, tmp_path, second_device):
    """--resume loads the CPU checkpoint into a model on the device (a cross-device copy_)."""
    common = ("--data", tiny_mnist, "--batch-size", 32, "--hidden", 16, "--seed", 5)
    first = tmp_path / "first.safetensors"
    assert _run(*common, "--epochs", 1, "--save", first) == 0
    resumed = tmp_path / "resumed.safetensors"
    assert _run(*common, "--epochs", 2, "--device", str(second_device), "--resume", first, "--save", resumed) == 0
    assert zero.load(resumed)["epoch"] == 2


def test_missing_data_lists_the_options(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ZERO_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr("zero.data.mnist.FASHION_MNIST_DIR", tmp_path / "no-fashion")
    assert _run("--epochs", 1) == 2
    err = capsys.readouterr().err
    assert "--download" in err and "ZERO_DATA" in err and "fashion-mnist" in err


def test_bad_data_directory_is_named(tmp_path, capsys):
    assert _run("--data", tmp_path) == 2
    assert str(tmp_path) in capsys.readouterr().err


FASHION = "/usr/share/datasets/fashion-mnist"


@pytest.mark.skipif(not __import__("os").path.isdir(FASHION), reason="Debian's dataset-fashion-mnist is not installed")
def test_one_epoch_of_fashion_mnist_reaches_85_percent(tmp_path):
    """The issue's bar: defaults, one epoch, test accuracy >= 0.85 (about 10-20 s on 2 cores)."""
    metrics = tmp_path / "m.jsonl"
    assert _run("--metrics", metrics) == 0
    record = json.loads(metrics.read_text().splitlines()[-1])
    assert record["test_acc"] >= 0.85, record
