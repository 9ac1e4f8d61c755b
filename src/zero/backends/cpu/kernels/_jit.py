"""How CPU loops are compiled: Numba, in parallel over rows, cached on disk.

``parallel=True`` spreads ``prange`` loops over the cores; ``cache=True`` keeps
the machine code next to the source, so a second process loads it in
milliseconds instead of compiling for about a second. The fastmath flags allow
reassociation (vectorised sums) but not "no infinities", so masked -inf
scores stay correct.
"""
from __future__ import annotations

import numba

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
njit = numba.njit(parallel=True, cache=True, fastmath=FASTMATH)
njit_serial = numba.njit(cache=True, fastmath=FASTMATH)
prange = numba.prange
