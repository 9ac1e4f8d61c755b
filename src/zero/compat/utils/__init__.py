"""PyTorch's ``torch.utils`` namespace: ``zero.utils.data`` (datasets, samplers, DataLoader),
``zero.utils.hooks`` (RemovableHandle), ``zero.utils.checkpoint`` (activation checkpointing)."""
from __future__ import annotations

from . import checkpoint, data, hooks
