"""--help shows every default once and describes every sub-command; --version; install hints."""
import argparse
import importlib.metadata
import re
from pathlib import Path

import pytest

from zero.cli.main import build_parser, main


def _commands(parser=None, prefix=()):
    """(argv prefix, parser) for the parser and every sub-command under it."""
    parser = parser or build_parser()
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*prefix, name))


COMMANDS = [argv for argv, _ in _commands()]


def _option_help(text: str, flag: str) -> str:
    """The help of one option: its lines, from its flag to the next option's."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)   # (a flag may follow its pair: --cuda-graph, --no-cuda-graph)
                 if re.match(rf"  (?:--[\w-]+, )?{re.escape(flag)}\b", line))
    block = [lines[start]]
    for line in lines[start + 1:]:
        if re.match(r"  -", line) or not line.startswith("   "):
            break
        block.append(line)
    return " ".join(" ".join(block).split())


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv) or "zero")
def test_every_default_is_shown_once(argv, capsys):
    parser = dict(_commands())[argv]
    assert main([*argv, "--help"]) == 0
    text = capsys.readouterr().out
    assert "default: None" not in text and "(default: False)" not in text
    assert parser.description, f"zero {' '.join(argv)} has no description"
    for action in parser._actions:
        if not action.option_strings or action.default is argparse.SUPPRESS:
            continue
        help_text = _option_help(text, action.option_strings[-1])
        assert help_text.count("(default") <= 1, help_text
        if action.default in (None, False, ""):
            continue  # nothing worth a word, or the help says what happens then
        if "(default" in (action.help or ""):
            assert help_text.count("(default") == 1, help_text  # the help's own, not a second one
        else:
            assert f"(default: {action.default})" in help_text, help_text


def test_preset_options_show_the_default_presets_value(capsys):
    from zero.cli.presets import DEFAULT, OPTIONS, PRESETS

    assert main(["gpt", "train", "--help"]) == 0
    text = capsys.readouterr().out
    for name in OPTIONS:
        flag = "--" + name.replace("_", "-")
        value = PRESETS[DEFAULT][name]
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        assert f"(default: {shown} with --preset {DEFAULT})" in _option_help(text, flag)
    table = text[text.index("presets: --preset NAME"):]
    for name in PRESETS:
        assert name in table.splitlines()[2]  # the header row of the table
    assert "--data DIR" in text and _option_help(text, "--data").count("default") == 1


def test_version(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    try:
        importlib.metadata.version("zero-dl")
    except importlib.metadata.PackageNotFoundError:  # run from the source tree (PYTHONPATH=src), not installed
        version = "(not installed: run from a source tree)"
    assert out.startswith(f"zero {version} (Python ")


def test_the_cuda_hint_names_the_install_the_readme_gives():
    from zero.backends.cuda.runtime import INSTALL_HINT

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "pip install -e '.[cuda]'" in INSTALL_HINT and "zero-dl[cuda]" not in INSTALL_HINT
    assert 'pip install -e ".[' in readme
