"""Time per training epoch of examples/mnist_cnn.py on Zero and, with its imports changed
back to PyTorch's, on PyTorch: the same program, file for file.

    python benchmarks/mnist_cnn.py [--rounds 2] [--epochs 1] [--data DIR] [-- more example arguments]

Each round runs the example once per framework, in separate processes taking turns
(zero, torch, then torch, zero, ...), and reads the "epoch k: S s training" lines and the
test accuracies it prints. The table gives the median over the rounds of each epoch's time
and of the ratio Zero / PyTorch, and the accuracies of the last round. PyTorch's variant
is the example's source with exactly these lines changed (``pytorch_source``).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mnist_cnn.py"

PYTORCH_IMPORTS = {
    "import zero as torch": "import torch",
    "import zero.nn as nn": "import torch.nn as nn",
    "import zero.nn.functional as F": "import torch.nn.functional as F",
    "import zero.optim as optim": "import torch.optim as optim",
    "from zero.optim.lr_scheduler import StepLR": "from torch.optim.lr_scheduler import StepLR",
    "from zero.utils.data import DataLoader, TensorDataset": "from torch.utils.data import DataLoader, TensorDataset",
}


def pytorch_source(source: str) -> str:
    """The example with PyTorch's imports in place of Zero's (each line must be there)."""
    lines = source.splitlines()
    for ours, theirs in PYTORCH_IMPORTS.items():
        if ours not in lines:
            raise SystemExit(f"{EXAMPLE}: the import line {ours!r} is gone; update PYTORCH_IMPORTS")
        lines[lines.index(ours)] = theirs
    return "\n".join(lines) + "\n"


def run(script: Path, arguments: list) -> tuple[list, list]:
    result = subprocess.run([sys.executable, str(script), *arguments], capture_output=True, text=True, check=False,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    if result.returncode != 0:
        raise SystemExit(f"{script} failed:\n{result.stderr[-3000:]}")
    seconds = [float(s) for s in re.findall(r"^epoch \d+: ([\d.]+) s training", result.stdout, re.M)]
    accuracy = [float(a) for a in re.findall(r"test accuracy ([\d.]+)%", result.stdout)]
    return seconds, accuracy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--data", default=None)
    parser.add_argument("rest", nargs="*", help="more arguments for the example (after --)")
    args = parser.parse_args()
    arguments = ["--epochs", str(args.epochs), "--log-interval", "100000", *args.rest]
    if args.data:
        arguments += ["--data", args.data]
    with tempfile.TemporaryDirectory() as directory:
        torch_script = Path(directory) / "mnist_cnn_pytorch.py"
        torch_script.write_text(pytorch_source(EXAMPLE.read_text()))
        scripts = {"zero": EXAMPLE, "torch": torch_script}
        results: dict = {"zero": [], "torch": []}
        for r in range(args.rounds):
            for framework in ("zero", "torch") if r % 2 == 0 else ("torch", "zero"):
                results[framework].append(run(scripts[framework], arguments))
                print(f"round {r + 1}: {framework} {results[framework][-1]}", file=sys.stderr, flush=True)
    print(f"examples/mnist_cnn.py {' '.join(arguments)}: medians of {args.rounds} rounds, separate processes")
    print("| epoch | zero s | torch s | zero / torch | zero test acc % | torch test acc % |\n|---|---|---|---|---|---|")
    for e in range(args.epochs):
        zero_s = statistics.median(seconds[e] for seconds, _ in results["zero"])
        torch_s = statistics.median(seconds[e] for seconds, _ in results["torch"])
        ratio = statistics.median(z[0][e] / t[0][e] for z, t in zip(results["zero"], results["torch"]))
        print(f"| {e + 1} | {zero_s:.1f} | {torch_s:.1f} | {ratio:.2f} | {results['zero'][-1][1][e]:.2f} | "
              f"{results['torch'][-1][1][e]:.2f} |")


if __name__ == "__main__":
    main()
