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

--dry-run checks the arguments as training would, builds the model on the
device, prints its parameter count and a memory estimate (weights, gradients,
AdamW's two moments, the activations a step keeps for backward at this batch and
block), then times three real steps after a warm-up step and projects the whole
run's time. It writes nothing: no RUN_DIR, no lock, no checkpoint, no metrics.
It needs the data to time steps: a --data directory that is not prepared stops
it with one line (as training would); without --data the default corpus is
prepared into the cache first, as training would.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from ..data.text import TokenData
from ..data.text import open_prepared
from ..data.tokenizers import Tokenizer, from_checkpoint
from ..errors import DataError, UsageError, ZeroError
from ..random import Generator
from ..serialization import load
from ..tensors.creation import tensor
from . import parallel, presets
from .arguments import (physical_memory, require_fits_in_memory, require_new_or_resumed, require_writable)
from .checkpoints import CheckpointSet
from .common import check_checkpoint, memory_detail, peak_memory, resolve_device, restore_error, trim_device_pool
from .console import Progress, compile_notice, duration
from .gpt_config import GPTTrainConfig, checkpoint_settings, resolve_config, train_settings
from .gpt_dry_run import memory_estimate
from .gpt_trainer import Trainer
from .run_control import Diverged, TrainerLock
from .training_run import TrainingRun

CHECKPOINT = "checkpoint.safetensors"


def checkpoint_set(config) -> CheckpointSet:
    return CheckpointSet(Path(config.out) / CHECKPOINT, config.keep_checkpoints)


def check(args, hold: Callable[[TrainerLock], object] | None = None) -> tuple[GPTTrainConfig, dict | None]:
    """Every rule on ``zero gpt train``'s arguments; runs before any data is read or prepared.
    Returns the run's configuration (``gpt_config.resolve_config``) and, with --resume, the
    checkpoint it read (whose settings come before the options given). ``hold`` (an
    ``ExitStack``'s ``enter_context``) takes the run's lock once every rule has passed, before
    the job prints its first line, and keeps it for the job's life."""
    require_writable("--out", args.out, directory=True)
    resolve_device(args.device)  # a device that is not there costs no data preparation
    checkpoints = CheckpointSet(Path(args.out) / CHECKPOINT, args.keep_checkpoints)
    resume_from = _resume_from(checkpoints, args.resume, args.out) if args.resume is not None else None
    if resume_from is None:
        require_new_or_resumed(checkpoints, False, args.overwrite, args.out)
    saved = _read_checkpoint(resume_from, checkpoints) if resume_from is not None else None
    config, overrides = resolve_config(args, checkpoint_settings(saved) if saved is not None else None, resume_from)
    require_fits_in_memory(_training_bytes(config), physical_memory() if config.device == "cpu" else None,
                           f"a step of --batch-size {config.batch_size} x --block-size {config.block_size} "
                           f"x --n-embd {config.n_embd} x --n-layer {config.n_layer}",
                           "--batch-size (or --block-size, --n-embd, --n-layer)")
    if saved is not None and saved["step"] >= config.steps:
        raise UsageError(f"--steps {config.steps}: {resume_from} is at step {saved['step']} already; ask "
                         "for more --steps to continue it")
    if hold is not None:  # another trainer on this run: refused before the job says anything
        hold(TrainerLock(checkpoints.lock, str(config.out)))
    for line in overrides:
        print(f"resume: {line}")
    return config, saved


def check_arguments(args, hold: Callable[[TrainerLock], object] | None = None) -> dict | None:
    """``check``, for a caller that reads the namespace: ``args`` takes the resolved
    configuration's values; returns the --resume checkpoint (or None)."""
    config, saved = check(args, hold)
    vars(args).update(asdict(config))
    return saved


def _resume_from(checkpoints: CheckpointSet, which: str, out: str) -> Path:
    """The checkpoint ``--resume [latest|best|STEP|PATH]`` names. A PATH outside RUN_DIR's
    checkpoints continues into RUN_DIR only while RUN_DIR holds none of another run."""
    try:
        path = checkpoints.choose(which)
    except UsageError as e:
        raise UsageError(f"--resume: {e}") from None
    checkpoints.require_no_strangers(out)
    ours = [p.resolve() for p in checkpoints.existing()]
    if ours and path.resolve() not in ours:
        raise UsageError(f"--resume {which}: not one of {out}'s checkpoints, and {out} holds a "
                         f"run's already; continue that one (--resume latest|best|STEP) or pick another --out")
    return path


def _training_bytes(config: GPTTrainConfig) -> int:
    """What a training step holds at its peak (``gpt_dry_run.memory_estimate``), before the data
    is read: its vocabulary taken as 256 characters."""
    return memory_estimate(config, 256, presets.parameters(asdict(config), 256)).total


class Job:
    """What a training run reads: its data and tokenizer, and the trainer built from them."""

    def __init__(self, config: GPTTrainConfig):
        assert config.data is not None, "the default corpus is prepared first (gpt.run_train)"
        self.config = config
        self.device = device = resolve_device(config.device)
        self.data_dir = data_dir = Path(config.data)
        # (the tokenizer meta.json records: char or bpe)
        self.tokenizer, self.train_data, self.val_data = open_prepared(data_dir)
        for data in (self.train_data, self.val_data):
            if len(data) <= config.block_size:
                raise DataError(f"{data.path}: {len(data)} tokens cannot fill a window of --block-size "
                                f"{config.block_size} plus one target; use a smaller --block-size or more text")
        # (_batch looked up at each draw: tests of faults replace it)
        self.trainer = Trainer(config, len(self.tokenizer), self.train_data, self.val_data, device,
                               lambda data, rng: _batch(data, config, rng, device))

    def describe(self) -> str:
        config, model = self.config, self.trainer.model
        layers = f"{config.n_layer} layer{'s' if config.n_layer != 1 else ''}"
        return (f"model: {model.num_parameters():,} parameters ({layers}, {config.n_head} heads, {config.n_embd} "
                f"wide, block {config.block_size}, vocabulary {len(self.tokenizer)}) on {self.device} "
                f"in {config.dtype}{self._graph_words()}; "
                f"{len(self.train_data):,} train / {len(self.val_data):,} val tokens; preset {config.preset}")


    def _graph_words(self) -> str:
        """How the step runs on CUDA: replayed as graphs, or op by op and why (nothing on the CPU)."""
        if self.device.type != "cuda":
            return ""
        off = self.trainer.graph_off
        return ", steps replayed as CUDA graphs" if off is None else f", steps op by op ({off})"


def train(config: GPTTrainConfig, saved: dict | None, locked: bool = False) -> int:
    """Train as ``config`` (from ``check``, which read ``saved``) says; ``locked``: the run's lock
    is held already (``check``'s ``hold``)."""
    job = Job(config)
    trainer = job.trainer
    checkpoints = checkpoint_set(config)
    first = 0
    if saved is not None:
        resumed_from = _resume_from(checkpoints, config.resume or "latest", config.out)  # (rank 0's check read it)
        first = _restore(saved, resumed_from, job)
        print(f"resumed from {resumed_from} after step {first}")
    trainer.start(first)
    print(job.describe())
    ranks = parallel.current()
    if ranks.distributed:
        print(f"data parallel: {ranks.world} ranks, each on its own batches of {config.batch_size}: "
              f"{ranks.world * config.batch_size} sequences a step")

    main = ranks.is_main  # rank 0 alone locks the run, writes metrics and checkpoints (the others' stdout is quiet)
    progress = Progress(config.steps, "train", first=first)
    run = TrainingRun("gpt train", checkpoints if main else None, overwrite=config.overwrite,
                      checkpoint_minutes=config.checkpoint_minutes, metrics=config.metrics if main else None,
                      metrics_key="step", metrics_after=first if config.resume is not None else None,
                      resumed_step=first if saved is not None else None,
                      best_val_loss=(saved or {}).get("run", {}).get("best_val_loss"), report=main, say=progress.say,
                      locked=locked)
    try:
        with run, progress, compile_notice(progress.say) as compiled:
            started = time.perf_counter()
            status = _loop(job, run, progress, first)
            seconds = time.perf_counter() - started
    except MemoryError as e:
        raise UsageError(f"out of memory in step {run.step + 1} (--batch-size {config.batch_size} x --block-size "
                         f"{config.block_size}, about {_training_bytes(config) / 2**30:,.1f} GiB estimated"
                         f"{memory_detail(e)}): lower --batch-size (or --block-size)") from None
    if status == 0:
        _summary(config, run, first, seconds, compiled, job.val_data.bits_per_character)
    return status


def _summary(config: GPTTrainConfig, run: TrainingRun, first: int, seconds: float, compiled,
             bpc: Callable[[float], float]) -> None:
    """The closing lines: what was done, how fast, how well, and where it all is (rank 0)."""
    steps = config.steps - first
    tokens_per_s = steps * parallel.current().world * config.batch_size * config.block_size / max(seconds, 1e-9)
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
    print(f"  metrics     {config.metrics}")
    print(f"  plot        {run.plot}")
    print(f"  sample      zero gpt sample --run {config.out}")


class _Guard:
    """What the job checks inside each step, before its update: the ranks agree on the loss
    (averaged), on a stop signal and on a checkpoint due; a non-finite loss or gradient norm
    stops the run (Diverged) before the update is applied."""

    def __init__(self, run: TrainingRun):
        self.run, self.ranks = run, parallel.current()
        self.step, self.stop, self.due = 0, False, False

    def __call__(self, loss, grad_norm) -> tuple[float, float | None]:
        loss, self.stop, self.due = self.ranks.agree(loss, self.run, self.run.checkpoint_due())
        try:
            return self.run.check_step(self.step, loss, grad_norm)
        except Diverged as e:
            raise self.ranks.agreed(e) from None  # every rank saw the same loss and norm


def _loop(job: Job, run: TrainingRun, progress: Progress, first: int) -> int:
    """The training loop: the trainer's step with the guard inside it, then what rank 0 records
    (``_Log``), the checkpoint due and a stop asked for around it."""
    config, trainer, ranks = job.config, job.trainer, parallel.current()
    guard, log = _Guard(run), _Log(job, run, progress, first)
    run.step = first
    for step in range(first, config.steps):
        done = guard.step = step + 1
        lr = trainer.lr
        try:
            loss, grad_norm = trainer.step(guard)  # batch, forward, backward, clip, the guard, update
        except Diverged:
            raise
        except ArithmeticError as e:  # an op that overflowed into a Python error (division by zero ...)
            raise run.arithmetic_failure(done, e) from None
        progress.advance()
        evaluate_now = done % config.eval_interval == 0 or done == config.steps
        val_loss = log.step(done, loss, grad_norm, lr, evaluate_now) if ranks.is_main else None
        stop, due = guard.stop, guard.due
        if not ranks.distributed:  # one process: asked here, as ever (a signal during this step stops it)
            due, stop = run.checkpoint_due(), run.stop_requested
        if evaluate_now or due or stop:
            _checkpoint(run, job, done, val_loss)
        run.step = done
        if (stop or run.stop_requested and not ranks.distributed) and done < config.steps:
            progress.close()
            return run.stop(done)
    return 0


class _Log:
    """What rank 0 records of each step: a metrics record (the plot's curves), a line every
    --log-interval steps, and at each evaluation the validation record and a sample."""

    def __init__(self, job: Job, run: TrainingRun, progress: Progress, first: int):
        self.job, self.run, self.progress, self.first = job, run, progress, first
        config = job.config
        self.tokens_per_step = parallel.current().world * config.batch_size * config.block_size
        self.title = (f"zero gpt train: {Path(job.data_dir).name}, {job.trainer.model.num_parameters():,} "
                      f"parameters ({config.n_layer}x{config.n_head}x{config.n_embd}, block {config.block_size}), "
                      f"preset {config.preset}")
        self.clock = self.log_clock = time.perf_counter()  # since the last record; since the last line printed
        self.log_step = first

    def step(self, done: int, loss: float, grad_norm: float | None, lr: float, evaluate: bool) -> float | None:
        """Record step ``done``; with ``evaluate``, the validation estimate too (returned)."""
        config, trainer, progress = self.job.config, self.job.trainer, self.progress
        now = time.perf_counter()
        record: dict = {"step": done, "train_loss": round(loss, 5), "lr": lr,
                  "grad_norm": None if grad_norm is None else round(grad_norm, 5),
                  "ms_per_step": round(1000 * (now - self.clock), 2),
                  "tokens_per_s": round(self.tokens_per_step / max(now - self.clock, 1e-9), 1)}
        if done == self.first + 1:
            record["title"] = self.title
        logged = evaluate or done % config.log_interval == 0
        val_loss = None
        if evaluate:
            evaluation = {key: round(value, 5) for key, value in trainer.evaluate().items()}
            val_loss = evaluation["val_loss"]
            # bits per character: the validation loss the tokenizers share (char and bpe compare)
            evaluation["val_bpc"] = round(self.job.val_data.bits_per_character(val_loss), 5)
            record.update(evaluation)
        if logged:  # the line: the pace since the last line
            seconds = (now - self.log_clock) / (done - self.log_step)
            progress.say(_format({**record, "ms_per_step": 1000 * seconds,
                                  "tokens_per_s": self.tokens_per_step / max(seconds, 1e-9)}, self.job.device))
            progress.status(f"loss {loss:.4f}")
        self.run.write_metrics(record, sync=logged)
        if evaluate:
            _show_sample(progress, trainer.model, self.job.tokenizer, self.job.device, config.sample_tokens,
                         config.seed)
        self.clock = time.perf_counter()
        if logged:
            self.log_clock, self.log_step = self.clock, done
        return val_loss


def _batch(data: TokenData, config, batches: Generator, device):
    x, y = data.batch(config.batch_size, config.block_size, batches.numpy)
    return tensor(x, device=device), tensor(y, device=device)


def _show_sample(progress: Progress, model, tokenizer: Tokenizer, device, tokens: int, seed: int) -> None:
    if tokens <= 0:
        return
    trim_device_pool(device)  # training-sized cached blocks will not fit a batch of one (the book)
    prompt = tokenizer.default_prompt()
    start = tensor(tokenizer.encode(prompt)[None, :].astype("int64"), device=device)
    text = tokenizer.decode(model.generate(start, tokens, temperature=0.8, generator=Generator(seed=seed))[0].tolist())
    trim_device_pool(device)
    progress.say("--- sample ---\n" + text.strip("\n") + "\n--------------")


def _checkpoint(run: TrainingRun, job: Job, step: int, val_loss: float | None) -> None:
    trainer = job.trainer
    streams = parallel.current().gather(trainer.rng_state())
    if not parallel.current().is_main:
        run.save({}, step, [])  # (rank 0 writes it; the others restart their clock with it)
        return
    model_config = trainer.model.config.to_dict()
    state = {"job": "gpt train", **trainer.state(), "step": step,
             "rng": {**streams[0], "ranks": streams},  # each rank's, for a resume on as many ranks
             "config": {"model": model_config, "train": train_settings(job.config)},
             **job.tokenizer.checkpoint_entries(), "world_size": len(streams)}  # vocab (+ tokenizer: bpe)
    run.save(state, step, trainer.model.named_parameters(), val_loss)


def _read_checkpoint(path: Path, checkpoints: CheckpointSet) -> dict:
    """The checkpoint --resume continues (its settings come before the options given)."""
    try:
        checkpoint = load(path)
    except DataError as e:  # damaged: say which others there are
        others = [checkpoints.describe(p) for p in checkpoints.existing() if p.resolve() != path.resolve()]
        if not others:
            raise
        raise DataError(f"{e}; this run's other checkpoints: {', '.join(others)} (--resume WHICH)") from None
    check_checkpoint(checkpoint, path, "zero gpt train", {"model": dict, "optimizer": dict, "step": int, "rng": dict,
                                                         "config": dict, "vocab": list}, {"run": dict, "scaler": dict})
    return checkpoint


def _restore(checkpoint: dict, path: Path, job: Job) -> int:
    if not job.tokenizer.same_as(from_checkpoint(checkpoint, str(path))):
        raise DataError(f"--resume: {path} was trained on data with another tokenizer or vocabulary than --data "
                        f"{job.config.data}'s ({job.tokenizer.describe()})")
    try:
        step = job.trainer.load_state(checkpoint)
        streams = checkpoint["rng"].get("ranks") or [checkpoint["rng"]]
        world = parallel.current().world
        if len(streams) != world:
            print(f"resume: {path} was written by {len(streams)} rank(s) and this run has {world}: a step now "
                  f"trains on {world * job.config.batch_size} sequences; the ranks beyond the checkpoint's draw new "
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

