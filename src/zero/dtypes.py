"""Data types and PyTorch's type-promotion rules.

The book's ``DataType`` has F32 and I32; Zero adds float64 (for gradient
checks), int64, uint8 and bool so that indices, masks and raw data have a home,
and the two 16-bit floats: float16 and bfloat16 (NumPy's type for it comes from
the ml_dtypes package). Each ``DType`` knows its NumPy twin, which is what CPU
kernels see. (The 16-bit floats are for storing and moving values -- creation,
casts, .to(), .numpy(), elementwise arithmetic; the fused and Numba kernels work
in float32 and float64, and compute a 16-bit call in float32. CuPy 14 takes
ml_dtypes' bfloat16 too, so the same type serves CUDA arrays.) ml_dtypes is imported when
bfloat16's NumPy type is first needed, not with zero (it is slow to import).
PyTorch's other integers are here too: int8 and int16, and the unsigned uint16, uint32
and uint64, which promote (as in PyTorch) only with themselves and the floating types.
"""
from __future__ import annotations

import numpy as np

from .errors import DTypeError

Number = bool | int | float     # a Python number: beside tensors it acts as a 0-d tensor of its kind

# Promotion categories, lowest first: a bool meets an int -> int, an int meets a float -> float.
BOOL, INTEGER, FLOATING = 0, 1, 2


class DType:
    """One element type: ``zero.float32``, ``zero.int64`` ..."""

    __slots__ = ("name", "numpy", "itemsize", "category")

    name: str
    numpy: np.dtype     # what CPU kernels see
    itemsize: int
    category: int       # BOOL, INTEGER or FLOATING

    def __init__(self, name: str, numpy_type: type | None, category: int, itemsize: int = 0) -> None:
        """``numpy_type`` None: a type from ml_dtypes, of ``itemsize`` bytes, looked up at the
        first read of ``numpy``."""
        self.name = name
        if numpy_type is not None:
            self.numpy = np.dtype(numpy_type)
        self.itemsize = itemsize or self.numpy.itemsize
        self.category = category

    def __getattr__(self, attribute: str) -> np.dtype:
        """Runs only for an unset slot: the NumPy type of an ml_dtypes type, at its first use."""
        if attribute != "numpy":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attribute!r}")
        import ml_dtypes

        self.numpy = np.dtype(getattr(ml_dtypes, self.name))
        _BY_NUMPY[self.numpy] = self
        return self.numpy

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOATING

    def __repr__(self) -> str:
        return f"zero.{self.name}"

    def __reduce__(self):  # pickles as the module-level singleton
        return (dtype_from_name, (self.name,))


float32 = DType("float32", np.float32, FLOATING)
float64 = DType("float64", np.float64, FLOATING)
float16 = DType("float16", np.float16, FLOATING)
bfloat16 = DType("bfloat16", None, FLOATING, itemsize=2)
int32 = DType("int32", np.int32, INTEGER)
int64 = DType("int64", np.int64, INTEGER)
uint8 = DType("uint8", np.uint8, INTEGER)
bool_ = DType("bool", np.bool_, BOOL)
# PyTorch's other integers: int8 and int16 take part in promotion as the others do; the
# unsigned 16/32/64-bit ones (as in PyTorch, "limited support") promote with nothing but
# themselves and the floating types.
int8 = DType("int8", np.int8, INTEGER)
int16 = DType("int16", np.int16, INTEGER)
uint16 = DType("uint16", np.uint16, INTEGER)
uint32 = DType("uint32", np.uint32, INTEGER)
uint64 = DType("uint64", np.uint64, INTEGER)
LIMITED_UNSIGNED = (uint16, uint32, uint64)

# What names a dtype where one is asked for (``to_dtype``): a DType, a name ('float32'), a
# NumPy dtype or type, or a Python type (float, int, bool).
DTypeLike = DType | str | type | np.dtype

ALL_DTYPES = (float32, float64, float16, bfloat16, int32, int64, uint8, bool_, int8, int16, uint16, uint32, uint64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NUMPY = {d.numpy: d for d in ALL_DTYPES if d is not bfloat16}  # bfloat16 joins at its first use
# Aliases PyTorch users type.
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "int": int32, "long": int64})
_BY_NAME.update({"short": int16})
# The 16-bit floats are the only pair of one category and size: together they need float32.
_SAME_SIZE_PAIRS = {frozenset((float16, bfloat16)): float32}

_default_float = float32
_UINT8_INT8 = frozenset((uint8, int8))   # (one byte each, one signed: int16 holds both, as in PyTorch)


def get_default_dtype() -> DType:
    return _default_float


def set_default_dtype(dtype: DType) -> None:
    global _default_float
    dtype = to_dtype(dtype)
    if not dtype.is_floating_point:
        raise DTypeError(f"set_default_dtype: the default must be a floating type, got {dtype}")
    _default_float = dtype


def is_dtype_name(name: str) -> bool:
    """Whether ``name`` names a dtype ("float32", "long" ...), as ``Tensor.to("float64")`` allows."""
    return name in _BY_NAME


def dtype_from_name(name: str) -> DType:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise DTypeError(f"unknown dtype name {name!r}; known: {sorted(_BY_NAME)}") from None


def from_numpy_dtype(numpy_dtype) -> DType:
    """The Zero dtype of a NumPy dtype, or a DTypeError naming the unsupported type."""
    try:
        key = np.dtype(numpy_dtype)
    except TypeError:
        key = None
    found = _BY_NUMPY.get(key)
    if found is None and key is not None and key.name == "bfloat16" and key == bfloat16.numpy:
        found = bfloat16  # ml_dtypes' type, met before zero.bfloat16's first use
    if found is None:
        supported = ", ".join(str(d.numpy) for d in ALL_DTYPES)
        raise DTypeError(f"NumPy dtype {numpy_dtype} is not supported by Zero (supported: {supported})")
    return found


def to_dtype(value: DTypeLike) -> DType:
    """Accept a DType, a name ('float32'), a NumPy dtype or a Python type (float, int, bool)."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        return dtype_from_name(value)
    if value is float:
        return _default_float
    if value is int:
        return int64
    if value is bool:
        return bool_
    return from_numpy_dtype(value)


def promote_types(a: DType, b: DType) -> DType:
    """The smallest dtype both can be cast to without leaving their category."""
    if a is b:
        return a
    if (a in LIMITED_UNSIGNED or b in LIMITED_UNSIGNED) and not (a.is_floating_point or b.is_floating_point):
        raise DTypeError(f"promote_types: promotion of {a} and {b} is not supported (as in PyTorch, uint16, "
                         "uint32 and uint64 promote only with themselves and floating types); convert one first")
    if frozenset((a, b)) == _UINT8_INT8:
        return int16
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.itemsize != b.itemsize:
        return a if a.itemsize > b.itemsize else b
    if frozenset((a, b)) in _SAME_SIZE_PAIRS:
        return _SAME_SIZE_PAIRS[frozenset((a, b))]
    # Same category and size but different (uint8 vs bool cannot happen here): prefer signed.
    return a if a is not uint8 else b


def scalar_dtype(value) -> DType:
    """The dtype a bare Python scalar stands for when it meets nothing else."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _default_float
    raise DTypeError(f"expected a Python bool, int or float, got {type(value).__name__}")


def result_type(*operands) -> DType:
    """PyTorch's promotion: tensors with dimensions decide within a category, then
    zero-dimensional tensors, then Python scalars; a higher category always wins.

    ``int32_tensor + 1`` stays int32, ``int32_tensor + 1.5`` becomes float32,
    ``float32_tensor + float64_scalar_tensor`` stays float32.
    """
    if len(operands) == 2:  # the common case: two tensors of one dtype
        a, b = operands
        da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
        if da is db and isinstance(da, DType):
            return da
    dim_result = zero_dim_result = scalar_result = None
    for x in operands:
        dtype = getattr(x, "dtype", None)
        if isinstance(dtype, DType):
            if x.ndim > 0:
                dim_result = dtype if dim_result is None else promote_types(dim_result, dtype)
            else:
                zero_dim_result = dtype if zero_dim_result is None else promote_types(zero_dim_result, dtype)
        else:
            d = scalar_dtype(x)
            scalar_result = d if scalar_result is None else promote_types(scalar_result, d)
    result = None
    for tier in (dim_result, zero_dim_result, scalar_result):
        if tier is None:
            continue
        if result is None or tier.category > result.category:
            result = tier
    if result is None:
        raise DTypeError("result_type needs at least one operand")
    return result


# -- the limits of each dtype: PyTorch's torch.finfo and torch.iinfo -----------------------------


class finfo:  # (PyTorch's lowercase name)
    """The numerical limits of a floating-point dtype (the default one when none is given):
    ``bits``, ``eps`` (the gap between 1 and the next value), ``max``, ``min`` (the lowest,
    -max), ``tiny`` = ``smallest_normal``, ``resolution`` (10 ** -decimal digits), ``dtype``
    (its name)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, dtype=None):
        dtype = get_default_dtype() if dtype is None else to_dtype(dtype)
        if not dtype.is_floating_point:
            raise TypeError(f"finfo: needs a floating-point dtype, got {dtype}; use zero.iinfo for integers")
        import ml_dtypes

        limits = ml_dtypes.finfo(dtype.numpy)  # (NumPy's finfo does not know bfloat16)
        self.bits = dtype.itemsize * 8
        self.eps, self.max, self.min = float(limits.eps), float(limits.max), float(limits.min)
        self.tiny = self.smallest_normal = float(limits.smallest_normal)
        self.resolution = 10.0 ** -int(limits.precision)
        self.dtype = dtype.name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # (PyTorch's lowercase name)
    """The limits of an integer dtype: ``bits``, ``max``, ``min``, ``dtype`` (its name)."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, dtype):
        dtype = to_dtype(dtype)
        if dtype.category != INTEGER:
            raise TypeError(f"iinfo: needs an integer dtype, got {dtype}"
                            + ("; use zero.finfo for floating point" if dtype.is_floating_point else ""))
        limits = np.iinfo(dtype.numpy)
        self.bits, self.max, self.min, self.dtype = limits.bits, int(limits.max), int(limits.min), dtype.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
