"""A training step on the CPU, Zero against PyTorch eager: the four GPT configurations of
``kernels.py`` (AdamW, clip-grad-norm 1.0, dropout 0 and 0.2) and the MNIST MLP.

    PYTHONPATH=src python benchmarks/train_step.py [--configs tiny,small,medium,book,mlp] [--dropouts 0,0.2]
        [--rounds 3] [--steps N] [--warmup 1] [--threads 2] [--profile] [--out FILE] [--json FILE]

Identical work in both frameworks:

- Weights: the Zero worker builds ``zero.models.GPT`` (or ``zero.models.MLP``) with
  ``zero.manual_seed(0)`` and saves its state dict to a temporary ``.npz``; every run of
  either framework starts from that file, the PyTorch one loading it name for name into
  the mirror model of ``gpu_gpt.py`` (``torch_model``), or into the MLP mirror below.
- Batches: GPT windows of B x (T + 1) tokens cut from a fixed synthetic text (a seeded
  order-1 Markov chain over 65 characters with sparse transitions, so the loss falls
  and the corpus does not change when Zero's sources do); MLP batches of 64 images in
  [0, 1) with labels from a fixed random linear teacher. The same list of batches for
  both frameworks, the same in every round.
- The step: token ids to tensors, forward with the loss, ``zero_grad``, backward,
  ``clip_grad_norm_(parameters, 1.0)`` (GPT only), ``AdamW.step`` (GPT: lr 1e-3, betas
  0.9, 0.99, weight decay 0.1; MLP: ``zero mnist``'s AdamW(lr=1e-3) and PyTorch's defaults).

Timing: each round, each framework (its own long-lived worker process, taking turns as
``turns.py`` describes; both on ``--threads`` threads, 2 by default, through their
``set_num_threads``) loads the initial weights, runs ``--warmup`` untimed steps and
``--steps`` timed ones, and reports the median step.
The table gives the median over rounds, Zero / PyTorch as the median of the per-round
ratios with their range, and the rounds free of foreign load. The loss after all steps
with dropout 0 is reported for both (they agree to rounding: both run PyTorch's AdamW
update), and whether Zero's losses repeated bitwise
in every round. ``--profile`` adds Zero's per-op profile (``zero.profiler``) of one step.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import turns  # the sibling modules, whichever directory the script runs from
from kernels import CONFIGS, GPTShape, environment

MLP_BATCH, MLP_STEPS = 64, 200
DEFAULT_STEPS = {"tiny": 20, "small": 10, "medium": 5, "book": 2, "mlp": MLP_STEPS}


# -- the same data for both ----------------------------------------------------------------


def markov_text(length: int = 200_000, vocab: int = 65, seed: int = 0) -> np.ndarray:
    """A fixed token stream: each symbol followed by one of ~4 likely successors."""
    rng = np.random.default_rng(seed)
    transitions = rng.dirichlet(np.full(vocab, 0.05), size=vocab)     # (V, V), sparse rows
    cumulative = np.cumsum(transitions, axis=1)
    draws = rng.random(length)
    tokens = np.empty(length, np.int64)
    tokens[0] = 0
    for i in range(1, length):
        tokens[i] = min(np.searchsorted(cumulative[tokens[i - 1]], draws[i]), vocab - 1)
    return tokens


def gpt_batches(shape: GPTShape, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    data = markov_text(vocab=shape.vocab)
    rng = np.random.default_rng(1)
    result = []
    for _ in range(count):
        starts = rng.integers(0, len(data) - shape.block - 1, shape.batch)
        windows = np.stack([data[s:s + shape.block + 1] for s in starts])
        result.append((windows[:, :-1].copy(), windows[:, 1:].copy()))
    return result


def mlp_batches(count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(2)
    teacher = rng.standard_normal((784, 10)).astype(np.float32)
    result = []
    for _ in range(count):
        images = rng.random((MLP_BATCH, 784), dtype=np.float32)
        result.append((images, np.argmax((images - 0.5) @ teacher, axis=1).astype(np.int64)))
    return result


def gpt_config(shape: GPTShape, dropout: float) -> dict:
    return dict(vocab_size=shape.vocab, block_size=shape.block, n_layer=shape.layers, n_head=shape.heads,
                n_embd=shape.width, dropout=dropout)


# -- the workers ---------------------------------------------------------------------------


class ZeroSide:
    def __init__(self, package: str = "zero"):
        """``package``: Zero's package name (``step_ab.py`` imports another commit's copy as
        ``zero_base``)."""
        self.zero = importlib.import_module(package)
        self.models = importlib.import_module(package + ".models")
        self.clip = importlib.import_module(package + ".nn.utils").clip_grad_norm_

    def model(self, config: str, dropout: float):
        self.zero.manual_seed(0)
        if config == "mlp":
            model = self.models.MLP()
            model.set_input_statistics(0.2860, 0.3530)  # Fashion-MNIST's pixel mean and std
            return model
        return self.models.GPT(self.models.GPTConfig(**gpt_config(CONFIGS[config], dropout)))

    def save_initial(self, config: str, path: str) -> None:
        state = {name: np.array(t.numpy()) for name, t in self.model(config, 0.0).state_dict().items()}
        np.savez(path, **state)

    def prepare(self, config: str, dropout: float, path: str):
        model = self.model(config, dropout)
        with np.load(path) as state:
            model.load_state_dict({name: self.zero.tensor(state[name]) for name in state.files})
        model.train()
        if config == "mlp":
            optimizer = self.zero.optim.AdamW(model.parameters(), lr=1e-3)
        else:
            optimizer = self.zero.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
        self.zero.manual_seed(1)  # dropout masks
        return model, optimizer

    def step(self, config: str, model, optimizer, x, y):
        z = self.zero
        if config == "mlp":
            loss = z.nn.functional.cross_entropy(model(z.tensor(x)), z.tensor(y))
        else:
            loss = model(z.tensor(x), z.tensor(y))
        optimizer.zero_grad()
        loss.backward()
        if config != "mlp":
            self.clip(model.parameters(), 1.0)
        optimizer.step()
        return loss


class TorchSide:
    def __init__(self):
        import torch

        self.torch = torch

    def model(self, config: str, dropout: float):
        if config == "mlp":
            return torch_mlp()
        from gpu_gpt import torch_model

        return torch_model(gpt_config(CONFIGS[config], dropout))

    def prepare(self, config: str, dropout: float, path: str):
        torch = self.torch
        model = self.model(config, dropout)
        with np.load(path) as state:
            model.load_state_dict({name: torch.from_numpy(np.array(state[name])) for name in state.files},
                                  strict=True)
        model.train()
        if config == "mlp":
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        else:
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
        torch.manual_seed(1)
        return model, optimizer

    def step(self, config: str, model, optimizer, x, y):
        torch = self.torch
        if config == "mlp":
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(x)), torch.from_numpy(y))
        else:
            loss = model(torch.from_numpy(x), torch.from_numpy(y))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if config != "mlp":
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss


def torch_mlp():
    """zero.models.MLP in PyTorch, with the same names (fc1, fc2, input_mean, input_std)."""
    import torch
    from torch import nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(784, 512), nn.Linear(512, 10)
            self.register_buffer("input_mean", torch.tensor(0.0))
            self.register_buffer("input_std", torch.tensor(1.0))

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1((x - self.input_mean) / self.input_std)))

    return MLP()


def worker(framework: str, threads: int) -> None:
    side = ZeroSide() if framework == "zero" else TorchSide()
    (side.zero if framework == "zero" else side.torch).set_num_threads(threads)
    batches: dict = {}

    def data(config: str, count: int):
        if (config, count) not in batches:
            batches.clear()
            batches[(config, count)] = mlp_batches(count) if config == "mlp" else gpt_batches(CONFIGS[config], count)
        return batches[(config, count)]

    def handle(request: dict) -> dict:
        cmd = request["cmd"]
        if cmd == "ready":
            module = side.zero if framework == "zero" else side.torch
            return {"version": module.__version__}
        if cmd == "save_initial":
            side.save_initial(request["config"], request["path"])
            return {}
        config, warmup, steps = request["config"], request["warmup"], request["steps"]
        model, optimizer = side.prepare(config, request["dropout"], request["path"])
        if cmd == "profile":
            return {"table": zero_profile(side, config, model, optimizer, data(config, 2))}
        times, losses = [], []
        for x, y in data(config, warmup + steps):
            start = time.perf_counter()
            loss = side.step(config, model, optimizer, x, y)
            times.append(time.perf_counter() - start)
            losses.append(float(loss.item()))
        return {"step": statistics.median(times[warmup:]), "first": times[0], "losses": losses}

    turns.serve(handle)


def zero_profile(side: ZeroSide, config: str, model, optimizer, batches) -> str:
    from zero.profiler import profile

    side.step(config, model, optimizer, *batches[0])  # warm
    with profile() as prof:
        side.step(config, model, optimizer, *batches[1])
    return prof.table(row_limit=30)


# -- the main process ------------------------------------------------------------------------


def label(config: str) -> str:
    return "MLP 784-512-10, batch 64" if config == "mlp" else CONFIGS[config].label


def measure(config: str, dropouts: list[float], args, frameworks: list[str], directory: str) -> dict:
    script = str(Path(__file__).resolve())
    workers = {name: turns.Worker(name, turns.worker_command(script, name, "--threads", str(args.threads)))
               for name in frameworks}
    patience = turns.Patience(args.patience, args.quiet)
    path = str(Path(directory) / f"{config}.npz")
    steps = args.steps or DEFAULT_STEPS[config]
    warmup = args.warmup if config != "mlp" else max(args.warmup, 20)
    try:
        results: dict = {"versions": {name: w.call(cmd="ready")["version"] for name, w in workers.items()},
                         "steps": steps, "warmup": warmup}
        workers["zero"].call(cmd="save_initial", config=config, path=path)
        for dropout in dropouts if config != "mlp" else [0.0]:
            rounds = results[str(dropout)] = []
            request = dict(cmd="run", config=config, dropout=dropout, path=path, steps=steps, warmup=warmup)
            for r in range(args.rounds):
                record = {"probe": patience.wait(args.round_wait)}
                for name in turns.order(frameworks, r):
                    record[name] = turns.measured(workers[name], request, args.attempts, patience)
                rounds.append(record)
                print(f"  {label(config)}, dropout {dropout}: round {r + 1}/{args.rounds}: "
                      + ", ".join(f"{name} {1e3 * record[name]['step']:.1f} ms" for name in frameworks),
                      file=sys.stderr, flush=True)
        if args.profile:
            results["profile"] = workers["zero"].call(cmd="profile", config=config, dropout=0.0, path=path,
                                                      steps=0, warmup=0)["table"]
        return results
    finally:
        for w in workers.values():
            w.close()


def rows_for(config: str, results: dict, threshold: float) -> list[list[str]]:
    body = []
    for key, rounds in results.items():
        if key in ("versions", "steps", "warmup", "profile"):
            continue
        used = turns.quiet_rounds(rounds, threshold)
        quiet = sum(turns.is_quiet(record, threshold) for record in rounds)
        z = [record["zero"]["step"] for record in used]
        t = [record["torch"]["step"] for record in used if "torch" in record]
        per_round = turns.ratios(z, t)
        ratio = "-" if not per_round else f"{statistics.median(per_round):.2f} ({min(per_round):.2f}–" \
                                          f"{max(per_round):.2f})"
        zero_losses = [record["zero"]["losses"] for record in rounds]
        repeat = "yes" if all(losses == zero_losses[0] for losses in zero_losses) else "no"
        loss = "-"
        if float(key) == 0.0:
            torch_loss = rounds[0]["torch"]["losses"][-1] if "torch" in rounds[0] else math.nan
            loss = f"{zero_losses[0][-1]:.4f} / {torch_loss:.4f}"
        first = turns.median([record["zero"]["first"] for record in rounds[1:]] or [rounds[0]["zero"]["first"]])
        body.append([label(config), "-" if config == "mlp" else key,
                     f"{results['warmup']} + {results['steps']}", f"{1e3 * statistics.median(z):,.1f}",
                     "-" if not t else f"{1e3 * statistics.median(t):,.1f}", ratio,
                     f"{turns.spread(z) or 0:.0%} / {turns.spread(t) or 0:.0%}", loss, repeat,
                     f"{1e3 * rounds[0]['zero']['first']:,.0f} / {1e3 * first:,.0f}",
                     f"{quiet}/{len(rounds)}" + ("*" if quiet < 2 else "")])
    return body


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="tiny,small,medium,book,mlp",
                        help=f"comma-separated, of {', '.join(CONFIGS)}, mlp")
    parser.add_argument("--dropouts", default="0,0.2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, help=f"timed steps per round (default per configuration: {DEFAULT_STEPS})")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps per round (MLP: at least 20)")
    parser.add_argument("--quiet", type=float, default=0.15)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--patience", type=float, default=300.0, help="seconds per configuration")
    parser.add_argument("--round-wait", type=float, default=30.0,
                        help="seconds to wait at most for a quiet machine before each round (out of --patience)")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads for both frameworks (set_num_threads); 1 compares them on one core")
    parser.add_argument("--profile", action="store_true", help="add Zero's per-op profile of one step (dropout 0)")
    parser.add_argument("--out")
    parser.add_argument("--json")
    parser.add_argument("--worker", choices=("zero", "torch"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.threads)
        return 0

    import importlib.util

    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS and c != "mlp"]
    if unknown:
        parser.error(f"unknown configurations {unknown}")
    dropouts = [float(d) for d in args.dropouts.split(",")]
    frameworks = ["zero"] + ([] if args.no_torch or importlib.util.find_spec("torch") is None else ["torch"])
    raw, body, versions = {}, [], {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        for config in configs:
            print(f"{label(config)}", file=sys.stderr, flush=True)
            raw[config] = measure(config, dropouts, args, frameworks, directory)
            versions.update(raw[config]["versions"])
            body += rows_for(config, raw[config], args.quiet)
    header = ["configuration", "dropout", "steps (warm-up + timed)", "Zero ms/step", "PyTorch ms/step",
              "Zero/PyTorch (range)", "spread Zero / PyTorch", "loss after all steps, Zero / PyTorch",
              "Zero's losses bitwise equal in every round", "Zero first step ms (round 1 / later)", "quiet rounds"]
    lines = [f"Training step, CPU, float32 — {environment(versions)}",
             f"`{' '.join(['python', *sys.argv])}`: {args.rounds} rounds, Zero and PyTorch on {args.threads} "
             f"thread{'s' * (args.threads != 1)}, separate processes "
             f"taking turns; {time.perf_counter() - started:.0f} s in all.", "",
             turns.markdown(header, body, "ll" + "r" * (len(header) - 2))]
    for config in configs:
        if "profile" in raw[config]:
            lines += ["", f"Zero's profile of one step, {label(config)}, dropout 0:", "", "```",
                      raw[config]["profile"], "```"]
    text = "\n".join(lines)
    print(text, flush=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": raw}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
