"""Dropout's mask, the same bits on every backend.

Element i of a call with ``seed`` (a 63-bit integer drawn from a Generator) is kept, and
multiplied by 1 / (1 - p), when its uniform number in [0, 1) is at least p. The number
is SplitMix64's output for the counter seed + (i + 1)·γ, its top 53 bits scaled down:

    z = seed + (i + 1) * SPLITMIX_GAMMA                 (mod 2**64)
    z = (z ^ (z >> 30)) * SPLITMIX_M1
    z = (z ^ (z >> 27)) * SPLITMIX_M2
    z =  z ^ (z >> 31)
    uniform = (z >> 11) * 2**-53                        (exact in float64)

Multiplying by 2**53 is exact too, so ``uniform >= p`` is the integer test
``(z >> 11) >= keep_threshold(p)`` = ceil(p * 2**53): no float rounding on any device
can make a bit of the mask differ, and a loop compares integers instead of converting
each one. The mask depends on the seed and the element's index alone: the backward
regenerates it, and splitting the elements among threads or GPU blocks leaves it as is.
"""
from __future__ import annotations

import math

SPLITMIX_GAMMA = 0x9E3779B97F4A7C15     # γ, the counter's step
SPLITMIX_M1 = 0xBF58476D1CE4E5B9        # the two multipliers of the output mix
SPLITMIX_M2 = 0x94D049BB133111EB


def keep_threshold(p: float) -> int:
    """The least top-53-bits value z >> 11 of a kept element: ceil(p · 2⁵³) (2⁵³ for p = 1:
    none kept; 0 for p = 0: all)."""
    return math.ceil(float(p) * 2.0 ** 53)


def keep_scale(p: float) -> float:
    """What a kept element is multiplied by: 1 / (1 - p), and 0 when nothing is kept."""
    return 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
