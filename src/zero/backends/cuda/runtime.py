"""Finding CuPy and the GPU, and setting the CUDA backend up once.

Nothing here imports CuPy at module import time: ``zero`` and the CPU never
need it. ``cupy()`` imports it on first use and turns a missing install into a
``DeviceError`` that says what to install.

``initialise()`` runs once, when the first CUDA tensor is made (from
``check_device``): it installs Zero's caching allocator as CuPy's allocator
and points Triton at CuPy's device and stream (see ``triton_driver``).
"""
from __future__ import annotations

import functools

from ...errors import DeviceError

INSTALL_HINT = "install the CUDA extra: pip install 'zero-dl[cuda]' (CuPy for CUDA 13 and Triton)"


def cupy():
    """The ``cupy`` module, or a DeviceError saying how to get it."""
    try:
        import cupy as module  # noqa: PLC0415
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
    except Exception:  # no driver, insufficient driver, no device: all mean "none here"
        return 0


def device_count() -> int:
    return _device_count()


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


_initialised = False


def initialise() -> None:
    """Once per process: CuPy allocates through Zero's pool; Triton launches on CuPy's stream."""
    global _initialised
    if _initialised:
        return
    from . import triton_driver  # noqa: PLC0415
    from .memory import install_cupy_allocator  # noqa: PLC0415

    cupy().cuda.Device(0).use()
    install_cupy_allocator()
    triton_driver.install()
    _initialised = True


def synchronize() -> None:
    """Wait until every kernel queued on the GPU has finished (a no-op before CUDA is used)."""
    if _initialised:
        cupy().cuda.runtime.deviceSynchronize()
