"""``zero plot RUN [RUN ...]``: the training curves of one run or several, as a PNG.

A RUN is a `zero gpt train` RUN_DIR (its metrics.jsonl) or a metrics file itself
(`zero mnist --metrics FILE`, `zero gpt train --metrics FILE`). The picture has a
panel per quantity the runs recorded, each against the epoch (`zero mnist`) or the
optimizer step (`zero gpt train`), its legend beside it:

    loss            train (solid) and validation / test (dashed, dots)
    accuracy        train and test (`zero mnist`)
    bits per char   the validation loss per character of text (`zero gpt train`)
    learning rate   the schedule

One RUN is drawn beside its metrics (RUN_DIR/metrics.png, FILE.png), titled with
what its job trained (data, model); several are overlaid, one colour each (the first
widest, so curves that coincide all show), into compare.png beside the first (or
--out). The training jobs draw their own whenever a run ends (Ctrl-C too). Drawing needs matplotlib, an optional
extra: `pip install -e '.[plot]'` in Zero's source directory.
"""
from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

from ..errors import UsageError
from ..files import atomic_write

METRICS = "metrics.jsonl"
WIDTH, HEIGHT, DPI = 8, 6, 100  # inches, inches, pixels per inch: 800 x 600 pixels
MATPLOTLIB_HINT = "pip install matplotlib, or pip install -e '.[plot]' in Zero's source directory"

# (panel title, [(record key, label suffix, line style)])
PANELS = [
    ("loss", [("train_loss", "train", "-"), ("val_loss", "val", "--o"), ("test_loss", "test", "--o")]),
    ("accuracy", [("train_acc", "train", "-o"), ("test_acc", "test", "--o")]),
    ("bits per char", [("val_bpc", "val", "--o")]),  # (`zero gpt train`: the validation loss per character)
    ("learning rate", [("lr", "", "-")]),
]


class PlotUnavailable(UsageError):
    """matplotlib is not installed."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a RUN_DIR holding metrics.jsonl, or a metrics file")
    parser.add_argument("--out", metavar="FILE.png",
                        help="where the picture goes (default: beside the metrics of one run; compare.png beside "
                             "the first of several)")
    parser.add_argument("--title", help="a title over the picture (default: what one run's job trained; the "
                                        "runs' names for several)")
    parser.set_defaults(handler=run)


def run(args) -> int:
    files = [metrics_file(r) for r in args.runs]
    out = Path(args.out) if args.out else default_output(files)
    if out.suffix.lower() != ".png":
        raise UsageError(f"--out {out}: the picture is a PNG; name it FILE.png")
    draw([(label, read_metrics(f)) for label, f in zip(labels(files), files)], out, title=args.title)
    print(f"plot: {out}")
    return 0


def metrics_file(run) -> Path:
    """The metrics file of RUN: RUN itself, or RUN/metrics.jsonl."""
    path = Path(run)
    if path.is_dir():
        path = path / METRICS
        if not path.is_file():
            raise UsageError(f"{run}: no {METRICS} in this directory (is it a RUN_DIR of `zero gpt train`?)")
    elif not path.is_file():
        raise UsageError(f"{run}: no such run directory or metrics file")
    return path


def default_output(files: list[Path]) -> Path:
    if len(files) == 1:
        return beside(files[0])
    first = files[0].parent if files[0].name == METRICS else files[0]  # the first run: its directory or file
    return first.parent / "compare.png"


def beside(metrics) -> Path:
    """metrics.jsonl -> metrics.png, in the same directory."""
    return Path(metrics).with_suffix(".png")


def labels(files: list[Path]) -> list[str]:
    """A run's name: its directory's for RUN_DIR/metrics.jsonl, else the file's stem; the
    whole path where two would read the same."""
    names = [f.parent.name if f.name == METRICS else f.stem for f in files]
    return [name if names.count(name) == 1 else str(f) for name, f in zip(names, files)]


def read_metrics(path: Path) -> list[dict]:
    """The records of a metrics file; a line torn by a crash (or still being written) ends them."""
    records = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        try:
            record = json.loads(line)
        except ValueError:
            break
        if not isinstance(record, dict):
            raise UsageError(f"{path}, line {number}: not a metrics record (a JSON object)")
        records.append(record)
    if not records:
        raise UsageError(f"{path}: no metrics recorded yet")
    return records


def _x_key(records: list[dict]) -> str:
    """What a run's curves are drawn against: its epochs where it counts them (`zero mnist`),
    else its optimizer steps."""
    return "epoch" if all("epoch" in r for r in records) else "step"


def run_title(records: list[dict]) -> str | None:
    """What the job says it trained (its records' latest "title": job, data, model), if it did."""
    titles = [r["title"] for r in records if isinstance(r.get("title"), str)]
    return titles[-1] if titles else None


def _line_widths(count: int) -> list[float]:
    """One per run, widest first: runs whose curves coincide (the same schedule) still each show,
    the later ones drawn narrower on top of the earlier."""
    if count == 1:
        return [1.2]
    return [3.6 - 2.6 * index / (count - 1) for index in range(count)]


def figure(runs: list[tuple[str, list[dict]]], title: str | None = None):
    """A matplotlib Figure: one panel for each quantity any run recorded, the runs overlaid."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotUnavailable(f"drawing plots needs matplotlib, which is not installed: {MATPLOTLIB_HINT}") from None
    panels = [(name, series) for name, series in PANELS
              if any(key in r for _, records in runs for r in records for key, _, _ in series)]
    fig = Figure(figsize=(WIDTH, HEIGHT), dpi=DPI, layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    x_keys = {_x_key(records) for _, records in runs}
    widths = _line_widths(len(runs))
    for ax, (name, series) in zip(axes, panels):
        for index, (label, records) in enumerate(runs):
            colour = f"C{index % 10}"
            x_key = _x_key(records)
            for key, suffix, style in series:
                points = [(r[x_key], r[key]) for r in records if r.get(key) is not None and x_key in r]
                if not points:
                    continue
                xs, ys = zip(*points)
                shown = " ".join(part for part in (label if len(runs) > 1 else "", suffix) if part) or name
                ax.plot(xs, ys, style, color=colour, label=shown, markersize=3, linewidth=widths[index],
                        alpha=0.9 if len(runs) > 1 else 1.0)
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
        if name == "learning rate":
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
        if ax.get_legend_handles_labels()[0]:  # beside the panel, never over a curve's last points
            ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    axes[-1].set_xlabel(" / ".join(sorted(x_keys)))
    if title is None:
        own = run_title(runs[0][1]) if len(runs) == 1 else None
        title = own or ", ".join(label for label, _ in runs)
    fig.suptitle(title)
    return fig


def draw(runs: list[tuple[str, list[dict]]], out: Path, title: str | None = None) -> Path:
    """Draw ``runs`` (label, records) into the PNG ``out``, all at once (``atomic_write``)."""
    buffer = io.BytesIO()
    figure(runs, title).savefig(buffer, format="png", dpi=DPI)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(out) as f:
        f.write(buffer.getvalue())
    return out


def write_plot_beside(metrics) -> str:
    """For a job's closing summary: draw the run's metrics beside them; the PNG's path, or why
    there is none."""
    metrics = Path(metrics)
    try:
        records = read_metrics(metrics)
        return str(draw([(labels([metrics])[0], records)], beside(metrics)))
    except PlotUnavailable:
        return f"none: matplotlib is not installed ({MATPLOTLIB_HINT})"
    except (UsageError, OSError) as e:
        return f"none: {e}"
