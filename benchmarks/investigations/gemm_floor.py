"""The matrix products of a GPT training step, timed alone: the floor under ``train_step.py``.

    PYTHONPATH=src python benchmarks/investigations/gemm_floor.py [--configs tiny,small,medium,book]
        [--threads 1] [--rounds 3]

A step of the four configurations of ``kernels.py`` multiplies the same matrices in any
framework: per layer the QKV, output, and two feed-forward projections (forward, the
input's gradient and the weight's gradient: three products each), and the language-model
head once. Causal attention's products are left out, because a framework may skip the
masked blocks; what is counted here, every framework must do. This script runs those
products back to back, float32, one call each, in NumPy (OpenBLAS: the library Zero's
CPU products call) and in PyTorch (MKL), each in its own worker process on ``--threads``
threads (BLAS's threads for NumPy, ``torch.set_num_threads`` for PyTorch), taking turns as
``turns.py`` describes. Each reply is the median of ``--repeats`` passes over all the
products.

What it tells: a step cannot take less than its products, and a ratio of steps can move
only through the time outside them. If the products take F of PyTorch's step S_t in both
libraries alike, Zero's step at 0.8 x S_t leaves 0.8 x S_t - F for everything else.
``train_step.py --threads`` times the steps at the same thread count.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, whose modules this reuses
import turns  # the sibling modules, whichever directory the script runs from
from kernels import CONFIGS, GPTShape, environment


def products(shape: GPTShape) -> list[tuple[int, int, int]]:
    """(m, k, n) of every product a[m, k] @ b[k, n] of the linear layers in one step."""
    N, C, V = shape.tokens, shape.width, shape.vocab
    layer = [(N, C, 3 * C), (N, C, C), (N, C, 4 * C), (N, 4 * C, C)]   # x @ W^T: qkv, proj, fc1, fc2
    each = [(N, C, V)] + layer * shape.layers                          # + the head's logits
    # forward (m, k, n); the input's gradient dY @ W: (m, n, k); the weight's, dY^T @ X: (n, m, k)
    return [p for m, k, n in each for p in ((m, k, n), (m, n, k), (n, m, k))]


def worker(library: str, threads: int) -> None:
    rng = np.random.default_rng(0)
    if library == "numpy":
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads, user_api="blas")
        version = np.__version__

        def operands(m: int, k: int, n: int):
            return (rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32),
                    np.empty((m, n), np.float32))
        multiply = np.matmul
    else:
        import torch

        torch.set_num_threads(threads)
        version = torch.__version__

        def operands(m: int, k: int, n: int):
            return (torch.randn(m, k), torch.randn(k, n), torch.empty(m, n))
        multiply = torch.matmul

    def handle(request: dict) -> dict:
        if request["cmd"] == "ready":
            return {"version": version}
        work = [operands(*p) for p in products(CONFIGS[request["config"]])]

        def one_pass() -> None:
            for a, b, out in work:
                multiply(a, b, out=out)
        return {"seconds": turns.median_seconds(one_pass, 2, request["repeats"])}

    turns.serve(handle)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="tiny,small,medium,book")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5, help="passes over the products per reply")
    parser.add_argument("--worker", choices=("numpy", "torch"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.threads)
        return 0
    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configurations {unknown}; choose from {list(CONFIGS)}")
    script = str(Path(__file__).resolve())
    libraries = ["numpy", "torch"]
    workers = {name: turns.Worker(name, turns.worker_command(script, name, "--threads", str(args.threads)))
               for name in libraries}
    started, body = time.perf_counter(), []
    try:
        versions = {name: w.call(cmd="ready")["version"] for name, w in workers.items()}
        for config in configs:
            times: dict = {name: [] for name in libraries}
            for r in range(args.rounds):
                for name in turns.order(libraries, r):
                    times[name].append(workers[name].call(cmd="run", config=config, repeats=args.repeats)["seconds"])
            shapes = products(CONFIGS[config])
            flops = sum(2 * m * k * n for m, k, n in shapes)
            numpy_s, torch_s = statistics.median(times["numpy"]), statistics.median(times["torch"])
            ratio = statistics.median(turns.ratios(times["numpy"], times["torch"]))
            body.append([CONFIGS[config].label, str(len(shapes)), f"{flops / 1e9:.2f}",
                         f"{numpy_s * 1e3:,.1f}", f"{torch_s * 1e3:,.1f}", f"{flops / numpy_s / 1e9:.0f}",
                         f"{flops / torch_s / 1e9:.0f}", f"{ratio:.2f}"])
    finally:
        for w in workers.values():
            w.close()
    names = {"numpy": "NumPy", "torch": "PyTorch"}
    print(f"Products of a step's linear layers, float32 — {environment({names[k]: v for k, v in versions.items()})}")
    print(f"`{' '.join(['python', *sys.argv])}`: {args.rounds} rounds, {args.threads} thread"
          f"{'s' * (args.threads != 1)}, separate processes taking turns; {time.perf_counter() - started:.0f} s.\n")
    print(turns.markdown(["configuration", "products", "GFLOP", "NumPy ms", "PyTorch ms", "NumPy GFLOP/s",
                          "PyTorch GFLOP/s", "NumPy / PyTorch"], body, "l" + "r" * 7))
    return 0


if __name__ == "__main__":
    sys.exit(main())
