"""The ``zero`` command: one sub-command per job.

Exit statuses, the same for every job:

    0    done
    1    a bug in Zero: Python's traceback follows (please report it)
    2    the job could not run as asked: a bad argument, a missing or damaged file, a run
         in use by another trainer, not enough memory, a full disk. One line on stderr
         says what, and what would do. Arguments and paths are checked before any data
         is loaded: such an error costs no time and writes nothing
    3    the run diverged: a loss or gradient norm became inf or NaN. One line names the
         step and the last good checkpoint (a model holding inf or NaN is never saved)
    (a reader that closes the output early, as ``| head`` does, is no error: the job stops
    printing and goes on -- a training run to its end or its checkpoint, ``zero gpt
    sample`` stops generating -- and ends with the status it would have had)
    130  stopped by SIGINT (Ctrl-C), 143 by SIGTERM: the step in progress was finished and
         a checkpoint written (its path is printed); --resume continues exactly. A second
         signal stops at once, without the checkpoint
"""
from __future__ import annotations

import argparse
import importlib.metadata
import platform
import sys
import warnings
from pathlib import Path

from ..errors import ZeroError
from . import parallel
from .console import guarded_output
from .parser import EXIT_USAGE, Parser
from .run_control import EXIT_DIVERGED, Diverged, StoppedNow, signal_name


def version() -> str:
    """``zero 0.1.0 (Python 3.11.2; /path/to/zero)``: the installed distribution's version."""
    try:
        number = importlib.metadata.version("zero-dl")
    except importlib.metadata.PackageNotFoundError:
        number = "(not installed: run from a source tree)"
    return f"zero {number} (Python {platform.python_version()}; {Path(__file__).resolve().parents[1]})"


def build_parser() -> argparse.ArgumentParser:
    from . import gpt, mnist, plot

    parser = Parser(prog="zero", description="Zero: train the book's models from the command line.",
                    epilog=__doc__[__doc__.index("Exit statuses"):])
    parser.add_argument("--version", action="version", version=version())
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")
    mnist.add_arguments(jobs.add_parser("mnist", help="train the book's MLP on MNIST (or Fashion-MNIST)",
                                        description=mnist.__doc__))
    gpt.add_arguments(jobs.add_parser("gpt", help="prepare a text (BPE tokens or characters), train a GPT, sample",
                                      description=gpt.__doc__))
    plot.add_arguments(jobs.add_parser("plot", help="draw the loss curves of one or more runs into a PNG",
                                       description=plot.__doc__))
    return parser


def _line_buffered() -> None:
    """Each line of a job's log reaches a file or a pipe as it is printed, not 8 KiB later."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (a test's capture), or detached
            pass


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help (0), or a line of argparse's (2): a status to return, like any other
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    _line_buffered()
    name = " ".join(["zero", args.job] + ([args.command] if getattr(args, "command", None) else []))

    def one_line_warning(message, category, filename, lineno, file=None, line=None):
        print(f"{name}: warning: {message}", file=sys.stderr)

    with warnings.catch_warnings(), guarded_output():
        warnings.showwarning = one_line_warning
        try:
            return args.handler(args) or 0
        except BaseException as e:
            return _end(name, e)


def _failure(name: str, e: BaseException) -> tuple[int, str] | None:
    """The exit status and the line to print for an error that ends a job; None for a bug."""
    if isinstance(e, Diverged):
        return EXIT_DIVERGED, f"{name}: diverged: {e}"
    if isinstance(e, ZeroError):  # our own errors already say what is wrong: no traceback
        return EXIT_USAGE, f"{name}: error: {e}"
    if isinstance(e, MemoryError):  # the jobs say what size was asked; this is the last resort
        return EXIT_USAGE, (f"{name}: error: out of memory{f' ({e})' if str(e) else ''}: lower --batch-size or "
                            "the model's size")
    if isinstance(e, OSError):  # a disk full, a permission refused: the system's own words are enough
        return EXIT_USAGE, f"{name}: error: {e}"
    if isinstance(e, StoppedNow):
        return 128 + e.signum, f"\n{name}: {signal_name(e.signum)} again: stopped at once, without a checkpoint"
    if isinstance(e, KeyboardInterrupt):
        return 130, f"\n{name}: interrupted"
    return None


def _end(name: str, e: BaseException) -> int:
    """End the job on ``e``: print its line, return its status. In a job of several ranks,
    an error that only this rank met ends every rank (MPI_Abort); one they all met (rank
    0's argument error, a divergence) ends each, rank 0 alone printing it."""
    ranks = parallel.current()
    parallel.leave()
    if isinstance(e, parallel.AgreedError):
        failure = _failure(name, e.error)
        if failure is None:
            raise e.error
        if e.show:
            print(failure[1], file=sys.stderr)
        return failure[0]
    failure = _failure(name, e)
    if failure is None:
        raise e  # a bug: the traceback (and, with several ranks, the process group's abort of the job)
    code, message = failure
    if ranks.distributed:
        message += f" (rank {ranks.rank} of {ranks.world}: ending the job)"
    print(message, file=sys.stderr, flush=True)
    if ranks.distributed:
        parallel.abort(code)
    return code
