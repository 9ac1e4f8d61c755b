"""PyTorch's ``torch.utils.hooks``: the handle every ``register_*hook`` returns."""
from __future__ import annotations

from ...hooks import RemovableHandle

__all__ = ["RemovableHandle"]
