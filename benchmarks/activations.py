"""PyTorch's other activations and losses, forward + backward, Zero against PyTorch (CPU).

    python benchmarks/activations.py [--rounds 5] [--repeats 7] [--size 1048576] [--dtype float32]

Zero and PyTorch run in separate processes, taking turns (zero, torch, torch, zero, ...),
one process per framework per round, as ``conv.py`` does (see notes/cpu-speed.md for why).
Each process times every case ``--repeats`` times after a warm-up and reports its medians;
the table gives the median over the rounds of each framework's time and the median of the
per-round ratios Zero / PyTorch.

A case is one call on a (size / 1024, 1024) input that requires grad, then ``backward``
with a given gradient (a scalar loss: ``backward()``). Each activation is one op in Zero
(one forward kernel, one backward kernel: ``backends/array_kernels/activation.py``, NumPy
passes on the CPU); the losses other than the two binary cross-entropies are compositions.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import turns  # the sibling module, whichever directory the script runs from

ACTIVATIONS = {  # name: call on (functional module, x)
    "relu": lambda F, x: F.relu(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.1),
    "elu": lambda F, x: F.elu(x),
    "selu": lambda F, x: F.selu(x),
    "softplus": lambda F, x: F.softplus(x),
    "mish": lambda F, x: F.mish(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softsign": lambda F, x: F.softsign(x),
    "softshrink": lambda F, x: F.softshrink(x),
    "glu": lambda F, x: F.glu(x),
}
LOSSES = {  # name: call on (functional module, x, probabilities, signs)
    "binary_cross_entropy": lambda F, x, p, s: F.binary_cross_entropy(x.sigmoid(), p),
    "binary_cross_entropy_with_logits": lambda F, x, p, s: F.binary_cross_entropy_with_logits(x, p),
    "l1_loss": lambda F, x, p, s: F.l1_loss(x, p),
    "smooth_l1_loss": lambda F, x, p, s: F.smooth_l1_loss(x, p),
    "kl_div (batchmean)": lambda F, x, p, s: F.kl_div(x, p, reduction="batchmean"),
    "soft_margin_loss": lambda F, x, p, s: F.soft_margin_loss(x, s),
}


def worker(framework: str, repeats: int, dtype: str, size: int, threads: int) -> None:
    """Time every case in this process, print {case: median seconds} as JSON."""
    import numpy as np

    if framework == "torch":
        import torch
        torch.set_num_threads(threads)
        lib = torch
    else:
        import zero
        lib = zero
    functional = lib.nn.functional
    rng = np.random.default_rng(0)
    shape = (max(size // 1024, 1), 1024)
    x = lib.tensor((rng.standard_normal(shape) * 3).astype(dtype), requires_grad=True)
    grad = lib.tensor(rng.standard_normal(shape).astype(dtype))
    half_grad = lib.tensor(rng.standard_normal((shape[0], shape[1] // 2)).astype(dtype))
    probabilities = lib.tensor(rng.uniform(size=shape).astype(dtype))
    signs = lib.tensor(np.sign(rng.standard_normal(shape)).astype(dtype))
    medians = {}
    for name, call in ACTIVATIONS.items():
        cotangent = half_grad if name == "glu" else grad

        def step(call=call, cotangent=cotangent):
            call(functional, x).backward(cotangent)
            x.grad = None
        medians[name] = turns.median_seconds(step, warmup=2, repeats=repeats)
    for name, loss in LOSSES.items():
        def loss_step(loss=loss):
            loss(functional, x, probabilities, signs).backward()
            x.grad = None
        medians[name] = turns.median_seconds(loss_step, warmup=2, repeats=repeats)
    print(json.dumps(medians))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    turns.add_comparison_arguments(parser, repeats=7)
    parser.add_argument("--size", type=int, default=1 << 20, help="elements of the input")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.repeats, args.dtype, args.size, args.threads)
        return
    extra = ["--repeats", str(args.repeats), "--dtype", args.dtype, "--size", str(args.size), "--threads",
             str(args.threads)]
    title = (f"activations and losses, forward + backward on {args.size} {args.dtype} elements, medians of "
             f"{args.rounds} rounds x {args.repeats} calls, separate processes taking turns")
    turns.compare_fresh_processes(__file__, extra, args.rounds, [*ACTIVATIONS, *LOSSES], title, digits=2)


if __name__ == "__main__":
    main()
