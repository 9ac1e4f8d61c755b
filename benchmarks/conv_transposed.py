"""Transposed convolution forward + backward, Zero against PyTorch (CPU): a DCGAN generator's stack.

    PYTHONPATH=src python benchmarks/conv_transposed.py [--batch 64] [--rounds 5] [--repeats 3]
        [--dtype float32] [--threads 2] [--layers]

The generator (DCGAN's, without its batch norms): z (B, 100, 1, 1) -> 512x4x4 -> 256x8x8 ->
128x16x16 -> 64x32x32 -> 3x64x64, each a ConvTranspose2d with kernel 4 and no bias (the first
stride 1 padding 0, the others stride 2 padding 1), ReLU between them and tanh at the end.
One step is the forward and the backward of a fixed cotangent (weight gradients; z needs none).
Both frameworks get the same weights (drawn here with NumPy) and the same inputs.
``--layers`` also times each layer alone (forward + backward, its input needing a gradient
except the first's).

Timing: Zero and PyTorch each in a long-lived worker process, taking turns as
``turns.py`` describes (A B, then B A, ...; a settle pause after each reply); each round
each worker runs its untimed warm-up and ``--repeats`` timed steps and reports the median.
The table gives the median over rounds of each framework's time and the median of the
per-round ratios Zero / PyTorch, with their range.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import turns  # the sibling module, whichever directory the script runs from

NZ = 100
LAYERS = [(NZ, 512, 1, 0), (512, 256, 2, 1), (256, 128, 2, 1), (128, 64, 2, 1), (64, 3, 2, 1)]  # in, out, s, p
KERNEL = 4


def weights(dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((c_in, c_out, KERNEL, KERNEL)) * 0.02).astype(dtype) for c_in, c_out, _, _ in LAYERS]


def layer_inputs(batch: int) -> list[tuple[int, ...]]:
    shapes, size = [], 1
    for c_in, _, stride, padding in LAYERS:
        shapes.append((batch, c_in, size, size))
        size = (size - 1) * stride - 2 * padding + KERNEL
    return shapes + [(batch, 3, size, size)]


class Side:
    """One framework's worker: the generator, its inputs, and the timed steps."""

    def __init__(self, framework: str, threads: int):
        if framework == "torch":
            import torch
            torch.set_num_threads(threads)
            self.lib = torch
        else:
            import zero
            self.lib = zero
        self.functional = self.lib.nn.functional

    def setup(self, batch: int, dtype: str) -> None:
        lib = self.lib
        self.weights = [lib.tensor(w, requires_grad=True) for w in weights(dtype)]
        rng = np.random.default_rng(1)
        shapes = layer_inputs(batch)
        self.z = lib.tensor(rng.standard_normal(shapes[0]).astype(dtype))
        self.cotangent = lib.tensor(rng.standard_normal(shapes[-1]).astype(dtype))
        self.layer_data = []
        for k, (_, c_out, stride, padding) in enumerate(LAYERS):
            x = lib.tensor(rng.standard_normal(shapes[k]).astype(dtype), requires_grad=k > 0)
            grad = lib.tensor(rng.standard_normal(shapes[k + 1][:1] + (c_out,) + shapes[k + 1][2:]).astype(dtype))
            self.layer_data.append((x, grad, stride, padding))

    def generator_step(self) -> None:
        F, h = self.functional, self.z
        for k, (weight, (_, _, stride, padding)) in enumerate(zip(self.weights, LAYERS)):
            h = F.conv_transpose2d(h, weight, None, stride, padding)
            h = F.relu(h) if k < len(LAYERS) - 1 else self.lib.tanh(h)
        h.backward(self.cotangent)
        for weight in self.weights:
            weight.grad = None

    def layer_step(self, k: int) -> None:
        x, grad, stride, padding = self.layer_data[k]
        self.functional.conv_transpose2d(x, self.weights[k], None, stride, padding).backward(grad)
        self.weights[k].grad = x.grad = None

    def handle(self, request: dict) -> dict:
        self.setup(request["batch"], request["dtype"])
        times = {"generator": turns.median_seconds(self.generator_step, request["warmup"], request["repeats"])}
        if request["layers"]:
            for k in range(len(LAYERS)):
                times[f"layer {k + 1}"] = turns.median_seconds(lambda k=k: self.layer_step(k), 1, request["repeats"])
        return {"times": times}


def case_names(layers: bool, batch: int) -> list[tuple[str, str]]:
    names = [("generator", f"DCGAN generator, batch {batch}: z -> 3x64x64, 5 ConvTranspose2d k4")]
    if layers:
        for k, (c_in, c_out, stride, padding) in enumerate(LAYERS):
            size = layer_inputs(batch)[k][2]
            names.append((f"layer {k + 1}", f"  layer {k + 1}: {c_in}x{size}x{size} -> {c_out}, s{stride} p{padding}"))
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5, help="turns per framework")
    parser.add_argument("--repeats", type=int, default=3, help="timed steps per turn")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", action="store_true", help="also time each layer alone")
    parser.add_argument("--worker", choices=["zero", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        turns.serve(Side(args.worker, args.threads).handle)
        return
    try:
        import torch  # noqa: F401  (only to know whether the comparison can run)
        frameworks = ["zero", "torch"]
    except ImportError:
        frameworks = ["zero"]
    workers = {f: turns.Worker(f, turns.worker_command(__file__, f, "--threads", str(args.threads)))
               for f in frameworks}
    request = dict(batch=args.batch, dtype=args.dtype, repeats=args.repeats, warmup=args.warmup, layers=args.layers)
    rounds: dict[str, list[dict]] = {f: [] for f in frameworks}
    try:
        for r in range(args.rounds):
            for framework in turns.order(frameworks, r):
                rounds[framework].append(workers[framework].call(**request)["times"])
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    finally:
        for worker in workers.values():
            worker.close()
    print(f"conv_transpose2d forward + backward, {args.dtype}, {args.threads} threads, medians of {args.rounds} "
          f"rounds x {args.repeats} steps, separate processes taking turns")
    rows = []
    for key, label in case_names(args.layers, args.batch):
        zero_times = [t[key] for t in rounds["zero"]]
        row = [label, f"{turns.median(zero_times) * 1e3:.1f}"]
        if "torch" in rounds:
            torch_times = [t[key] for t in rounds["torch"]]
            ratio = turns.ratios(zero_times, torch_times)
            row += [f"{turns.median(torch_times) * 1e3:.1f}", f"{turns.median(ratio):.2f}",
                    f"{min(ratio):.2f}-{max(ratio):.2f}"]
        else:
            row += ["-", "-", "-"]
        rows.append(row)
    print(turns.markdown(["case", "zero ms", "torch ms", "zero / torch", "range"], rows))


if __name__ == "__main__":
    main()
