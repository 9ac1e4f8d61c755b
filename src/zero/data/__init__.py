"""Data: datasets, samplers and the DataLoader (PyTorch's ``torch.utils.data``), and data files.

    from zero.data import MNIST, DataLoader, find_mnist
    path, kind = find_mnist()
    loader = DataLoader(MNIST(path, train=True), batch_size=64, shuffle=True)

The loading machinery is also ``zero.utils.data``, under PyTorch's names (the
same classes): ``from zero.utils.data import DataLoader, TensorDataset``.

    dataset.py      Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset, ChainDataset, StackDataset,
                    random_split
    distributed_sampler.py  DistributedSampler: a rank's share of each epoch
    sampler.py      Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
                    BatchSampler
    collate.py      default_collate, default_convert
    loader.py       DataLoader: the arguments and how they fit together, len()
    iterator.py     one epoch; loading in the main process
    fetch.py        indices -> batch (the same code in the main process and in workers)
    multiprocess.py loading in worker processes: the main process's side
    worker.py       inside a worker: seeding, get_worker_info(), errors
    datapipes.py    DataPipes (torch.utils.data.datapipes): IterDataPipe, MapDataPipe, functional_datapipe,
                    the built-ins (map, filter, batch, shuffle, fork, sharding_filter ...), with the DataLoader
    idx.py, mnist.py, download.py, text.py      IDX files, MNIST, its downloader, text for the GPT job
"""
from __future__ import annotations

from .collate import default_collate, default_convert
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .distributed_sampler import DistributedSampler
from .download import MIRRORS, MNIST_SHA256, download_mnist
from .idx import read_idx, write_idx
from .loader import DataLoader
from .mnist import MNIST, default_cache_dir, find_mnist
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from .worker import WorkerInfo, get_worker_info

__all__ = ["MIRRORS", "MNIST", "MNIST_SHA256", "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader",
           "DistributedSampler", "StackDataset",
           "Dataset", "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_cache_dir",
           "default_collate", "default_convert", "download_mnist", "find_mnist", "get_worker_info", "random_split",
           "read_idx", "write_idx"]
