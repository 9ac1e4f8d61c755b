"""`zero plot RUN [RUN ...]`: the curves of a metrics file into a PNG beside it."""
import json
import struct
import sys

import pytest
from cli_helpers import TINY_GPT, gpt, mnist

from zero.cli.main import main


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def _gpt_run(directory, steps=40, scale=1.0):
    directory.mkdir(parents=True)
    lines = []
    for step in range(1, steps + 1):
        record = {"step": step, "train_loss": scale * 4.0 / step ** 0.3, "lr": 1e-3 * min(1.0, step / 10)}
        if step % 10 == 0:
            record["val_loss"] = scale * 4.2 / step ** 0.3
        lines.append(json.dumps(record))
    (directory / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def _mnist_metrics(path):
    records = [{"epoch": e, "step": 100 * e, "train_loss": 1 / e, "train_acc": 1 - 0.2 / e, "test_loss": 1.1 / e,
                "test_acc": 1 - 0.25 / e, "lr": 1e-3 / e} for e in (1, 2, 3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_without_matplotlib_the_message_is_one_line(tmp_path, capsys, monkeypatch):
    run = _gpt_run(tmp_path / "run")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an absent package looks like to import
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert main(["plot", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err]
    assert "needs matplotlib, which is not installed" in err and "pip install" in err and ".[plot]" in err
    assert not (run / "metrics.png").exists()


def test_a_job_without_matplotlib_still_succeeds_and_says_why_there_is_no_plot(prepared, tmp_path, capsys,
                                                                               monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert gpt("train", "--data", prepared, "--out", tmp_path / "run", "--steps", 2, *TINY_GPT) == 0
    assert "  plot        none: matplotlib is not installed" in capsys.readouterr().out


def test_errors_name_the_run(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["plot", str(tmp_path / "empty")]) == 2
    assert "no metrics.jsonl in this directory" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "nothing")]) == 2
    assert "no such run directory or metrics file" in capsys.readouterr().err
    (tmp_path / "torn.jsonl").write_text('{"step": 1, "tr')
    assert main(["plot", str(tmp_path / "torn.jsonl")]) == 2
    assert "no metrics recorded yet" in capsys.readouterr().err


class TestWithMatplotlib:
    @pytest.fixture(autouse=True)
    def _matplotlib(self):
        pytest.importorskip("matplotlib")

    def test_one_run_is_drawn_beside_its_metrics(self, tmp_path, capsys):
        run = _gpt_run(tmp_path / "run")
        assert main(["plot", str(run)]) == 0
        assert capsys.readouterr().out == f"plot: {run / 'metrics.png'}\n"
        assert _png_size(run / "metrics.png") == (800, 600)

    def test_several_runs_are_overlaid_beside_the_first(self, tmp_path):
        from zero.cli.plot import figure, read_metrics

        a, b = _gpt_run(tmp_path / "runs" / "a"), _gpt_run(tmp_path / "runs" / "b", scale=0.8)
        assert main(["plot", str(a), str(b)]) == 0
        assert _png_size(tmp_path / "runs" / "compare.png") == (800, 600)
        fig = figure([("a", read_metrics(a / "metrics.jsonl")), ("b", read_metrics(b / "metrics.jsonl"))])
        loss, lr = fig.axes
        assert (loss.get_ylabel(), lr.get_ylabel()) == ("loss", "learning rate")
        assert loss.get_legend_handles_labels()[1] == ["a train", "a val", "b train", "b val"]
        val = loss.get_lines()[1]
        assert list(val.get_xdata()) == [10, 20, 30, 40]

    def test_mnist_metrics_get_an_accuracy_panel(self, tmp_path):
        from zero.cli.plot import figure, read_metrics

        metrics = _mnist_metrics(tmp_path / "mnist.jsonl")
        assert main(["plot", str(metrics), "--out", str(tmp_path / "pictures" / "m.png")]) == 0
        assert _png_size(tmp_path / "pictures" / "m.png") == (800, 600)
        fig = figure([("mnist", read_metrics(metrics))])
        assert [ax.get_ylabel() for ax in fig.axes] == ["loss", "accuracy", "learning rate"]
        assert list(fig.axes[1].get_lines()[1].get_ydata()) == [0.75, 0.875, 1 - 0.25 / 3]
        assert fig.axes[-1].get_xlabel() == "epoch"  # issue 40: MNIST is drawn against its epochs

    def test_a_line_being_written_is_left_out(self, tmp_path):
        from zero.cli.plot import read_metrics

        run = _gpt_run(tmp_path / "run", steps=3)
        with open(run / "metrics.jsonl", "a") as f:
            f.write('{"step": 4, "train_lo')
        assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == [1, 2, 3]

    def test_the_jobs_draw_their_plot_at_the_end(self, prepared, tiny_mnist, tmp_path):
        run = tmp_path / "run"
        assert gpt("train", "--data", prepared, "--out", run, "--steps", 4, "--eval-interval", 2, *TINY_GPT) == 0
        assert _png_size(run / "metrics.png") == (800, 600)
        metrics = tmp_path / "mnist.jsonl"
        assert mnist("--data", tiny_mnist, "--batch-size", 64, "--hidden", 8, "--metrics", metrics) == 0
        assert _png_size(tmp_path / "mnist.png") == (800, 600)

    def test_a_name_that_is_not_a_png_is_refused(self, tmp_path, capsys):
        run = _gpt_run(tmp_path / "run")
        assert main(["plot", str(run), "--out", str(tmp_path / "x.jpg")]) == 2
        assert "the picture is a PNG" in capsys.readouterr().err
