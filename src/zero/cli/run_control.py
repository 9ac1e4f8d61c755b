"""What keeps a training run honest: one trainer at a time, a clean stop on a signal,
and a stop at the first non-finite number.

``TrainerLock``: an exclusive ``fcntl.flock`` on a lock file beside the run's
checkpoints, held open for the run's life. The kernel drops it when the process
ends, however it ends (``kill -9`` too), so a lock is never stale; a second
trainer finds it held and refuses, naming the holder's PID (written into the
file). The file is removed at a clean exit, and so are the directories made for it
if the run wrote nothing into them (a job takes the lock before its first line, and
may still stop at its data); a trainer that takes the lock checks that the file it
locked is still the one at that path, so removal never lets two trainers in.

``StopSignals``: while installed, SIGINT (Ctrl-C) and SIGTERM only set a flag;
the loop finishes the step it is in, writes a checkpoint and exits with
128 + the signal's number (130, 143). A second signal stops at once, without
the checkpoint.

``check_finite``: the divergence guard. A non-finite loss or gradient norm
raises ``Diverged`` (exit status 3) before the update is applied;
``nonfinite_tensors`` is the check a checkpoint passes before it is written,
so NaN weights never replace a good checkpoint.
"""
from __future__ import annotations

import math
import os
import signal
import sys
import threading
from pathlib import Path

from ..errors import ZeroError
from ..grad_mode import no_grad
from ..ops.joining import stack

try:
    import fcntl
except ImportError:  # not POSIX: runs are not locked
    fcntl = None  # type: ignore[assignment]

EXIT_DIVERGED = 3
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Diverged(ZeroError, ArithmeticError):
    """A training step produced a non-finite loss or gradient norm; the run stopped (exit status 3)."""


class StoppedNow(BaseException):
    """A second stop signal: leave at once, without a checkpoint."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class RunLocked(ZeroError, RuntimeError):
    """Another trainer holds the run's lock."""


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


# -- one trainer per run ----------------------------------------------------------------------


class TrainerLock:
    """``with TrainerLock(path, "RUN_DIR"):`` -- held for the block, or RunLocked at once."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = Path(path), what
        self.fd: int | None = None
        self.created: list[Path] = []  # the directories it made for the lock file, innermost first

    def __enter__(self) -> TrainerLock:
        if fcntl is None:
            return self
        missing = [p for p in (self.path.parent, *self.path.parent.parents) if not p.exists()]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.created = missing
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 64).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise RunLocked(f"{self.what} is in use by another trainer (PID {holder}, lock {self.path}); "
                                "wait for it to finish or stop it") from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # its holder removed the file as we opened it: lock the new one
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            try:
                os.unlink(self.path)  # while still held: a newcomer re-checks the path (above)
            except FileNotFoundError:
                pass
            os.close(self.fd)
            self.fd = None
        for directory in self.created:  # a job that ended before writing anything leaves nothing behind
            try:
                directory.rmdir()
            except OSError:  # it holds the run's files (or someone else's): kept
                break
        self.created = []


# -- stop on a signal -------------------------------------------------------------------------


class StopSignals:
    """``with StopSignals() as stop:`` ... ``if stop.signum:`` -- SIGINT/SIGTERM set ``signum``."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict = {}

    def _receive(self, signum, frame) -> None:
        if self.signum is not None:
            raise StoppedNow(signum)
        self.signum = signum
        try:
            print(f"\n{signal_name(signum)}: finishing this step, then saving a checkpoint "
                  "(send it again to stop at once, without one)", file=sys.stderr, flush=True)
        except RuntimeError:  # the signal came in the middle of another write to stderr
            pass

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():  # handlers live in the main thread only
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._receive)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    @property
    def exit_status(self) -> int:
        return 128 + (self.signum or 0)


# -- divergence -------------------------------------------------------------------------------


def read_step_values(loss, grad_norm) -> tuple[float, float | None]:
    """(loss, gradient norm) as Python floats, in one read from the device."""
    if grad_norm is None:
        return loss.item(), None
    loss_value, norm_value = stack([loss.detach().float(), grad_norm.detach().float()]).tolist()
    return loss_value, norm_value


def check_finite(step: int, loss: float, grad_norm: float | None, last_good: str) -> None:
    """The divergence guard: Diverged at the first non-finite loss or gradient norm."""
    problems = []
    if not math.isfinite(loss):
        problems.append(f"the loss is {loss}")
    if grad_norm is not None and not math.isfinite(grad_norm):
        problems.append(f"the gradient norm is {grad_norm}")
    if problems:
        raise Diverged(f"step {step}: {' and '.join(problems)}: the run diverged, stopped before applying "
                       f"the update; {last_good} (try a lower --lr)")


def arithmetic_failure(step: int, error: ArithmeticError, last_good: str) -> Diverged:
    """An op that overflowed into a Python ArithmeticError (division by zero ...) mid-step."""
    return Diverged(f"step {step}: {type(error).__name__} ({error}) in the forward or backward pass, the "
                    f"mark of overflowing values: the run diverged; {last_good} (try a lower --lr)")


def nonfinite_tensors(named_tensors) -> tuple[list[str], int]:
    """Names of the floating-point tensors holding an inf or NaN, and how many were checked
    (one read from the device): x * 0 is 0 where x is finite and NaN where it is not, and
    NaN survives the sum."""
    names, probes = [], []
    with no_grad():
        for name, t in named_tensors:
            if t.dtype.is_floating_point and t.numel() > 0:
                names.append(name)
                probes.append((t.detach() * 0).sum().float())
    if not probes:
        return [], 0
    return [name for name, value in zip(names, stack(probes).tolist()) if value != 0], len(names)
