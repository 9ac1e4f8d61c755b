"""Character-level GPT (the book's StoneGPT): prepare a text, train, sample.

  zero gpt prepare TEXT_FILE --out DIR     vocab.txt, train.bin, val.bin (90/10)
  zero gpt train [--data DIR] [--out RUN]  the book's loop; checkpoints into RUN
  zero gpt sample --run RUN [--prompt T]   continue a prompt from the checkpoint

Without --data, `train` uses the text of Python's documentation topics
(pydoc_data.topics, in every Python installation), prepared into the cache.

RUN holds checkpoint.safetensors (the latest, which --resume and `sample` read),
checkpoint-STEP.safetensors (the newest --keep-checkpoints) and
checkpoint-best.safetensors (the lowest validation loss). Ctrl-C or SIGTERM:
the step finishes, a checkpoint is written, exit status 130 / 143.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..data.text import VAL_FILE, CharTokenizer, prepare_file, prepare_text
from ..errors import DataError, UsageError
from ..models.gpt import GPT, GPTConfig
from ..random import Generator, manual_seed
from ..serialization import load
from ..tensors.creation import tensor
from .arguments import require_at_least, require_number
from .checkpoints import CheckpointSet
from . import gpt_train
from .common import resolve_device
from .gpt_train import CHECKPOINT, check_arguments, train


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown, the description's lines kept."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    prepare = commands.add_parser("prepare", help="turn a UTF-8 text into character-level training data")
    prepare.add_argument("text", metavar="TEXT_FILE")
    prepare.add_argument("--out", required=True, metavar="DIR")
    prepare.set_defaults(handler=run_prepare)

    t = commands.add_parser("train", help="train a GPT on prepared data", description=gpt_train.__doc__,
                            formatter_class=_Formatter)
    t.add_argument("--data", metavar="DIR", help="prepared data (default: Python's documentation topics)")
    t.add_argument("--out", default="runs/gpt", metavar="RUN_DIR", help="where checkpoints go")
    t.add_argument("--device", default="cpu", help="cpu or cuda")
    t.add_argument("--steps", type=int, default=30, help="optimizer steps (the book's CPU smoke run is 30)")
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--block-size", type=int, default=256)
    t.add_argument("--n-layer", type=int, default=6)
    t.add_argument("--n-head", type=int, default=6)
    t.add_argument("--n-embd", type=int, default=384)
    t.add_argument("--dropout", type=float, default=0.2)
    t.add_argument("--lr", type=float, default=1e-3,
                   help="peak learning rate of the book's AdamW (eps inside the square root, "
                        "AdamW(eps_inside_sqrt=True); PyTorch's puts it outside)")
    t.add_argument("--min-lr", type=float, default=1e-4)
    t.add_argument("--warmup", type=int, default=100, help="linear warm-up steps")
    t.add_argument("--weight-decay", type=float, default=0.1)
    t.add_argument("--grad-clip", type=float, default=1.0, help="global gradient norm limit (0: off)")
    t.add_argument("--eval-interval", type=int, default=500, help="steps between validation and checkpoint")
    t.add_argument("--eval-iters", type=int, default=20, help="batches per loss estimate")
    t.add_argument("--log-interval", type=int, default=10)
    t.add_argument("--sample-tokens", type=int, default=200, help="length of the sample at each evaluation")
    t.add_argument("--seed", type=int, default=1337)
    t.add_argument("--checkpoint-minutes", type=float, default=10.0, metavar="M",
                   help="also checkpoint after M minutes of wall-clock time since the last one (0: off)")
    t.add_argument("--keep-checkpoints", type=int, default=3, metavar="N",
                   help="numbered checkpoints kept in RUN_DIR besides the latest and the best")
    existing = t.add_mutually_exclusive_group()
    existing.add_argument("--resume", action="store_true",
                          help="continue from RUN_DIR's latest checkpoint, with its settings (options given "
                               "here override them; the model's shape cannot change)")
    existing.add_argument("--overwrite", action="store_true",
                          help="start afresh in a RUN_DIR that holds checkpoints (deletes them)")
    t.add_argument("--metrics", metavar="FILE",
                   help="one JSON object per logged step (--resume cuts it back to the checkpoint's step)")
    t.set_defaults(handler=run_train)

    s = commands.add_parser("sample", help="generate text from a trained run")
    s.add_argument("--run", required=True, metavar="RUN_DIR")
    s.add_argument("--checkpoint", default="latest", metavar="WHICH",
                   help="latest, best, or a step number (one of the numbered checkpoints)")
    s.add_argument("--prompt", default="", help="text to continue (default: a newline, if in the vocabulary)")
    s.add_argument("--tokens", type=int, default=500, help="how many characters to generate")
    s.add_argument("--temperature", type=float, default=0.8, help="0: always the likeliest character")
    s.add_argument("--top-k", type=int, default=None, help="sample among the k likeliest characters only")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--device", default="cpu")
    s.add_argument("--no-cache", action="store_true", help="recompute the window each token (slower)")
    s.set_defaults(handler=run_sample)


def run_prepare(args) -> int:
    meta = prepare_file(args.text, args.out)
    print(f"prepared {args.text}: {meta['characters']:,} characters, vocabulary of {meta['vocab_size']:,}, "
          f"{meta['train_tokens']:,} train and {meta['val_tokens']:,} val tokens in {args.out}")
    return 0


def default_corpus_dir() -> Path:
    base = Path(os.environ["ZERO_DATA"]) if os.environ.get("ZERO_DATA") else Path.home() / ".cache" / "zero"
    return base / "gpt" / "pydoc-topics"


def prepare_default_corpus() -> Path:
    """Python's documentation topics, prepared once into the cache."""
    import pydoc_data.topics

    directory = default_corpus_dir()
    if not (directory / VAL_FILE).is_file():
        topics = pydoc_data.topics.topics
        text = "\n\n".join(topics[name] for name in sorted(topics))
        prepare_text(text, directory, source="pydoc_data.topics")
    return directory


def run_train(args) -> int:
    saved = check_arguments(args)  # before the default corpus is prepared: a bad argument writes nothing
    if args.data is None:
        args.data = str(prepare_default_corpus())
        print(f"data: no --data given; using Python's documentation topics (pydoc_data.topics), "
              f"prepared in {args.data}")
    return train(args, saved)


def _sample_checkpoint(args) -> Path:
    checkpoints = CheckpointSet(Path(args.run) / CHECKPOINT)
    if args.checkpoint == "latest":
        path = checkpoints.resumable() or checkpoints.latest
    elif args.checkpoint == "best":
        path = checkpoints.best
    elif args.checkpoint.isdigit():
        path = checkpoints.numbered(int(args.checkpoint))
    else:
        raise UsageError(f"--checkpoint must be latest, best or a step number, got {args.checkpoint!r}")
    if not path.is_file():
        there = ", ".join(p.name for p in checkpoints.existing()) or "none"
        raise UsageError(f"--run {args.run}: no checkpoint {path.name} (checkpoints there: {there}; train with "
                         f"`zero gpt train --out {args.run}`)")
    return path


def run_sample(args) -> int:
    require_at_least(args, 1, "tokens")
    require_at_least(args, 0, "seed")
    require_number(args, "temperature")
    if args.top_k is not None:
        require_at_least(args, 1, "top_k")
    path = _sample_checkpoint(args)
    device = resolve_device(args.device)
    checkpoint = load(path)
    if not isinstance(checkpoint, dict) or any(k not in checkpoint for k in ("vocab", "config", "model")):
        raise DataError(f"{path} is not a `zero gpt train` checkpoint")
    tokenizer = CharTokenizer(checkpoint["vocab"])
    model = GPT(GPTConfig(**checkpoint["config"]["model"]))
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    prompt = args.prompt or ("\n" if "\n" in tokenizer.index else tokenizer.chars[0])
    for position, char in enumerate(prompt):
        if char not in tokenizer.index:
            raise DataError(f"--prompt: the character {char!r} (U+{ord(char):04X}) at position {position} is not "
                            f"in the vocabulary of {len(tokenizer)} characters this model was trained on")
    ids = tokenizer.encode(prompt)
    manual_seed(args.seed)
    out = model.generate(tensor(ids[None, :].astype("int64"), device=device), args.tokens,
                         temperature=args.temperature, top_k=args.top_k, generator=Generator(seed=args.seed),
                         use_cache=not args.no_cache)
    print(tokenizer.decode(out[0].tolist()))
    return 0
