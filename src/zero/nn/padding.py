"""Padding layers: PyTorch's ConstantPad/ZeroPad/ReflectionPad/ReplicationPad/CircularPad 1-3d,
each ``F.pad`` with its mode. ``padding`` is an int (the same on every side) or 2 × dims ints,
(left, right, top, bottom, front, back) from the last dimension backwards, kept as that tuple."""
from __future__ import annotations

from ..errors import ShapeError
from . import functional as F
from .module import Module


def _sides(name: str, padding, dims: int) -> tuple[int, ...]:
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * (2 * dims)
    sides = tuple(padding) if isinstance(padding, (tuple, list)) else ()
    if len(sides) != 2 * dims or not all(isinstance(p, int) for p in sides):
        raise ShapeError(f"{name}: padding must be an int or {2 * dims} ints, got {padding!r}")
    return sides


class _PadNd(Module):
    dims = 0
    mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _sides(type(self).__name__, padding, self.dims)

    def forward(self, x):
        return F.pad(x, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, x):
        return F.pad(x, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    dims, mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    dims, mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    dims, mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    dims, mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    dims, mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    dims, mode = 3, "replicate"


class CircularPad1d(_PadNd):
    dims, mode = 1, "circular"


class CircularPad2d(_PadNd):
    dims, mode = 2, "circular"


class CircularPad3d(_PadNd):
    dims, mode = 3, "circular"
