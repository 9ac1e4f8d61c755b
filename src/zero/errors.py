"""Zero's exceptions. Each subclasses the builtin a Python user would catch.

Messages name the op, the operands' shapes, dtypes and devices, and what would
be valid, so that a user never has to read a NumPy traceback to learn what
went wrong.
"""
from __future__ import annotations


class ZeroError(Exception):
    """Base class of every error Zero raises on purpose."""


class ShapeError(ZeroError, RuntimeError):
    """Operand shapes that an op cannot combine (a RuntimeError, as PyTorch raises for shape
    and size mismatches)."""


class ShapeValueError(ShapeError, ValueError):
    """A shape mismatch where PyTorch raises a ValueError rather than a RuntimeError: a loss
    target of another batch size, a normalization layer's input rank, groups that do not
    divide the channels, fan in/out of a 1-D tensor."""


class DTypeError(ZeroError, TypeError, RuntimeError):
    """An operand of a dtype the op does not accept. A TypeError (what a Python user catches)
    and a RuntimeError (what PyTorch raises for an operand of the wrong dtype: ``-bool``,
    ``bool - bool``, an integer tensor requiring grad, true division into integers ...)."""


class DTypeNotImplementedError(DTypeError, NotImplementedError):
    """A dtype an op has no kernel for, where PyTorch raises NotImplementedError ("... not
    implemented for 'Bool'"): softmax of an integer tensor, linspace as bool."""


class DTypeMismatchError(DTypeError, RuntimeError):
    """Operands whose dtypes must be equal and are not, where PyTorch raises RuntimeError
    (scatter's src and input)."""


class DeviceError(ZeroError, RuntimeError):
    """Operands on different devices, or a device that is not available."""


class CaptureError(DeviceError):
    """Something a captured CUDA graph cannot hold, done while capturing: reading a value
    back to the host, drawing random numbers on the host, compiling a kernel (PyTorch raises
    RuntimeError for the same)."""


class ViewError(ZeroError, RuntimeError):
    """A view asked of a memory layout that cannot express it (use reshape)."""


class AutogradError(ZeroError, RuntimeError):
    """Misuse of backward: second pass through a freed graph, missing gradient ..."""


class InPlaceError(ZeroError, RuntimeError):
    """An in-place update that would corrupt the graph or a saved tensor."""


class ZeroIndexError(ZeroError, IndexError):
    """An index or dimension out of range."""


class IndexRangeError(ZeroIndexError, RuntimeError):
    """An index value out of range where PyTorch raises RuntimeError, not IndexError (gather,
    scatter, one_hot); still an IndexError, as Zero raised before."""


class IndexDTypeError(DTypeError, IndexError):
    """An index tensor of a dtype that cannot index (float), where PyTorch raises IndexError."""


class EmptyReductionError(ShapeError, IndexError):
    """A max, min or arg-reduction over an empty dimension: PyTorch raises IndexError for a
    named dim (and argmax of everything), RuntimeError for max of everything; this is both."""


class DataError(ZeroError, ValueError):
    """A data or checkpoint file that is missing, truncated or corrupt (the message names it)."""


class DistributedError(ZeroError, RuntimeError):
    """A collective that cannot run: no process group, ranks that disagree, a peer gone."""


class UsageError(ZeroError, ValueError):
    """A command-line argument the job cannot use (out of range, or at odds with another)."""


class OutOfMemoryError(ZeroError, MemoryError, RuntimeError):
    """Memory a device could not give even after its pool returned every cached block.
    A MemoryError (what Python code catches) and a RuntimeError (what PyTorch raises, as
    ``torch.OutOfMemoryError``). ``requested``, ``live`` and ``cached`` are byte counts:
    the size asked for, what tensors held, and what the pool had cached (and returned)."""

    def __init__(self, message: str, requested: int = 0, live: int = 0, cached: int = 0):
        super().__init__(message)
        self.requested, self.live, self.cached = requested, live, cached


class LinAlgError(ZeroError, RuntimeError):
    """A matrix a decomposition cannot handle: singular (inv, solve), not positive-definite
    (cholesky), no convergence. A RuntimeError, as ``torch.linalg.LinAlgError`` is."""


class LinAlgShapeError(ShapeError, RuntimeError):
    """A linear-algebra input of the wrong shape (not a batch of square matrices ...): a
    ShapeError, and the RuntimeError that PyTorch raises."""


class LinAlgDTypeError(DTypeError, RuntimeError):
    """A linear-algebra input of a dtype it does not take (integers, float16): a DTypeError,
    and the RuntimeError that PyTorch raises."""


class FileWriteError(ZeroError, OSError, RuntimeError):
    """A file that could not be written: a full disk, a missing directory, a permission
    refused. An OSError keeping the system's ``errno`` (and a RuntimeError, what
    ``torch.save`` raises); ``filename`` is the path the caller gave, never a temporary,
    and the message says what was kept at that path."""

    message = ""

    def __str__(self) -> str:
        return self.message or OSError.__str__(self)


class ValueRangeError(ZeroError, RuntimeError):
    """Values an op cannot compute with, where PyTorch raises a RuntimeError: an integer to a
    negative integer power, a negative size."""


class SparseLayoutError(ZeroError, NotImplementedError):
    """A dense (strided) operation handed a sparse tensor, where PyTorch raises
    NotImplementedError ("Could not run ... from the 'SparseCPU' backend"; a RuntimeError too)."""


# -- parity2: the builtin classes PyTorch raises in a few more cases ---------------------------


class UnsupportedModeError(ZeroError, ValueError, NotImplementedError):
    """A mode argument an op does not know (``F.pad(mode="foo")``), where PyTorch raises
    NotImplementedError; a ValueError too, as Zero raised before."""


class ShapeAssertionError(ShapeError, AssertionError):
    """A size mismatch where PyTorch asserts (``TensorDataset`` of tensors of different
    first sizes): an AssertionError, and Zero's ShapeError."""


class IndexShapeError(ShapeError, IndexError):
    """An index tensor of the wrong rank where PyTorch raises IndexError (index_select's
    index of 2 dimensions); Zero's ShapeError too."""


class IndexTypeError(ZeroIndexError, TypeError):
    """An index of a type that cannot index (a string), where PyTorch raises TypeError."""


class SizeTypeError(ShapeError, TypeError):
    """A size that is not an integer (``rand(2.5)``), where PyTorch raises TypeError."""


class ValueArgumentError(ZeroError, ValueError, RuntimeError):
    """A value an op cannot take where PyTorch raises RuntimeError and Python code expects a
    ValueError (the truth value of a tensor of many elements, an unknown norm order) or the
    other way round (``int()`` of a tensor of many elements): both."""


class DataTypeError(DTypeError, ValueError):
    """Data ``tensor()`` cannot hold (strings, objects): PyTorch raises TypeError,
    ValueError or RuntimeError depending on the nesting; this is all three."""


def human_bytes(nbytes: int) -> str:
    """A byte count as people read it: '512 B', '1.5 KiB', '2.0 GiB', '1.0 TiB'."""
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(size) < 1024 or unit == "EiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def describe(x) -> str:
    """How every message shows an operand: 'float32[2, 3] on cpu' for a tensor, the type's
    name ('list', 'NoneType') for anything else."""
    if not hasattr(x, "_meta"):  # (this module sits below the Tensor class: it cannot import it)
        return type(x).__name__
    return f"{x.dtype.name}{list(x.shape)} on {x.device}"


def describe_all(tensors) -> str:
    return ", ".join(describe(t) for t in tensors)
