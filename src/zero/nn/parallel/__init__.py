"""Data parallelism over processes: ``DistributedDataParallel`` (PyTorch's ``torch.nn.parallel``)."""
from .distributed import DDP, DistributedDataParallel

__all__ = ["DistributedDataParallel", "DDP"]
