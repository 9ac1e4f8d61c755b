"""The GPT training loop (the book's stone_gpt), for ``zero gpt train``.

--preset sets the model's size and the schedule (the table at the end of this
help); any option given overrides its preset's value. The default, cpu, is
sized for a minute or two on 2 cores (600 steps of 100-150 ms).

Each step: a random batch (targets shifted by one), the fused loss, backward,
global-norm clipping, the warm-up + cosine learning rate, an AdamW step
(betas 0.9, 0.99). Every --eval-interval steps and at the end: a validation
loss estimate and a short sample in eval mode, then a checkpoint of model,
optimizer, step, RNG states and config, from which --resume continues exactly
as if the run had never stopped.

RUN_DIR holds (see ``checkpoints`` for the rotation):

    checkpoint.safetensors          the latest: --resume and `zero gpt sample` read it
    checkpoint-000500.safetensors   the newest --keep-checkpoints, named by step
    checkpoint-best.safetensors     the lowest validation loss so far
                                    (`zero gpt sample --checkpoint best`)
    metrics.jsonl                   a JSON object per step (--metrics)
    metrics.png                     its curves, drawn whenever the run ends (`zero plot`)

On a terminal a progress bar runs under the log lines; redirected, a plain
progress line appears at least every 10 s. Each checkpoint is announced with
its path, and a summary closes the run: steps, time, tokens/s, the best
validation loss, and where the checkpoint, metrics and plot are.

Checkpoints are also written every --checkpoint-minutes of wall-clock time and
when SIGINT or SIGTERM arrives (then the job exits 130 / 143). A non-finite
loss or gradient norm stops the run (exit status 3) before its update is
applied; a model holding inf or NaN is never saved. One trainer per RUN_DIR (a
lock); a RUN_DIR that holds checkpoints takes --resume or --overwrite.

--resume continues with the checkpoint's settings (its --steps, --lr, --data
...); options given on the command line override them, except the model's
shape. The --metrics file is cut back to the checkpoint's step first. It reads
the latest checkpoint, or the one named: ``--resume best``, ``--resume 400``
(a numbered one, when the latest is damaged or to go back), or a file's path.
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path

from .. import nn
from ..data.text import TokenData
from ..data.tokenizers import Tokenizer, from_checkpoint, open_prepared
from ..errors import DataError, UsageError, ZeroError
from ..grad_mode import no_grad
from ..models.gpt import GPT, GPTConfig
from ..nn.utils import clip_grad_norm_
from ..optim import AdamW
from ..optim.lr_scheduler import WarmupCosineLR
from ..random import Generator, get_rng_state, manual_seed, set_rng_state
from ..serialization import load
from ..tensors.creation import tensor
from .arguments import (physical_memory, require_at_least, require_fits_in_memory, require_multiple,
                        require_new_or_resumed, require_not_above, require_number, require_writable,
                        settle_with_checkpoint)
from . import parallel
from .checkpoints import CheckpointSet
from . import presets
from .common import check_checkpoint, memory_detail, peak_memory, resolve_device, restore_error, trim_device_pool
from .console import Progress, compile_notice, duration
from .run_control import Diverged, TrainerLock
from .training_run import TrainingRun

CHECKPOINT = "checkpoint.safetensors"
MODEL_KEYS = ("block_size", "n_layer", "n_head", "n_embd", "dropout")
TRAIN_KEYS = ("steps", "batch_size", "lr", "min_lr", "warmup", "weight_decay", "grad_clip", "eval_interval",
              "eval_iters", "log_interval", "seed", "data", "metrics")
FIXED_KEYS = (*MODEL_KEYS, "preset")  # what a resumed run cannot change
PATH_KEYS = ("data", "metrics")  # recorded absolute
METRICS = "metrics.jsonl"


def checkpoint_set(args) -> CheckpointSet:
    return CheckpointSet(Path(args.out) / CHECKPOINT, args.keep_checkpoints)


def check_arguments(args, hold: Callable[[TrainerLock], object] | None = None) -> dict | None:
    """Every rule on ``zero gpt train``'s arguments; runs before any data is read or prepared.
    With --resume, reads the checkpoint first: options not given take its values (the
    ``TRAIN_KEYS`` given override them) and returns it. ``hold`` (an ``ExitStack``'s
    ``enter_context``) takes the run's lock once every rule has passed, before the job
    prints its first line, and keeps it for the job's life."""
    require_writable("--out", args.out, directory=True)
    resolve_device(args.device)  # a device that is not there costs no data preparation
    checkpoints = checkpoint_set(args)
    resume_from = _resume_from(checkpoints, args) if args.resume is not None else None
    if resume_from is None:
        require_new_or_resumed(checkpoints, False, args.overwrite, args.out)
    overrides: list[str] = []
    saved = _read_checkpoint(resume_from, args, overrides) if resume_from is not None else None
    presets.apply(args)  # after the checkpoint's settings: they come first on --resume
    if args.metrics is None:
        args.metrics = str(Path(args.out) / METRICS)
    require_at_least(args, 1, "steps", "batch_size", "block_size", "n_layer", "n_head", "n_embd",
                     "eval_interval", "eval_iters", "log_interval", "keep_checkpoints")
    require_at_least(args, 0, "warmup", "sample_tokens", "seed")
    require_multiple(args, "n_embd", "n_head")
    require_number(args, "lr", "min_lr", "weight_decay", "grad_clip", "checkpoint_minutes")
    require_number(args, "dropout", below=1.0)
    require_not_above(args, "min_lr", "lr")
    require_writable("--metrics", args.metrics)
    require_fits_in_memory(_training_bytes(args), physical_memory() if args.device == "cpu" else None,
                           f"a step of --batch-size {args.batch_size} x --block-size {args.block_size} "
                           f"x --n-embd {args.n_embd} x --n-layer {args.n_layer}",
                           "--batch-size (or --block-size, --n-embd, --n-layer)")
    if saved is not None and saved["step"] >= args.steps:
        raise UsageError(f"--steps {args.steps}: {resume_from} is at step {saved['step']} already; ask "
                         "for more --steps to continue it")
    if hold is not None:  # another trainer on this run: refused before the job says anything
        hold(TrainerLock(checkpoints.lock, str(args.out)))
    for line in overrides:
        print(f"resume: {line}")
    return saved


def _resume_from(checkpoints: CheckpointSet, args) -> Path:
    """The checkpoint ``--resume [latest|best|STEP|PATH]`` names. A PATH outside RUN_DIR's
    checkpoints continues into RUN_DIR only while RUN_DIR holds none of another run."""
    try:
        path = checkpoints.choose(args.resume)
    except UsageError as e:
        raise UsageError(f"--resume: {e}") from None
    checkpoints.require_no_strangers(args.out)
    ours = [p.resolve() for p in checkpoints.existing()]
    if ours and path.resolve() not in ours:
        raise UsageError(f"--resume {args.resume}: not one of {args.out}'s checkpoints, and {args.out} holds a "
                         f"run's already; continue that one (--resume latest|best|STEP) or pick another --out")
    return path


def _training_bytes(args) -> int:
    """What a training step holds at its peak, estimated from measured CPU peaks: about
    8 (B, T, C) float32 activations per layer and 12 more, plus parameters, gradients and
    AdamW's two moments (the vocabulary, unknown here, is taken as 256 characters)."""
    B, T, C, L = args.batch_size, args.block_size, args.n_embd, args.n_layer
    parameters = 12 * L * C * C + (256 + T) * C
    return 4 * B * T * C * (8 * L + 12) + 16 * parameters


def train(args, saved: dict | None, locked: bool = False) -> int:
    """Train as ``args`` (checked by ``check_arguments``, which read ``saved``) say; ``locked``:
    the run's lock is held already (``check_arguments``' ``hold``)."""
    device = resolve_device(args.device)
    checkpoints = checkpoint_set(args)
    data_dir = Path(args.data)
    tokenizer, train_data, val_data = open_prepared(data_dir)  # (the kind meta.json records: char or bpe)
    for data in (train_data, val_data):
        if len(data) <= args.block_size:
            raise DataError(f"{data.path}: {len(data)} tokens cannot fill a window of --block-size "
                            f"{args.block_size} plus one target; use a smaller --block-size or more text")
    config = GPTConfig(vocab_size=len(tokenizer), **{k: getattr(args, k) for k in MODEL_KEYS})

    ranks = parallel.current()
    manual_seed(args.seed)
    batches = Generator(seed=parallel.stream_seed(args.seed + 1, ranks.rank))  # batch offsets: their own stream
    model = GPT(config).to(device)
    if ranks.rank > 0:  # dropout masks of its own on each rank (rank 0's weights reach all: DDP)
        manual_seed(parallel.stream_seed(args.seed, ranks.rank))
    decay, no_decay = _parameter_groups(model)
    optimizer = AdamW([{"params": decay, "weight_decay": args.weight_decay},
                       {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.99),
                      eps_inside_sqrt=True)  # the book's AdamW (see --help)
    first = 0
    if saved is not None:
        resumed_from = _resume_from(checkpoints, args)  # (rank 0's check_arguments read it)
        first = _restore(saved, resumed_from, model, optimizer, batches, tokenizer, args)
        optimizer.param_groups[0]["weight_decay"] = args.weight_decay  # the checkpoint's, or the override
        for group in optimizer.param_groups:
            group["initial_lr"] = args.lr  # what the schedule scales from
        print(f"resumed from {resumed_from} after step {first}")
    schedule = WarmupCosineLR(optimizer, warmup_steps=args.warmup, total_steps=args.steps, min_lr=args.min_lr,
                              last_epoch=first - 1)
    layers = f"{config.n_layer} layer{'s' if config.n_layer != 1 else ''}"
    print(f"model: {model.num_parameters():,} parameters ({layers}, {config.n_head} heads, {config.n_embd} wide, "
          f"block {config.block_size}, vocabulary {config.vocab_size}) on {device}; "
          f"{len(train_data):,} train / {len(val_data):,} val tokens; preset {args.preset}")
    if ranks.distributed:
        print(f"data parallel: {ranks.world} ranks, each on its own batches of {args.batch_size}: "
              f"{ranks.world * args.batch_size} sequences a step")

    main = ranks.is_main  # rank 0 alone locks the run, writes metrics and checkpoints (the others' stdout is quiet)
    progress = Progress(args.steps, "train", first=first)
    run = TrainingRun("gpt train", checkpoints if main else None, overwrite=args.overwrite,
                      checkpoint_minutes=args.checkpoint_minutes, metrics=args.metrics if main else None,
                      metrics_key="step", metrics_after=first if args.resume is not None else None,
                      resumed_step=first if saved is not None else None,
                      best_val_loss=(saved or {}).get("run", {}).get("best_val_loss"), report=main, say=progress.say,
                      locked=locked)
    try:
        with run, progress, compile_notice(progress.say) as compiled:
            started = time.perf_counter()
            status = _loop(args, run, progress, model, optimizer, schedule, batches, train_data, val_data, tokenizer,
                           config, device, first)
            seconds = time.perf_counter() - started
    except MemoryError as e:
        raise UsageError(f"out of memory in step {run.step + 1} (--batch-size {args.batch_size} x --block-size "
                         f"{args.block_size}, about {_training_bytes(args) / 2**30:,.1f} GiB estimated"
                         f"{memory_detail(e)}): lower --batch-size (or --block-size)") from None
    if status == 0:
        _summary(args, run, first, seconds, compiled, val_data.bits_per_character)
    return status


def _summary(args, run: TrainingRun, first: int, seconds: float, compiled, bpc: Callable[[float], float]) -> None:
    """The closing lines: what was done, how fast, how well, and where it all is (rank 0)."""
    steps = args.steps - first
    tokens_per_s = steps * parallel.current().world * args.batch_size * args.block_size / max(seconds, 1e-9)
    best = (f"; best val loss {run.best_val_loss:.4f} ({bpc(run.best_val_loss):.3f} bits/char)"
            if run.best_val_loss is not None else "")
    print(f"done: {steps:,} steps{f' (from step {first:,})' if first else ''} in {duration(seconds)}, "
          f"{tokens_per_s:,.0f} tokens/s{best}")
    if compiled.count:
        print(f"  (of which {compiled.seconds:.1f} s compiling kernels, first run only)")
    checkpoints = run.checkpoints
    if checkpoints is None:  # a rank other than 0
        return
    print(f"  checkpoint  {checkpoints.latest}" + (f" (best: {checkpoints.best.name})" if checkpoints.best.is_file()
                                                   else ""))
    print(f"  metrics     {args.metrics}")
    print(f"  plot        {run.plot}")
    print(f"  sample      zero gpt sample --run {args.out}")


def _loop(args, run: TrainingRun, progress: Progress, model, optimizer, schedule, batches, train_data, val_data,
          tokenizer, config, device, first: int) -> int:
    ranks = parallel.current()
    trained = ranks.wrap(model)  # DistributedDataParallel with several ranks; evaluation uses the model itself
    tokens_per_step = ranks.world * args.batch_size * args.block_size
    title = (f"zero gpt train: {Path(args.data).name}, {model.num_parameters():,} parameters "
             f"({config.n_layer}x{config.n_head}x{config.n_embd}, block {config.block_size}), preset {args.preset}")
    clock = log_clock = time.perf_counter()  # since the last record; since the last line printed
    log_step = first
    run.step = first
    for step in range(first, args.steps):
        done = step + 1
        lr = schedule.get_last_lr()[0]
        x, y = _batch(train_data, args, batches, device)
        try:
            loss = trained(x, y)
            optimizer.zero_grad()
            loss.backward()  # (with several ranks: the gradients averaged over them)
        except ArithmeticError as e:
            raise run.arithmetic_failure(done, e) from None
        # the loss of the whole step (all ranks), a stop signal and a checkpoint due, agreed
        loss, stop, due = ranks.agree(loss, run, run.checkpoint_due())
        # --grad-clip 0: no clipping (a limit of inf scales by exactly 1), but the norm is still
        # computed: the divergence guard reads it
        grad_norm = clip_grad_norm_(model.parameters(), args.grad_clip if args.grad_clip > 0 else math.inf)
        try:
            loss_value, norm_value = run.check_step(done, loss, grad_norm)  # before the update: Diverged
        except Diverged as e:
            raise ranks.agreed(e) from None  # every rank saw the same loss and norm
        optimizer.step()
        schedule.step()
        progress.advance()

        evaluate_now = done % args.eval_interval == 0 or done == args.steps
        val_loss = None
        if ranks.is_main:  # every step is recorded (the plot's curves); every --log-interval printed
            now = time.perf_counter()
            record = {"step": done, "train_loss": round(loss_value, 5), "lr": lr,
                      "grad_norm": None if norm_value is None else round(norm_value, 5),
                      "ms_per_step": round(1000 * (now - clock), 2),
                      "tokens_per_s": round(tokens_per_step / max(now - clock, 1e-9), 1)}
            if done == first + 1:
                record["title"] = title
            logged = evaluate_now or done % args.log_interval == 0
            if evaluate_now:
                val_loss = record["val_loss"] = round(estimate_loss(model, val_data, args, device), 5)
                record["val_bpc"] = round(val_data.bits_per_character(val_loss), 5)  # tokenizers compare
            if logged:  # the line: the pace since the last line
                seconds = (now - log_clock) / (done - log_step)
                progress.say(_format({**record, "ms_per_step": 1000 * seconds,
                                      "tokens_per_s": tokens_per_step / max(seconds, 1e-9)}, device))
                progress.status(f"loss {loss_value:.4f}")
            run.write_metrics(record, sync=logged)
            if evaluate_now:
                _show_sample(progress, model, tokenizer, device, args.sample_tokens, args.seed)
            clock = time.perf_counter()
            if logged:
                log_clock, log_step = clock, done
        if not ranks.distributed:  # one process: asked here, as ever (a signal during this step stops it)
            due, stop = run.checkpoint_due(), run.stop_requested
        if evaluate_now or due or stop:
            _checkpoint(run, model, optimizer, batches, config, tokenizer, args, done, val_loss)
        run.step = done
        if (stop or run.stop_requested and not ranks.distributed) and done < args.steps:
            progress.close()
            return run.stop(done)
    return 0


def _parameter_groups(model: GPT) -> tuple[list, list]:
    """Weight decay on matrices (linear weights, embeddings); none on biases and norms."""
    decay: list = []
    no_decay: list = []
    for _, p in model.named_parameters():
        (decay if p.ndim >= 2 else no_decay).append(p)
    return decay, no_decay


def _batch(data: TokenData, args, batches: Generator, device):
    x, y = data.batch(args.batch_size, args.block_size, batches.numpy)
    return tensor(x, device=device), tensor(y, device=device)


def estimate_loss(model: GPT, data: TokenData, args, device) -> float:
    """Mean loss over --eval-iters random batches, in eval mode (no dropout), no graph. Uses a
    fixed stream of its own so evaluating never shifts the training batches."""
    rng = Generator(seed=args.seed + 2)
    total = 0.0
    with nn.eval_mode(model), no_grad():
        for _ in range(args.eval_iters):
            x, y = _batch(data, args, rng, device)
            total += model(x, y).item()
    return total / args.eval_iters


def _show_sample(progress: Progress, model: GPT, tokenizer: Tokenizer, device, tokens: int, seed: int) -> None:
    if tokens <= 0:
        return
    trim_device_pool(device)  # training-sized cached blocks will not fit a batch of one (the book)
    prompt = tokenizer.default_prompt()
    start = tensor(tokenizer.encode(prompt)[None, :].astype("int64"), device=device)
    text = tokenizer.decode(model.generate(start, tokens, temperature=0.8, generator=Generator(seed=seed))[0].tolist())
    trim_device_pool(device)
    progress.say("--- sample ---\n" + text.strip("\n") + "\n--------------")


def _checkpoint(run: TrainingRun, model, optimizer, batches, config, tokenizer, args, step: int,
                val_loss: float | None) -> None:
    streams = parallel.current().gather({"default": get_rng_state(), "batches": batches.get_state()})
    if not parallel.current().is_main:
        run.save({}, step, [])  # (rank 0 writes it; the others restart their clock with it)
        return
    state = {"job": "gpt train", "model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
             "rng": {**streams[0], "ranks": streams},  # each rank's, for a resume on as many ranks
             "config": {"model": config.to_dict(), "train": _train_settings(args)},
             **tokenizer.checkpoint_entries(), "world_size": len(streams)}  # vocab (+ tokenizer: bpe)
    run.save(state, step, model.named_parameters(), val_loss)


def _train_settings(args) -> dict:
    """The settings a checkpoint records; its paths absolute, so that a run resumed from
    another working directory reads the same data and extends the same metrics file."""
    settings = {k: getattr(args, k) for k in (*TRAIN_KEYS, "preset")}
    return {k: os.path.abspath(v) if k in PATH_KEYS and v is not None else v for k, v in settings.items()}


def _read_checkpoint(path: Path, args, overrides: list[str]) -> dict:
    """The checkpoint --resume continues; the options not given take its settings (a line
    for each option given that overrides the checkpoint's goes into ``overrides``)."""
    try:
        checkpoint = load(path)
    except DataError as e:  # damaged: say which others there are
        checkpoints = checkpoint_set(args)
        others = [checkpoints.describe(p) for p in checkpoints.existing() if p.resolve() != path.resolve()]
        if not others:
            raise
        raise DataError(f"{e}; this run's other checkpoints: {', '.join(others)} (--resume WHICH)") from None
    check_checkpoint(checkpoint, path, "zero gpt train", {"model": dict, "optimizer": dict, "step": int, "rng": dict,
                                                         "config": dict, "vocab": list}, {"run": dict})
    config = checkpoint["config"]
    saved = {**config.get("train", {}), **config.get("model", {})}
    for key in PATH_KEYS:  # a path given here is compared, and recorded, as the absolute path it names
        if key in getattr(args, "given", ()) and getattr(args, key) is not None:
            setattr(args, key, os.path.abspath(getattr(args, key)))
    overrides += settle_with_checkpoint(args, saved, path, fixed=FIXED_KEYS, adjustable=TRAIN_KEYS)
    return checkpoint


def _restore(checkpoint: dict, path: Path, model, optimizer, batches, tokenizer, args) -> int:
    if not tokenizer.same_as(from_checkpoint(checkpoint, str(path))):
        raise DataError(f"--resume: {path} was trained on data with another tokenizer or vocabulary than --data "
                        f"{args.data}'s ({tokenizer.describe()})")
    try:
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        step = int(checkpoint["step"])
        ranks = parallel.current()
        streams = checkpoint["rng"].get("ranks") or [checkpoint["rng"]]  # one per rank that wrote it
        if ranks.rank < len(streams):  # the stream this rank had: exactly where it stopped
            set_rng_state(streams[ranks.rank]["default"])
            batches.set_state(streams[ranks.rank]["batches"])
        else:  # a rank the checkpoint's run did not have: streams of its own, started anew at this step
            manual_seed(parallel.stream_seed(args.seed + step, ranks.rank))
            batches.manual_seed(parallel.stream_seed(args.seed + 1 + step, ranks.rank))
        if len(streams) != ranks.world:
            print(f"resume: {path} was written by {len(streams)} rank(s) and this run has {ranks.world}: a step now "
                  f"trains on {ranks.world * args.batch_size} sequences; the ranks beyond the checkpoint's draw new "
                  "batches (the rest continue their own)")
    except (ZeroError, TypeError, KeyError, ValueError, AttributeError, IndexError) as e:
        raise restore_error(path, e) from None
    return step


def _format(record: dict, device) -> str:
    text = (f"step {record['step']:5d}  loss {record['train_loss']:.4f}  lr {record['lr']:.2e}  "
            f"grad norm {record['grad_norm'] if record['grad_norm'] is not None else '-'}  "
            f"{record['ms_per_step']:.0f} ms/step  {record['tokens_per_s']:,.0f} tokens/s")
    if "val_loss" in record:
        text += (f"  val loss {record['val_loss']:.4f} ({record['val_bpc']:.3f} bits/char)  "
                 f"peak memory {peak_memory(device) / 2**20:,.0f} MiB")
    return text
