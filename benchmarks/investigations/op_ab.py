"""Single ops, forward + backward, of this checkout against another commit, in one process.

    PYTHONPATH=src python benchmarks/investigations/op_ab.py [--base HEAD] [--rounds 8] [--calls 30]
        [--only gelu,linear]

``step_ab.py``'s method for a training step (read its docstring: the base commit's
``src/zero`` imported beside this checkout as ``zero_base``, the two alternating), applied
to ops at the shapes of the small GPT configurations: softmax and log-softmax, cross-entropy,
NLL, linear + cross-entropy, embedding lookups, causal self-attention, GELU, dropout, a
linear layer, and the memory-bound add, multiply, bias and relu at the larger GPTs' shapes.
Each round times ``--calls`` calls of an op on one side and then on the other (the order
alternating between rounds) and keeps the ratio of the medians; the table has the median
and range of the ratios over rounds.

For a change's effect on the ops it touches, not for comparisons with PyTorch
(``kernels.py`` does those).
"""
from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, whose modules this reuses
from step_ab import extract_base
from turns import median_seconds


def workloads(zero) -> dict:
    """name -> a call running one op forward and backward on ``zero`` (the same operands on
    both sides: each side draws them from its own generator with the same seed)."""
    functional = zero.nn.functional
    rng = np.random.default_rng(0)
    calls = {}

    def leaf(*shape):
        return zero.tensor(rng.standard_normal(shape, dtype=np.float32) * 2, requires_grad=True)

    def with_gradient(name, op, shape, out_shape=None):
        x, grad = leaf(*shape), zero.tensor(rng.standard_normal(out_shape or shape, dtype=np.float32))

        def call():
            x.grad = None
            op(x).backward(grad)
        calls[name] = call

    def with_targets(name, op, shape, classes=None):
        x, target = leaf(*shape), zero.tensor(rng.integers(0, classes or shape[1], shape[0]))

        def call():
            x.grad = None
            op(x, target).backward()
        calls[name] = call

    for shape in [(4096, 64), (8192, 64), (16384, 64)]:
        with_gradient(f"softmax {shape}", lambda x: functional.softmax(x, -1), shape)
        with_gradient(f"log_softmax {shape}", lambda x: functional.log_softmax(x, -1), shape)
    for shape in [(1024, 65), (2048, 65), (4096, 65), (8192, 65)]:
        with_targets(f"cross_entropy {shape}", functional.cross_entropy, shape)
    for shape in [(1024, 65), (4096, 65), (16384, 65)]:
        with_targets(f"nll_loss {shape}", functional.nll_loss, shape)
    for rows, width in [(1024, 128), (2048, 128), (16384, 384)]:
        weight = leaf(65, width)
        with_targets(f"linear_cross_entropy ({rows}, {width}) x 65",
                     lambda x, target, weight=weight: functional.linear_cross_entropy(x, weight, target),
                     (rows, width), classes=65)
    for batch, block in [(16, 64), (32, 64)]:     # the token lookups of the tiny and small GPTs
        ids = zero.tensor(rng.integers(0, 65, (batch, block)))
        with_gradient(f"embedding ids ({batch}, {block}) of (65, 128)",
                      lambda table, ids=ids: functional.embedding(ids, table), (65, 128), (batch, block, 128))
    for batch, block, width, heads in [(16, 64, 128, 4), (32, 64, 128, 4), (32, 128, 256, 4), (8, 256, 384, 6)]:
        with_gradient(f"self_attention ({batch}, {block}, 3 x {width}), {heads} heads",
                      lambda qkv, heads=heads: functional.self_attention(qkv, heads),
                      (batch, block, 3 * width), (batch, block, width))
    for shape in [(512, 512), (1024, 512), (2048, 512)]:
        with_gradient(f"gelu {shape}", functional.gelu, shape)
    for shape in [(2048, 128), (4096, 128)]:
        with_gradient(f"dropout {shape}", lambda x: functional.dropout(x, 0.2, True), shape)
    for rows, width, out in [(64, 784, 512), (1024, 128, 128), (1024, 128, 384), (2048, 128, 512)]:
        weight, bias = leaf(out, width), leaf(out)
        with_gradient(f"linear ({rows}, {width}) -> {out}",
                      lambda x, weight=weight, bias=bias: functional.linear(x, weight, bias),
                      (rows, width), (rows, out))
    for shape in [(4096, 256), (16384, 384)]:     # the residual stream of the medium and book GPTs
        other = leaf(*shape)
        with_gradient(f"add {shape}", lambda x, other=other: x + other, shape)
        with_gradient(f"mul {shape}", lambda x, other=other: x * other, shape)
    for rows, width in [(4096, 1024), (16384, 1536)]:
        bias = leaf(width)
        with_gradient(f"add bias ({rows}, {width})", lambda x, bias=bias: x + bias, (rows, width))
        with_gradient(f"relu ({rows}, {width})", functional.relu, (rows, width))
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--only", default="", help="time only the ops whose name contains one of these "
                        "comma-separated words")
    args = parser.parse_args()
    wanted = [word for word in args.only.split(",") if word]
    folder = Path(tempfile.mkdtemp())
    extract_base(args.base, folder)
    sys.path.insert(0, str(folder))
    sides = {name: {op: call for op, call in workloads(importlib.import_module(name)).items()
                    if not wanted or any(word in op for word in wanted)}
             for name in ("zero", "zero_base")}
    for calls in sides.values():          # compile and warm up
        for call in calls.values():
            for _ in range(5):
                call()
    times: dict = {name: {"zero": [], "zero_base": [], "ratio": []} for name in sides["zero"]}
    for round_ in range(args.rounds):
        order = ("zero", "zero_base") if round_ % 2 == 0 else ("zero_base", "zero")
        for name, record in times.items():
            measured = {side: median_seconds(sides[side][name], 0, args.calls) for side in order}
            for side, seconds in measured.items():
                record[side].append(seconds)
            record["ratio"].append(measured["zero"] / measured["zero_base"])
    print(f"`python benchmarks/investigations/op_ab.py --base {args.base} --rounds {args.rounds} --calls {args.calls}"
          + (f" --only {args.only}" if args.only else "") + "` "
          "(one process, alternating; forward + backward)\n")
    print("| op (shape) | base µs | new µs | new/base (range) |\n|---|---:|---:|---:|")
    for name, record in times.items():
        ratios = record["ratio"]
        print(f"| {name} | {statistics.median(record['zero_base']) * 1e6:.0f} | "
              f"{statistics.median(record['zero']) * 1e6:.0f} | "
              f"{statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f}) |")


if __name__ == "__main__":
    main()
