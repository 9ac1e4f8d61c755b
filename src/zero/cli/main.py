"""The ``zero`` command: one sub-command per job."""
from __future__ import annotations

import argparse
import sys

from ..errors import ZeroError


def build_parser() -> argparse.ArgumentParser:
    from . import gpt, mnist

    parser = argparse.ArgumentParser(prog="zero", description="Zero: train the book's models from the command line.")
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")
    mnist.add_arguments(jobs.add_parser("mnist", help="train the book's MLP on MNIST (or Fashion-MNIST)",
                                        description=mnist.__doc__,
                                        formatter_class=argparse.RawDescriptionHelpFormatter))
    gpt.add_arguments(jobs.add_parser("gpt", help="prepare text, train a character-level GPT, sample from it",
                                      description=gpt.__doc__,
                                      formatter_class=argparse.RawDescriptionHelpFormatter))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args) or 0
    except ZeroError as e:  # our own errors already say what is wrong: no traceback
        print(f"zero {args.job}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nzero {args.job}: interrupted", file=sys.stderr)
        return 130
