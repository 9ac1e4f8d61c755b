"""Zero's exceptions. Each subclasses the builtin a Python user would catch.

Messages name the op, the operands' shapes, dtypes and devices, and what would
be valid, so that a user never has to read a NumPy traceback to learn what
went wrong.
"""
from __future__ import annotations


class ZeroError(Exception):
    """Base class of every error Zero raises on purpose."""


class ShapeError(ZeroError, ValueError):
    """Operand shapes that an op cannot combine."""


class DTypeError(ZeroError, TypeError):
    """An operand of a dtype the op does not accept."""


class DeviceError(ZeroError, RuntimeError):
    """Operands on different devices, or a device that is not available."""


class ViewError(ZeroError, RuntimeError):
    """A view asked of a memory layout that cannot express it (use reshape)."""


class AutogradError(ZeroError, RuntimeError):
    """Misuse of backward: second pass through a freed graph, missing gradient ..."""


class InPlaceError(ZeroError, RuntimeError):
    """An in-place update that would corrupt the graph or a saved tensor."""


class ZeroIndexError(ZeroError, IndexError):
    """An index or dimension out of range."""


class DataError(ZeroError, ValueError):
    """A data or checkpoint file that is missing, truncated or corrupt (the message names it)."""


def describe(tensor) -> str:
    """'float32[2, 3] on cpu' -- how every message shows an operand."""
    return f"{tensor.dtype.name}{list(tensor.shape)} on {tensor.device}"


def describe_all(tensors) -> str:
    return ", ".join(describe(t) for t in tensors)
