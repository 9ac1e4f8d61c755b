"""Initialisers: fill a tensor in place, without recording the graph.

``kaiming_normal_`` is the book's He initialisation, N(0, 2 / fan_in) for ReLU
and GELU networks; embeddings use N(0, 0.02²).
"""
from __future__ import annotations

import math

from ..errors import ShapeValueError
from ..grad_mode import no_grad
from ..tensors.tensor import Tensor

_GAINS = {"linear": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "gelu": math.sqrt(2.0)}


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    try:
        return _GAINS[nonlinearity]
    except KeyError:
        raise ValueError(f"unknown nonlinearity {nonlinearity!r}; known: {sorted(_GAINS) + ['leaky_relu']}") from None


def fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """For a weight [out, in, *kernel]: fan_in = in * kernel, fan_out = out * kernel."""
    if tensor.ndim < 2:
        raise ShapeValueError(f"fan in/out need a tensor with at least 2 dimensions, got shape {list(tensor.shape)}")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    return fan_in if mode == "fan_in" else fan_out


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def constant_(tensor: Tensor, value: float) -> Tensor:
    with no_grad():
        return tensor.fill_(value)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "relu",
                    generator=None) -> Tensor:
    """He initialisation: N(0, gain² / fan), gain = √2 for ReLU."""
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(_fan(tensor, mode)), generator=generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "relu",
                     generator=None) -> Tensor:
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator=generator)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot: U(-a, a) with a = gain * √(6 / (fan_in + fan_out))."""
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator=generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator=generator)


# -- PyTorch's other initialisers: truncated normal, orthogonal, sparse, identity, Dirac -----------
# (Drawn on the host where they need a factorisation or an index pattern, then copied in: an
# initialiser runs once per parameter, not per step.)
_GAINS.update({"conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0, "conv_transpose1d": 1.0, "conv_transpose2d": 1.0,
               "conv_transpose3d": 1.0, "selu": 3.0 / 4})


def _assign(tensor: Tensor, values) -> Tensor:
    """Write the NumPy array ``values`` (its shape) into ``tensor`` in place, in its dtype and device."""
    from ..tensors.creation import tensor as make
    with no_grad():
        return tensor.copy_(make(values.reshape(tuple(tensor.shape)), dtype=tensor.dtype))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """N(mean, std²) restricted to [a, b] (a and b are values, not numbers of std), by the
    inverse CDF: a uniform draw between Φ(α) and Φ(β), mapped back through Φ⁻¹."""
    if mean < a - 2 * std or mean > b + 2 * std:
        import warnings
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    low, high = cdf((a - mean) / std), cdf((b - mean) / std)
    with no_grad():
        tensor.uniform_(2 * low - 1, 2 * high - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        return tensor.clamp_(a, b)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix (Saxe et al.): Q of the QR factorisation of a standard-normal
    [rows, prod(rest)] matrix, signs fixed by R's diagonal so it is uniformly distributed;
    rows are orthonormal when rows ≤ columns, columns otherwise. Scaled by ``gain``."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    import numpy as np

    from ..tensors.creation import empty
    rows = tensor.shape[0]
    columns = tensor.numel() // rows
    with no_grad():
        draw = empty((rows, columns), dtype=tensor.dtype).normal_(0.0, 1.0, generator=generator).numpy()
    matrix = draw.astype(np.float64)
    if rows < columns:
        matrix = matrix.T
    q, r = np.linalg.qr(matrix)
    q = q * np.sign(np.diag(r))
    if rows < columns:
        q = q.T
    return _assign(tensor, q * gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std²) with ⌈sparsity · rows⌉ entries of each column (of a 2-D tensor) set to zero,
    at random rows (Martens, 2010)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..tensors.creation import randperm
    rows, columns = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0.0, std, generator=generator)
        values = tensor.numpy().copy()
        for column in range(columns):
            values[randperm(rows, generator=generator).numpy()[:zeros], column] = 0
    return _assign(tensor, values)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (a 2-D tensor; ones on the main diagonal of a rectangular one)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    import numpy as np
    rows, columns = tensor.shape
    return _assign(tensor, np.eye(rows, columns))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta for a convolution weight [out, in, *kernel] (3-, 4- or 5-D): each of the
    first min(out/groups, in) output channels of each group passes its input channel through
    unchanged (a 1 at the kernel's centre), everything else 0."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tuple(tensor.shape)
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    import numpy as np
    per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _assign(tensor, values)
