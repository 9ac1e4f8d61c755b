"""A GPT (the book's StoneGPT) on characters or BPE tokens: prepare a text, train, sample.

  zero gpt prepare TEXT_FILE --out DIR      tokenizer.json (a byte-level BPE), train.bin, val.bin (90/10)
      [--tokenizer char]                    vocab.txt (a token a character, the book's) instead
  zero gpt train [--data DIR] [--out RUN]   the book's loop; checkpoints into RUN
  zero gpt sample --run RUN [--prompt T]    continue a prompt from the checkpoint
  zero plot RUN [RUN ...]                   the loss curves (also drawn by train)

Without --data, `train` uses the text of Python's documentation topics
(pydoc_data.topics, in every Python installation), prepared into the cache
with the default tokenizer.
--preset picks the model and the schedule: cpu (the default, sized for about
2 minutes on 2 cores), book (the book's configuration), tiny, shakespeare-cpu; see
`zero gpt train --help`.

RUN holds checkpoint.safetensors (the latest, which --resume and `sample` read),
checkpoint-STEP.safetensors (the newest --keep-checkpoints),
checkpoint-best.safetensors (the lowest validation loss), metrics.jsonl and
metrics.png. Ctrl-C or SIGTERM: the step finishes, a checkpoint is written,
exit status 130 / 143.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
from pathlib import Path

from ..data.text import META_FILE, prepare_file, prepare_text
from ..data.tokenizers import KINDS, from_checkpoint
from ..errors import DataError, UsageError
from ..models.gpt import GPT, GPTConfig
from ..random import Generator, manual_seed
from ..serialization import load
from ..tensors.creation import tensor
from . import gpt_train, parallel, presets
from .arguments import option, require_at_least, require_number
from .checkpoints import CheckpointSet
from .common import resolve_device
from .console import ReaderGone, reader_gone
from .gpt_train import CHECKPOINT, Job, check, train

# The default tokenizer: a 512-token byte-level BPE. On the default corpus at the cpu preset's
# wall time it reaches 1.885 bits per character against char's 2.234, and its samples have
# more whole words (benchmarks/tokenizers.py; README, "Characters or BPE tokens"); 512,
# because the corpus is small. --tokenizer char is the book's.
DEFAULT_TOKENIZER = "bpe"
DEFAULT_BPE_VOCAB = 512


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    prepare = commands.add_parser("prepare", help="turn a UTF-8 text into training data (characters or BPE tokens)",
                                  description=PREPARE_DESCRIPTION)
    prepare.add_argument("text", metavar="TEXT_FILE", help="any UTF-8 text")
    prepare.add_argument("--out", required=True, metavar="DIR",
                         help="where vocab.txt (or tokenizer.json), train.bin, val.bin and meta.json go (`zero gpt "
                              "train --data DIR`)")
    prepare.add_argument("--tokenizer", default=DEFAULT_TOKENIZER, choices=KINDS,
                         help="bpe: a byte-level BPE learnt from the text (Hugging Face's tokenizers "
                              "library; the default); char: one token a character (the book's)")
    prepare.add_argument("--vocab-size", type=int, default=None, metavar="N",
                         help="the BPE's vocabulary: 256 bytes and up to N - 256 merges (--tokenizer bpe only; "
                              f"default {DEFAULT_BPE_VOCAB})")
    prepare.set_defaults(handler=run_prepare)

    t = commands.add_parser("train", help="train a GPT on prepared data", description=gpt_train.__doc__,
                            epilog="presets: --preset NAME fills in these options; any given on the command "
                                   "line wins.\n\n" + presets.table())
    t.add_argument("--preset", default=presets.DEFAULT, choices=list(presets.PRESETS),
                   help="a set of defaults for the model's size and the schedule (the table below)")
    t.add_argument("--data", metavar="DIR",
                   help="data written by `zero gpt prepare` (default: Python's documentation topics, prepared "
                        "once into ~/.cache/zero or $ZERO_DATA)")
    t.add_argument("--out", default="runs/gpt", metavar="RUN_DIR", help="where checkpoints, metrics and the plot go")
    t.add_argument("--device", default="cpu", help="cpu or cuda")
    t.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"],
                   help="the products' precision (default: bfloat16 on a GPU that computes it natively, compute "
                        "capability 8.0 or more; else float32): bfloat16 or float16 runs the forward under "
                        "zero.autocast "
                        "(weights, gradients, optimizer state and checkpoints stay float32); float16 also scales "
                        "the loss (zero.amp.GradScaler), and a step whose gradients overflow is skipped, not a "
                        "divergence")
    t.add_argument("--cuda-graph", action=argparse.BooleanOptionalAction, default=True,
                   help="on --device cuda, capture the training step as CUDA graphs after two warm-up steps and "
                        "replay them (the host then issues a step in a few calls, not a few hundred); "
                        "--no-cuda-graph runs every step op by op. Ignored on the CPU (default: on)")
    described = {"steps": "optimizer steps", "batch_size": "sequences per step", "block_size": "context length",
                 "n_layer": "transformer blocks", "n_head": "attention heads", "n_embd": "width",
                 "dropout": "dropout probability",
                 "lr": "peak learning rate of the book's AdamW (eps inside the square root, "
                       "AdamW(eps_inside_sqrt=True); PyTorch's puts it outside)", "min_lr": "final learning rate",
                 "warmup": "linear warm-up steps", "eval_interval": "steps between validation, sample and checkpoint",
                 "eval_iters": "batches per validation loss estimate", "log_interval": "steps between log lines",
                 "sample_tokens": "length of the sample at each evaluation"}
    for name in presets.OPTIONS:
        kind = float if isinstance(presets.PRESETS[presets.DEFAULT][name], float) else int
        t.add_argument(option(name), type=kind, default=None, metavar="N" if kind is int else "X",
                       help=f"{described[name]} {presets.option_help(name)}")
    t.add_argument("--weight-decay", type=float, default=0.1, metavar="X", help="AdamW's, on matrices and embeddings")
    t.add_argument("--grad-clip", type=float, default=1.0, metavar="X", help="global gradient norm limit (0: off)")
    t.add_argument("--seed", type=int, default=1337, metavar="N", help="the weights', the batches' and the samples'")
    t.add_argument("--checkpoint-minutes", type=float, default=10.0, metavar="M",
                   help="also checkpoint after M minutes of wall-clock time since the last one (0: off)")
    t.add_argument("--keep-checkpoints", type=int, default=3, metavar="N",
                   help="numbered checkpoints kept in RUN_DIR besides the latest and the best")
    existing = t.add_mutually_exclusive_group()
    existing.add_argument("--resume", nargs="?", const="latest", default=None, metavar="WHICH",
                          help="continue from RUN_DIR's latest checkpoint (or WHICH: best, a step number, a "
                               "checkpoint's path), with its settings (options given here override them; the "
                               "model's shape and the preset cannot change)")
    existing.add_argument("--overwrite", action="store_true",
                          help="start afresh in a RUN_DIR that holds checkpoints (deletes them)")
    t.add_argument("--metrics", metavar="FILE",
                   help="one JSON object per step, plotted beside it as FILE.png when the run ends (default: "
                        "RUN_DIR/metrics.jsonl; --resume cuts it back to the checkpoint's step)")
    t.add_argument("--dry-run", action="store_true",
                   help="check the arguments, print the parameters, a memory estimate and the time of three "
                        "measured steps with the run's projected time, and stop; writes nothing (see above)")
    parallel.add_arguments(t)
    t.set_defaults(handler=run_train)

    s = commands.add_parser("sample", help="generate text from a trained run", description=SAMPLE_DESCRIPTION)
    s.add_argument("--run", required=True, metavar="RUN_DIR", help="a RUN_DIR of `zero gpt train`")
    s.add_argument("--checkpoint", default="latest", metavar="WHICH",
                   help="latest, best, or a step number (one of the numbered checkpoints)")
    s.add_argument("--prompt", default="", help="text to continue (default: a newline, if in the vocabulary)")
    s.add_argument("--tokens", type=int, default=500, metavar="N",
                   help="how many tokens to generate (characters, with the char tokenizer)")
    s.add_argument("--temperature", type=float, default=0.8, metavar="X", help="0: always the likeliest token")
    s.add_argument("--top-k", type=int, default=None, metavar="K",
                   help="sample among the K likeliest tokens only (default: all)")
    s.add_argument("--seed", type=int, default=0, metavar="N", help="of the sampling")
    s.add_argument("--device", default="cpu", help="cpu or cuda")
    s.add_argument("--stream", action="store_true",
                   help="print the text as it is generated (whole characters: a BPE token that ends inside "
                        "one waits for the next)")
    s.add_argument("--no-cache", action="store_true", help="recompute the window each token (slower)")
    s.set_defaults(handler=run_sample)


PREPARE_DESCRIPTION = """Turn a UTF-8 text into training data for `zero gpt train --data DIR`.

The text is split by character: its first 90% to train on, the last 10% to
validate. With --tokenizer bpe (the default) a byte-level BPE of --vocab-size
tokens is learnt from the training part (in seconds) and written as
tokenizer.json, the tokenizers library's own format; with --tokenizer char (the
book's) DIR gets vocab.txt instead (the sorted distinct characters, one JSON
string a line). Then train.bin
and val.bin (the ids, in the smallest integer type for the vocabulary) and
meta.json (the source, the tokenizer, the sizes and each file's SHA-256).
`zero gpt train` reads the tokenizer from DIR; the model's vocabulary follows it.
A DIR prepared before is prepared again (with a line saying so if its tokenizer
changes)."""

SAMPLE_DESCRIPTION = """Continue a prompt with a model trained by `zero gpt train`.

Reads RUN_DIR/checkpoint.safetensors (or --checkpoint best / STEP) and prints
the prompt followed by --tokens generated tokens (a KV cache keeps it fast;
--stream prints them as they come). The checkpoint carries its tokenizer (the
characters, or the BPE's tokenizer.json), which encodes the prompt and decodes
the output."""


def run_prepare(args) -> int:
    if args.vocab_size is not None and args.tokenizer != "bpe":
        raise UsageError("--vocab-size applies to --tokenizer bpe only (char's vocabulary is the text's characters)")
    if args.tokenizer == "bpe" and args.vocab_size is None:
        args.vocab_size = DEFAULT_BPE_VOCAB
    before = _prepared_kind(Path(args.out))
    meta = prepare_file(args.text, args.out, tokenizer=args.tokenizer, vocab_size=args.vocab_size)
    if before is not None and before != args.tokenizer:
        print(f"{args.out}: held data prepared with --tokenizer {before}; replaced by --tokenizer {args.tokenizer} "
              "(runs trained on the old data cannot --resume on it)")
    kind = "characters" if args.tokenizer == "char" else "byte-level BPE tokens"
    print(f"prepared {args.text}: {meta['characters']:,} characters, vocabulary of {meta['vocab_size']:,} {kind}, "
          f"{meta['train_tokens']:,} train and {meta['val_tokens']:,} val tokens "
          f"({meta['characters'] / max(1, meta['train_tokens'] + meta['val_tokens']):.2f} characters a token) "
          f"in {args.out}")
    return 0


def _prepared_kind(directory: Path) -> str | None:
    """The tokenizer of a preparation already in ``directory`` (None: none, or unreadable)."""
    try:
        meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta.get("tokenizer", "char") if isinstance(meta, dict) else None


def default_corpus_dir() -> Path:
    base = Path(os.environ["ZERO_DATA"]) if os.environ.get("ZERO_DATA") else Path.home() / ".cache" / "zero"
    return base / "gpt" / f"pydoc-topics-{DEFAULT_TOKENIZER}{DEFAULT_BPE_VOCAB}"  # (beside an older char one)


def prepare_default_corpus() -> Path:
    """Python's documentation topics, prepared once into the cache."""
    import pydoc_data.topics

    directory = default_corpus_dir()
    if not (directory / META_FILE).is_file():  # (written last: a cut preparation is done again)
        topics = pydoc_data.topics.topics
        text = "\n\n".join(topics[name] for name in sorted(topics))
        prepare_text(text, directory, source="pydoc_data.topics", tokenizer=DEFAULT_TOKENIZER,
                     vocab_size=DEFAULT_BPE_VOCAB)
    return directory


def run_train(args) -> int:
    # (several ranks under mpirun: cli/parallel.py; rank 0 checks, takes the run's lock and holds it)
    dry = getattr(args, "dry_run", False)
    with parallel.job(args.device, args.dist_timeout) as ranks, contextlib.ExitStack() as held:
        # before the default corpus is prepared: a bad argument (a missing device, a run in use) writes nothing;
        # the ranks take rank 0's configuration, resolved once (gpt_config)
        config, saved = ranks.from_main(lambda: check(args, None if dry else held.enter_context))
        if config.data is None:
            config = dataclasses.replace(config, data=str(ranks.each_machine(prepare_default_corpus)))
            print(f"data: no --data given; using Python's documentation topics (pydoc_data.topics), "
                  f"prepared in {config.data}")
        if dry:
            from .gpt_dry_run import dry_run

            dry_run(Job(config))
            return 0
        return train(config, saved, locked=True)


def _sample_checkpoint(args) -> tuple[CheckpointSet, Path]:
    checkpoints = CheckpointSet(Path(args.run) / CHECKPOINT)
    if args.checkpoint not in ("latest", "best") and not args.checkpoint.isdigit():
        raise UsageError(f"--checkpoint must be latest, best or a step number, got {args.checkpoint!r}")
    existing = checkpoints.existing()
    try:
        return checkpoints, checkpoints.choose(args.checkpoint)
    except UsageError as e:
        if not existing:
            raise UsageError(f"--run {args.run}: {e}; train one with `zero gpt train --out {args.run}`") from None
        there = ", ".join(checkpoints.describe(p) for p in existing)
        if args.checkpoint.isdigit():  # numbered ones are rotated away as a run goes on
            raise UsageError(f"--checkpoint {args.checkpoint}: {args.run} holds no checkpoint of step "
                             f"{int(args.checkpoint)} (a run keeps only its newest numbered checkpoints, "
                             f"--keep-checkpoints); its checkpoints: {there} (--checkpoint WHICH)") from None
        raise UsageError(f"--checkpoint {args.checkpoint}: {args.run} holds no {args.checkpoint} checkpoint; "
                         f"its checkpoints: {there} (--checkpoint WHICH)") from None


def _load_for_sampling(args, checkpoints: CheckpointSet, path: Path) -> dict:
    """The checkpoint; a damaged one names the run's others to sample from instead."""
    try:
        checkpoint = load(path)
    except DataError as e:
        others = [checkpoints.describe(p) for p in checkpoints.existing() if p.resolve() != path.resolve()]
        if not others:
            raise
        raise DataError(f"{e}; sample from another of this run's checkpoints: {', '.join(others)} "
                        f"(`zero gpt sample --run {args.run} --checkpoint {others[0]}`)") from None
    if not isinstance(checkpoint, dict) or any(k not in checkpoint for k in ("vocab", "config", "model")):
        raise DataError(f"{path} is not a `zero gpt train` checkpoint")
    return checkpoint


def run_sample(args) -> int:
    require_at_least(args, 1, "tokens")
    require_at_least(args, 0, "seed")
    require_number(args, "temperature")
    if args.top_k is not None:
        require_at_least(args, 1, "top_k")
    checkpoints, path = _sample_checkpoint(args)
    device = resolve_device(args.device)
    checkpoint = _load_for_sampling(args, checkpoints, path)
    tokenizer = from_checkpoint(checkpoint, str(path))
    model = GPT(GPTConfig(**checkpoint["config"]["model"]))
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    prompt = args.prompt or tokenizer.default_prompt()
    tokenizer.check_prompt(prompt)
    ids = tokenizer.encode(prompt)
    stream = tokenizer.stream_decoder()  # (whole characters only: a token can end inside one)
    manual_seed(args.seed)
    generated: list[int] = []   # what a Ctrl-C keeps: printed before the job ends
    if args.stream:
        print(prompt, end="", flush=True)

    def on_token(new) -> None:
        generated.append(int(new[0]))
        if args.stream:
            print(stream(new[:1]), end="", flush=True)
            if reader_gone():          # (| head -c 20 has what it wanted: no more to generate)
                raise ReaderGone

    try:
        model.generate(tensor(ids[None, :].astype("int64"), device=device), args.tokens,
                       temperature=args.temperature, top_k=args.top_k, generator=Generator(seed=args.seed),
                       use_cache=not args.no_cache, on_token=on_token)
    except ReaderGone:
        return 0
    except KeyboardInterrupt:  # the text so far, then the usual line and status (130)
        print() if args.stream else print(prompt + tokenizer.decode(generated), flush=True)
        unit = "characters" if tokenizer.kind == "char" else "tokens"
        print(f"zero gpt sample: interrupted after {len(generated):,} of {args.tokens:,} {unit}",
              file=sys.stderr, flush=True)
        return 130
    print() if args.stream else print(prompt + tokenizer.decode(generated))
    return 0
