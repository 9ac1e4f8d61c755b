"""``torch.poisson`` and ``torch.binomial``: draws from the generator given (or the default one),
whose draws are NumPy's on the host (as zero.rand's), made tensors of the input's dtype on its
device. Seeded generators give the same draws again. No gradient flows through a draw."""
from __future__ import annotations

import numpy as np

from ...random import Generator
from ...tensors.creation import _generator
from ...tensors.creation import tensor as make_tensor
from ...tensors.tensor import Tensor


def _host(x: Tensor) -> np.ndarray:
    return np.asarray(x.detach().cpu().numpy(), dtype=np.float64)


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"poisson_cpu" not implemented for \'{input.dtype.name}\'')
    rates = _host(input)
    if rates.size and not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draws = _generator(generator).numpy.poisson(rates).astype(input.dtype.numpy)
    return make_tensor(draws, dtype=input.dtype, device=input.device)


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    for name, t in (("count", count), ("prob", prob)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: {t.dtype.name}")
    counts, probs = np.broadcast_arrays(_host(count), _host(prob))
    if counts.size and not ((counts >= 0).all() and (probs >= 0).all() and (probs <= 1).all()):
        raise RuntimeError("binomial: expected count >= 0 and 0 <= prob <= 1")
    draws = _generator(generator).numpy.binomial(counts.astype(np.int64), probs).astype(count.dtype.numpy)
    return make_tensor(draws, dtype=count.dtype, device=count.device)
