"""``zero.cpu.amp``: ``torch.cpu.amp.autocast``, the older name of ``zero.amp.autocast("cpu")``.

``zero.compat`` registers this module as ``zero.cpu.amp``; as in PyTorch the class is
deprecated.
"""
from __future__ import annotations

import warnings

from .. import amp, dtypes


class autocast(amp.autocast):  # (PyTorch's lowercase name)
    """``zero.amp.autocast("cpu", ...)`` under its older name."""

    def __init__(self, enabled: bool = True, dtype=dtypes.bfloat16, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


__all__ = ["autocast"]
