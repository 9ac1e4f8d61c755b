"""A training step of this checkout against the same step at another commit, in one process.

    PYTHONPATH=src python benchmarks/step_ab.py [--base HEAD] [--configs tiny,small,mlp] [--pairs 20]
        [--dropout 0]

Why one process. The machine's speed drifts by up to 2x within minutes, so two runs in
separate processes, even taking turns, compare two moments as much as two versions of the
code. Here the base commit's ``src/zero`` is extracted (``git archive``) into a temporary
folder as the package ``zero_base``, imported beside this checkout's ``zero``, and the two
steps alternate (A B, then B A) on models built from the same initial weights, fed the
same batches (``train_step.py``'s). Each pair gives new time / base time; the table has the
median and range over pairs. Both copies have a thread pool, but only one works at a time;
each keeps its own Numba cache. The losses of the two are compared too: equal bit for bit
unless the change moves a rounding (a product split differently).

For a change's effect, not for comparisons with PyTorch (``train_step.py`` does those).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from train_step import CONFIGS, ZeroSide, gpt_batches, mlp_batches  # noqa: E402


def extract_base(commit: str, folder: Path) -> None:
    """The commit's src/zero as folder/zero_base."""
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", commit, "src/zero"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "src" / "zero").rename(folder / "zero_base")
    # Older commits name the package in the walk that installs the compiled loops
    # (kernels/_jit.py); today's code reads its own name.
    jit = folder / "zero_base" / "backends" / "cpu" / "kernels" / "_jit.py"
    jit.write_text(jit.read_text().replace('name.startswith("zero.")', 'name.startswith("zero_base.")'))


def make_step(package: str, config: str, dropout: float, initial: str):
    """step(x, y) -> loss of ``package``'s model of ``config``, started from the weights in
    ``initial`` (train_step.py's Zero side: the same model, optimizer and step)."""
    side = ZeroSide(package)
    model, optimizer = side.prepare(config, dropout, initial)
    return lambda x, y: float(side.step(config, model, optimizer, x, y).item())


def compare(config: str, dropout: float, pairs: int, folder: Path) -> str:
    initial = str(folder / f"{config}.npz")
    ZeroSide("zero_base").save_initial(config, initial)
    base, new = (make_step(package, config, dropout, initial) for package in ("zero_base", "zero"))
    batches = mlp_batches(8) if config == "mlp" else gpt_batches(CONFIGS[config], 8)
    losses: dict[str, list[float]] = {"base": [], "new": []}
    steps = {"base": base, "new": new}
    warmup = 10 if config == "mlp" else 2
    for name, step in steps.items():
        for i in range(warmup):
            losses[name].append(step(*batches[i % len(batches)]))
    ratios, times = [], {"base": [], "new": []}
    for i in range(pairs):
        x, y = batches[i % len(batches)]
        took = {}
        for name in (("base", "new") if i % 2 == 0 else ("new", "base")):
            start = time.perf_counter()
            losses[name].append(steps[name](x, y))
            took[name] = time.perf_counter() - start
            times[name].append(took[name])
        ratios.append(took["new"] / took["base"])
    same = "yes" if losses["new"] == losses["base"] else f"no (last {losses['new'][-1]:.6f} / {losses['base'][-1]:.6f})"
    label = "MLP 784-512-10, batch 64" if config == "mlp" else f"{CONFIGS[config].label}, dropout {dropout}"
    return (f"| {label} | {pairs} | {statistics.median(times['base']) * 1e3:,.1f} | "
            f"{statistics.median(times['new']) * 1e3:,.1f} | {statistics.median(ratios):.3f} "
            f"({min(ratios):.2f}-{max(ratios):.2f}) | {same} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="the commit to compare against (default HEAD)")
    parser.add_argument("--configs", default="tiny,small,mlp")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--dropout", type=float, default=0.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        extract_base(args.base, Path(folder))
        sys.path.insert(0, folder)
        print(f"`python benchmarks/step_ab.py --base {args.base} --configs {args.configs} --pairs {args.pairs}`"
              f" (base = {args.base}, new = this checkout; one process, alternating steps)\n")
        print("| configuration | pairs | base ms/step | new ms/step | new/base (range) | losses equal |")
        print("|---|---:|---:|---:|---:|---|")
        for config in args.configs.split(","):
            print(compare(config, args.dropout, args.pairs, Path(folder)), flush=True)


if __name__ == "__main__":
    main()
