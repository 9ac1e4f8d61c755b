"""Data: IDX files, MNIST, datasets and the DataLoader, and the MNIST downloader.

    from zero.data import MNIST, DataLoader, find_mnist
    path, kind = find_mnist()
    loader = DataLoader(MNIST(path, train=True), batch_size=64, shuffle=True)
"""
from __future__ import annotations

from .download import MIRRORS, MNIST_SHA256, download_mnist
from .idx import read_idx, write_idx
from .loader import DataLoader, Dataset, TensorDataset
from .mnist import MNIST, default_cache_dir, find_mnist

__all__ = ["MIRRORS", "MNIST", "MNIST_SHA256", "DataLoader", "Dataset", "TensorDataset", "default_cache_dir",
           "download_mnist", "find_mnist", "read_idx", "write_idx"]
