"""LAPACK's geqrf over ``xp``: the QR factorisation as Householder reflectors (``numpy.linalg.qr``'s
and ``cupy.linalg.qr``'s mode "raw", which give the factor transposed, as Fortran stores it)."""
from __future__ import annotations

from types import ModuleType

import numpy as np

from ..kernel_contract import Array
from .decompositions import _checked


def geqrf(xp: ModuleType, a: Array, h: Array, tau: Array) -> None:
    """a (..., m, n) = Q R: h (..., m, n) holds R on and above the diagonal and the reflectors'
    vectors below it (their leading 1 implied), tau (..., min(m, n)) their scales."""
    if 0 in a.shape[-2:]:
        h[...] = a
        return
    for index in np.ndindex(*a.shape[:-2]):   # one matrix at a time (CuPy's raw mode takes one)
        matrix = a[index]
        packed, scales = _checked(xp, lambda: xp.linalg.qr(matrix, mode="raw"))  # noqa: B023 (run at once)
        h[index] = packed.T
        tau[index] = scales
