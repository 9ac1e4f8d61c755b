"""Automatic mixed precision: ``autocast`` (chosen ops in float16/bfloat16, by PyTorch's
op lists) and ``GradScaler`` (dynamic loss scaling for float16)."""
from .autocast import autocast, custom_bwd, custom_fwd
from .grad_scaler import GradScaler, OptState

__all__ = ["GradScaler", "OptState", "autocast", "custom_fwd", "custom_bwd"]
