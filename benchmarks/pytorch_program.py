"""A PyTorch program's training step, on PyTorch and on Zero: ``examples/pytorch_gpt.py``.

    PYTHONPATH=src python benchmarks/pytorch_program.py [--configs example,small] [--attention sdpa,masked]
        [--rounds 3] [--steps N] [--warmup 10] [--out FILE]

``train_step.py`` times Zero's own GPT, built from its fused ops. This times what a
person brings from PyTorch: the example's nanoGPT-style model (``nn.Linear``,
``nn.LayerNorm``, ``nn.GELU``, views and transposes, ``F.scaled_dot_product_attention`` or
a masked softmax written out, weight tying), AdamW with two groups, a LambdaLR schedule
and gradient clipping, each op a call of its own. Small models are bound by what each op
costs before its kernel runs, large ones by the kernels.

The Zero worker runs the program's own source as it is (``import zero as torch``); the
PyTorch worker (2 threads) runs it with that line changed to ``import torch``. Both build the model with the program's
``build`` (the same weights, from Python's ``random``) and train on the same batches (the
first ones of the program's own loader). Processes take turns as ``turns.py`` describes;
each round a worker builds afresh, runs ``--warmup`` untimed steps and ``--steps`` timed
ones, and reports the median step. The losses of the two agree to rounding.

Configurations (batch, block, layers, heads, width): ``example`` the program's defaults
(8, 16, 2, 2, 32); ``small`` (32, 64, 4, 4, 128), the size of ``zero gpt train``'s default
preset. ``--attention``: ``sdpa`` (the program's ``--flash 1``) or ``masked`` (``--flash 0``).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import turns  # the sibling modules, whichever directory the script runs from
from kernels import environment

PROGRAM = Path(__file__).resolve().parents[1] / "examples" / "pytorch_gpt.py"
CONFIGS = {"example": (8, 16, 2, 2, 32), "small": (32, 64, 4, 4, 128)}   # batch, block, layers, heads, width
DEFAULT_STEPS = {"example": 100, "small": 10}
BATCHES = 16


def load_program(framework: str):
    """The program as a module, its ``torch`` being PyTorch (``"torch"``) or the Zero package
    named (``"zero"``; ``step_ab.py`` loads it on another commit's ``"zero_base"`` too): its
    one framework line, ``import zero as torch``, names that package."""
    if framework == "torch":
        import torch

        torch.set_num_threads(2)
    source = PROGRAM.read_text()
    line = "import zero as torch\n"
    assert source.count(line) == 1, f"{PROGRAM}: no line {line!r}"
    source = source.replace(line, "import torch\n" if framework == "torch" else f"import {framework} as torch\n")
    program = types.ModuleType("pytorch_gpt")
    program.__file__ = str(PROGRAM)
    exec(compile(source, str(PROGRAM), "exec"), program.__dict__)
    return program


def worker(framework: str) -> None:
    program = load_program(framework)
    torch = program.torch

    def handle(request: dict) -> dict:
        if request["cmd"] == "ready":
            return {"version": torch.__version__}
        batch, block, layers, heads, width = CONFIGS[request["config"]]
        args = argparse.Namespace(batch_size=batch, block_size=block, n_layer=layers, n_head=heads, n_embd=width,
                                  lr=3e-3, seed=1337, flash=int(request["attention"] == "sdpa"),
                                  steps=request["warmup"] + request["steps"])
        dataset = program.CharDataset(program.TEXT, block)
        model, optimizer, scheduler = program.build(args, dataset)
        loader = program.torch.utils.data.DataLoader(dataset, batch_size=batch,
                                                     sampler=program.ShuffledSampler(dataset, 0), drop_last=True)
        batches = [pair for _, pair in zip(range(BATCHES), loader)]
        times, losses = [], []
        for i in range(args.steps):
            x, y = batches[i % len(batches)]
            start = time.perf_counter()
            loss = program.train_step(model, optimizer, scheduler, x, y)   # the program's own step
            losses.append(loss.item())
            times.append(time.perf_counter() - start)
        return {"step": statistics.median(times[request["warmup"]:]), "losses": losses}

    turns.serve(handle)


def label(config: str, attention: str) -> str:
    batch, block, layers, heads, width = CONFIGS[config]
    return f"{config}: {layers}x{heads}x{width} B{batch} T{block}, {attention}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="example,small", help=f"comma-separated, of {', '.join(CONFIGS)}")
    parser.add_argument("--attention", default="sdpa,masked", help="comma-separated, of sdpa, masked")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, help=f"timed steps per round (default per configuration: {DEFAULT_STEPS})")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--quiet", type=float, default=0.15)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--patience", type=float, default=300.0, help="seconds per configuration")
    parser.add_argument("--out")
    parser.add_argument("--worker", choices=("zero", "torch"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return 0
    configs = [c for c in args.configs.split(",") if c]
    attentions = [a for a in args.attention.split(",") if a]
    if any(c not in CONFIGS for c in configs) or any(a not in ("sdpa", "masked") for a in attentions):
        parser.error(f"--configs takes {', '.join(CONFIGS)}; --attention takes sdpa, masked")
    if importlib.util.find_spec("torch") is None:
        parser.error("PyTorch is not installed: this benchmark compares Zero with it")

    script, frameworks = str(Path(__file__).resolve()), ["zero", "torch"]
    workers = {name: turns.Worker(name, turns.worker_command(script, name)) for name in frameworks}
    body, started = [], time.perf_counter()
    try:
        versions = {name: w.call(cmd="ready")["version"] for name, w in workers.items()}
        for config in configs:
            for attention in attentions:
                patience = turns.Patience(args.patience, args.quiet)
                request = dict(cmd="run", config=config, attention=attention, warmup=args.warmup,
                               steps=args.steps or DEFAULT_STEPS[config])
                rounds = []
                for r in range(args.rounds):
                    record = {"probe": patience.wait(30.0)}
                    for name in turns.order(frameworks, r):
                        record[name] = turns.measured(workers[name], request, args.attempts, patience)
                    rounds.append(record)
                    print(f"  {label(config, attention)}: round {r + 1}/{args.rounds}: "
                          + ", ".join(f"{name} {1e3 * record[name]['step']:.2f} ms" for name in frameworks),
                          file=sys.stderr, flush=True)
                used = turns.quiet_rounds(rounds, args.quiet)
                z, t = ([record[name]["step"] for record in used] for name in frameworks)
                per_round = turns.ratios(z, t)
                largest = max(abs(a - b) for a, b in zip(rounds[0]["zero"]["losses"], rounds[0]["torch"]["losses"]))
                quiet = sum(turns.is_quiet(record, args.quiet) for record in rounds)
                body.append([label(config, attention), f"{request['warmup']} + {request['steps']}",
                             f"{1e3 * statistics.median(z):,.2f}", f"{1e3 * statistics.median(t):,.2f}",
                             f"{statistics.median(per_round):.2f} ({min(per_round):.2f}–{max(per_round):.2f})",
                             f"{largest:.1e}", f"{quiet}/{len(rounds)}"])
    finally:
        for w in workers.values():
            w.close()
    header = ["configuration", "steps (warm-up + timed)", "Zero ms/step", "PyTorch ms/step", "Zero/PyTorch (range)",
              "largest loss difference", "quiet rounds"]
    title = f"A PyTorch program's training step (examples/pytorch_gpt.py), CPU, float32 — {environment(versions)}"
    text = "\n".join([title,
                      f"`{' '.join(['python', *sys.argv])}`: {args.rounds} rounds, PyTorch on 2 threads, separate "
                      f"processes taking turns; {time.perf_counter() - started:.0f} s in all.", "",
                      turns.markdown(header, body, "ll" + "r" * (len(header) - 2))])
    print(text, flush=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
