"""A GPT training step on the GPU, captured as a CUDA graph: Zero against PyTorch (issue 38).

    PYTHONPATH=src python benchmarks/gpu_graph_step.py [--configs book,small,medium] [--rounds 2]
        [--modes zero-eager,zero-graph,torch-eager,torch-compile] [--dtypes bfloat16,float32]
        [--compile-configs book]

Each (framework, mode) runs in a process of its own, one after another, ``--rounds`` times in
alternating order; a process trains every configuration in turn on the same batches (from
``gpu_gpt.py``: the same model, Zero's initial weights in both), ``--warmup`` steps and then
``--steps`` timed ones, and prints one JSON line per configuration. The table quotes, per
configuration and dtype, each mode's median ms/step and the median over rounds of its ratio to
PyTorch eager, its peak memory, its first step (the first round's: compiling; later rounds':
what a second run pays), Zero's capture time, and the loss after all steps next to PyTorch
eager's (dropout 0, so the arithmetic is the same up to rounding).

Modes: ``zero-eager`` (op by op), ``zero-graph`` (two eager steps, then the step captured with
``zero.cuda.graph`` -- forward, backward, AdamW with ``capturable=True`` and its learning rate on
the device -- and replayed with the batch copied into static inputs), ``torch-eager``,
``torch-compile`` (``torch.compile``, default mode). float32 runs allow TF32 products in both;
bfloat16 runs the forward under each framework's autocast.

Configurations: ``book`` (6 layers, 6 heads, 384 wide; batch 64, block 256), ``small``
(4 x 4 x 128; batch 32, block 64) and ``medium`` (4 x 4 x 256; batch 32, block 128), where the
host's share of a step is largest; ``tiny`` checks the script on the CPU (``--device cpu``,
eager modes only). Results go to stdout and, with ``$OUT`` set, ``$OUT/gpu_graph_step.md`` and
``.jsonl`` (each line as it arrives, so a stopped run keeps what it measured).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

from gpu_gpt import batches, corpus, environment, torch_model, zero_model

CONFIGS = {
    "book": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch=64),
    "small": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch=32),
    "medium": dict(n_layer=4, n_head=4, n_embd=256, block_size=128, batch=32),
    "tiny": dict(n_layer=2, n_head=2, n_embd=32, block_size=16, batch=4),
}
MODES = ("zero-eager", "zero-graph", "torch-eager", "torch-compile")
GRAPH_WARMUP = 2   # eager steps before the capture (kernels compiled, optimizer state made)


def model_config(name: str, vocab: int) -> dict:
    shape = {k: v for k, v in CONFIGS[name].items() if k != "batch"}
    return dict(vocab_size=vocab, dropout=0.0, **shape)


# -- one process: one (framework, mode), every configuration and dtype ---------------------------


def run_zero(mode: str, config: dict, dtype: str, data: list, warmup: int, lr: float, device: str) -> dict:
    os.environ["ZERO_FAST_MATMUL"] = "1"  # TF32 products for float32, as PyTorch's allow_tf32 below
    import zero
    import zero.cuda

    on_gpu = device == "cuda"
    synchronize = zero.cuda.synchronize if on_gpu else (lambda: None)
    graphed = mode == "zero-graph"
    model = zero_model(config).to(device)
    optimizer = zero.optim.AdamW(model.parameters(), lr=zero.tensor(lr, device=device) if graphed else lr,
                                 betas=(0.9, 0.99), weight_decay=0.1, capturable=graphed)
    low = zero.bfloat16 if dtype == "bfloat16" else None

    def step(x, y):
        with zero.autocast(device, dtype=low or zero.bfloat16, enabled=low is not None):
            loss = model(x, y)
        loss.backward()
        optimizer.step()
        return loss

    graph = static = None
    capture_ms = None
    times, losses = [], []
    for i, (x, y) in enumerate(data):
        if i == warmup:
            synchronize()
            if on_gpu:
                zero.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        xs, ys = zero.tensor(x, device=device), zero.tensor(y, device=device)
        if graphed and i == GRAPH_WARMUP:   # capture once, then replay this step and every later one
            static = (xs.clone(), ys.clone())
            optimizer.zero_grad(set_to_none=True)
            graph = zero.cuda.CUDAGraph()
            begun = time.perf_counter()
            with zero.cuda.graph(graph):
                static_loss = step(*static)
            capture_ms = 1e3 * (time.perf_counter() - begun)
        if graph is not None:
            static[0].copy_(xs)
            static[1].copy_(ys)
            graph.replay()
            loss = static_loss
        else:
            optimizer.zero_grad()
            loss = step(xs, ys)
        synchronize()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    stats = zero.cuda.memory_stats() if on_gpu else {"peak_bytes": 0}
    return dict(ms=1e3 * statistics.median(times[warmup:]), first_ms=1e3 * times[0], capture_ms=capture_ms,
                peak=stats["peak_bytes"], losses=losses)


def run_torch(mode: str, config: dict, dtype: str, data: list, warmup: int, lr: float, device: str) -> dict:
    import numpy as np
    import torch

    on_gpu = device == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    model = torch_model(config)
    state = {name: torch.from_numpy(np.asarray(t).copy()) for name, t in zero_model(config).state_dict().items()}
    model.load_state_dict(state, strict=True)
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=0.1)
    forward = torch.compile(model) if mode == "torch-compile" else model
    synchronize = torch.cuda.synchronize if on_gpu else (lambda: None)
    times, losses = [], []
    for i, (x, y) in enumerate(data):
        if i == warmup:
            synchronize()
            if on_gpu:
                torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        with torch.autocast(device, dtype=torch.bfloat16, enabled=dtype == "bfloat16"):
            loss = forward(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        synchronize()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    return dict(ms=1e3 * statistics.median(times[warmup:]), first_ms=1e3 * times[0], capture_ms=None,
                peak=torch.cuda.max_memory_allocated() if on_gpu else 0, losses=losses)


def worker(args) -> int:
    tokens, vocab = corpus()
    run = run_zero if args.worker.startswith("zero") else run_torch
    for name in args.configs.split(","):
        if args.worker == "torch-compile" and name not in args.compile_configs.split(","):
            continue   # (its compilation takes tens of seconds a configuration and dtype)
        config = model_config(name, vocab)
        data = batches(tokens, args.warmup + args.steps, CONFIGS[name]["batch"], config["block_size"])
        for dtype in args.dtypes.split(","):
            record = dict(mode=args.worker, config=name, dtype=dtype)
            try:
                record.update(run(args.worker, config, dtype, data, args.warmup, args.lr, args.device))
            except Exception as e:
                traceback.print_exc()
                record["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            print(json.dumps(record), flush=True)
    return 0


# -- the driver ---------------------------------------------------------------------------------


def measure(args) -> list[dict]:
    modes = args.modes.split(",")
    out = Path(os.environ["OUT"]) if os.environ.get("OUT") else None
    records: list[dict] = []
    for r in range(args.rounds):
        for mode in (modes if r % 2 == 0 else modes[::-1]):
            command = [sys.executable, __file__, "--worker", mode, *_passed_on(args)]
            done = subprocess.run(command, stdout=subprocess.PIPE, text=True)
            for line in done.stdout.splitlines():
                if line.startswith("{"):
                    record = dict(json.loads(line), round=r)
                    records.append(record)
                    if out:
                        with open(out / "gpu_graph_step.jsonl", "a") as f:
                            f.write(json.dumps(record) + "\n")
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    return records


def _passed_on(args) -> list[str]:
    return ["--configs", args.configs, "--compile-configs", args.compile_configs, "--dtypes", args.dtypes,
            "--steps", str(args.steps), "--warmup",
            str(args.warmup), "--lr", str(args.lr), "--device", args.device]


def table(args, records: list[dict]) -> str:
    def runs(mode, config, dtype):
        return [r for r in records if (r["mode"], r["config"], r["dtype"]) == (mode, config, dtype)
                and "error" not in r]

    def med(values, fmt):
        values = [v for v in values if v is not None]
        return format(statistics.median(values), fmt) if values else "-"

    lines = [f"GPT training step, {environment() if args.device == 'cuda' else 'cpu'}; median of {args.steps} "
             f"steps after {args.warmup}, {args.rounds} round(s), each (framework, mode) in its own process", ""]
    for config in args.configs.split(","):
        for dtype in args.dtypes.split(","):
            shape = CONFIGS[config]
            lines += [f"### {config} ({shape['n_layer']} x {shape['n_head']} x {shape['n_embd']}, batch "
                      f"{shape['batch']}, block {shape['block_size']}), {dtype}", "",
                      "| mode | ms/step | / torch eager | peak MiB | / torch eager | first step ms (1st run, "
                      "later) | capture ms | loss at the end |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
            base = {r["round"]: r for r in runs("torch-eager", config, dtype)}
            for mode in args.modes.split(","):
                found = runs(mode, config, dtype)
                errors = [r["error"] for r in records if (r["mode"], r["config"], r["dtype"]) == (mode, config, dtype)
                          and "error" in r]
                if not found:
                    if errors or mode != "torch-compile" or config in args.compile_configs.split(","):
                        lines.append(f"| {mode} | failed: {errors[0] if errors else 'not run'} | | | | | | |")
                    continue
                ratios = [r["ms"] / base[r["round"]]["ms"] for r in found if r["round"] in base]
                memory = [r["peak"] / base[r["round"]]["peak"] for r in found if r["round"] in base
                          and base[r["round"]]["peak"]]
                first = sorted(found, key=lambda r: r["round"])
                later = med([r["first_ms"] for r in first[1:]], ".0f")
                lines.append(f"| {mode} | {med([r['ms'] for r in found], '.2f')} | {med(ratios, '.2f')} | "
                             f"{med([r['peak'] / 2**20 for r in found], '.0f')} | {med(memory, '.2f')} | "
                             f"{first[0]['first_ms']:.0f}, {later} | {med([r['capture_ms'] for r in found], '.0f')} | "
                             f"{med([r['losses'][-1] for r in found], '.4f')} |")
            lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="book,small,medium")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--compile-configs", default="book",
                        help="the configurations torch.compile is timed at (compiling takes tens of seconds each)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    records = measure(args)
    text = table(args, records)
    print(text, flush=True)
    if os.environ.get("OUT"):
        (Path(os.environ["OUT"]) / "gpu_graph_step.md").write_text(text + "\n")
    return 0 if records and not any("error" in r for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
