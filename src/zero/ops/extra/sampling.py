"""Drawing from distributions given as tensors: ``multinomial``.

Sampling reads the probabilities back to the host and draws there with the generator
(Zero's default unless ``generator=`` is given), so a seed gives the same tokens on
every device. A sampling loop reads its result on the host anyway, to print or feed it
back; the one wait per draw is the price of that, not of this function.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import ShapeError, ZeroError, describe
from ...random import Generator, default_generator
from ...tensors.creation import tensor
from ...tensors.tensor import Tensor


class SamplingError(ZeroError, RuntimeError):
    """Weights that are no distribution (negative, infinite, NaN, or all zero); a RuntimeError,
    as PyTorch raises."""


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Indices drawn with probabilities proportional to ``weights`` (n,) or (rows, n), which
    need not sum to 1: (num_samples,) or (rows, num_samples) int64, on the weights' device.
    Without ``replacement`` each index is drawn at most once per row."""
    if not isinstance(input, Tensor) or input.ndim not in (1, 2) or not input.dtype.is_floating_point:
        raise ShapeError(f"multinomial: weights must be a 1-D or 2-D floating-point tensor, got {describe(input)}")
    if not isinstance(num_samples, int) or num_samples < 1:
        raise SamplingError(f"multinomial: num_samples must be a positive int, got {num_samples!r}")
    if input.ndim == 2 and input.shape[0] == 0:   # no rows: nothing to draw, as in PyTorch
        return Tensor._empty((0, num_samples), dtypes.int64, input.device)
    rows = input.detach()._host_array().astype(np.float64).reshape(-1, input.shape[-1])
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise SamplingError("multinomial: the weights contain inf, nan or a negative number")
    totals = rows.sum(axis=1)
    if (totals <= 0).any():
        raise SamplingError("multinomial: a row of weights sums to 0 (no distribution to draw from)")
    if not replacement and num_samples > int((rows > 0).sum(axis=1).min()):
        raise SamplingError(f"multinomial: cannot draw {num_samples} different indices without replacement "
                            f"from a row with {int((rows > 0).sum(axis=1).min())} non-zero weights")
    rng = (generator or default_generator()).numpy
    drawn = np.stack([rng.choice(rows.shape[1], size=num_samples, replace=replacement, p=row / total)
                      for row, total in zip(rows, totals)]).astype(np.int64)
    return tensor(drawn.reshape(input.shape[:-1] + (num_samples,)), device=input.device)
