"""Recurrent layers forward + backward, Zero against PyTorch (CPU): nn.LSTM and nn.GRU with 2
layers, input and hidden 200, sequence 35, batch 20 (the PTB word-language-model shape), and
an LSTM with projections (proj_size 100).

    python benchmarks/recurrent.py [--rounds 5] [--repeats 10] [--dtype float32]

Zero and PyTorch run in separate processes, taking turns (zero, torch, zero, torch, ...),
one process per framework per round: in one process their thread pools would fight for
the cores (see notes/cpu-speed.md). Each process times every case ``--repeats`` times after
a warm-up and reports its medians; the table gives, per case, the median over the rounds
of each framework's time and the median of the per-round ratios Zero / PyTorch.

A case is one call of the layer on a (35, 20, 200) input that needs no gradient (a first
layer's, as after an embedding), then backward from a fixed gradient of the output and of
the final states (the gradients of every weight and bias).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import turns  # the sibling module, whichever directory the script runs from

CASES = [  # name, layer, (input, hidden, layers), (sequence, batch), bidirectional, other arguments
    ("LSTM 2x200 L35 N20", "LSTM", (200, 200, 2), (35, 20), False, {}),
    ("GRU 2x200 L35 N20", "GRU", (200, 200, 2), (35, 20), False, {}),
    ("LSTM 1x200 bidirectional L35 N20", "LSTM", (200, 200, 1), (35, 20), True, {}),
    ("LSTM 2x200 proj 100 L35 N20", "LSTM", (200, 200, 2), (35, 20), False, {"proj_size": 100}),
]


def worker(framework: str, repeats: int, dtype: str, threads: int) -> None:
    """Time every case in this process, print {case: median seconds} as JSON."""
    import numpy as np

    if framework == "torch":
        import torch
        torch.set_num_threads(threads)
        lib = torch
    else:
        import zero
        lib = zero
    rng = np.random.default_rng(0)
    medians = {}
    for name, layer, (inputs, hidden, layers), (length, batch), bidirectional, extra in CASES:
        module = getattr(lib.nn, layer)(inputs, hidden, layers, bidirectional=bidirectional, **extra)
        for p in module.parameters():   # the same weights in both processes
            with lib.no_grad():
                p.copy_(lib.tensor(rng.uniform(-0.07, 0.07, tuple(p.shape)).astype(dtype)))
        module = module.to(getattr(lib, dtype))
        x = lib.tensor(rng.standard_normal((length, batch, inputs)).astype(dtype))
        out, _ = module(x)
        grad = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(dtype))

        def step(module=module, x=x, grad=grad):
            output, state = module(x)
            h_n = state[0] if isinstance(state, tuple) else state
            ((output * grad).sum() + h_n.sum()).backward()
            for p in module.parameters():
                p.grad = None

        medians[name] = turns.median_seconds(step, warmup=2, repeats=repeats)
    print(json.dumps(medians))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    turns.add_comparison_arguments(parser, repeats=10)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.repeats, args.dtype, args.threads)
        return
    extra = ["--repeats", str(args.repeats), "--dtype", args.dtype, "--threads", str(args.threads)]
    title = (f"recurrent layers forward + backward, {args.dtype}, medians of {args.rounds} rounds x {args.repeats} "
             "calls, separate processes taking turns")
    turns.compare_fresh_processes(__file__, extra, args.rounds, [name for name, *_ in CASES], title)


if __name__ == "__main__":
    main()
