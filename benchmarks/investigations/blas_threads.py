"""OpenBLAS's own threads against Zero's split of the products over its pool.

    OPENBLAS_THREAD_TIMEOUT=4 PYTHONPATH=src python benchmarks/investigations/blas_threads.py
        [--sections spin,gemm,step] [--rounds 8] [--configs tiny,small] [--pairs 12]

Zero runs BLAS on one thread and splits products into row ranges over its own pool
(``zero.backends.cpu.threads`` says why: OpenBLAS's threads spin after each product and take
the cores from the pool's Numba loops). This measures the alternative, one process, so
each comparison alternates:

- ``spin``: the process's CPU time while it sleeps after a product on OpenBLAS's two
  threads: how long they spin (``OPENBLAS_THREAD_TIMEOUT``, 2^n cycles, read when NumPy
  loads; 4 makes them sleep at once);
- ``gemm``: the linear layers' forward products of the GPT configurations, Zero's kernel
  (``linear_forward``: row ranges, one BLAS call each) against one ``np.matmul`` on
  OpenBLAS's two threads; rounds alternate, with a pause at each switch so that no thread
  of the other side still spins;
- ``step``: training steps (``train_step.py``'s Zero worker, dropout 0) with today's linear
  and FFN kernels against the same kernels with each product one ``np.matmul`` on
  OpenBLAS's two threads (the FFN's GELU pass still on the pool, between its products);
  new time / today's per pair. Meaningful only with OpenBLAS's threads sleeping at once
  (``OPENBLAS_THREAD_TIMEOUT=4``): spinning ones would slow the steps that follow.
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, whose modules this reuses
from train_step import CONFIGS, ZeroSide, gpt_batches


def numpy_blas():
    from threadpoolctl import ThreadpoolController

    return next(lib for lib in ThreadpoolController().lib_controllers
                if lib.user_api == "blas" and "numpy" in lib.filepath)


@contextlib.contextmanager
def blas_threads(blas, count: int):
    blas.set_num_threads(count)
    try:
        yield
    finally:
        blas.set_num_threads(1)


def spin(blas) -> str:
    x, w = np.ones((1024, 128), np.float32), np.ones((384, 128), np.float32)
    lines = [f"OPENBLAS_THREAD_TIMEOUT={os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset')}",
             "", "| sleep after a product on 2 threads | process CPU during it |", "|---:|---:|"]
    with blas_threads(blas, 2):
        for gap in (0.001, 0.01, 0.05, 0.2):
            np.matmul(x, w.T)
            cpu = time.process_time()
            time.sleep(gap)
            lines.append(f"| {gap * 1e3:g} ms | {(time.process_time() - cpu) * 1e3:.2f} ms |")
    time.sleep(0.3)
    return "\n".join(lines)


def gemm(blas, rounds: int) -> str:
    from zero.backends.cpu.kernels import linear_forward

    rng = np.random.default_rng(0)
    shapes = [(1024, 128, 384), (1024, 128, 512), (1024, 512, 128), (2048, 128, 384), (4096, 256, 768)]
    cases = [(rng.standard_normal((n, k), dtype=np.float32), rng.standard_normal((m, k), dtype=np.float32),
              np.empty((n, m), np.float32)) for n, k, m in shapes]
    ratios: list[list[float]] = [[] for _ in shapes]
    for round_ in range(rounds):
        times = {}
        for side in (("zero", "openblas") if round_ % 2 == 0 else ("openblas", "zero")):
            blas.set_num_threads(2 if side == "openblas" else 1)
            time.sleep(0.4)          # the other side's threads stop spinning
            times[side] = []
            for x, w, out in cases:
                call = ((lambda x=x, w=w, out=out: np.matmul(x, w.T, out=out)) if side == "openblas"
                        else (lambda x=x, w=w, out=out: linear_forward(x, w, None, out)))
                samples = []
                for _ in range(30):
                    start = time.perf_counter()
                    call()
                    samples.append(time.perf_counter() - start)
                times[side].append(statistics.median(samples))
        for i, (zero_s, openblas_s) in enumerate(zip(times["zero"], times["openblas"])):
            ratios[i].append(zero_s / openblas_s)
    blas.set_num_threads(1)
    lines = ["| product (N x K -> M) | Zero's split / OpenBLAS's 2 threads, median (range) |", "|---|---:|"]
    for (n, k, m), r in zip(shapes, ratios):
        lines.append(f"| {n} x {k} -> {m} | {statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f}) |")
    return "\n".join(lines)


def openblas_kernels(blas) -> dict:
    """linear and FFN kernels whose products are single np.matmul calls on OpenBLAS's threads."""
    from zero.backends.cpu import threads
    from zero.backends.cpu.kernels import _fused_linear as fused
    from zero.backends.cpu.kernels._fused_support import scratch, shaped
    from zero.backends.cpu.kernels.elementwise import add_row_in_place
    from zero.backends.cpu.kernels.linalg import ones_vector

    def products():
        return blas_threads(blas, 2)

    def gelu_pass(source, bias, h, grad, tanh, want_grad):
        threads.parallel_for(h.shape[0], lambda lo, hi: fused._bias_gelu(
            source[lo:hi], bias, h[lo:hi], grad[lo:hi], tanh, want_grad), max(1, (1 << 18) // h.shape[1]))

    def linear_forward(x, weight, bias, out):
        with products():
            np.matmul(x, weight.T, out=out)
        if bias is not None:
            add_row_in_place(out, bias)

    def linear_backward(grad_out, x, weight, grad_x, grad_weight, grad_bias):
        with products():
            if grad_x is not None:
                np.matmul(grad_out, weight, out=grad_x)
            if grad_weight is not None:
                np.matmul(grad_out.T, x, out=grad_weight)
            if grad_bias is not None:
                np.matmul(ones_vector(grad_out.shape[0], grad_out.dtype), grad_out, out=grad_bias)

    def ffn_forward(x, w1, b1, w2, b2, approximate, out, kept=None):
        rows, hidden = x.shape[0], w1.shape[0]
        h = shaped(scratch(rows * hidden, x.dtype), rows, hidden)
        nothing = np.empty((rows, 0), h.dtype)
        with products():
            np.matmul(x, w1.T, out=h if kept is None else kept)
        gelu_pass(nothing if kept is None else kept, fused._bias_or_zeros(b1, h), h, nothing, approximate == "tanh",
                  False)
        with products():
            np.matmul(h, w2.T, out=out)
        if b2 is not None:
            add_row_in_place(out, b2)

    def ffn_backward(grad_out, x, w1, b1, w2, approximate, grad_x, grad_w1, grad_b1, grad_w2, grad_b2, kept=None):
        rows, hidden = x.shape[0], w1.shape[0]
        activation = shaped(scratch(rows * hidden, x.dtype), rows, hidden)
        grad_hidden = shaped(scratch(rows * hidden, x.dtype), rows, hidden)
        ones = ones_vector(rows, x.dtype)
        with products():
            if kept is None:
                np.matmul(x, w1.T, out=activation)
            np.matmul(grad_out, w2, out=grad_hidden)
        gelu_pass(np.empty((rows, 0), x.dtype) if kept is None else kept, fused._bias_or_zeros(b1, activation),
                  activation, grad_hidden, approximate == "tanh", True)
        with products():
            for wanted, (a, b) in ((grad_x, (grad_hidden, w1)), (grad_w2, (grad_out.T, activation)),
                                   (grad_b2, (ones, grad_out)), (grad_w1, (grad_hidden.T, x)),
                                   (grad_b1, (ones, grad_hidden))):
                if wanted is not None:
                    np.matmul(a, b, out=wanted)

    return {"linear_forward": linear_forward, "linear_backward": linear_backward, "ffn_forward": ffn_forward,
            "ffn_backward": ffn_backward}


def step(blas, config: str, pairs: int) -> str:
    from zero.backends.cpu import kernels

    sides = {"zero": {name: getattr(kernels, name) for name in ("linear_forward", "linear_backward",
                                                                "ffn_forward", "ffn_backward")},
             "openblas": openblas_kernels(blas)}
    worker = ZeroSide("zero")
    with tempfile.TemporaryDirectory() as folder:
        initial = str(Path(folder) / "initial.npz")
        worker.save_initial(config, initial)
        models = {side: worker.prepare(config, 0.0, initial) for side in sides}
    batches = list(itertools.islice(itertools.cycle(gpt_batches(CONFIGS[config], 4)), 4))

    def one_step(side: str, k: int) -> float:
        for name, function in sides[side].items():
            setattr(kernels, name, function)
        model, optimizer = models[side]
        start = time.perf_counter()
        worker.step(config, model, optimizer, *batches[k % 4])
        return time.perf_counter() - start

    for k in range(3):
        for side in sides:
            one_step(side, k)
    ratios, times = [], {side: [] for side in sides}
    for k in range(pairs):
        took = {side: one_step(side, k) for side in (("zero", "openblas") if k % 2 == 0 else ("openblas", "zero"))}
        for side, seconds in took.items():
            times[side].append(seconds)
        ratios.append(took["openblas"] / took["zero"])
    for name, function in sides["zero"].items():
        setattr(kernels, name, function)
    return (f"| {CONFIGS[config].label} | {pairs} | {statistics.median(times['zero']) * 1e3:.1f} | "
            f"{statistics.median(times['openblas']) * 1e3:.1f} | {statistics.median(ratios):.3f} "
            f"({min(ratios):.2f}-{max(ratios):.2f}) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="spin,gemm,step")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--configs", default="tiny,small")
    parser.add_argument("--pairs", type=int, default=12)
    args = parser.parse_args()
    from zero.backends.cpu.threads import single_threaded_blas

    single_threaded_blas()
    blas = numpy_blas()
    print(f"`OPENBLAS_THREAD_TIMEOUT={os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset')} python "
          f"benchmarks/investigations/blas_threads.py --sections {args.sections}`; OpenBLAS {blas.version}\n")
    sections = args.sections.split(",")
    if "spin" in sections:
        print(spin(blas), end="\n\n")
    if "gemm" in sections:
        print(gemm(blas, args.rounds), end="\n\n")
    if "step" in sections:
        print("| configuration, dropout 0 | pairs | today's kernels ms | products on OpenBLAS's threads ms | "
              "new/today's (range) |\n|---|---:|---:|---:|---:|")
        for config in args.configs.split(","):
            print(step(blas, config, args.pairs))


if __name__ == "__main__":
    main()
