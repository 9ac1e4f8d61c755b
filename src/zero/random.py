"""Random numbers: ``zero.manual_seed`` and ``Generator``.

A Generator wraps NumPy's PCG64. Creation functions and initialisers draw from
it on the host and copy to the tensor's device, so a seed gives the same
initial weights on every device. Kernels that need randomness on the device
(dropout) take a 63-bit seed drawn from it with ``next_seed()`` and derive
their numbers from (seed, element index), so backward can regenerate the same
mask instead of storing it.

A Generator makes its PCG64 at the first draw, not when seeded: ``numpy.random`` is slow
to import, and ``import zero`` (it seeds the default generator) need not pay for it.
"""
from __future__ import annotations

import os

import numpy as np

from .errors import CaptureError


def _fresh_seed() -> int:
    """63 bits of the operating system's entropy."""
    return int.from_bytes(os.urandom(8), "little") >> 1


class Generator:
    def __init__(self, device="cpu", seed: int | None = None):
        self.device = device
        self._seed = 0
        self.manual_seed(_fresh_seed() if seed is None else seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._numpy: np.random.Generator | None = None   # made from the seed at the first draw
        return self

    def seed(self) -> int:
        """Re-seed from fresh entropy; returns the seed used."""
        self.manual_seed(_fresh_seed())
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        """A JSON-friendly snapshot (saved in checkpoints so a resumed run draws the same)."""
        return {"seed": self._seed, "bit_generator": self.numpy.bit_generator.state}

    def set_state(self, state: dict) -> None:
        self._seed = int(state["seed"])
        self.numpy.bit_generator.state = state["bit_generator"]

    # -- drawing -----------------------------------------------------------------------------
    @property
    def numpy(self) -> np.random.Generator:
        """The NumPy generator the draws come from."""
        if self._numpy is None:
            self._numpy = np.random.Generator(np.random.PCG64(self._seed))
        return self._numpy

    def next_seed(self) -> int:
        return int(self.numpy.integers(0, 1 << 63))

    def fill_normal(self, tensor, mean: float = 0.0, std: float = 1.0) -> None:
        values = self.numpy.standard_normal(tensor.shape, dtype=_float_type(tensor))
        if std != 1.0:
            values *= std
        if mean != 0.0:
            values += mean
        _write(tensor, values)

    def fill_uniform(self, tensor, low: float = 0.0, high: float = 1.0) -> None:
        values = self.numpy.random(tensor.shape, dtype=_float_type(tensor))
        if (low, high) != (0.0, 1.0):
            values *= high - low
            values += low
        _write(tensor, values)

    def fill_integers(self, tensor, low: int, high: int) -> None:
        _write(tensor, self.numpy.integers(low, high, size=tensor.shape, dtype=np.int64))

    def permutation(self, n: int) -> np.ndarray:
        return self.numpy.permutation(n)


def _float_type(tensor):
    return np.float32 if tensor.dtype.numpy == np.float32 else np.float64


def _write(tensor, values: np.ndarray) -> None:
    device = tensor._meta.device
    if device._capture is not None:
        raise CaptureError(f"random numbers for a {device.type} tensor were drawn on the host while a CUDA graph "
                           "was being captured: every replay would repeat them; draw them outside the capture "
                           "(dropout inside one is fine: its seeds are refilled before each replay)")
    device.kernels.copy(device.backend.from_numpy(values), tensor._array)


_default = Generator(seed=0)


def default_generator() -> Generator:
    return _default


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (and so every creation function, dropout and initialiser)."""
    return _default.manual_seed(seed)


def seed() -> int:
    return _default.seed()


def initial_seed() -> int:
    return _default.initial_seed()


def get_rng_state() -> dict:
    return _default.get_state()


def set_rng_state(state: dict) -> None:
    _default.set_state(state)
