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
import sys
import warnings

from ..errors import ZeroError
from .run_control import EXIT_DIVERGED, Diverged, StoppedNow, signal_name

EXIT_USAGE = 2


def _recording(action: type) -> type:
    """``action`` that also adds its option's name to ``namespace.given``, so a job can tell an
    option given on the command line from its default (``arguments.settle_with_checkpoint``)."""

    class Recording(action):
        def __call__(self, parser, namespace, values, option_string=None):
            super().__call__(parser, namespace, values, option_string)
            namespace.given = getattr(namespace, "given", frozenset()) | {self.dest}

    return Recording


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (its own prints the usage first), recording
    which options were given."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in (None, "store", "store_true"):
            self.register("action", name, _recording(self._registry_get("action", name)))

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from . import gpt, mnist

    parser = Parser(prog="zero", description="Zero: train the book's models from the command line.",
                    epilog=__doc__[__doc__.index("Exit statuses"):],
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")
    mnist.add_arguments(jobs.add_parser("mnist", help="train the book's MLP on MNIST (or Fashion-MNIST)",
                                        description=mnist.__doc__,
                                        formatter_class=argparse.RawDescriptionHelpFormatter))
    gpt.add_arguments(jobs.add_parser("gpt", help="prepare text, train a character-level GPT, sample from it",
                                      description=gpt.__doc__,
                                      formatter_class=argparse.RawDescriptionHelpFormatter))
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help (0), or a line of argparse's (2): a status to return, like any other
        return e.code if isinstance(e.code, int) else EXIT_USAGE
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
