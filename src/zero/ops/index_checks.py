"""Range checks of integer indices (gathers, embedding lookups, class targets) that do not
make the host wait for the device.

On the CPU a check is immediate. On a GPU, reading the smallest and largest index back
would make the host wait for the device in every training step -- three times in a GPT
step (the token and position lookups, the loss's targets) -- and stall the queue of
kernels the book's asynchronous execution keeps full. So there the check is *deferred*:
the two extremes are computed on the device, and verified the next time the program
reads a value from that device anyway (``loss.item()``, ``.cpu()``, printing). An index
out of range then raises at that read, naming the op that received it.

``set_eager_checks(True)`` (or ``ZERO_EAGER_CHECKS=1``) makes every check wait for the
device and raise at its op: slower, for debugging.
"""
from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import ZeroIndexError
from ..tensors.tensor import Tensor

_eager = os.environ.get("ZERO_EAGER_CHECKS", "0") == "1"


def set_eager_checks(eager: bool) -> None:
    """Verify index ranges at once on every device (True) or, off the CPU, at the next read."""
    global _eager
    _eager = bool(eager)


def eager_checks() -> bool:
    return _eager


def check_index_range(op: str, index: Tensor, problem: Callable[[int, int], str | None],
                      ignore: int | None = None, valid: int = 0,
                      error: type[ZeroIndexError] = ZeroIndexError) -> None:
    """Raise ZeroIndexError(f"{op}: {problem(smallest, largest)}") when ``problem`` finds
    the extremes of ``index`` unacceptable. Entries equal to ``ignore`` count as ``valid``,
    a value ``problem`` accepts."""
    if not index.numel():
        return
    device = index.device
    if device.type == "cpu":   # at once, at the cost of one pass over the indices
        message = problem(*device.kernels.index_extremes(index._array))
        if message is not None and ignore is not None:   # an ignored entry may be the extreme
            ((smallest, largest),) = device.kernels.index_extremes_parts(index._array, ignore, valid)
            message = problem(int(smallest), int(largest))
        if message is not None:
            raise error(f"{op}: {message}")
        return
    parts = device.kernels.index_extremes_parts(index._array, ignore, valid)   # (chunks, 2), on the device

    def verify(where: str = "") -> None:
        chunks = device.backend.to_numpy(parts)
        message = problem(int(chunks[:, 0].min()), int(chunks[:, 1].max()))
        if message is not None:
            raise error(f"{op}: {message}{where}")

    if _eager:
        verify()
    else:
        device.defer_check(lambda: verify(
            f" (found at a later read from {device}; set ZERO_EAGER_CHECKS=1 to stop at the op itself)"))
