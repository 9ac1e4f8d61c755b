"""PyTorch's ``torch.utils`` namespace: ``zero.utils.data`` (datasets, samplers, DataLoader)."""
from __future__ import annotations

from . import data
