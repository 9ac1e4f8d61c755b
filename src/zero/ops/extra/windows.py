"""PyTorch's window functions (``torch.hann_window`` ...): the samples n = 0 .. L - 1 of a
window of length N = L + 1 when ``periodic`` (the first L of the symmetric window one longer,
as for spectral analysis), else N = L:

    bartlett   1 - |2n / (N - 1) - 1|
    blackman   0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))
    hamming    alpha - beta cos(2 pi n / (N - 1))          (alpha 0.54, beta 0.46)
    hann       hamming with alpha = beta = 0.5
    kaiser     I0(beta sqrt(1 - ((n - (N - 1) / 2) / ((N - 1) / 2)) ** 2)) / I0(beta)

Each is computed on the host in float64 (NumPy; ``numpy.i0`` for the Kaiser window) and made
a tensor of the requested float dtype on the requested device: a window is a constant.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ... import dtypes
from ...backends.device import Device
from ...dtypes import DType
from ...tensors.creation import tensor as make_tensor
from ...tensors.tensor import Tensor


def _window(name: str, window_length: int, periodic: bool, shape: Callable[[np.ndarray, int], np.ndarray],
            dtype: DType | None, device: Device | str | None, requires_grad: bool) -> Tensor:
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' must be int, not {type(window_length).__name__}")
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        values = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        values = shape(np.arange(window_length, dtype=np.float64), n)
    return make_tensor(values.astype(dtype.numpy), dtype=dtype, device=device, requires_grad=requires_grad)


def _cosines(alpha: float, beta: float, gamma: float = 0.0) -> Callable[[np.ndarray, int], np.ndarray]:
    def shape(k: np.ndarray, n: int) -> np.ndarray:
        phase = 2 * np.pi * k / (n - 1)
        return alpha - beta * np.cos(phase) + gamma * np.cos(2 * phase)
    return shape


def _bartlett(k: np.ndarray, n: int) -> np.ndarray:
    return 1 - np.abs(2 * k / (n - 1) - 1)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: DType | None = None,
                    layout: object = None, device: Device | str | None = None,
                    requires_grad: bool = False) -> Tensor:
    return _window("bartlett_window", window_length, periodic, _bartlett, dtype, device, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: DType | None = None,
                    layout: object = None, device: Device | str | None = None,
                    requires_grad: bool = False) -> Tensor:
    return _window("blackman_window", window_length, periodic, _cosines(0.42, 0.5, 0.08), dtype, device,
                   requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: DType | None = None, layout: object = None, device: Device | str | None = None,
                   requires_grad: bool = False) -> Tensor:
    return _window("hamming_window", window_length, periodic, _cosines(alpha, beta), dtype, device,
                   requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype: DType | None = None,
                layout: object = None, device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    return _window("hann_window", window_length, periodic, _cosines(0.5, 0.5), dtype, device, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: DType | None = None,
                  layout: object = None, device: Device | str | None = None, requires_grad: bool = False) -> Tensor:
    def shape(k: np.ndarray, n: int) -> np.ndarray:
        half = (n - 1) / 2
        return np.i0(beta * np.sqrt(np.clip(1 - ((k - half) / half) ** 2, 0, None))) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, shape, dtype, device, requires_grad)
