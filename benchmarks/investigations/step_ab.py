"""A training step of this checkout against the same step at another commit, in one process.

    PYTHONPATH=src python benchmarks/investigations/step_ab.py [--base HEAD] [--configs tiny,small,mlp] [--pairs 20]
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

Besides ``train_step.py``'s configurations (tiny, small, medium, book, mlp), three workloads
bound by what each op costs before its kernel: ``program``, a step of
``examples/pytorch_gpt.py`` at its own size (``pytorch_program.py``'s ``example``, SDPA);
``generate``, 100 tokens from ``zero.models.GPT`` at the cpu preset's size, batch 1 (the
KV cache); ``ops``, 1000 calls of a 4x4 ``a + b`` (a pair's times are per call), and
``ops_grad``, the same with ``a`` requiring grad (the graph recorded).

For a change's effect, not for comparisons with PyTorch (``train_step.py`` does those).
"""
from __future__ import annotations

import argparse
import importlib
import itertools
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/, whose modules this reuses
from pytorch_program import CONFIGS as PROGRAM_CONFIGS, load_program  # noqa: E402
from train_step import CONFIGS, ZeroSide, gpt_batches, mlp_batches  # noqa: E402


def extract_base(commit: str, folder: Path) -> None:
    """The commit's src/zero as folder/zero_base."""
    archive = subprocess.run(["git", "-C", str(HERE.parents[1]), "archive", commit, "src/zero"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "src" / "zero").rename(folder / "zero_base")
    # Older commits name the package in the walk that installs the compiled loops
    # (kernels/_jit.py); today's code reads its own name.
    jit = folder / "zero_base" / "backends" / "cpu" / "kernels" / "_jit.py"
    jit.write_text(jit.read_text().replace('name.startswith("zero.")', 'name.startswith("zero_base.")'))


def make_step(package: str, config: str, dropout: float, initial: str):
    """step() -> result of ``package``'s workload ``config``: a training step's loss (models
    started from the weights in ``initial``, train_step.py's Zero side: the same model,
    optimizer and step, cycling through the same batches), the tokens generated, or None."""
    if config == "program":
        return program_step(package)
    if config == "generate":
        return generate_step(package)
    if config in ("ops", "ops_grad"):
        z = importlib.import_module(package)
        a, b = z.ones(4, 4, requires_grad=config == "ops_grad"), z.ones(4, 4)

        def ops():
            for _ in range(OP_CALLS):
                a + b
        return ops
    side = ZeroSide(package)
    model, optimizer = side.prepare(config, dropout, initial)
    batches = iter(itertools.cycle(mlp_batches(8) if config == "mlp" else gpt_batches(CONFIGS[config], 8)))
    return lambda: float(side.step(config, model, optimizer, *next(batches)).item())


OP_CALLS = 1000


def program_step(package: str):
    """A step of examples/pytorch_gpt.py at its own size, its torch being ``package``."""
    program = load_program(package)
    batch, block, layers, heads, width = PROGRAM_CONFIGS["example"]
    args = argparse.Namespace(batch_size=batch, block_size=block, n_layer=layers, n_head=heads, n_embd=width,
                              lr=3e-3, seed=1337, flash=1, steps=10_000)
    dataset = program.CharDataset(program.TEXT, block)
    model, optimizer, scheduler = program.build(args, dataset)
    loader = program.torch.utils.data.DataLoader(dataset, batch_size=batch,
                                                 sampler=program.ShuffledSampler(dataset, 0), drop_last=True)
    batches = itertools.cycle([pair for _, pair in zip(range(16), loader)])
    return lambda: program.train_step(model, optimizer, scheduler, *next(batches)).item()


def generate_step(package: str):
    z, models = importlib.import_module(package), importlib.import_module(package + ".models")
    z.manual_seed(0)
    model = models.GPT(models.GPTConfig(vocab_size=103, block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0))
    start = z.zeros(1, 1, dtype=z.int64)
    return lambda: model.generate(start, 100).tolist()


def compare(config: str, dropout: float, pairs: int, folder: Path) -> str:
    initial = str(folder / f"{config}.npz")
    if config in CONFIGS or config == "mlp":
        ZeroSide("zero_base").save_initial(config, initial)
    steps = {package: make_step(package, config, dropout, initial) for package in ("zero_base", "zero")}
    results: dict[str, list] = {"zero_base": [], "zero": []}
    warmup = 10 if config in ("mlp", "program", "ops", "ops_grad") else 2
    for name, step in steps.items():
        for _ in range(warmup):
            results[name].append(step())
    ratios, times = [], {"zero_base": [], "zero": []}
    for i in range(pairs):
        took = {}
        for name in (("zero_base", "zero") if i % 2 == 0 else ("zero", "zero_base")):
            start = time.perf_counter()
            results[name].append(steps[name]())
            took[name] = time.perf_counter() - start
            times[name].append(took[name])
        ratios.append(took["zero"] / took["zero_base"])
    new, base = results["zero"], results["zero_base"]
    same = "yes" if new == base else (f"no (last {new[-1]:.6f} / {base[-1]:.6f})" if isinstance(new[-1], float)
                                      else "no")
    label, unit = {"mlp": ("MLP 784-512-10, batch 64", 1e3), "program": ("examples/pytorch_gpt.py, 2x2x32 B8 T16", 1e3),
                   "generate": ("generate 100 tokens, 4x4x128, batch 1 (ms per token)", 1e3 / 100),
                   "ops": ("4x4 a + b (µs per call)", 1e6 / OP_CALLS),
                   "ops_grad": ("4x4 a + b, a requires grad (µs per call)", 1e6 / OP_CALLS)}.get(
        config, (f"{CONFIGS[config].label}, dropout {dropout}" if config in CONFIGS else config, 1e3))
    return (f"| {label} | {pairs} | {statistics.median(times['zero_base']) * unit:,.2f} | "
            f"{statistics.median(times['zero']) * unit:,.2f} | {statistics.median(ratios):.3f} "
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
        print(f"`python benchmarks/investigations/step_ab.py --base {args.base} --configs {args.configs}"
              f" --pairs {args.pairs}`"
              f" (base = {args.base}, new = this checkout; one process, alternating steps)\n")
        print("| configuration | pairs | base ms/step | new ms/step | new/base (range) | results equal |")
        print("|---|---:|---:|---:|---:|---|")
        for config in args.configs.split(","):
            print(compare(config, args.dropout, args.pairs, Path(folder)), flush=True)


if __name__ == "__main__":
    main()
