"""Optimizers and learning-rate schedules."""
from . import lr_scheduler
from .adamw import AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "AdamW", "lr_scheduler"]
