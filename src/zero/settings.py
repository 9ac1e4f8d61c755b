"""PyTorch's process-wide switches and facts that Zero can answer truthfully.

    default_generator            the generator creation functions, dropout and initialisers draw
                                 from (``zero.manual_seed`` seeds it)
    has_lapack                   True: Zero's CPU linear algebra is NumPy's LAPACK
    is_vulkan_available()        False: Zero has no Vulkan backend
    set_flush_denormal(mode)     False, as PyTorch answers where it cannot: Zero's CPU kernels
                                 (NumPy, Numba) have no switch for the CPU's flush-to-zero mode
    is_inference_mode_enabled()  whether code runs inside ``inference_mode()`` (grad_mode.py)

What Zero leaves out rather than answer untruthfully: ``use_deterministic_algorithms`` (Zero's
CUDA scatter-adds are atomic and not bit-reproducible, and nothing yet refuses them),
``set_default_device`` (the factories have no default-device hook), inter-op thread pools
(Zero runs one op at a time), anomaly detection.
"""
from __future__ import annotations

from .grad_mode import is_inference_mode_enabled
from .random import Generator
from .random import default_generator as _default_generator

__all__ = ["default_generator", "has_lapack", "is_inference_mode_enabled", "is_vulkan_available",
           "set_flush_denormal"]

default_generator: Generator = _default_generator()
has_lapack = True


def is_vulkan_available() -> bool:
    return False


def set_flush_denormal(mode: bool) -> bool:
    """Whether denormal numbers are now flushed to zero on the CPU: never with Zero, which
    has no switch for it (PyTorch answers False likewise where the CPU lacks one)."""
    if not isinstance(mode, bool):
        raise TypeError(f"set_flush_denormal(): argument 'mode' must be bool, not {type(mode).__name__}")
    return False
