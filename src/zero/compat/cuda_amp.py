"""``zero.cuda.amp``: the CUDA-flavoured name training scripts use, ``torch.cuda.amp.GradScaler``.

``zero.compat`` registers this module as ``zero.cuda.amp``, so
``zero.cuda.amp.GradScaler(...)`` and ``from zero.cuda.amp import GradScaler`` both work. As in PyTorch the class is
``zero.amp.GradScaler("cuda", ...)`` under an older signature, and deprecated.
"""
from __future__ import annotations

import warnings

from .. import amp


class GradScaler(amp.GradScaler):
    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`zero.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`zero.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


__all__ = ["GradScaler"]
