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
stay correct. Reassociation may also turn (x - max) - log(sum) into x - (max + log(sum)),
which loses every digit of a log-softmax at x = 1e20, and contraction may compute
scale * s - max as one fused multiply-add while max came from the rounded scale * s, so
that the largest score's exp is exp(-1000) = 0 instead of 1 when scores are near 1e19.
``njit_in_order`` compiles the few helpers whose order of operations matters without
either flag (LLVM keeps each instruction's flags when it inlines them into a fastmath loop).
"""
from __future__ import annotations

import numba

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
prange = numba.prange
njit = numba.njit(cache=True, fastmath=FASTMATH)
njit_in_order = numba.njit(cache=True, fastmath=FASTMATH - {"reassoc", "contract"})
