"""The command line's parser: argparse with one-line errors, a record of the options given,
and help that shows every default once."""
from __future__ import annotations

import argparse

EXIT_USAGE = 2


def _recording(action: type) -> type:
    """``action`` that also adds its option's name to ``namespace.given``, so a job can tell an
    option given on the command line from its default (``arguments.settle_with_checkpoint``,
    ``presets.apply``)."""

    class Recording(action):
        def __call__(self, parser, namespace, values, option_string=None):
            super().__call__(parser, namespace, values, option_string)
            namespace.given = getattr(namespace, "given", frozenset()) | {self.dest}

    return Recording


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (its own prints the usage first), recording
    which options were given, and ``HelpFormatter`` for its help and its sub-commands'."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        for name in (None, "store", "store_true"):
            self.register("action", name, _recording(self._registry_get("action", name)))

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions keep their lines; each option's help ends with its default, once.

    Nothing is added where there is no default worth a word (None or "": the help says
    what happens then; a flag's False), nor where the help already says it ("(default",
    as the options a ``--preset`` fills in do).

    The descriptions are the jobs' module docstrings, written for readers of the code in
    reStructuredText's ``literal`` quotes; a terminal shows them in the `command` quotes
    the rest of the help uses (``plain``)."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain(text))

    def _expand_help(self, action: argparse.Action) -> str:
        return plain(super()._expand_help(action))

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (default is None or default is False or default == "" or default is argparse.SUPPRESS
                or not action.option_strings or "(default" in text):
            return text
        shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})".lstrip()


def plain(text: str) -> str:
    """Help text for a terminal: reStructuredText's double backquotes as single ones."""
    return text.replace("``", "`")
