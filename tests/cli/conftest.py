"""Fixtures of the job tests: a tiny prepared text, a tiny MNIST."""
from __future__ import annotations

import numpy as np
import pytest
from cli_helpers import gpt

from zero.data import write_idx


@pytest.fixture
def prepared(tmp_path):
    text = ("To be, or not to be, that is the question:\n" * 40) + "床前明月光，疑是地上霜。🌙\n" * 20
    (tmp_path / "input.txt").write_text(text, encoding="utf-8")
    assert gpt("prepare", tmp_path / "input.txt", "--out", tmp_path / "data", "--tokenizer", "char") == 0
    return tmp_path / "data"


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
