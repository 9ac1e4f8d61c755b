"""Finding CuPy and the GPU.

Nothing here imports CuPy at module import time: ``zero`` and the CPU never
need it. ``cupy()`` imports it on first use and turns a missing install into a
``DeviceError`` that says what to install. (Setting the backend up once, when the
first CUDA tensor is made, is ``check_device`` in the package.)
"""
from __future__ import annotations

import functools

from ...errors import DeviceError

INSTALL_HINT = ("install the CUDA extra (CuPy for CUDA 13 and Triton): pip install -e '.[cuda]' in Zero's "
                "source directory, the way the README installs Zero")


def cupy():
    """The ``cupy`` module, or a DeviceError saying how to get it."""
    try:
        import cupy as module
    except ImportError as e:
        raise DeviceError(f"CUDA needs CuPy, which is not installed ({e}); {INSTALL_HINT}") from None
    return module


def has_cupy() -> bool:
    try:
        cupy()
    except DeviceError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def _device_count() -> int:
    """How many GPUs CUDA sees (0 without a driver or a GPU). Asked once per process."""
    if not has_cupy():
        return 0
    try:
        return int(cupy().cuda.runtime.getDeviceCount())
    except (RuntimeError, OSError):  # no driver, insufficient driver, no device: all mean "none here"
        return 0


def device_count() -> int:
    return _device_count()


def cuda_in_use() -> bool:
    """Whether this process has asked CUDA about its devices yet (from then on, a change to
    CUDA_VISIBLE_DEVICES no longer changes which GPUs it sees)."""
    return _device_count.cache_info().currsize > 0


def is_available() -> bool:
    return device_count() > 0


def unavailable_reason(index: int) -> str | None:
    """Why ``cuda:index`` cannot be used, or None when it can."""
    if not has_cupy():
        return f"CuPy is not installed; {INSTALL_HINT}"
    count = device_count()
    if count == 0:
        return "no CUDA GPU is visible to CuPy (no driver, or no device)"
    if index >= count:
        return f"there {'is' if count == 1 else 'are'} only {count} CUDA device(s)"
    if index != 0:
        return ("Zero's CUDA backend uses one GPU, cuda:0 (set CUDA_VISIBLE_DEVICES to choose which "
                "physical GPU that is)")
    return None
