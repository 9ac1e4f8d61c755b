"""``zero.cuda.amp``: the CUDA-flavoured names training scripts use, ``torch.cuda.amp.GradScaler``
and ``torch.cuda.amp.autocast`` (and ``custom_fwd``/``custom_bwd``).

``zero.compat`` registers this module as ``zero.cuda.amp``, so
``zero.cuda.amp.GradScaler(...)`` and ``from zero.cuda.amp import GradScaler`` both work. As in PyTorch the class is
``zero.amp.GradScaler("cuda", ...)`` under an older signature, and deprecated.
"""
from __future__ import annotations

import warnings

from .. import amp, dtypes


class GradScaler(amp.GradScaler):
    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`zero.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`zero.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


class autocast(amp.autocast):  # (PyTorch's lowercase name)
    """``zero.amp.autocast("cuda", ...)`` under its older name, deprecated as in PyTorch."""

    def __init__(self, enabled: bool = True, dtype=dtypes.float16, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return amp.custom_bwd(bwd, device_type="cuda")


__all__ = ["GradScaler", "autocast", "custom_fwd", "custom_bwd"]
