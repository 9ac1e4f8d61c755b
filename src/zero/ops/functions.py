"""The functional forms of the tensor methods, with PyTorch's signatures: ``zero.exp(x)``
is ``x.exp()``, ``zero.sum(x, 1)`` is ``x.sum(1)``. (The ops themselves are in the
modules beside this one; ``zero`` exports these functions.) Their names and argument
names are PyTorch's, so some shadow Python's builtins (``sum``, ``max``, ``input``).
"""
from __future__ import annotations

from ..tensors.tensor import Tensor
from . import binary_math, comparison, elementwise, rearrange
from .einsum import einsum  # noqa: F401  (zero.einsum)
from .sampling import multinomial  # noqa: F401  (zero.multinomial)
from .sorting import argsort, cumsum, sort, topk  # noqa: F401  (zero.sort ...)


# -- arithmetic ---------------------------------------------------------------------------------
def add(input: Tensor, other, *, alpha=1) -> Tensor:
    return input + (other * alpha if alpha != 1 else other)


def sub(input: Tensor, other, *, alpha=1) -> Tensor:
    return input - (other * alpha if alpha != 1 else other)


def mul(input: Tensor, other) -> Tensor:
    return input * other


def div(input: Tensor, other, *, rounding_mode=None) -> Tensor:
    """input / other; ``rounding_mode`` "trunc" or "floor" rounds the quotient."""
    return binary_math.divide(input, other, rounding_mode)


def pow(input: Tensor, exponent) -> Tensor:
    return input ** exponent


def neg(input: Tensor) -> Tensor:
    return -input


def abs(input: Tensor) -> Tensor:
    return input.abs()


def square(input: Tensor) -> Tensor:
    return input.square()


def maximum(input: Tensor, other: Tensor) -> Tensor:
    return input.maximum(other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    return input.minimum(other)


def clamp(input: Tensor, min=None, max=None) -> Tensor:
    return input.clamp(min, max)


clip = clamp


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    return input.masked_fill(mask, value)


def where(condition: Tensor, input, other) -> Tensor:
    """``input`` where ``condition`` holds, else ``other`` (all three broadcast)."""
    return elementwise.Where.apply(condition, input, other)


# -- elementwise functions ----------------------------------------------------------------------
def exp(input: Tensor) -> Tensor:
    return input.exp()


def log(input: Tensor) -> Tensor:
    return input.log()


def sqrt(input: Tensor) -> Tensor:
    return input.sqrt()


def rsqrt(input: Tensor) -> Tensor:
    return input.rsqrt()


def sin(input: Tensor) -> Tensor:
    return input.sin()


def cos(input: Tensor) -> Tensor:
    return input.cos()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def relu(input: Tensor) -> Tensor:
    return input.relu()


def sign(input: Tensor) -> Tensor:
    return input.sign()


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return input.softmax(dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return input.log_softmax(dim, dtype)


# -- comparisons and logic ----------------------------------------------------------------------
def eq(input: Tensor, other) -> Tensor:
    return input == other


def ne(input: Tensor, other) -> Tensor:
    return input != other


def lt(input: Tensor, other) -> Tensor:
    return input < other


def le(input: Tensor, other) -> Tensor:
    return input <= other


def gt(input: Tensor, other) -> Tensor:
    return input > other


def ge(input: Tensor, other) -> Tensor:
    return input >= other


def logical_and(input: Tensor, other) -> Tensor:
    return input.logical_and(other)


def logical_or(input: Tensor, other) -> Tensor:
    return input.logical_or(other)


def logical_xor(input: Tensor, other) -> Tensor:
    return input.logical_xor(other)


def logical_not(input: Tensor) -> Tensor:
    return input.logical_not()


def bitwise_and(input: Tensor, other) -> Tensor:
    return input & other


def bitwise_or(input: Tensor, other) -> Tensor:
    return input | other


def bitwise_xor(input: Tensor, other) -> Tensor:
    return input ^ other


def bitwise_not(input: Tensor) -> Tensor:
    return ~input


# -- reductions ---------------------------------------------------------------------------------
def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return input.sum(dim, keepdim, dtype)


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return input.mean(dim, keepdim, dtype)


def var(input: Tensor, dim=None, *, correction: int = 1, keepdim: bool = False, unbiased=None) -> Tensor:
    return input.var(dim, correction=correction, keepdim=keepdim, unbiased=unbiased)


def std(input: Tensor, dim=None, *, correction: int = 1, keepdim: bool = False, unbiased=None) -> Tensor:
    return input.std(dim, correction=correction, keepdim=keepdim, unbiased=unbiased)


def max(input: Tensor, dim=None, keepdim: bool = False):
    """The largest value; with ``dim``, (values, indices); with a tensor, ``maximum``."""
    return input.max(dim, keepdim)


def min(input: Tensor, dim=None, keepdim: bool = False):
    return input.min(dim, keepdim)


def amax(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return input.amax(dim, keepdim)


def amin(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return input.amin(dim, keepdim)


def argmax(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return input.argmax(dim, keepdim)


def argmin(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return input.argmin(dim, keepdim)


def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    return input.logsumexp(dim, keepdim)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return input.all(dim, keepdim)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return input.any(dim, keepdim)


# -- shapes -------------------------------------------------------------------------------------
def reshape(input: Tensor, shape) -> Tensor:
    return input.reshape(shape)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return input.transpose(dim0, dim1)


def permute(input: Tensor, dims) -> Tensor:
    return input.permute(dims)


def squeeze(input: Tensor, dim=None) -> Tensor:
    return input.squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    return input.unsqueeze(dim)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return input.flatten(start_dim, end_dim)


def broadcast_to(input: Tensor, size) -> Tensor:
    return input.broadcast_to(size)


def t(input: Tensor) -> Tensor:
    return input.t()


def flip(input: Tensor, dims) -> Tensor:
    return rearrange.flip(input, dims)


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    return rearrange.roll(input, shifts, dims)


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    return comparison.isclose(input, other, rtol, atol, equal_nan)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return comparison.allclose(input, other, rtol, atol, equal_nan)


def clone(input: Tensor) -> Tensor:
    return input.clone()


def numel(input: Tensor) -> int:
    return input.numel()


nelement = numel


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)
