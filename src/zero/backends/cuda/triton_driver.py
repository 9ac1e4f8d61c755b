"""Triton's CUDA driver, told about the device and stream by CuPy instead of PyTorch.

Triton 3.6 asks PyTorch which device is current, which stream to launch on and
what the device's compute capability is (its default ``CudaDriver`` imports
torch for that). Zero's arrays are CuPy's, and a Triton kernel must run on the
stream CuPy's kernels and cuBLAS calls use, so that the stream orders them and
the caching allocator may reuse a block as soon as it is released. This driver
keeps Triton's compiler, module loader and launcher and answers those three
questions from CuPy. Triton's argument specializer would still import torch the
first time it runs (only to recognise ``torch.Tensor`` quickly); ``install`` runs
that one-time set-up with torch's import refused, so Zero never imports PyTorch.

If Triton's internals differ from what this expects (another Triton version),
``install`` leaves Triton's own driver in place: that one works too wherever
PyTorch with CUDA is installed.
"""
from __future__ import annotations

import os
import sys
import warnings

from .runtime import cupy

# Triton's compiled kernels, kept beside Zero's code as Numba's are (``cache=True`` writes
# __pycache__ next to the source): a run's first step then loads what an earlier run compiled.
TRITON_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__", "triton")

_current_stream = None   # set by install: CuPy's current stream's handle, the one Triton launches on


def launch_stream() -> int | None:
    """The stream Triton launches on, as a handle, when this driver is installed; else None
    (the kernels' fast launches need it, and are off without it)."""
    return _current_stream() if _current_stream is not None else None


def keep_cache_with_zero() -> str:
    """Point Triton's cache at ``TRITON_CACHE`` unless $TRITON_CACHE_DIR chooses another, or
    Zero's directory is not writable (an installed copy: then Triton's default, ~/.triton);
    returns the directory Triton uses."""
    from triton import knobs

    if not os.environ.get("TRITON_CACHE_DIR"):
        try:
            os.makedirs(TRITON_CACHE, exist_ok=True)
        except OSError:
            return knobs.cache.dir
        if os.access(TRITON_CACHE, os.W_OK):
            knobs.cache.dir = TRITON_CACHE
    return knobs.cache.dir


def install() -> bool:
    """Make CuPy's device and current stream Triton's; returns whether it took."""
    global _current_stream
    if _current_stream is not None:
        return True
    try:
        from triton.backends.nvidia.driver import CudaDriver, CudaLauncher, CudaUtils
        from triton.runtime import driver
    except ImportError as e:  # Triton missing: the kernels module reports it when used
        warnings.warn(f"Triton's CUDA driver could not be imported ({e})", RuntimeWarning, stacklevel=2)
        return False

    set_up_specializer_without_torch()
    cp = cupy()

    def stream_handle() -> int:
        return cp.cuda.get_current_stream().ptr

    class CupyCudaDriver(CudaDriver):
        """CudaDriver without its PyTorch lookups (its ``__init__`` imports torch)."""

        def __init__(self):  # deliberately not calling super().__init__()
            self.utils = CudaUtils()
            self.launcher_cls = CudaLauncher

        @staticmethod
        def is_active():
            return True

        def get_current_device(self):
            return cp.cuda.runtime.getDevice()

        def set_current_device(self, device):
            cp.cuda.runtime.setDevice(device)

        def get_current_stream(self, device=None):
            return stream_handle()

        def get_device_capability(self, device=None):
            properties = cp.cuda.runtime.getDeviceProperties(self.get_current_device() if device is None else device)
            return properties["major"], properties["minor"]

    try:
        driver.set_active(CupyCudaDriver())
    except Exception as e:
        warnings.warn(f"could not point Triton at CuPy's stream ({e}); Triton will use its own driver",
                      RuntimeWarning, stacklevel=2)
        return False
    _current_stream = stream_handle
    return True


class _RefuseImport:
    """A meta-path finder that makes ``import <name>`` fail, as if the package were absent."""

    def __init__(self, name: str):
        self.name = name

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.name:
            raise ModuleNotFoundError(f"{self.name} is hidden from Triton's specializer", name=fullname)
        return None


def set_up_specializer_without_torch() -> None:
    """Run the one-time set-up of Triton's native argument specializer with torch hidden.

    That set-up (Triton 3.6's specialize.cc) imports torch if it can, only to recognise
    ``torch.Tensor`` by its type; without it, a tensor is recognised by its ``data_ptr``
    method, as CuPy's arrays are anyway. Where torch is already imported, or Triton has no
    native specializer, there is nothing to do.
    """
    if "torch" in sys.modules:
        return
    try:
        from triton._C.libtriton import native_specialize_impl
    except ImportError:
        return
    refuse_torch = _RefuseImport("torch")
    sys.meta_path.insert(0, refuse_torch)
    try:
        native_specialize_impl(None, 1, False, True, True)  # an int argument: the set-up, then a trivial answer
    except Exception as e:
        warnings.warn(f"Triton's argument specializer could not be set up ({e})", RuntimeWarning, stacklevel=3)
    finally:
        sys.meta_path.remove(refuse_torch)
