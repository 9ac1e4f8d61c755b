"""Distributed optimizers (PyTorch's ``torch.distributed.optim``): ZeRO-1 sharding of the optimizer state."""
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
