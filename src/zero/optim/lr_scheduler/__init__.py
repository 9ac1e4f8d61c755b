"""Learning-rate schedules with PyTorch's names, semantics and state_dict layout
(``zero.optim.lr_scheduler.StepLR`` ...), and the book's warm-up + cosine
(``WarmupCosineLR``), which Zero's jobs use. The protocol is in ``scheduler.py``."""
from .one_cycle import OneCycleLR
from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler
from .schedules import (ConstantLR, CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR,
                        MultiStepLR, StepLR, WarmupCosineLR, warmup_cosine_lr)
from .sequential import ChainedScheduler, SequentialLR
from .cyclic import CosineAnnealingWarmRestarts, CyclicLR, PolynomialLR

_LRScheduler = LRScheduler  # PyTorch's old name

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "CosineAnnealingLR", "SequentialLR", "ChainedScheduler", "OneCycleLR",
           "ReduceLROnPlateau", "WarmupCosineLR", "warmup_cosine_lr",
           "CosineAnnealingWarmRestarts", "CyclicLR", "PolynomialLR"]
