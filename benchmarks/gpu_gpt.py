"""A GPT training step on the GPU: Zero against PyTorch eager, float32 with TF32 allowed in both.

    PYTHONPATH=src python benchmarks/gpu_gpt.py [--steps 20] [--warmup 5] [--dropout 0.2]

The book's configuration: batch 64, block 256, 6 layers, 6 heads, 384 wide, a character
vocabulary (the ASCII characters of Zero's own source code, about 95). Both frameworks
train the same model (the PyTorch one below mirrors ``zero.models.GPT`` name for name and
starts from a copy of Zero's initial weights) with AdamW on the same token batches:

- ms/step (median over ``--steps`` steps after ``--warmup``), tokens/s, and peak device
  memory held by tensors (Zero's allocator statistics, ``torch.cuda.max_memory_allocated``)
  and reserved from the device, at ``--dropout`` (the book's 0.2);
- with dropout 0 (so both run the same arithmetic), the loss after every step; the table
  shows the last one. The two differ only by rounding (TF32 products, summation orders):
  Zero's AdamW is PyTorch's update by default.

On the CPU, compare the frameworks with ``benchmarks/train_step.py`` instead (it reuses
``torch_model`` below): it runs them in separate processes taking turns, since in one
process their thread pools steal each other's cores; here both share one process.

The table goes to stdout and, when ``$OUT`` is set, to ``$OUT/gpu_gpt.md`` (with the raw
numbers in ``$OUT/gpu_gpt.json``). A failure in one framework is printed and the other
still runs.
"""
from __future__ import annotations

import argparse
import cProfile
import datetime
import json
import os
import pstats
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


# -- data --------------------------------------------------------------------------------------


def corpus() -> tuple[np.ndarray, int]:
    """Token ids of the printable ASCII characters of Zero's source files, and the vocabulary size."""
    text = "".join(p.read_text(encoding="utf-8", errors="ignore") for p in sorted((ROOT / "src").rglob("*.py")))
    text = "".join(c for c in text if c == "\n" or 32 <= ord(c) < 127)
    vocab = sorted(set(text))
    lookup = {c: i for i, c in enumerate(vocab)}
    return np.array([lookup[c] for c in text], dtype=np.int64), len(vocab)


def batches(data: np.ndarray, count: int, batch: int, block: int, seed: int = 0) -> list:
    """``count`` (inputs, targets) pairs of (batch, block) windows, the same for both frameworks."""
    rng = np.random.default_rng(seed)
    result = []
    for _ in range(count):
        starts = rng.integers(0, len(data) - block - 1, batch)
        windows = np.stack([data[s:s + block + 1] for s in starts])
        result.append((windows[:, :-1].copy(), windows[:, 1:].copy()))
    return result


# -- Zero --------------------------------------------------------------------------------------


def zero_model(config: dict, seed: int = 0):
    import zero
    from zero.models import GPT, GPTConfig

    zero.manual_seed(seed)
    return GPT(GPTConfig(**config))


def run_zero(config: dict, data: list, steps: int, warmup: int, lr: float, device: str = "cuda") -> dict:
    """Train on ``data`` (warmup + steps batches); time the last ``steps``."""
    os.environ["ZERO_FAST_MATMUL"] = "1"  # TF32 tensor cores for float32 products, as PyTorch below
    import zero
    import zero.cpu
    import zero.cuda

    memory = zero.cuda if device == "cuda" else zero.cpu
    synchronize = zero.cuda.synchronize if device == "cuda" else (lambda: None)
    model = zero_model(config).to(device)
    optimizer = zero.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=0.1)
    losses, times, issue_times = [], [], []   # issue: the host's part, before the wait for the GPU
    for i, (x, y) in enumerate(data):
        if i == warmup:
            synchronize()
            memory.reset_peak_memory_stats()
        start = time.perf_counter()
        loss = model(zero.tensor(x, device=device), zero.tensor(y, device=device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        issue_times.append(time.perf_counter() - start)
        synchronize()
        times.append(time.perf_counter() - start)
        losses.append(loss.detach())
    stats = memory.memory_stats()
    result = dict(ms=1e3 * statistics.median(times[warmup:]), issue_ms=1e3 * statistics.median(issue_times[warmup:]),
                  losses=[float(v.item()) for v in losses],
                  peak=stats["peak_bytes"], reserved=stats["reserved_bytes"], first_ms=1e3 * times[0])
    del model, optimizer, loss, losses
    if device == "cuda":
        zero.cuda.trim_free_pool()
    return result


def zero_profile(config: dict, x: np.ndarray, y: np.ndarray, device: str) -> str:
    """Where one step's time goes (for the next optimisation): per op, the host's time to
    issue it and, on a GPU, the GPU's time to run it (CUDA events, the queue never stopped);
    then the step as a whole -- if the host takes as long to issue it as the GPU takes to
    run it, the step is bound by the host (Python and launches), not by the kernels."""
    import zero
    from zero.profiler import profile

    on_gpu = device == "cuda"
    model = zero_model(config).to(device)
    optimizer = zero.optim.AdamW(model.parameters(), lr=1e-3)
    synchronize = zero.cuda.synchronize if on_gpu else (lambda: None)
    new_event = (lambda: zero.cuda.Event(enable_timing=True)) if on_gpu else None
    for _ in range(3):  # the first step compiles; profile the third
        synchronize()
        marks = [new_event() for _ in range(3)] if on_gpu else []
        start = time.perf_counter()
        with profile(use_device="cuda" if on_gpu else None) as prof:
            if on_gpu:
                marks[0].record()
            loss = model(zero.tensor(x, device=device), zero.tensor(y, device=device))
            optimizer.zero_grad()
            loss.backward()
            optimizer_start = time.perf_counter()
            if on_gpu:
                marks[1].record()
            optimizer.step()
            if on_gpu:
                marks[2].record()
            issued = time.perf_counter()
        synchronize()
        wall = time.perf_counter() - start
    ops_device = sum(s.device_total_seconds for s in prof.stats.values())
    host = cProfile.Profile()   # the host's side of one more step, by function
    host.enable()
    loss = model(zero.tensor(x, device=device), zero.tensor(y, device=device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    host.disable()
    synchronize()
    by_function = host_table(pstats.Stats(host), 30)
    by_caller = callers_table(pstats.Stats(host), 8)
    lines = [prof.table(row_limit=25), "",
             f"the step: {wall * 1e3:.1f} ms wall; the host issued it in {(issued - start) * 1e3:.1f} ms "
             f"(the optimizer's step {(issued - optimizer_start) * 1e3:.1f} ms of it)"]
    if on_gpu:
        span, optimizer_span = marks[0].elapsed_time(marks[2]), marks[1].elapsed_time(marks[2])
        lines.append(f"the GPU: {span:.1f} ms from the step's first kernel to its last; the ops' kernels "
                     f"{ops_device * 1e3:.1f} ms of it, the optimizer's {optimizer_span:.1f} ms; the rest "
                     f"({span - ops_device * 1e3 - optimizer_span:.1f} ms) the GPU waited for the host "
                     "or ran work outside the ops (gradient accumulation)")
    lines += ["", "the host's time in one step by function (cProfile, its own overhead included), top 30:",
              by_function, "", "their callers (the 8 of most own time):", by_caller]
    return "\n".join(lines)


def host_table(stats: pstats.Stats, limit: int) -> str:
    """cProfile's functions by their own time, in milliseconds (pstats prints whole ms at best)."""
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:limit]  # type: ignore[attr-defined]
    lines = [f"{'calls':>7}{'own ms':>9}{'with callees ms':>17}  function"]
    for (path, line, name), (_, calls, own, cumulative, _) in rows:
        where = f"{path.split('/src/')[-1]}:{line}" if path != "~" else "(built-in)"
        lines.append(f"{calls:>7}{own * 1e3:>9.3f}{cumulative * 1e3:>17.3f}  {name} {where}")
    return "\n".join(lines)


def callers_table(stats: pstats.Stats, count: int, callers: int = 4) -> str:
    """Who calls the ``count`` functions of most own time: their ``callers`` biggest callers,
    with the calls and the own time spent on their behalf."""
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:count]  # type: ignore[attr-defined]
    lines = []
    for (_, _, name), (*_, by_caller) in rows:
        lines.append(f"{name}:")
        ranked = sorted(by_caller.items(), key=lambda item: item[1][2], reverse=True)[:callers]
        for (path, line, caller), (_, calls, own, _) in ranked:
            lines.append(f"    {calls:>5} calls {own * 1e3:>7.3f} ms  from {caller} {path.split('/src/')[-1]}:{line}")
    return "\n".join(lines)


# -- PyTorch -----------------------------------------------------------------------------------


def torch_model(config: dict):
    """zero.models.GPT in PyTorch, with the same parameter names (so state dicts match)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    C, H = config["n_embd"], config["n_head"]

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.dropout = nn.Dropout(config["dropout"])

        def forward(self, x):
            B, T, _ = x.shape
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in self.qkv(x).split(C, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.dropout(self.proj(y.transpose(1, 2).reshape(B, T, C)))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
            self.dropout = nn.Dropout(config["dropout"])

        def forward(self, x):
            return self.dropout(self.fc2(F.gelu(self.fc1(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attn, self.ln2, self.ffn = nn.LayerNorm(C), Attention(), nn.LayerNorm(C), FeedForward()

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.ffn(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding = nn.Embedding(config["vocab_size"], C)
            self.position_embedding = nn.Embedding(config["block_size"], C)
            self.dropout = nn.Dropout(config["dropout"])
            self.blocks = nn.ModuleList([Block() for _ in range(config["n_layer"])])
            self.ln_f = nn.LayerNorm(C)

        def forward(self, idx, targets):
            T = idx.shape[1]
            x = self.dropout(self.token_embedding(idx) + self.position_embedding(torch.arange(T, device=idx.device)))
            for block in self.blocks:
                x = block(x)
            logits = self.ln_f(x) @ self.token_embedding.weight.T                   # tied weights
            return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    return GPT()


def run_torch(config: dict, data: list, steps: int, warmup: int, lr: float, device: str = "cuda") -> dict:
    import torch

    on_gpu = device == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    model = torch_model(config)
    state = {name: torch.from_numpy(np.asarray(t).copy()) for name, t in zero_model(config).state_dict().items()}
    model.load_state_dict(state, strict=True)  # Zero's initial weights, name for name
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=0.1)
    synchronize = torch.cuda.synchronize if on_gpu else (lambda: None)
    losses, times, issue_times = [], [], []   # issue: the host's part, before the wait for the GPU
    for i, (x, y) in enumerate(data):
        if i == warmup:
            synchronize()
            if on_gpu:
                torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        loss = model(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        issue_times.append(time.perf_counter() - start)
        synchronize()
        times.append(time.perf_counter() - start)
        losses.append(loss.detach())
    result = dict(ms=1e3 * statistics.median(times[warmup:]), issue_ms=1e3 * statistics.median(issue_times[warmup:]),
                  losses=[float(v) for v in losses],
                  peak=torch.cuda.max_memory_allocated() if on_gpu else 0,
                  reserved=torch.cuda.max_memory_reserved() if on_gpu else 0, first_ms=1e3 * times[0])
    del model, optimizer, loss, losses
    if on_gpu:
        torch.cuda.empty_cache()
    return result


# -- the table ---------------------------------------------------------------------------------


def attempt(name: str, fn, *args) -> dict | None:
    try:
        return fn(*args)
    except Exception:
        print(f"!! {name} failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        return None


def cell(value, fmt: str) -> str:
    return "failed" if value is None else format(value, fmt)


def ratio(a, b) -> str:
    return "-" if a is None or b is None or not b else f"{a / b:.2f}"


def table(args, config, runs: dict, tokens: int, environment: str) -> str:
    z, t = runs.get("zero"), runs.get("torch")
    z0, t0 = runs.get("zero_no_dropout"), runs.get("torch_no_dropout")
    mib = 1 << 20

    def get(run, key, scale=1.0):
        return None if run is None else run[key] / scale

    lines = [f"GPT training step, {environment}",
             f"config: batch {args.batch}, block {args.block}, {args.layers} layers, {args.heads} heads, "
             f"{args.width} wide, vocab {config['vocab_size']}, AdamW lr {args.lr}; float32, TF32 products in both; "
             f"median of {args.steps} steps after {args.warmup} warm-up steps",
             "",
             "| | Zero | PyTorch eager | Zero / PyTorch |",
             "|---|---:|---:|---:|"]
    rows = [(f"ms/step (dropout {args.dropout})", get(z, "ms"), get(t, "ms"), ".1f"),
            ("tokens/s", None if z is None else tokens / z["ms"] * 1e3, None if t is None else tokens / t["ms"] * 1e3,
             ",.0f"),
            ("peak memory held by tensors (MiB)", get(z, "peak", mib), get(t, "peak", mib), ".0f"),
            ("memory reserved from the device (MiB)", get(z, "reserved", mib), get(t, "reserved", mib), ".0f"),
            ("host's time to issue a step, before the wait (ms)", get(z, "issue_ms"), get(t, "issue_ms"), ".1f"),
            ("first step incl. compilation (ms)", get(z, "first_ms"), get(t, "first_ms"), ".0f")]
    if args.dropout != 0.0:
        rows.append(("ms/step (dropout 0)", get(z0, "ms"), get(t0, "ms"), ".1f"))
    torch_cell = cell if "torch_no_dropout" in runs else (lambda value, fmt: "not run")
    for label, a, b, fmt in rows:
        lines.append(f"| {label} | {cell(a, fmt)} | {torch_cell(b, fmt)} | {ratio(a, b)} |")
    za = None if z0 is None else z0["losses"][-1]
    ta = None if t0 is None else t0["losses"][-1]
    difference = "-" if za is None or ta is None else f"{abs(za - ta):.4f} apart"
    lines.append(f"| loss after {args.warmup + args.steps} steps (dropout 0, same batches) | {cell(za, '.4f')} | "
                 f"{torch_cell(ta, '.4f')} | {difference} |")
    if z0 is not None and t0 is not None:
        lines += ["", "losses by step (Zero / PyTorch): " + ", ".join(
            f"{a:.3f}/{b:.3f}" for a, b in zip(z0["losses"], t0["losses"]))]
    return "\n".join(lines)


def environment() -> str:
    parts = [datetime.date.today().isoformat()]
    try:
        import cupy

        properties = cupy.cuda.runtime.getDeviceProperties(0)
        name = properties["name"]
        parts.append(name.decode() if isinstance(name, bytes) else str(name))
        parts.append(f"CuPy {cupy.__version__}")
    except Exception as e:
        parts.append(f"(no GPU name: {e})")
    for module in ("triton", "torch", "numpy"):
        try:
            parts.append(f"{module} {__import__(module).__version__}")
        except ImportError:
            pass
    return ", ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--block", type=int, default=256)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--width", type=int, default=384)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--no-torch", action="store_true", help="time Zero only")
    parser.add_argument("--profile", action="store_true",
                        help="also print Zero's per-op times for one step, the host's and the GPU's")
    parser.add_argument("--device", default="cuda", help="cuda; cpu only checks this script on a small config")
    args = parser.parse_args()

    tokens, vocab = corpus()
    config = dict(vocab_size=vocab, block_size=args.block, n_layer=args.layers, n_head=args.heads,
                  n_embd=args.width, dropout=args.dropout)
    data = batches(tokens, args.warmup + args.steps, args.batch, args.block)
    no_dropout = dict(config, dropout=0.0)
    runs = {}
    for framework, run in (("zero", run_zero), ("torch", run_torch)):
        if framework == "torch" and args.no_torch:
            continue
        if args.dropout != 0.0:
            runs[framework] = attempt(f"{framework} (dropout {args.dropout})", run, config, data, args.steps,
                                      args.warmup, args.lr, args.device)
        runs[f"{framework}_no_dropout"] = attempt(f"{framework} (dropout 0)", run, no_dropout, data, args.steps,
                                                  args.warmup, args.lr, args.device)
        if args.dropout == 0.0:
            runs[framework] = runs[f"{framework}_no_dropout"]
    text = table(args, config, runs, args.batch * args.block, environment() if args.device == "cuda" else "cpu")
    print(text, flush=True)
    out = Path(os.environ["OUT"]) if os.environ.get("OUT") else None
    if out:   # written before the profile, which a time limit may stop
        out.mkdir(parents=True, exist_ok=True)
        (out / "gpu_gpt.md").write_text(text + "\n")
        (out / "gpu_gpt.json").write_text(json.dumps({"args": vars(args), "config": config, "runs": runs}, indent=1))
    if args.profile:
        profile_text = attempt("zero profile", zero_profile, config, *data[0], args.device)
        profile_text = ("\n\nZero, one step, per op (host: issuing it; dev: the GPU running it):\n"
                        + (profile_text or "failed"))
        print(profile_text, flush=True)
        if out:
            (out / "gpu_gpt.md").write_text(text + profile_text + "\n")
    return 0 if all(runs.get(k) is not None for k in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
