"""Work: the handle of a collective that may still be running (PyTorch's ``dist.Work``).

A collective called with ``async_op=True`` returns one; without, the collective calls
``wait()`` itself before returning. ``wait()`` returns once the result is in the tensors
(for a CUDA backend: once the GPU's stream will see it -- later kernels on the stream come
after the collective); ``is_completed()`` asks without waiting. Each backend subclasses it
with how to test and wait for its own kind of request.

What a collective does after the transfer on the program's side (copying a gathered
buffer out into ``tensor_list``) is a list of ``finish`` steps, run once, by the first
``wait()`` or ``is_completed()`` that sees the transfer done.
"""
from __future__ import annotations

from collections.abc import Callable


class Work:
    def __init__(self, name: str, outputs: list, finish: list[Callable[[], None]] | None = None):
        self.name = name              # the collective, for messages: "all_reduce"
        self._outputs = outputs       # the tensors it writes (kept alive until it is done)
        self._finish = list(finish or ())
        self._done = False

    # -- what a backend defines ------------------------------------------------------------------
    def _test(self) -> bool:
        """Whether the transfer is done (without waiting)."""
        raise NotImplementedError

    def _wait(self, timeout: float | None) -> None:
        """Wait until the transfer is done."""
        raise NotImplementedError

    # -- PyTorch's methods -----------------------------------------------------------------------
    def is_completed(self) -> bool:
        if not self._done and self._test():
            self._complete()
        return self._done

    def wait(self, timeout=None) -> bool:
        """Wait for the collective (at most ``timeout``, a ``datetime.timedelta``, when given;
        otherwise the process group's timeout). A collective that does not finish in time
        takes the whole job down: see the backend."""
        if not self._done:
            self._wait(None if timeout is None else timeout.total_seconds())
            self._complete()
        return True

    def then(self, step: Callable[[], None]) -> None:
        """Run ``step`` once the transfer is done (now, if it is)."""
        if self._done:
            step()
        else:
            self._finish.append(step)

    def result(self) -> list:
        """The tensors the collective wrote."""
        return list(self._outputs)

    def _complete(self) -> None:
        self._done = True
        steps, self._finish = self._finish, []
        for step in steps:
            step()

    def __repr__(self) -> str:
        return f"<Work {self.name}: {'completed' if self._done else 'in flight'}>"
