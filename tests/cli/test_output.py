"""What the jobs print: a bar on a terminal with every line above it, plain periodic lines
elsewhere, a line when kernels compile, each checkpoint, a closing summary."""
import io
import re
import subprocess
import sys
import textwrap

import numba
import pytest
from cli_helpers import TINY_GPT, child_environment, gpt, mnist

import zero.cli.console as console
from zero.cli.console import Progress, compile_notice, duration
from zero.models.gpt import GPT


class Terminal(io.StringIO):
    """What tqdm and the jobs see as an interactive terminal; keeps every byte written."""

    def isatty(self) -> bool:
        return True


LOG_LINE = re.compile(r"step +\d+  loss \d")


def test_on_a_terminal_lines_go_above_the_bar_never_onto_it(prepared, tmp_path, monkeypatch):
    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    assert gpt("train", "--data", prepared, "--out", tmp_path / "run", "--steps", 6, "--eval-interval", 3,
               *TINY_GPT) == 0
    out = screen.getvalue()
    assert re.search(r"train: +\d+%\|.*\| \d/6", out), out  # the bar was drawn
    logs = list(LOG_LINE.finditer(out))
    assert len(logs) == 6
    for match in logs:  # each begins where the bar was cleared (column 0) and ends its line
        before = out[:match.start()]
        assert before.endswith(("\r", "\n")) or re.search(r"\r *\r$", before), repr(before[-80:])
        assert "\n" in out[match.start():].split("\r")[0]
    checkpoint = f"checkpoint: step 3 saved to {tmp_path / 'run' / 'checkpoint.safetensors'}"
    assert checkpoint in out
    last = out[out.index("done: 6 steps"):]
    assert "\r" not in last and "%|" not in last  # the bar is gone before the summary


def test_elsewhere_plain_progress_lines_and_no_carriage_returns(prepared, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(console, "PLAIN_SECONDS", 0.0)  # a progress line at every step with nothing else
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, "--steps", 6, "--eval-interval", 3, *TINY_GPT,
               "--log-interval", 100) == 0
    out = capsys.readouterr().out
    assert "\r" not in out and "%|" not in out
    lines = out.splitlines()
    progress = [line for line in lines if line.startswith("train: step ")]
    assert [line.split()[2] for line in progress] == ["1/6", "2/6", "3/6", "4/6", "5/6"]  # none after the last
    assert re.fullmatch(r"train: step 2/6 \(33%\), \d:\d\d elapsed, about \d:\d\d left", progress[1])
    checkpoints = [line for line in lines if line.startswith("checkpoint: ")]
    latest = run / "checkpoint.safetensors"
    assert checkpoints[0] == (f"checkpoint: step 3 saved to {latest} (also checkpoint-000003.safetensors, "
                              "checkpoint-best.safetensors: the best so far)")  # the first evaluation: the best
    assert len(checkpoints) == 2 and checkpoints[1].startswith(f"checkpoint: step 6 saved to {latest} (also "
                                                               "checkpoint-000006.safetensors")


def test_the_summary_says_what_was_done_and_where_it_is(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, "--steps", 4, "--eval-interval", 2, *TINY_GPT) == 0
    out = capsys.readouterr().out
    summary = out[out.index("done: "):].splitlines()
    assert re.fullmatch(r"done: 4 steps in 0:\d\d, [\d,]+ tokens/s; best val loss \d\.\d{4} "
                        r"\(\d\.\d{3} bits/char\)", summary[0])
    assert f"  checkpoint  {run / 'checkpoint.safetensors'} (best: checkpoint-best.safetensors)" in summary
    assert f"  metrics     {run / 'metrics.jsonl'}" in summary
    assert f"  sample      zero gpt sample --run {run}" in summary
    assert any(line.startswith("  plot        ") for line in summary)


def test_mnist_says_when_nothing_is_saved(tiny_mnist, capsys, monkeypatch):
    monkeypatch.setattr(console, "PLAIN_SECONDS", 0.0)
    assert mnist("--data", tiny_mnist, "--epochs", 2, "--batch-size", 64, "--hidden", 8) == 0
    out = capsys.readouterr().out
    assert "checkpoints: none (no --save PATH): the trained model is not kept" in out
    assert "  checkpoint  none: nothing was saved (train with --save PATH to keep the model)" in out
    assert re.search(r"^epoch 2/2: batch 2/4 \(50%\), 0:\d\d elapsed", out, re.M), out
    assert re.search(r"^done: 2 epochs \(8 steps\) in 0:\d\d, [\d,]+ samples/s; test loss \d\.\d{4}, accuracy",
                     out, re.M), out


def test_mnist_prints_each_checkpoint(tiny_mnist, tmp_path, capsys):
    save = tmp_path / "m.safetensors"
    assert mnist("--data", tiny_mnist, "--epochs", 2, "--batch-size", 64, "--hidden", 8, "--save", save) == 0
    out = capsys.readouterr().out
    assert f"checkpoint: step 4 saved to {save} (also m-000004.safetensors, m-best.safetensors: the best so far)" \
        in out
    assert f"checkpoint: step 8 saved to {save}" in out
    assert f"  checkpoint  {save}" in out


def test_the_first_compilation_is_announced_once():
    lines = []
    with compile_notice(lines.append) as compiled:
        @numba.njit
        def fresh(x):  # not cached: compiles now, at its first call
            return x + 1

        assert fresh(1) == 2 and fresh(2.5) == 3.5  # two compilations
    assert lines == ["compiling kernels (first run only: later runs load them from Numba's cache) ..."]
    assert compiled.count == 2 and compiled.seconds > 0
    fresh(3j)  # a third, after the block: not counted
    assert compiled.count == 2


def test_a_first_run_says_it_compiles_and_a_second_does_not(prepared, tmp_path):
    """Numba's cache in an empty directory: the first job compiles (and says so before its
    first step), the second loads every kernel from that cache."""
    env = child_environment()
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    argv = [sys.executable, "-m", "zero", "gpt", "train", "--data", str(prepared), "--steps", "2",
            "--eval-interval", "2", *map(str, TINY_GPT)]
    first = subprocess.run([*argv, "--out", str(tmp_path / "a")], env=env, capture_output=True, text=True,
                           timeout=600)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    notice = lines.index("compiling kernels (first run only: later runs load them from Numba's cache) ...")
    assert notice < min(i for i, line in enumerate(lines) if line.startswith("step "))
    assert re.search(r"\(of which \d+\.\d s compiling kernels, first run only\)", first.stdout)
    second = subprocess.run([*argv, "--out", str(tmp_path / "b")], env=env, capture_output=True, text=True,
                            timeout=600)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stdout


@pytest.mark.parametrize("seconds, shown", [(0.4, "0:00"), (7, "0:07"), (161, "2:41"), (3723, "1:02:03")])
def test_durations(seconds, shown):
    assert duration(seconds) == shown


def test_progress_lines_estimate_what_is_left_from_the_pace_after_the_first_step(monkeypatch):
    """Resumed at 40 of 100: the first step takes 12 s (compiling), the next 20 take 30 s: 39
    left at 1.5 s each is about a minute; the first step's pace would say 3 minutes."""
    clock = iter([100.0, 112.0, 112.0, 142.0, 142.0, 142.0])
    monkeypatch.setattr(console.time, "monotonic", lambda: next(clock))
    stream = io.StringIO()
    progress = Progress(100, "train", first=40, stream=stream, plain_seconds=20)
    progress.advance()  # at 112: 12 s since the last line, below 20: nothing
    progress.advance(20)
    assert stream.getvalue() == "train: step 61/100 (61%), 0:42 elapsed, about 0:58 left\n"


def test_sample_stream_prints_each_character_as_it_is_generated(prepared, tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    assert gpt("train", "--data", prepared, "--out", run, "--steps", 2, "--eval-interval", 2, *TINY_GPT) == 0
    capsys.readouterr()
    assert gpt("sample", "--run", run, "--prompt", "To be", "--tokens", 40, "--seed", 3) == 0
    whole = capsys.readouterr().out

    forwards = 0
    real_forward = GPT.forward

    def counted_forward(self, *args, **kwargs):
        nonlocal forwards
        forwards += 1
        return real_forward(self, *args, **kwargs)

    class Recorder(io.StringIO):
        """Notes, with each piece of text written, how many forward passes the model had run."""
        writes: list = []

        def write(self, text):
            if text:
                Recorder.writes.append((text, forwards))
            return super().write(text)

    monkeypatch.setattr(GPT, "forward", counted_forward)
    screen = Recorder()
    monkeypatch.setattr(sys, "stdout", screen)
    assert gpt("sample", "--run", run, "--prompt", "To be", "--tokens", 40, "--seed", 3, "--stream") == 0
    monkeypatch.undo()
    assert screen.getvalue() == whole  # the same text as without --stream
    assert Recorder.writes[0] == ("To be", 0)  # the prompt, before the model runs
    # then the k-th generated character, alone, right after the k-th forward pass (the KV
    # cache: one pass per character), not all of them after the last
    characters = Recorder.writes[1:41]
    assert [seen for _, seen in characters] == list(range(1, 41)), characters
    assert [text for text, _ in characters] == list(whole[len("To be"):len("To be") + 40])


def test_help_of_a_job_module_is_its_docstring():
    from zero.cli import gpt_train

    assert "--preset" in textwrap.dedent(gpt_train.__doc__)
