"""Running the Triton kernels on NumPy arrays, without a GPU (``TRITON_INTERPRET=1``).

A run-time part of the backend, not a test helper: whenever a process sets
``TRITON_INTERPRET=1``, the launcher (``kernels._launch``) passes NumPy arrays through here.

Tests set ``TRITON_INTERPRET=1`` before the kernels are imported; ``triton.jit``
then makes interpreted functions that run each program in Python on the host.
Triton's interpreter expects PyTorch tensors: it copies every pointer argument
to a host tensor through the storage API (``untyped_storage().cpu()``,
``new_empty(0, device='cpu').set_(storage, offset, size, stride)``), runs the
kernel on those copies, and copies them back with ``copy_``. ``HostArray``
offers that API over a NumPy array without copying anything, so the kernel
reads and writes the array's own memory, and PyTorch is not needed.

Triton 3.6's interpreter keeps a scalar argument as a 1-element array and
converts it with ``int()`` where a loop bound needs a Python integer; NumPy 2.4
no longer converts 1-element arrays that are not 0-d, so ``range(0, n, BLOCK)``
fails there. ``patch_interpreter`` makes that conversion take the single
element explicitly (Triton 3.9 does not need it; it is harmless there).

A compiled kernel gives a scalar parameter annotated ``tl.float64`` the type
float64; the interpreter would make the Python float a float32 constant.
``typed_scalars`` hands such arguments over as interpreter scalars of the
annotated type, so interpreted arithmetic keeps the compiled kernel's precision.

bfloat16 (NumPy arrays of ``ml_dtypes.bfloat16``): the interpreter holds bfloat16 values as
their uint16 bit patterns and converts them correctly only to and from float32, by
truncation. ``patch_interpreter`` makes every conversion between bfloat16 and another float
type a real one, rounded to nearest even as a GPU's ``cvt.rn`` is (through ml_dtypes), and
gives ``tl.dot`` of bfloat16 tiles their values (as float32) rather than their bits, and
makes bfloat16 constants (``tl.full``), which it lacks.
Arithmetic on bfloat16 values themselves stays wrong under the interpreter -- which the
kernels never do: they widen 16-bit values to float32 first (``triton_kernels.precision``),
and the half-precision tests would show one that did not.
"""
from __future__ import annotations

import inspect
import os

import numpy as np


def interpreting() -> bool:
    """Whether Triton kernels are interpreted on the host in this process."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


class _HostStorage:
    """The 'storage' of a HostArray: its memory, never copied."""

    __slots__ = ("address",)

    def __init__(self, address: int):
        self.address = address

    def data_ptr(self) -> int:
        return self.address

    def cpu(self) -> _HostStorage:
        return self  # already on the host: the kernel works on the array itself

    def copy_(self, other) -> None:
        pass  # the kernel wrote the array's own memory: nothing to copy back


class HostArray:
    """A NumPy array as Triton's interpreter wants a tensor argument."""

    __slots__ = ("address", "array", "dtype")

    def __init__(self, array: np.ndarray | None, dtype=None, address: int = 0):
        self.array = array
        self.dtype = array.dtype if array is not None else dtype
        self.address = array.__array_interface__["data"][0] if array is not None else address

    def data_ptr(self) -> int:
        return self.address

    def untyped_storage(self) -> _HostStorage:
        return _HostStorage(self.address)

    def storage_offset(self) -> int:
        return 0

    def size(self) -> tuple:
        assert self.array is not None, "size() of the interpreter's own empty tensor"
        return self.array.shape

    def stride(self) -> tuple:
        assert self.array is not None, "stride() of the interpreter's own empty tensor"
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def new_empty(self, size, device=None) -> HostArray:
        return HostArray(None, self.dtype)

    def set_(self, storage: _HostStorage, offset: int, size, stride) -> HostArray:
        self.address = storage.data_ptr() + offset * self.dtype.itemsize
        return self

    def copy_(self, other) -> None:
        pass


_patched = False


def patch_interpreter() -> None:
    """Let interpreted loops take runtime bounds under NumPy 2.4 (see the module docstring)."""
    global _patched
    if _patched:
        return
    from triton.runtime import interpreter

    original = interpreter._patch_lang_tensor

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patch_lang_tensor
    _patch_bfloat16(interpreter)
    _patched = True


def _patch_bfloat16(interpreter) -> None:
    """Conversions from and to bfloat16, and bfloat16 products, by value (see the module docstring)."""
    import triton.language as tl

    builder = interpreter.InterpreterBuilder
    cast, dot = builder.cast_impl, builder.create_dot

    def cast_impl(self, src, dst_type):
        source, target = src.dtype.scalar, dst_type.scalar
        if (source == tl.bfloat16) != (target == tl.bfloat16) and source.is_floating() and target.is_floating():
            from ml_dtypes import bfloat16

            if source == tl.bfloat16:
                data = src.data.view(bfloat16).astype(interpreter._get_np_dtype(target))
            else:
                data = src.data.astype(bfloat16).view(np.uint16)
            return interpreter.TensorHandle(data, target)
        return cast(self, src, dst_type)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return dot(self, _bfloat16_values(interpreter, a), _bfloat16_values(interpreter, b), d, input_precision,
                   max_num_imprecise_acc)

    def get_bf16(self, value):   # a bfloat16 constant (tl.full), which the interpreter lacks
        from ml_dtypes import bfloat16

        return interpreter.TensorHandle(np.array([value], bfloat16).view(np.uint16), tl.bfloat16)

    builder.cast_impl = cast_impl
    builder.create_dot = create_dot
    builder.get_bf16 = get_bf16


def _bfloat16_values(interpreter, handle):
    """A bfloat16 operand of a product as float32 values (others as they are)."""
    import triton.language as tl

    if handle.dtype.scalar != tl.bfloat16:
        return handle
    from ml_dtypes import bfloat16

    return interpreter.TensorHandle(handle.data.view(bfloat16).astype(np.float32), tl.float32)


def typed_scalars(kernel, args) -> list:
    """``args`` with each Python float whose parameter is annotated with a float type
    (``scale: tl.float64``) turned into an interpreter scalar of that type."""
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    numpy_types = {tl.float64: np.float64, tl.float32: np.float32}
    converted = list(args)
    for i, param in enumerate(list(inspect.signature(kernel.fn).parameters.values())[:len(args)]):
        kind = param.annotation
        if isinstance(kind, tl.dtype) and kind in numpy_types and isinstance(args[i], float):
            converted[i] = tl.tensor(TensorHandle(np.array([args[i]], numpy_types[kind]), kind), kind)
    return converted
