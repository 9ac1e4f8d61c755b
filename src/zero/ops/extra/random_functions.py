"""PyTorch's random functions beside rand/randn/randint: ``bernoulli`` (and
``Tensor.bernoulli_``), ``normal`` with tensor means or deviations, ``randint_like``, and the
deterministic ``logspace``. Draws come from the generator given, or the default one, as
zero.rand's do; the results carry no gradient (PyTorch's are zero)."""
from __future__ import annotations

from typing import Any

from ... import dtypes
from ...dtypes import DTypeLike
from ...random import Generator
from ...tensors.creation import _generator, empty, linspace, randint
from ...tensors.creation import tensor as make_tensor
from ...tensors.tensor import Tensor
from ...grad_mode import no_grad
from .more_math import broadcast_shapes


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (or ``p``) at each place, else 0; of input's dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point and p is None:
        raise RuntimeError(f"bernoulli: expected a floating point tensor of probabilities, got {input.dtype}")
    probability = input.detach() if p is None else p
    if isinstance(probability, Tensor) and bool(((probability < 0) | (probability > 1)).any().item()):
        raise RuntimeError("bernoulli: all probabilities must be in [0, 1]")
    if not isinstance(probability, Tensor) and not 0 <= probability <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={probability}")
    uniform = empty(input.shape, dtype=dtypes.float64, device=input.device)
    _generator(generator).fill_uniform(uniform)
    return (uniform < probability).to(input.dtype)


def bernoulli_(self: Tensor, p: float | Tensor = 0.5, *, generator: Generator | None = None) -> Tensor:
    """self filled with draws that are 1 with probability ``p`` (a number or a tensor)."""
    if isinstance(p, Tensor):
        p = p.detach().to(dtypes.float64).expand(self.shape)
        drawn = bernoulli(p, generator=generator)
    else:
        drawn = bernoulli(self.detach(), float(p), generator=generator)
    with no_grad():
        self.copy_(drawn)
    return self


def normal(mean: Tensor | float = 0.0, std: Tensor | float = 1.0, size: Any = None, *,
           generator: Generator | None = None, dtype: DTypeLike | None = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Draws from N(mean, std^2): mean and std tensors (broadcast together) or numbers (then
    ``size`` is needed)."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal(): with float mean and std, size is required")
        out = empty(tuple(size), dtype=dtype or dtypes.get_default_dtype(), device=device)
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        _generator(generator).fill_normal(out, float(mean), float(std))
        return out.requires_grad_(requires_grad) if requires_grad else out
    if size is not None:
        raise TypeError("normal(): size is only taken with float mean and std")
    if isinstance(std, Tensor) and bool((std < 0).any().item()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    for t in tensors:
        if not t.dtype.is_floating_point:
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{t.dtype}'")
    shape = broadcast_shapes(*(t.shape for t in tensors))
    out_dtype = dtypes.result_type(*tensors)
    noise = empty(shape, dtype=out_dtype, device=tensors[0].device)
    _generator(generator).fill_normal(noise)
    m = mean.detach() if isinstance(mean, Tensor) else mean
    s = std.detach() if isinstance(std, Tensor) else std
    return (noise * s + m).to(out_dtype)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, dtype: DTypeLike | None = None,
                 device: Any = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """Integers in [low, high) of input's shape (and dtype unless given); ``randint_like(x, high)``."""
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                   generator=generator)


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: DTypeLike | None = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``steps`` numbers from base**start to base**end, evenly spaced in the exponent."""
    out_dtype = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    exponents = linspace(float(start), float(end), steps, dtype=dtypes.float64)
    values = (make_tensor(float(base), dtype=dtypes.float64) ** exponents).to(out_dtype)
    if device is not None:
        values = values.to(device)
    return values.requires_grad_(requires_grad) if requires_grad else values
