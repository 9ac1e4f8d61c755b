"""What a training job prints while it runs, for a person watching it or reading its log.

On a terminal: one progress bar (tqdm) at the bottom, every other line printed above
it (``tqdm.write``), never onto it. Anywhere else (a file, a pipe, CI): no bar and no
carriage returns, but a plain progress line whenever ``PLAIN_SECONDS`` have passed
without one, so a log never stays silent for long:

    train: step 120/1500 (8%), 0:18 elapsed, about 3:27 left

(the time left is estimated from the pace after the first step, which on a first
run compiles the kernels).
``guarded_output`` makes a closed pipe (``zero gpt train | tee log``, then Ctrl-C, which
ends ``tee`` too; ``zero gpt sample --stream | head``) cost only the printing: a job
whose reader has gone stops printing and goes on, so a training run still finishes its
step and saves its checkpoint, and nothing says "Broken pipe".

``compile_notice`` says when Numba starts compiling kernels: a first run compiles
each for a second or so (``cache=True`` keeps them on disk; later runs load them in
milliseconds), which would otherwise look like a hang before the first step.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator


PLAIN_SECONDS = 10.0  # the longest a redirected log goes without a line


def duration(seconds: float) -> str:
    """``0:07``, ``2:41``, ``1:02:03``."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class Progress:
    """``with Progress(total, "train", first=done) as progress:`` ... ``progress.advance()``
    after each unit of work, ``progress.say(line)`` for every line the job prints."""

    def __init__(self, total: int, description: str, unit: str = "step", first: int = 0, stream=None,
                 plain_seconds: float | None = None):
        self.stream = stream if stream is not None else sys.stdout
        self.total, self.description, self.unit = total, description, unit
        self.done, self.first = first, first
        self.plain_seconds = PLAIN_SECONDS if plain_seconds is None else plain_seconds
        self.started = self.last_line = time.monotonic()
        self.first_done_at: float | None = None  # when the first unit ended (it may have compiled kernels)
        self.bar = None
        if _is_terminal(self.stream):
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=first, desc=description, unit=unit, file=self.stream,
                            leave=False, dynamic_ncols=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def say(self, line: str) -> None:
        """Print ``line`` (above the bar on a terminal)."""
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)
        self.last_line = time.monotonic()

    def status(self, text: str) -> None:
        """A short note shown on the bar (the latest loss); nothing without a bar."""
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def advance(self, units: int = 1) -> None:
        if self.first_done_at is None:
            self.first_done_at = time.monotonic()
            self.first_units = units
        self.done += units
        if self.bar is not None:
            self.bar.update(units)
        elif time.monotonic() - self.last_line >= self.plain_seconds and self.done < self.total:
            self.say(self.line())

    def line(self) -> str:
        """``train: step 120/1500 (8%), 0:18 elapsed, about 3:27 left``."""
        now = time.monotonic()
        text = f"{self.description}: {self.unit} {self.done:,}/{self.total:,} ({100 * self.done // self.total}%), " \
               f"{duration(now - self.started)} elapsed"
        if self.first_done_at is not None:  # the pace after the first unit, which may have compiled kernels
            ran = self.done - self.first - self.first_units
            if ran > 0:
                text += f", about {duration((now - self.first_done_at) / ran * (self.total - self.done))} left"
        return text


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class ReaderGone(Exception):
    """Raised by a job that has nothing to do but print, once its reader has gone."""


class GuardedStream:
    """A text stream that outlives its reader. Every line a job prints goes through it:
    while the reader reads, it passes each write on; at the first write or flush that
    finds the pipe closed (BrokenPipeError) it sends the stream's file descriptor to the
    null device (so nothing later, Python's own flush at exit included, meets the closed
    pipe again) and from then on drops what it is given."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                self.stream.write(text)
            except BrokenPipeError:
                self._lose_reader()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._lose_reader()

    def _lose_reader(self) -> None:
        self.reader_gone = True
        with contextlib.suppress(AttributeError, OSError, ValueError):   # no descriptor (a test's capture)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.stream.fileno())
            os.close(null)
            self.stream.flush()                     # what the closed pipe refused, now to the null device

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextlib.contextmanager
def guarded_output() -> Iterator[None]:
    """``with guarded_output():`` -- stdout and stderr each in a ``GuardedStream``, restored after."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = GuardedStream(sys.stdout), GuardedStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def reader_gone() -> bool:
    """Whether standard output's reader has closed the pipe (under ``guarded_output``)."""
    return bool(getattr(sys.stdout, "reader_gone", False))


class CompileWatch:
    """Counts Numba's compilations while installed, and says so at the first one. An outer
    compilation may set off nested ones (the functions it calls): they count as one.
    (Installed as a Numba event listener by ``compile_notice``, which imports Numba only
    then: ``zero --help`` should not wait half a second for it.)"""

    def __init__(self, say: Callable[[str], None]):
        self.say = say
        self.count = 0
        self.seconds = 0.0
        self._depth = 0
        self._started = 0.0

    def on_start(self, event) -> None:
        if self._depth == 0:
            self._started = time.perf_counter()
            if self.count == 0:
                self.say("compiling kernels (first run only: later runs load them from Numba's cache) ...")
            self.count += 1
        self._depth += 1

    def on_end(self, event) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._started


@contextlib.contextmanager
def compile_notice(say: Callable[[str], None]) -> Iterator[CompileWatch]:
    """``with compile_notice(progress.say) as compiled:`` -- a line at Numba's first compilation
    inside the block; ``compiled.count`` and ``compiled.seconds`` afterwards."""
    from numba.core import event

    listener_type = type("CompileListener", (CompileWatch, event.Listener), {})
    watch = listener_type(say)
    event.register("numba:compile", watch)
    try:
        yield watch
    finally:
        event.unregister("numba:compile", watch)
