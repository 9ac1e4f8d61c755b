"""Convolution forward + backward, Zero against PyTorch (CPU), at LeNet and small-ResNet shapes.

    python benchmarks/conv.py [--rounds 5] [--repeats 5] [--dtype float32]

Zero and PyTorch run in separate processes, taking turns (zero, torch, zero, torch, ...),
one process per framework per round: in one process their thread pools would fight for
the cores (see notes/cpu-speed.md). Each process times every case ``--repeats`` times after
a warm-up and reports its medians; the table gives, per case, the median over the rounds
of each framework's time and the median of the per-round ratios Zero / PyTorch.

A case is one ``conv2d`` with bias, forward and backward (gradients of the weight and the
bias, and of the input except for a network's first layer, whose input needs none).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import turns  # the sibling module, whichever directory the script runs from

CASES = [  # name, input shape, (out channels, kernel), stride, padding, input needs grad
    ("LeNet-5 conv1 (64,1,28,28)->6 5x5", (64, 1, 28, 28), (6, 5), 1, 0, False),
    ("LeNet-5 conv2 (64,6,12,12)->16 5x5", (64, 6, 12, 12), (16, 5), 1, 0, True),
    ("mnist_cnn conv1 (64,1,28,28)->32 3x3", (64, 1, 28, 28), (32, 3), 1, 0, False),
    ("mnist_cnn conv2 (64,32,26,26)->64 3x3", (64, 32, 26, 26), (64, 3), 1, 0, True),
    ("ResNet (32,64,32,32)->64 3x3 p1", (32, 64, 32, 32), (64, 3), 1, 1, True),
    ("ResNet (32,64,32,32)->128 3x3 s2 p1", (32, 64, 32, 32), (128, 3), 2, 1, True),
    ("ResNet (32,64,32,32)->128 1x1", (32, 64, 32, 32), (128, 1), 1, 0, True),
    ("ResNet (32,128,16,16)->128 3x3 p1", (32, 128, 16, 16), (128, 3), 1, 1, True),
]


def worker(framework: str, repeats: int, dtype: str, threads: int) -> None:
    """Time every case in this process, print {case: median seconds} as JSON."""
    import numpy as np

    if framework == "torch":
        import torch
        torch.set_num_threads(threads)
        lib, functional = torch, torch.nn.functional
    else:
        import zero
        lib, functional = zero, zero.nn.functional
    rng = np.random.default_rng(0)
    medians = {}
    for name, shape, (out_channels, kernel), stride, padding, input_grad in CASES:
        x = rng.standard_normal(shape).astype(dtype)
        w = (rng.standard_normal((out_channels, shape[1], kernel, kernel)) * 0.1).astype(dtype)
        b = rng.standard_normal(out_channels).astype(dtype)
        tx = lib.tensor(x, requires_grad=input_grad)
        tw, tb = lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = functional.conv2d(tx, tw, tb, stride=stride, padding=padding)
        grad = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(dtype))
        medians[name] = time_case(functional, tx, tw, tb, grad, stride, padding, repeats)
    print(json.dumps(medians))


def time_case(functional, x, weight, bias, grad, stride: int, padding: int, repeats: int) -> float:
    """Median seconds of one forward + backward, after two warm-up calls."""
    def step():
        functional.conv2d(x, weight, bias, stride=stride, padding=padding).backward(grad)
        weight.grad = bias.grad = x.grad = None

    return turns.median_seconds(step, warmup=2, repeats=repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    turns.add_comparison_arguments(parser, repeats=5)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.repeats, args.dtype, args.threads)
        return
    extra = ["--repeats", str(args.repeats), "--dtype", args.dtype, "--threads", str(args.threads)]
    title = (f"conv2d forward + backward, {args.dtype}, medians of {args.rounds} rounds x {args.repeats} calls, "
             "separate processes taking turns")
    turns.compare_fresh_processes(__file__, extra, args.rounds, [name for name, *_ in CASES], title)


if __name__ == "__main__":
    main()
