"""``zero.backends.mps``: Apple's Metal backend, which Zero does not have. Device-picking
code (``"mps" if zero.backends.mps.is_available() else "cpu"``) runs unchanged."""
from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
