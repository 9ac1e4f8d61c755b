"""Automatic mixed precision, the part that is real today: ``GradScaler``, dynamic loss scaling.

(``autocast`` -- running chosen ops in float16/bfloat16 -- comes with mixed-precision
training; there is deliberately no stand-in for it here.)"""
from .grad_scaler import GradScaler, OptState

__all__ = ["GradScaler", "OptState"]
