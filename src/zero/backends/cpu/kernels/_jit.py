"""How CPU loops are compiled: Numba, serial, cached on disk.

``njit`` compiles a loop once per combination of argument types, serially. Loops whose
iterations are independent are written with ``prange``; compiled serially, ``prange`` is
``range``, and the marking says which loops could spread over the cores. They do not,
for now: measured on 2 cores, waking Numba's thread pool cost 5.9 ms for a [64, 10]
cross-entropy (0.33 ms serial), and even on large arrays a parallel region started right
after a matrix product fights OpenBLAS's still-spinning threads for the cores -- a GPT
step (4 layers, 128 wide, batch 32 x 64) took 258 ms with parallel loops above 65,536
elements and 158 ms with serial loops. BLAS keeps using every core.

``cache=True`` keeps the machine code next to the source, so a second process loads a
kernel in milliseconds instead of compiling it for about a second. The fastmath flags
allow reassociation (vectorised sums) but not "no infinities", so masked -inf scores
stay correct.
"""
from __future__ import annotations

import numba

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
prange = numba.prange
njit = numba.njit(cache=True, fastmath=FASTMATH)
