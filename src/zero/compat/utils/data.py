"""``torch.utils.data`` under Zero: the same classes as ``zero.data``, by PyTorch's names.

    from zero.utils.data import DataLoader, TensorDataset, random_split

is what ``from torch.utils.data import ...`` becomes. The code lives in
``zero.data`` (one concept per file, see its docstring); this module only
gives it PyTorch's address.
"""
from __future__ import annotations

from ...data.collate import default_collate, default_convert
from ...data.dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                             TensorDataset, random_split)
from ...data.distributed_sampler import DistributedSampler
from ...data.loader import DataLoader
from ...data.sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                            WeightedRandomSampler)
from ...data.worker import WorkerInfo, get_worker_info
# DataPipes (issue 37)
from ...data.datapipes import (DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe, argument_validation,
                               functional_datapipe, guaranteed_datapipes_determinism, non_deterministic,
                               runtime_validation, runtime_validation_disabled)
from ...data.fetch import _DatasetKind
from . import datapipes  # noqa: F401 (zero.utils.data.datapipes, as torch.utils.data.datapipes)

__path__: list[str] = []  # (a package to the import system: zero.utils.data.datapipes is an alias under it)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "StackDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "WorkerInfo", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
__all__ += ["DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "_DatasetKind", "argument_validation",
            "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
            "runtime_validation_disabled"]
