"""Batches for the CUDA graph tests: rows of features and class labels, made on the host."""
from __future__ import annotations

import numpy as np

ROWS, FEATURES, CLASSES = 5, 8, 4


def make_batches(count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((ROWS, FEATURES)).astype(np.float32), rng.integers(0, CLASSES, ROWS))
            for _ in range(count)]
