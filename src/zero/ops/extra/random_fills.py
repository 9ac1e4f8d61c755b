"""Tensor's in-place draws from distributions beyond ``normal_`` and ``uniform_``:
``random_`` (integers), ``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``.

Draws come from the generator given, or the default one (so ``zero.manual_seed`` repeats
them); they are Zero's stream, not PyTorch's. Each overwrites the tensor like ``normal_``:
outside the graph a plain write; in it, the old values' gradient is zero (``Overwrite``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ... import dtypes
from ...errors import DTypeError, ValueRangeError, describe
from ...random import Generator, default_generator
from ...tensors.tensor import Tensor
from ..inplace import Overwrite, modify

Draw = Callable[["np.random.Generator", tuple[int, ...]], np.ndarray]  # (a string: numpy.random loads on first use)

# random_()'s default upper end (inclusive): every integer the dtype holds exactly
LARGEST_EXACT = {"float16": 1 << 11, "bfloat16": 1 << 8, "float32": 1 << 24, "float64": 1 << 53,
                 "uint8": 255, "int8": 127, "int16": (1 << 15) - 1, "int32": (1 << 31) - 1, "int64": (1 << 63) - 1,
                 "bool": 1}


def _fill(target: Tensor, op: str, draw: Draw, generator: Generator | None) -> Tensor:
    if not isinstance(target, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(target).__name__}")
    rng = generator or default_generator()

    def write_into(t: Tensor) -> None:
        values = draw(rng.numpy, tuple(t.shape)).astype(t.dtype.numpy if t.dtype.numpy is not None else np.float32)
        device = t._meta.device
        device.kernels.copy(device.backend.from_numpy(values), t._array)

    def compute(old: Tensor) -> Tensor:
        fresh = Tensor._empty(old._meta.shape, old._meta.dtype, old._meta.device)
        write_into(fresh)
        return Overwrite.apply(old, fresh)

    return modify(target, op, (), lambda: write_into(target), compute)


def _floating(op: str, target: Tensor) -> None:
    if isinstance(target, Tensor) and not target.dtype.is_floating_point:
        raise DTypeError(f"{op}: a continuous distribution needs a floating-point tensor, got {describe(target)}")


def random_(self: Tensor, from_: int = 0, to: int | None = None, *, generator: Generator | None = None) -> Tensor:
    """Integers drawn uniformly from [from_, to - 1]; ``random_(to)`` is [0, to - 1]; with no
    bounds, [0, the largest integer the dtype holds exactly]."""
    if to is None and from_ != 0:
        low, high = 0, int(from_) - 1
    elif to is None:
        low, high = 0, LARGEST_EXACT[self.dtype.name]
    else:
        low, high = int(from_), int(to) - 1
    if high < low:
        raise ValueRangeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high + 1}")
    if self.dtype is dtypes.bool_ and (low < 0 or high > 1):
        raise ValueRangeError(f"random_: bounds [{low}, {high + 1}) do not fit {describe(self)}")

    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.integers(low, high, size=shape, endpoint=True, dtype=np.int64)
    return _fill(self, "random_", draw, generator)


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Draws from the exponential distribution of rate ``lambd`` (density lambd exp(-lambd x))."""
    _floating("exponential_", self)
    if not lambd > 0:
        raise ValueRangeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill(self, "exponential_", lambda rng, shape: rng.exponential(1.0 / lambd, shape), generator)


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Draws from the geometric distribution: the number of Bernoulli(p) trials up to and
    including the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise ValueRangeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill(self, "geometric_", lambda rng, shape: rng.geometric(p, shape), generator)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Generator | None = None) -> Tensor:
    """Draws whose logarithm is normal with ``mean`` and ``std``."""
    _floating("log_normal_", self)
    if not std > 0:
        raise ValueRangeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill(self, "log_normal_", lambda rng, shape: rng.lognormal(mean, std, shape), generator)


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Draws from the Cauchy distribution centred on ``median`` with scale ``sigma``."""
    _floating("cauchy_", self)
    if not sigma > 0:
        raise ValueRangeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _fill(self, "cauchy_", lambda rng, shape: median + sigma * rng.standard_cauchy(shape), generator)
