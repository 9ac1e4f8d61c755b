"""Fused ops against their compositions of basic ops: forward + backward time and memory,
at GPT-like shapes, with PyTorch's equivalent beside them when it is installed.

    python benchmarks/fused.py [--full] [--repeats 7] [--dtype float32]

Default shapes: B=8, T=256, C=384, H=6, V=4000 (N = B*T = 2048 token rows). ``--full``
uses the book's batch B=64 (N = 16384; heavy on a small CPU).

Columns: median milliseconds of forward + backward (the implementations are run
interleaved, one of each per round, so machine noise hits all alike); "held" is what the
autograd graph keeps between forward and backward (live allocator bytes after forward,
before backward, minus those before, output included); "peak" is the allocator's peak
during forward + backward above the live bytes before it (``zero.cpu.memory_stats``),
kernel scratch included. PyTorch's memory is not measured (its CPU allocator has no
statistics).
"""
from __future__ import annotations

import argparse
import gc
import math
import statistics
import time

import numpy as np

import zero
from zero.nn import functional as F
from zero.ops import attention as composed_attention

try:
    import torch
except ImportError:  # the benchmark runs without PyTorch; its column is then empty
    torch = None


def leaf(array, dtype):
    return zero.tensor(array, dtype=dtype, requires_grad=True)


def cases(batch: int, length: int, width: int, heads: int, vocab: int, dtype, rng):
    """name -> (zero tensors, {implementation: forward function}, torch forward or None).
    Every forward returns a tensor that backward is seeded with ones (a scalar loss or sum)."""
    rows = batch * length
    x = rng.standard_normal((rows, width)).astype(np.float32)
    shapes = {}

    def params(*arrays):
        return [leaf(a, dtype) for a in arrays]

    # linear: the attention's qkv projection (C -> 3C)
    w, b = rng.standard_normal((3 * width, width)) * 0.05, rng.standard_normal(3 * width)
    zx, zw, zb = params(x, w, b)
    shapes[f"linear [{rows},{width}]->{3 * width}"] = (
        [zx, zw, zb],
        {"fused": lambda: F.linear(zx, zw, zb).sum(), "composed": lambda: ((zx @ zw.T) + zb).sum()},
        ([x, w, b], lambda a, b_, c: torch.nn.functional.linear(a, b_, c).sum()))

    # ffn: C -> 4C -> C with exact GELU
    w1, b1 = rng.standard_normal((4 * width, width)) * 0.05, rng.standard_normal(4 * width) * 0.1
    w2, b2 = rng.standard_normal((width, 4 * width)) * 0.05, rng.standard_normal(width) * 0.1
    fx, fw1, fb1, fw2, fb2 = params(x, w1, b1, w2, b2)
    shapes[f"ffn [{rows},{width}]->{4 * width}->{width}"] = (
        [fx, fw1, fb1, fw2, fb2],
        {"fused": lambda: F.ffn(fx, fw1, fb1, fw2, fb2).sum(),
         "composed": lambda: (F.gelu(fx @ fw1.T + fb1) @ fw2.T + fb2).sum()},
        ([x, w1, b1, w2, b2], lambda a, c, d, e, f: torch.nn.functional.linear(
            torch.nn.functional.gelu(torch.nn.functional.linear(a, c, d)), e, f).sum()))

    # linear + cross-entropy against a tied (V, C) embedding
    embedding = rng.standard_normal((vocab, width)) * 0.02
    target = rng.integers(0, vocab, rows)
    lx, lw = params(x, embedding)
    zt = zero.tensor(target)
    shapes[f"linear_cross_entropy [{rows},{width}]x[{vocab},{width}]"] = (
        [lx, lw],
        {"fused": lambda: F.linear_cross_entropy(lx, lw, zt),
         "composed": lambda: F.cross_entropy(lx @ lw.T, zt)},
        ([x, embedding], lambda a, e: torch.nn.functional.cross_entropy(a @ e.T, torch.tensor(target))))

    # causal attention
    head = width // heads
    q, k, v = (rng.standard_normal((batch, heads, length, head)) for _ in range(3))
    aq, ak, av = params(q, k, v)
    shapes[f"attention causal [{batch},{heads},{length},{head}]"] = (
        [aq, ak, av],
        {"fused": lambda: F.scaled_dot_product_attention(aq, ak, av, is_causal=True).sum(),
         "composed": lambda: composed_attention.scaled_dot_product_attention(aq, ak, av, is_causal=True).sum()},
        ([q, k, v], lambda a, b_, c: torch.nn.functional.scaled_dot_product_attention(
            a, b_, c, is_causal=True).sum()))

    # layer norm (already one op) against mean / var / normalise / affine
    gamma, beta = 1 + 0.1 * rng.standard_normal(width), 0.1 * rng.standard_normal(width)
    nx, ng, nb = params(x, gamma, beta)

    def composed_layer_norm():
        mean = nx.mean(-1, keepdim=True)
        centred = nx - mean
        variance = (centred * centred).mean(-1, keepdim=True)
        return (centred * (variance + 1e-5).rsqrt() * ng + nb).sum()

    shapes[f"layer_norm [{rows},{width}]"] = (
        [nx, ng, nb],
        {"fused": lambda: F.layer_norm(nx, (width,), ng, nb).sum(), "composed": composed_layer_norm},
        ([x, gamma, beta], lambda a, c, d: torch.nn.functional.layer_norm(a, (width,), c, d).sum()))
    return shapes


def run_once(leaves, forward) -> float:
    for t in leaves:
        t.grad = None
    start = time.perf_counter()
    forward().backward()
    return time.perf_counter() - start


def memory(leaves, forward) -> tuple:
    """(bytes held by the graph after forward, peak bytes above the start during fwd + bwd)."""
    for t in leaves:
        t.grad = None
    gc.collect()
    zero.cpu.reset_peak_memory_stats()
    start = zero.cpu.memory_stats()["live_bytes"]
    loss = forward()
    held = zero.cpu.memory_stats()["live_bytes"] - start
    loss.backward()
    del loss
    for t in leaves:
        t.grad = None
    return held, zero.cpu.memory_stats()["peak_bytes"] - start


def torch_runner(spec, dtype):
    if torch is None or spec is None:
        return None
    arrays, forward = spec
    tensors = [torch.tensor(a, dtype=getattr(torch, dtype.name), requires_grad=True) for a in arrays]

    def run():
        for t in tensors:
            t.grad = None
        start = time.perf_counter()
        forward(*tensors).backward()
        return time.perf_counter() - start
    return run


def mb(n: int) -> str:
    return f"{n / 2**20:8.1f}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the book's batch: B=64 (N=16384)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args(argv)
    batch = 64 if args.full else 8
    dtype = getattr(zero, args.dtype)
    rng = np.random.default_rng(0)
    print(f"B={batch} T=256 C=384 H=6 V=4000, {args.dtype}, median of {args.repeats} interleaved runs"
          + ("" if torch is None else f", torch {torch.__version__} ({torch.get_num_threads()} threads)"))
    header = (f"{'op':46s} {'fused ms':>9s} {'composed':>9s} {'torch':>8s} {'f/c':>6s} {'f/torch':>7s}"
              f" {'held MB f':>9s} {'c':>8s} {'peak MB f':>9s} {'c':>8s}")
    print(header)
    print("-" * len(header))
    for name, (leaves, impls, torch_spec) in cases(batch, 256, 384, 6, 4000, dtype, rng).items():
        runners = {key: (lambda fn=fn, leaves=leaves: run_once(leaves, fn)) for key, fn in impls.items()}
        reference = torch_runner(torch_spec, dtype)
        if reference is not None:
            runners["torch"] = reference
        for run in runners.values():   # warm up: compile kernels, fill the allocator's pool
            run()
        times = {key: [] for key in runners}
        for _ in range(args.repeats):
            for key, run in runners.items():
                times[key].append(run())
        ms = {key: statistics.median(values) * 1e3 for key, values in times.items()}
        held_f, peak_f = memory(leaves, impls["fused"])
        held_c, peak_c = memory(leaves, impls["composed"])
        torch_ms = ms.get("torch", math.nan)
        print(f"{name:46s} {ms['fused']:9.2f} {ms['composed']:9.2f} {torch_ms:8.2f} "
              f"{ms['fused'] / ms['composed']:6.2f} {ms['fused'] / torch_ms:7.2f} "
              f"{mb(held_f):>9s} {mb(held_c)} {mb(peak_f):>9s} {mb(peak_c)}")


if __name__ == "__main__":
    main()
