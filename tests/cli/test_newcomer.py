"""The jobs and the docs as a newcomer meets them (issue 40, items 1-8): each run the way a
user runs it -- the `zero` command in a child process, or through ``zero.cli.main.main``."""
from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import TINY_GPT, child_environment, gpt, mnist, run_child

from zero.cli.checkpoints import CheckpointSet
from zero.cli.main import build_parser, main
from zero.cli.run_control import TrainerLock

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CKPT = "checkpoint.safetensors"
MISSING_DEVICE = "cuda:63"  # no machine has it: refused with or without a GPU


def zero_command(*argv, cwd, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`zero ARGV...` as a user types it, in its own process, from ``cwd``."""
    return subprocess.run([sys.executable, "-c", "import sys; from zero.cli.main import main; sys.exit(main())",
                           *map(str, argv)], cwd=cwd, env={**child_environment(), **(env or {})},
                          capture_output=True, text=True, timeout=timeout, check=False)


def _section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else None]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


# -- item 1: a run's first line comes after the lock and the device check ---------------------


@pytest.mark.parametrize("how", [("--resume",), ("--overwrite",)], ids=["resume", "overwrite"])
def test_a_run_in_use_is_refused_before_the_job_says_anything(prepared, tmp_path, capsys, how):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, "--steps", 2, *TINY_GPT) == 0
    before = sorted(p.name for p in run.iterdir())
    capsys.readouterr()
    with TrainerLock(CheckpointSet(run / CKPT).lock, str(run)):   # another trainer holds it
        assert gpt("train", "--data", prepared, "--out", run, "--steps", 4, *TINY_GPT, *how) == 2
    out, err = capsys.readouterr()
    assert out == "", out                  # no "resumed from", no "model:" line before the refusal
    assert "in use by another trainer" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in run.iterdir() if p.name != f".{CKPT}.lock") == sorted(
        n for n in before if n != f".{CKPT}.lock")  # --overwrite deleted nothing


def test_a_run_in_use_prepares_no_data(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, "--steps", 2, *TINY_GPT) == 0
    with TrainerLock(CheckpointSet(run / CKPT).lock, str(run)):
        result = zero_command("gpt", "train", "--out", run, "--overwrite", *TINY_GPT, cwd=tmp_path,
                              env={"ZERO_DATA": str(tmp_path / "cache")})
    assert result.returncode == 2 and result.stdout == "", result.stdout + result.stderr
    assert "in use by another trainer" in result.stderr
    assert not (tmp_path / "cache").exists()


def test_a_missing_device_is_refused_before_the_data_is_prepared(tmp_path):
    result = zero_command("gpt", "train", "--device", MISSING_DEVICE, "--out", tmp_path / "run", cwd=tmp_path,
                          env={"ZERO_DATA": str(tmp_path / "new-cache")})
    assert result.returncode == 2 and result.stdout == "", result.stdout + result.stderr
    assert f"{MISSING_DEVICE} is not available" in result.stderr
    assert not (tmp_path / "new-cache").exists() and not (tmp_path / "run").exists()


def test_mnist_checks_its_device_and_its_lock_before_its_first_line(tiny_mnist, tmp_path, capsys):
    save = tmp_path / "m" / "mlp.safetensors"
    assert mnist("--data", tiny_mnist, "--hidden", 8, "--device", MISSING_DEVICE, "--save", save) == 2
    out, err = capsys.readouterr()
    assert out == "" and "is not available" in err and not save.parent.exists()
    assert mnist("--data", tiny_mnist, "--hidden", 8, "--save", save) == 0
    capsys.readouterr()
    with TrainerLock(CheckpointSet(save).lock, "another"):
        assert mnist("--data", tiny_mnist, "--hidden", 8, "--save", save, "--epochs", 2, "--resume", save) == 2
    out, err = capsys.readouterr()
    assert out == "" and "in use by another trainer" in err


# -- item 2: the README's GPT command can be run twice; item 7: its examples leave no stray file


def _readme_gpt_command() -> list[list[str]]:
    lines = [line for block in _blocks(README, "sh") for line in block.splitlines()
             if line.startswith("zero gpt train") and "&& zero gpt sample" in line]
    assert len(lines) == 1, lines
    return [shlex.split(part)[1:] for part in lines[0].split("&&")]


def test_the_readme_gpt_command_runs_twice_and_its_examples_write_only_ignored_files(tmp_path):
    """The README's commands as written, from a fresh directory (the training shortened to a
    few steps of the tiny preset): the GPT command twice -- its sample runs each time -- then
    the licences example; everything they write is under data/ or runs/, which Zero's
    checkout ignores."""
    train, sample = _readme_gpt_command()
    env = {"ZERO_DATA": str(tmp_path / "cache")}
    short = ["--preset", "tiny", "--steps", "3", "--sample-tokens", "0"]
    for attempt in (1, 2):
        trained = zero_command(*train, *short, cwd=tmp_path, env=env)
        assert trained.returncode == 0, f"attempt {attempt}: {trained.stderr}"
        sampled = zero_command(*sample, "--tokens", "20", cwd=tmp_path, env=env)
        assert sampled.returncode == 0 and len(sampled.stdout) >= 20, f"attempt {attempt}: {sampled.stderr}"

    licences = next(b for b in _blocks(_section("The jobs in detail"), "sh") if "common-licenses" in b)
    if not Path("/usr/share/common-licenses/GPL-3").is_file():
        pytest.skip("no /usr/share/common-licenses here (Debian and Ubuntu have it)")
    for line in filter(None, licences.splitlines()):
        if line.startswith("zero "):
            argv = shlex.split(line)[1:]
            extra = short if argv[:2] == ["gpt", "train"] else []
            result = zero_command(*argv, *extra, cwd=tmp_path, env=env)
        else:
            result = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{line}: {result.stderr}"
    assert (tmp_path / "runs" / "compare.png").is_file()
    written = {p.name for p in tmp_path.iterdir()} - {"cache"}
    assert written == {"data", "runs"}, written
    if shutil.which("git") and (ROOT / ".git").exists():
        for name in written:
            ignored = subprocess.run(["git", "check-ignore", "-q", f"{name}/anything"], cwd=ROOT, check=False)
            assert ignored.returncode == 0, f"{name}/ is not ignored by git in Zero's checkout"


def test_draw_graph_writes_under_runs(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "draw_graph.py")], cwd=tmp_path,
                            env=child_environment(), capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["runs"]
    assert (tmp_path / "runs" / "graphs" / "book_example.dot").is_file()


# -- item 4: what a Ctrl-C keeps ----------------------------------------------------------------

SAMPLE_CHILD = """
import os, signal, sys
import zero.models.gpt as gpt
from zero.cli.main import main

real = gpt.GPT.generate
def generate(self, idx, n, **options):
    inner, seen = options.get("on_token"), [0]
    def on_token(new):
        inner(new)
        seen[0] += 1
        if seen[0] == 25:
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, 25 characters in
    return real(self, idx, n, **{**options, "on_token": on_token})
gpt.GPT.generate = generate
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_during_sample_prints_what_was_generated(prepared, tmp_path):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, "--steps", 2, *TINY_GPT) == 0
    result = subprocess.run([sys.executable, "-c", SAMPLE_CHILD, "gpt", "sample", "--run", str(run), "--prompt",
                             "To be", "--tokens", "100000"], env=child_environment(), capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 130, result.stderr
    count = int(re.search(r"interrupted after (\d+) of 100,000 characters", result.stderr).group(1))
    assert 25 <= count <= 27
    assert result.stdout.startswith("To be") and result.stdout.endswith("\n")
    assert len(result.stdout) - 1 == len("To be") + count    # the prompt and every character generated


@pytest.mark.parametrize("job", ["gpt", "mnist"])
def test_a_run_stopped_by_ctrl_c_has_its_plot(prepared, tiny_mnist, tmp_path, job):
    pytest.importorskip("matplotlib")
    if job == "gpt":
        picture = tmp_path / "run" / "metrics.png"
        argv = ("gpt", "train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 20,
                "--eval-interval", 10)
        at = 3
    else:
        picture = tmp_path / "m.png"
        argv = ("mnist", "--data", tiny_mnist, "--hidden", 8, "--epochs", 3, "--metrics", tmp_path / "m.jsonl")
        at = 6  # (4 steps an epoch: inside the second)
    code, out, err = run_child(*argv, signal_at=f"SIGINT:{at}")
    assert code == 130, err
    assert picture.is_file() and f"plot: {picture}" in out


def test_every_gpt_step_is_recorded_and_every_log_interval_printed(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, *TINY_GPT, "--steps", 6, "--log-interval", 3,
               "--eval-interval", 6) == 0
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5, 6]
    assert records[0]["title"].startswith("zero gpt train: data, ")
    printed = [line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith("step ")]
    assert printed == ["3", "6"]


# -- item 5: zero gpt sample's messages -----------------------------------------------------------


def test_a_damaged_latest_checkpoint_names_the_others_to_sample_from(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, *TINY_GPT, "--steps", 4, "--eval-interval", 2) == 0
    latest = run / CKPT
    data = bytearray(latest.read_bytes())
    data[-10] ^= 0xFF   # a byte of the last tensor (optimizer state) damaged
    latest.write_bytes(bytes(data))
    capsys.readouterr()
    assert gpt("sample", "--run", run, "--tokens", 5) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(latest) in err
    assert f"zero gpt sample --run {run} --checkpoint best" in err and "4" in err.split("checkpoints:")[-1]
    assert gpt("sample", "--run", run, "--tokens", 5, "--checkpoint", "best") == 0


def test_every_unknown_prompt_character_is_named(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, *TINY_GPT, "--steps", 1) == 0
    capsys.readouterr()
    assert gpt("sample", "--run", run, "--prompt", "café ☃", "--tokens", 5) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    for char in ("'c' (U+0063) at position 0", "'f' (U+0066) at position 2", "'é' (U+00E9) at position 3",
                 "'☃' (U+2603) at position 5"):
        assert char in err, err
    assert "'a'" not in err and "4 characters not in the vocabulary" in err


def test_a_checkpoint_removed_by_rotation_is_explained(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, *TINY_GPT, "--steps", 6, "--eval-interval", 2,
               "--keep-checkpoints", 1) == 0
    capsys.readouterr()
    assert gpt("sample", "--run", run, "--checkpoint", 2) == 2
    err = capsys.readouterr().err
    assert "keeps only its newest numbered checkpoints" in err and "latest, best, 6" in err
    assert "zero gpt train" not in err           # no advice to train a run that is there


# -- item 6: plots ----------------------------------------------------------------------------------


def test_plots_read_as_a_user_expects(tiny_mnist, prepared, tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from zero.cli.plot import figure, read_metrics

    metrics = tmp_path / "mnist.jsonl"
    assert mnist("--data", tiny_mnist, "--hidden", 8, "--epochs", 2, "--metrics", metrics) == 0
    fig = figure([("mnist", read_metrics(metrics))])
    FigureCanvasAgg(fig).draw()
    assert fig.axes[-1].get_xlabel() == "epoch"
    assert list(fig.axes[0].get_lines()[0].get_xdata()) == [1, 2]
    assert fig._suptitle.get_text().startswith("zero mnist: MNIST, MLP 784-8-10")   # what was trained
    for ax in fig.axes:  # each legend beside its panel: no curve's last point under it
        assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1

    for name in ("a", "b"):  # two runs of the same schedule: their learning rates coincide
        assert gpt("train", "--data", prepared, "--out", tmp_path / name, *TINY_GPT, "--steps", 4) == 0
    assert main(["plot", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert (tmp_path / "compare.png").is_file()
    fig = figure([(n, read_metrics(tmp_path / n / "metrics.jsonl")) for n in ("a", "b")])
    first, second = fig.axes[-1].get_lines()
    assert list(first.get_ydata()) == list(second.get_ydata())
    assert first.get_linewidth() > second.get_linewidth() + 1   # the first still shows around the second


# -- item 7: help texts ------------------------------------------------------------------------------


def _commands(parser, prefix=()):
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*prefix, name))


def test_no_help_shows_restructuredtext_quotes(capsys):
    for argv in _commands(build_parser()):
        assert main([*argv, "--help"]) == 0
        text = capsys.readouterr().out
        assert "``" not in text, f"zero {' '.join(argv)} --help: {text[text.index('``') - 60:][:120]}"


# -- item 8: the README's first look --------------------------------------------------------------


@pytest.mark.parametrize("graphviz", [False, True], ids=["without-graphviz", "with-graphviz"])
def test_each_first_look_snippet_runs_on_its_own(tmp_path, graphviz):
    if graphviz and not shutil.which("dot"):
        pytest.skip("Graphviz is not installed")
    snippets = _blocks(_section("A first look at the library"), "python")
    assert len(snippets) == 2
    env = child_environment()
    if not graphviz:   # a PATH without Graphviz's dot
        env["PATH"] = str(Path(sys.executable).parent)
    for number, snippet in enumerate(snippets):
        where = tmp_path / str(number)
        where.mkdir()
        result = subprocess.run([sys.executable, "-c", snippet], cwd=where, env=env, capture_output=True, text=True,
                                timeout=300, check=False)
        assert result.returncode == 0 and "Traceback" not in result.stderr, f"snippet {number}: {result.stderr}"
    assert "AddBackward" in (tmp_path / "1" / "z.dot").read_text()
    assert (tmp_path / "1" / "z.svg").is_file() == graphviz
