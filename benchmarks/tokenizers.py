"""Characters against a byte-level BPE for `zero gpt train`, at the same wall time.

    PYTHONPATH=src python benchmarks/tokenizers.py [--vocab-size 512] [--out runs/tokenizers]

On the default corpus (Python's documentation topics) with the `cpu` preset:

1. prepares it twice (`zero gpt prepare --tokenizer char`, `--tokenizer bpe --vocab-size N`);
2. trains `char` for the preset's steps and notes its training time (the job's own
   "done: ... in M:SS", which leaves out start-up and the first run's compilation);
3. measures both step times in short probe runs taking turns (the median ms/step of their
   metrics, after the first steps; taking turns, a change in the machine's load moves both
   alike), and trains `bpe` for char's steps x char's step time / BPE's step time, so both
   get the same time (its
   --eval-interval a quarter of its steps, as char's 150 of 600: the same number of
   evaluations);
4. prints each run's steps, time, final validation loss (nats per token) and bits per
   character (the loss x val tokens / val characters / ln 2: the number that compares), and
   a sample of each of about the same number of characters (seed 0).

Every job runs in its own process, one after the other, through the `zero` CLI as a user
would. Run it alone on the machine (the step times decide BPE's steps): about 4 minutes
on the project's 2 cores. Why 512 for the BPE: the corpus is small (465 K characters; the
train split is 419 K), and a bigger vocabulary both shrinks the data in tokens (1024: 144 K
train tokens, so the preset's 600 x 2,048 tokens would pass over it 8 times) and costs a
larger output layer each step (its work grows with the vocabulary); 512 still packs 2.1
characters a token.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def zero(*argv, quiet: bool = False) -> str:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "zero", *map(str, argv)], env=env, capture_output=True, text=True,
                            encoding="utf-8")
    if result.returncode != 0:
        sys.exit(f"zero {' '.join(map(str, argv))} failed ({result.returncode}):\n{result.stderr}")
    if not quiet:
        print(result.stdout.rstrip(), flush=True)
    return result.stdout


def training_seconds(out: str) -> float:
    """The job's own time for its steps: "done: 600 steps in 1:14, ..."."""
    match = re.search(r"^done: [\d,]+ steps(?: \(from step [\d,]+\))? in (?:(\d+):)?(\d+):(\d+)", out, re.MULTILINE)
    if match is None:
        sys.exit(f"no summary line in the job's output:\n{out}")
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return 3600 * hours + 60 * minutes + seconds


def metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def step_ms(run: Path, skip: int = 5) -> float:
    """Median ms of a training step (evaluation steps left out: they also validate and sample)."""
    records = [r for r in metrics(run)[skip:] if "val_loss" not in r]
    return statistics.median(r["ms_per_step"] for r in records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab-size", type=int, default=512, help="the BPE's vocabulary (see the docstring)")
    parser.add_argument("--out", default="runs/tokenizers", help="the prepared data and the runs go here")
    parser.add_argument("--sample-chars", type=int, default=600, help="about how many characters each sample has")
    parser.add_argument("--preset", default="cpu", help="the preset of both runs (tiny: to try the script)")
    parser.add_argument("--probe-steps", type=int, default=40, help="steps of the run that measures BPE's step time")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    import pydoc_data.topics

    topics = pydoc_data.topics.topics
    corpus = out / "pydoc-topics.txt"   # the text `zero gpt train` prepares without --data
    corpus.write_text("\n\n".join(topics[name] for name in sorted(topics)), encoding="utf-8")
    data = {"char": out / "char-data", "bpe": out / f"bpe{args.vocab_size}-data"}
    zero("gpt", "prepare", corpus, "--out", data["char"])
    started = time.perf_counter()
    zero("gpt", "prepare", corpus, "--out", data["bpe"], "--tokenizer", "bpe", "--vocab-size", args.vocab_size)
    print(f"(BPE prepared in {time.perf_counter() - started:.1f} s, start-up included)")
    meta = {kind: json.loads((d / "meta.json").read_text()) for kind, d in data.items()}

    # kernels compiled (and cached) before anything is timed: a few steps of each
    for kind in data:
        zero("gpt", "train", "--data", data[kind], "--out", out / f"warm-{kind}", "--overwrite", "--steps", 3,
             "--preset", args.preset, "--eval-interval", 3, "--eval-iters", 1, "--sample-tokens", 4, quiet=True)

    runs = {"char": out / "char", "bpe": out / f"bpe{args.vocab_size}"}
    char_out = zero("gpt", "train", "--data", data["char"], "--out", runs["char"], "--overwrite", "--preset",
                    args.preset)
    char_seconds, char_ms = training_seconds(char_out), step_ms(runs["char"])
    char_steps = metrics(runs["char"])[-1]["step"]

    # the step times' ratio from short probes of both, taking turns (a change in the machine's
    # load between the two runs then moves both alike)
    probe_ms: dict[str, list[float]] = {"char": [], "bpe": []}
    for _ in range(2):
        for kind in data:
            probe = out / f"probe-{kind}"
            zero("gpt", "train", "--data", data[kind], "--out", probe, "--overwrite", "--preset", args.preset,
                 "--steps", args.probe_steps, "--eval-interval", args.probe_steps, "--eval-iters", 1,
                 "--sample-tokens", 4, quiet=True)
            probe_ms[kind].append(step_ms(probe))
    char_probe, bpe_ms = (statistics.median(probe_ms[kind]) for kind in ("char", "bpe"))
    bpe_steps = max(4, round(char_steps * char_probe / bpe_ms))
    print(f"\nstep time: char {char_ms:.1f} ms in its run; probes of {args.probe_steps} steps taking turns: char "
          f"{char_probe:.1f} ms, BPE {bpe_ms:.1f} ms: BPE trains {bpe_steps} steps for char's {char_steps}\n",
          flush=True)
    bpe_out = zero("gpt", "train", "--data", data["bpe"], "--out", runs["bpe"], "--overwrite", "--preset",
                   args.preset, "--steps", bpe_steps, "--eval-interval", max(1, bpe_steps // 4))
    seconds = {"char": char_seconds, "bpe": training_seconds(bpe_out)}
    steps = {"char": char_steps, "bpe": bpe_steps}

    rows = []
    samples = {}
    for kind, run in runs.items():
        last = [r for r in metrics(run) if "val_loss" in r][-1]
        chars_per_token = meta[kind]["val_characters"] / meta[kind]["val_tokens"]
        tokens = max(1, round(args.sample_chars / chars_per_token))
        samples[kind] = zero("gpt", "sample", "--run", run, "--tokens", tokens, "--seed", 0, quiet=True)
        rows.append(f"| {kind if kind == 'char' else f'bpe {args.vocab_size}'} | {meta[kind]['vocab_size']} | "
                    f"{chars_per_token:.2f} | {steps[kind]} | {seconds[kind]:.0f} s | {last['val_loss']:.4f} | "
                    f"{last['val_bpc']:.3f} |")
        assert math.isclose(last["val_bpc"], last["val_loss"] / chars_per_token / math.log(2), rel_tol=1e-3)
    print("\n| tokenizer | vocabulary | val characters a token | steps | training time | val loss (nats/token) "
          "| val bits per character |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    for kind, text in samples.items():
        print(f"\n--- {kind} sample (zero gpt sample --run {runs[kind]} --seed 0) ---\n{text.rstrip()}")


if __name__ == "__main__":
    main()
