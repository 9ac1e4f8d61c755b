"""MNIST (and Fashion-MNIST, which has the same files and format).

    path, kind = find_mnist(args.data)       # kind: "mnist" or "fashion-mnist"
    train = MNIST(path, train=True)          # .images [60000, 784] float32 in [0, 1], .labels [60000] int64
    test = MNIST(path, train=False)          # 10000 of each

Following the book, pixels are scaled from [0, 255] to [0, 1] and each 28x28
image is flattened to a row of 784; labels are integers that cross-entropy
uses as class indices (int64 here, PyTorch's index type; the book uses I32).
``images`` and ``labels`` are CPU zero tensors; ``MNIST`` is a
``TensorDataset``, so a DataLoader batches it by indexing whole arrays.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..tensors.creation import from_numpy
from .idx import read_idx
from .dataset import TensorDataset

IMAGE_SIZE = 28
TRAIN_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")
TEST_FILES = ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
FILE_NAMES = TRAIN_FILES + TEST_FILES

# Debian's package dataset-fashion-mnist installs the four files, gzip-compressed, here.
FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")


def mnist_file(root, name: str) -> Path | None:
    """``root/name`` or ``root/name.gz``, whichever exists (None if neither)."""
    for candidate in (Path(root) / name, Path(root) / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def missing_files(root) -> list[str]:
    """The standard file names that ``root`` lacks (in either form)."""
    return [name for name in FILE_NAMES if mnist_file(root, name) is None]


class MNIST(TensorDataset):
    """The training (``train=True``, 60000 images) or test set (10000) found in ``root``.

    ``dataset[i]`` is ``(image [784] float32, label int64 scalar)``.
    """

    def __init__(self, root, train: bool = True):
        self.root = Path(root)
        self.train = train
        names = TRAIN_FILES if train else TEST_FILES
        paths = [mnist_file(root, name) for name in names]
        for name, path in zip(names, paths):
            if path is None:
                raise DataError(f"{self.root}: no MNIST file {name} (or {name}.gz) in this directory")
        images = read_idx(paths[0])
        labels = read_idx(paths[1])
        _check(paths[0], images, paths[1], labels)
        if len(images) == 0:  # nothing to learn from, or an accuracy of 0 out of 0
            raise DataError(f"{paths[0]}: holds 0 images (shape [0, 28, 28]); the MNIST "
                            f"{'training' if train else 'test'} set needs at least one")

        # [N, 28, 28] uint8 -> [N, 784] float32 in [0, 1]
        pixels = images.reshape(len(images), IMAGE_SIZE * IMAGE_SIZE).astype(np.float32)
        pixels /= 255.0
        super().__init__(from_numpy(pixels), from_numpy(labels.astype(np.int64)))
        self.files = tuple(paths)

    @property
    def images(self):
        """[N, 784] float32 tensor, values in [0, 1]."""
        return self.tensors[0]

    @property
    def labels(self):
        """[N] int64 tensor of class indices 0..9."""
        return self.tensors[1]

    def __repr__(self) -> str:
        split = "train" if self.train else "test"
        return f"MNIST(root={str(self.root)!r}, {split}, {len(self)} images)"


def _check(images_path, images: np.ndarray, labels_path, labels: np.ndarray) -> None:
    if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != (IMAGE_SIZE, IMAGE_SIZE):
        raise DataError(f"{images_path}: expected MNIST images, uint8 of shape [N, 28, 28]; the file holds "
                        f"{images.dtype} of shape {list(images.shape)}")
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise DataError(f"{labels_path}: expected MNIST labels, uint8 of shape [N]; the file holds "
                        f"{labels.dtype} of shape {list(labels.shape)}")
    if len(images) != len(labels):
        raise DataError(f"{images_path} holds {len(images)} images but {labels_path} holds {len(labels)} "
                        "labels; they must match")
    if labels.size and labels.max() > 9:
        raise DataError(f"{labels_path}: labels must be classes 0..9, found {int(labels.max())}")


def default_cache_dir() -> Path:
    """Where ``zero mnist --download`` puts the files: ``$ZERO_DATA/mnist``, else ``~/.cache/zero/mnist``."""
    if os.environ.get("ZERO_DATA"):
        return Path(os.environ["ZERO_DATA"]) / "mnist"
    return Path.home() / ".cache" / "zero" / "mnist"


def _kind_of(directory: Path) -> str:
    return "fashion-mnist" if "fashion" in str(directory).lower() else "mnist"


def find_mnist(data_dir=None) -> tuple[Path, str]:
    """Where the MNIST files are, and which data set they are: ``(directory, kind)``.

    Looks, in order, at: ``data_dir`` (the job's ``--data DIR``; when given it
    must hold the files); ``$ZERO_DATA/mnist``; ``~/.cache/zero/mnist``;
    Debian's Fashion-MNIST at ``/usr/share/datasets/fashion-mnist``. ``kind`` is
    "fashion-mnist" for that last one (and for any directory whose path says
    "fashion"), else "mnist". Raises DataError listing every place and why it
    was passed over.
    """
    if data_dir is not None:
        directory = Path(data_dir).expanduser()
        if not directory.is_dir():
            raise DataError(f"--data {data_dir}: no such directory")
        missing = missing_files(directory)
        if missing:
            raise DataError(f"--data {data_dir}: the directory lacks {', '.join(missing)} (raw or .gz)")
        return directory, _kind_of(directory)

    candidates = []
    if os.environ.get("ZERO_DATA"):
        candidates.append(("$ZERO_DATA/mnist", Path(os.environ["ZERO_DATA"]) / "mnist", "mnist"))
    candidates.append(("~/.cache/zero/mnist", Path.home() / ".cache" / "zero" / "mnist", "mnist"))
    candidates.append(("Debian's dataset-fashion-mnist", FASHION_MNIST_DIR, "fashion-mnist"))
    reasons = []
    for label, directory, kind in candidates:
        if not directory.is_dir():
            reasons.append(f"  {label} ({directory}): no such directory")
            continue
        missing = missing_files(directory)
        if not missing:
            return directory, kind
        reasons.append(f"  {label} ({directory}): lacks {', '.join(missing)}")
    if not os.environ.get("ZERO_DATA"):
        reasons.insert(0, "  $ZERO_DATA/mnist: ZERO_DATA is not set")
    raise DataError(
        "no MNIST data found. Looked at:\n" + "\n".join(reasons) + "\n"
        "Any of these works:\n"
        "  zero mnist --data DIR          a directory with the four MNIST files\n"
        "                                 (train-images-idx3-ubyte, train-labels-idx1-ubyte,\n"
        "                                 t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte; raw or .gz)\n"
        "  put the files in $ZERO_DATA/mnist or ~/.cache/zero/mnist\n"
        f"  {_as_root()}apt-get update && {_as_root()}apt-get install dataset-fashion-mnist\n"
        "                                 (Fashion-MNIST, the same format)\n"
        f"  zero mnist --download          fetch MNIST into {default_cache_dir()}")


def _as_root() -> str:
    """``sudo `` for a user, nothing for root (a fresh container often has no sudo)."""
    geteuid = getattr(os, "geteuid", None)  # POSIX only
    return "" if geteuid is None or geteuid() == 0 else "sudo "
