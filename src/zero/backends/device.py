"""Devices: where a tensor's storage lives and which kernels compute on it.

``Device("cpu")``, ``Device("cuda:1")`` and ``Device("cuda", 1)`` are parsed
once and interned, so two equal devices are the same object. A device finds its
backend -- the package ``zero.backends.cpu`` or ``zero.backends.cuda``, each with
an allocator and a kernel table offering the contract of ``kernel_contract`` -- on first use: the CUDA
backend is imported only when a CUDA tensor is first made, so the CPU never needs
CuPy.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import DeviceError
from .kernel_contract import Kernels

_KNOWN_TYPES = ("cpu", "cuda")
MAX_DEFERRED_CHECKS = 256


class Device:
    __slots__ = ("type", "index", "_backend", "_kernels", "_deferred_checks", "_capture")
    _interned: dict = {}

    type: str            # "cpu" or "cuda"
    index: int | None    # None for the CPU
    _backend: Any        # the backend package, once found
    _kernels: Kernels | None  # its kernel table, once asked for
    _deferred_checks: list  # checks of values still on the device, run at the next read from it
    _capture: Any        # the CUDA graph capture open on this device (graph_capture.Capture), or None

    def __new__(cls, spec="cpu", index: int | None = None):
        if isinstance(spec, Device):
            return spec
        key = _parse(spec, index)
        device = cls._interned.get(key)
        if device is None:
            device = object.__new__(cls)
            device.type, device.index = key
            device._backend = device._kernels = None
            device._deferred_checks = []
            device._capture = None
            cls._interned[key] = device
        return device

    @property
    def backend(self):
        """The package holding this device's ``allocator`` and ``kernels``."""
        if self._backend is None:
            module = _import_backend(self)
            module.check_device(self)  # raises DeviceError when unavailable
            self._backend = module
        return self._backend

    @property
    def kernels(self) -> Kernels:
        """This device's kernel table (``zero.backends.cpu.kernels`` or ``...cuda.kernels``),
        which offers the contract: ``device.kernels.add(a, b, out)``."""
        kernels = self._kernels
        if kernels is None:
            kernels = self._kernels = self.backend.kernels
        return kernels

    # -- checks that wait for the next read from the device ----------------------------------------
    def defer_check(self, check: Callable[[], None]) -> None:
        """Run ``check`` (which reads values from this device, and may raise) at the next read
        from the device rather than now, so the host does not wait for the device here. (At
        most ``MAX_DEFERRED_CHECKS`` wait; one more runs them all.) While a CUDA graph is being
        captured, the graph keeps the check and queues it again after each replay."""
        if self._capture is not None:
            self._capture.checks.append(check)
            return
        self._deferred_checks.append(check)
        if len(self._deferred_checks) > MAX_DEFERRED_CHECKS:
            self.run_deferred_checks()

    def run_deferred_checks(self) -> None:
        """Run the waiting checks, oldest first; a failing one raises (the rest are dropped)."""
        checks, self._deferred_checks = self._deferred_checks, []
        for check in checks:
            check()

    def __repr__(self) -> str:
        return f"device(type='{self.type}', index={self.index})" if self.type != "cpu" else "device(type='cpu')"

    def __str__(self) -> str:
        return self.type if self.type == "cpu" else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except DeviceError:
                return False
        return self is other

    __hash__ = object.__hash__

    def __reduce__(self):
        return (Device, (str(self),))


def _import_backend(device: Device):
    """The backend package of ``device``'s type (the CUDA one imports nothing heavy yet)."""
    try:
        if device.type == "cpu":
            from . import cpu
            return cpu
        from . import cuda
        return cuda
    except ImportError as e:
        raise DeviceError(f"device {device} is not available: {e}") from None


def _parse(spec, index):
    if not isinstance(spec, str):
        raise DeviceError(f"a device is given as a string like 'cpu' or 'cuda:0', got {spec!r}")
    kind, _, number = spec.strip().lower().partition(":")
    if kind not in _KNOWN_TYPES:
        raise DeviceError(f"unknown device {spec!r}; expected 'cpu', 'cuda' or 'cuda:N'")
    if number:
        if index is not None:
            raise DeviceError(f"device {spec!r} already has an index; do not pass index={index} too")
        if not number.isdigit():
            raise DeviceError(f"device index in {spec!r} must be a non-negative integer")
        index = int(number)
    if kind == "cpu":
        if index not in (None, 0):
            raise DeviceError(f"there is only one cpu device, got index {index}")
        return ("cpu", None)
    if index is None:
        index = 0
    if not isinstance(index, int) or index < 0:
        raise DeviceError(f"device index must be a non-negative integer, got {index!r}")
    return (kind, index)


cpu = Device("cpu")


def to_device(value) -> Device:
    return value if isinstance(value, Device) else Device(value)
