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


class DistributedError(ZeroError, RuntimeError):
    """A collective that cannot run: no process group, ranks that disagree, a peer gone."""


class UsageError(ZeroError, ValueError):
    """A command-line argument the job cannot use (out of range, or at odds with another)."""


def describe(x) -> str:
    """How every message shows an operand: 'float32[2, 3] on cpu' for a tensor, the type's
    name ('list', 'NoneType') for anything else."""
    if not hasattr(x, "_meta"):  # (this module sits below the Tensor class: it cannot import it)
        return type(x).__name__
    return f"{x.dtype.name}{list(x.shape)} on {x.device}"


def describe_all(tensors) -> str:
    return ", ".join(describe(t) for t in tensors)
