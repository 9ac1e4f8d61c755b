"""nn.TransformerEncoderLayer forward + backward, Zero against PyTorch (CPU).

    python benchmarks/transformer_layer.py [--rounds 5] [--repeats 5] [--threads 2] [--cases a,b]

The layer: d_model 256, 4 heads, dim_feedforward 2048 (the default), batch_first, dropout 0, in training
mode, on x (32, 128, 256) float32; the step is ``layer(x, ...)``, a backward from a fixed
upstream gradient, and the gradients cleared. Cases: PyTorch's default post-norm ReLU layer,
the pre-norm GELU layer (Zero runs its feed-forward as the fused FFN op), and the post-norm
layer with a causal float mask and a key-padding mask.

Zero and PyTorch run in separate processes, taking turns (zero, torch, torch, zero, ...),
one process per framework per round: in one process their thread pools would fight for the
cores (see notes/cpu-speed.md). Each process times every case ``--repeats`` times after a
warm-up and reports its medians; the table gives, per case, the median over the rounds of
each framework's time and the median of the per-round ratios Zero / PyTorch.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import turns  # the sibling module, whichever directory the script runs from

BATCH, LENGTH, WIDTH, HEADS, HIDDEN = 32, 128, 256, 4, 2048
CASES = {  # name: (norm_first, activation, masks)
    "post-norm relu": (False, "relu", False),
    "pre-norm gelu": (True, "gelu", False),
    "post-norm relu with causal and padding masks": (False, "relu", True),
}


def worker(framework: str, repeats: int, threads: int, names: list[str]) -> None:
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
    x = lib.tensor(rng.standard_normal((BATCH, LENGTH, WIDTH)).astype(np.float32), requires_grad=True)
    upstream = lib.tensor(rng.standard_normal((BATCH, LENGTH, WIDTH)).astype(np.float32))
    causal = lib.nn.Transformer.generate_square_subsequent_mask(LENGTH)
    padding_array = np.zeros((BATCH, LENGTH), bool)
    padding_array[::2, -16:] = True
    padding = lib.tensor(padding_array)
    medians = {}
    for name in names:
        norm_first, activation, masked = CASES[name]
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(WIDTH, HEADS, HIDDEN, dropout=0.0, activation=activation,
                                               batch_first=True, norm_first=norm_first)
        kwargs = {"src_mask": causal, "src_key_padding_mask": padding} if masked else {}

        def step(layer=layer, kwargs=kwargs):
            layer(x, **kwargs).backward(upstream)
            x.grad = None
            for p in layer.parameters():
                p.grad = None

        medians[name] = turns.median_seconds(step, warmup=2, repeats=repeats)
    print(json.dumps(medians))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    turns.add_comparison_arguments(parser, repeats=5, dtype=False)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names (default: all)")
    args = parser.parse_args()
    names = [n for n in args.cases.split(",") if n]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        raise SystemExit(f"unknown cases {unknown}; choose from {list(CASES)}")
    if args.worker:
        worker(args.worker, args.repeats, args.threads, names)
        return
    title = (f"TransformerEncoderLayer({WIDTH}, {HEADS}, {HIDDEN}, batch_first, dropout 0) forward + backward on "
             f"({BATCH}, {LENGTH}, {WIDTH}) float32, medians of {args.rounds} rounds x {args.repeats} steps, "
             "separate processes taking turns")
    title = (f"TransformerEncoderLayer({WIDTH}, {HEADS}, {HIDDEN}, batch_first, dropout 0) forward + backward on "
             f"({BATCH}, {LENGTH}, {WIDTH}) float32, medians of {args.rounds} rounds x {args.repeats} steps, "
             "separate processes taking turns")
    extra = ["--repeats", str(args.repeats), "--threads", str(args.threads), "--cases", args.cases]
    turns.compare_fresh_processes(__file__, extra, args.rounds, names, title)


if __name__ == "__main__":
    main()
