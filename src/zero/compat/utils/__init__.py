"""PyTorch's ``torch.utils`` namespace: ``zero.utils.data`` (datasets, samplers, DataLoader),
``zero.utils.hooks`` (RemovableHandle)."""
from __future__ import annotations

from . import data, hooks
