"""PyTorch's ``torch.utils.checkpoint``: activation checkpointing (the code is ``zero.autograd.checkpoint``)."""
from __future__ import annotations

from ...autograd.checkpoint import checkpoint, checkpoint_sequential

__all__ = ["checkpoint", "checkpoint_sequential"]
