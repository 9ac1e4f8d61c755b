"""``zero.backends.cudnn``: PyTorch's cuDNN switches, for the scripts that set them.

Zero has no cuDNN: its convolutions are its own kernels (im2col and a cuBLAS product, which
follows ``zero.backends.cuda.matmul.allow_tf32``). The flags are kept so that
``zero.backends.cudnn.benchmark = True`` and friends run unchanged; they change nothing.
"""
from __future__ import annotations

enabled: bool = True
benchmark: bool = False
deterministic: bool = False
allow_tf32: bool = True


def is_available() -> bool:
    """False: Zero is not built on cuDNN (its GPU kernels are CuPy, cuBLAS and Triton)."""
    return False


def version() -> None:
    return None
