"""PyTorch's device-neutral ``torch.accelerator`` API: which accelerator this machine has.

    device = zero.accelerator.current_accelerator() if zero.accelerator.is_available() else zero.device("cpu")

Zero's one accelerator type is CUDA (``zero.cuda``).
"""
from __future__ import annotations

from .. import cuda
from ..backends.device import Device

__all__ = ["is_available", "current_accelerator", "device_count", "synchronize"]


def is_available() -> bool:
    """Whether an accelerator (a CUDA GPU that CuPy sees) is usable."""
    return cuda.is_available()


def current_accelerator() -> Device | None:
    """``device(type='cuda', index=0)`` when a GPU is available, else None."""
    return Device("cuda") if cuda.is_available() else None


def device_count() -> int:
    return cuda.device_count()


def synchronize() -> None:
    """Wait for the work queued on the accelerator (nothing to do without one)."""
    cuda.synchronize()
