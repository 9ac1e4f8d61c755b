"""Comparisons and logic: == != < <= > >=, and or xor not, and the bitwise & | ^ ~.

Their results are bool tensors (the bitwise ops keep an integer dtype) and carry no
gradient. Operands broadcast and promote as the arithmetic does (``elementwise``), and
are compared in their promoted dtype.
"""
from __future__ import annotations

from .. import dtypes
from ..errors import DTypeError, DTypeNotImplementedError, describe
from ..tensors.tensor import Tensor
from .arguments import Operand
from .elementwise import BinaryOp, UnaryOp, _array, _in_dtype


class Compare(BinaryOp):
    """Comparisons and logical ops: a bool result, never differentiable."""

    def forward(self, a: Operand, b: Operand) -> Tensor:
        out = self.allocate(a, b, dtypes.bool_)
        common = dtypes.result_type(a, b)
        self.kernel(out._meta.device.kernels)(_array(_in_dtype(a, common)), _array(_in_dtype(b, common)),
                                              out._array)
        return out


class Eq(Compare):
    kernel = staticmethod(lambda kernels: kernels.eq)


class Ne(Compare):
    kernel = staticmethod(lambda kernels: kernels.ne)


class Lt(Compare):
    kernel = staticmethod(lambda kernels: kernels.lt)


class Le(Compare):
    kernel = staticmethod(lambda kernels: kernels.le)


class Gt(Compare):
    kernel = staticmethod(lambda kernels: kernels.gt)


class Ge(Compare):
    kernel = staticmethod(lambda kernels: kernels.ge)


class LogicalAnd(Compare):
    kernel = staticmethod(lambda kernels: kernels.logical_and)


class LogicalOr(Compare):
    kernel = staticmethod(lambda kernels: kernels.logical_or)


class LogicalXor(Compare):
    kernel = staticmethod(lambda kernels: kernels.logical_xor)


class Bitwise(BinaryOp):
    """&, |, ^ on integers and bools (PyTorch's: bit by bit; on bools the logic); never
    differentiable, refused on floats."""

    def forward(self, a: Operand, b: Operand) -> Tensor:
        for x in (a, b):
            if isinstance(x, float) or (isinstance(x, Tensor) and x.dtype.is_floating_point):
                raise DTypeNotImplementedError(f"{self.op_name}: defined for integer and bool operands, "
                                               f"got {describe(x)}")
        return super().forward(a, b)


class BitwiseAnd(Bitwise):
    kernel = staticmethod(lambda kernels: kernels.bitwise_and)


class BitwiseOr(Bitwise):
    kernel = staticmethod(lambda kernels: kernels.bitwise_or)


class BitwiseXor(Bitwise):
    kernel = staticmethod(lambda kernels: kernels.bitwise_xor)


class BitwiseNot(UnaryOp):
    """~x: the bits inverted for integers, logical not for bools; refused on floats."""

    kernel = staticmethod(lambda kernels: kernels.bitwise_not)
    float_only, saves = False, None

    def allocate(self, x: Tensor) -> Tensor:
        if isinstance(x, Tensor) and x.dtype.is_floating_point:
            raise DTypeError(f"bitwise_not: defined for integer and bool tensors, got {describe(x)}")
        return super().allocate(x)


class LogicalNot(UnaryOp):
    """not x: a bool result, never differentiable."""

    kernel = staticmethod(lambda kernels: kernels.logical_not)
    saves = None

    def allocate(self, x: Tensor) -> Tensor:
        super().allocate(x)
        return Tensor._empty(x._meta.shape, dtypes.bool_, x._meta.device)


# -- the functional forms (zero.eq, and x.eq through ops/tensor_methods.py) -----------------------


def eq(input: Tensor, other: Operand) -> Tensor:
    return Eq.apply(input, other)


def ne(input: Tensor, other: Operand) -> Tensor:
    return Ne.apply(input, other)


def lt(input: Tensor, other: Operand) -> Tensor:
    return Lt.apply(input, other)


def le(input: Tensor, other: Operand) -> Tensor:
    return Le.apply(input, other)


def gt(input: Tensor, other: Operand) -> Tensor:
    return Gt.apply(input, other)


def ge(input: Tensor, other: Operand) -> Tensor:
    return Ge.apply(input, other)


def logical_and(input: Tensor, other: Operand) -> Tensor:
    return LogicalAnd.apply(input, other)


def logical_or(input: Tensor, other: Operand) -> Tensor:
    return LogicalOr.apply(input, other)


def logical_xor(input: Tensor, other: Operand) -> Tensor:
    return LogicalXor.apply(input, other)


def logical_not(input: Tensor) -> Tensor:
    return LogicalNot.apply(input)


def bitwise_and(input: Operand, other: Operand) -> Tensor:
    return BitwiseAnd.apply(input, other)


def bitwise_or(input: Operand, other: Operand) -> Tensor:
    return BitwiseOr.apply(input, other)


def bitwise_xor(input: Operand, other: Operand) -> Tensor:
    return BitwiseXor.apply(input, other)


def bitwise_not(input: Tensor) -> Tensor:
    return BitwiseNot.apply(input)


# PyTorch's other names for the comparisons
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
