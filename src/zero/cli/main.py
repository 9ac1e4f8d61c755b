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
    gpt.add_arguments(jobs.add_parser("gpt", help="prepare text, train a character-level GPT, sample from it",
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

    with warnings.catch_warnings():
        warnings.showwarning = one_line_warning
        try:
            return args.handler(args) or 0
        except Diverged as e:
            print(f"{name}: diverged: {e}", file=sys.stderr)
            return EXIT_DIVERGED
        except ZeroError as e:  # our own errors already say what is wrong: no traceback
            print(f"{name}: error: {e}", file=sys.stderr)
            return EXIT_USAGE
        except MemoryError as e:  # the jobs say what size was asked; this is the last resort
            print(f"{name}: error: out of memory{f' ({e})' if str(e) else ''}: lower --batch-size or the "
                  "model's size", file=sys.stderr)
            return EXIT_USAGE
        except OSError as e:  # a disk full, a permission refused: the system's own words are enough
            print(f"{name}: error: {e}", file=sys.stderr)
            return EXIT_USAGE
        except StoppedNow as e:
            print(f"\n{name}: {signal_name(e.signum)} again: stopped at once, without a checkpoint",
                  file=sys.stderr)
            return 128 + e.signum
        except KeyboardInterrupt:
            print(f"\n{name}: interrupted", file=sys.stderr)
            return 130
