"""Train the book's MLP (784 -> hidden -> ReLU -> 10) with cross-entropy.

The learning rate follows a cosine from --lr down to --lr / 10 over the run,
and inputs are standardised with the training set's pixel statistics.

Data, in this order: --data DIR; $ZERO_DATA/mnist or ~/.cache/zero/mnist;
Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist). Fetch
MNIST into the cache with `zero mnist --download`.

With --save PATH a checkpoint is written at the end of each epoch, every
--checkpoint-minutes and when SIGINT or SIGTERM arrives (exit status 130 /
143). PATH is the latest; beside it PATH-STEP (the newest --keep-checkpoints,
named by optimizer step) and PATH-best (the lowest test loss). A checkpoint
written mid-epoch holds the epoch's position -- the RNG state its shuffle was
drawn from, the batches done, the running loss and accuracy sums -- so
--resume PATH continues inside the epoch exactly as if never stopped. A loss
that becomes inf or NaN stops the run (exit status 3); NaN weights are never
saved. Without --save nothing is kept, and the job says so.

With --metrics FILE each epoch is recorded (losses, accuracies, learning rate)
and drawn into FILE's name with .png whenever the run ends, Ctrl-C too (`zero plot FILE`
redraws it).
A progress bar runs under the log on a terminal; redirected, a plain progress
line appears at least every 10 s; a summary closes the run.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import nn
from ..data import MNIST, DataLoader, RandomSampler, default_cache_dir, download_mnist, find_mnist
from ..errors import DataError, UsageError, ZeroError
from ..grad_mode import no_grad
from ..models import MLP
from ..nn import functional as F
from ..optim import SGD, AdamW
from ..optim.lr_scheduler import WarmupCosineLR
from ..random import get_rng_state, manual_seed, set_rng_state
from ..serialization import load
from .arguments import (merge_with_checkpoint, physical_memory, require_at_least, require_fits_in_memory,
                        require_input_file, require_new_or_resumed, require_number, require_writable)
from . import parallel
from .checkpoints import CheckpointSet
from .common import check_checkpoint, memory_detail, resolve_device, restore_error
from .console import Progress, compile_notice, duration
from .run_control import Diverged, TrainerLock
from .training_run import TrainingRun

PIXELS, CLASSES = 784, 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR",
                        help="directory with the four MNIST IDX files, raw or .gz (default: the search above)")
    parser.add_argument("--download", action="store_true", help="fetch MNIST into the cache (or --data), then train")
    parser.add_argument("--epochs", type=int, default=1, metavar="N", help="passes over the training set")
    parser.add_argument("--batch-size", type=int, default=64, metavar="N", help="images per step")
    parser.add_argument("--optimizer", choices=("sgd", "adamw"), default="adamw",
                        help="adamw is the book's form, eps inside the square root "
                             "(AdamW(eps_inside_sqrt=True)); sgd uses momentum 0.9")
    parser.add_argument("--lr", type=float, default=1e-3, metavar="X", help="the starting learning rate")
    parser.add_argument("--hidden", type=int, default=512, metavar="N", help="width of the hidden layer")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="the weights' and the shuffle's")
    parser.add_argument("--save", metavar="PATH",
                        help="checkpoint written at the end of each epoch (and see above; default: nothing is saved)")
    parser.add_argument("--resume", metavar="PATH", help="continue from a checkpoint written by --save")
    parser.add_argument("--overwrite", action="store_true",
                        help="let --save replace checkpoints of another run (deletes PATH and its numbered ones)")
    parser.add_argument("--checkpoint-minutes", type=float, default=10.0, metavar="M",
                        help="with --save, also checkpoint after M minutes since the last one (0: off)")
    parser.add_argument("--keep-checkpoints", type=int, default=3, metavar="N",
                        help="numbered checkpoints kept beside --save's PATH")
    parser.add_argument("--metrics", metavar="FILE",
                        help="one JSON object per epoch, plotted at the end beside it as FILE.png (default: none; "
                             "--resume cuts it back to the checkpoint's epoch)")
    parallel.add_arguments(parser)
    parser.set_defaults(handler=run)


@dataclass(frozen=True)
class MNISTConfig:
    """Everything a ``zero mnist`` run does, settled once (``check_arguments``): the options
    given, over the --resume checkpoint's settings, over the defaults (the parser's, as here)."""

    data: str | None = None
    download: bool = False
    epochs: int = 1
    batch_size: int = 64
    optimizer: str = "adamw"
    lr: float = 1e-3
    hidden: int = 512
    device: str = "cpu"
    seed: int = 0
    save: str | None = None
    resume: str | None = None
    overwrite: bool = False
    checkpoint_minutes: float = 10.0
    keep_checkpoints: int = 3
    metrics: str | None = None
    dist_timeout: float = parallel.DEFAULT_TIMEOUT


def check_arguments(args, hold: Callable[[TrainerLock], object] | None = None) -> tuple[MNISTConfig, dict | None]:
    """Every rule on ``zero mnist``'s arguments, before any data is read; returns the run's
    configuration and, with --resume, the checkpoint read first, whose settings the options not
    given take. ``hold`` (an ``ExitStack``'s ``enter_context``) takes --save's lock once every
    rule has passed, before the job prints its first line, and keeps it for the job's life."""
    saved = None
    overrides: list[str] = []
    resolve_device(args.device)  # a device that is not there costs no download
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(MNISTConfig) if hasattr(args, f.name)}
    if values.get("resume"):
        resume = values["resume"]
        if not Path(resume).exists():  # a first save cut before naming the latest: its numbered file
            values["resume"] = resume = str(CheckpointSet(resume).resumable() or resume)
        require_input_file("--resume", resume)
        saved, settled = _read_checkpoint(resume, values, getattr(args, "given", frozenset()), overrides)
        values.update(settled)
    config = MNISTConfig(**values)
    require_at_least(config, 1, "epochs", "batch_size", "hidden", "keep_checkpoints")
    require_at_least(config, 0, "seed")
    require_number(config, "lr", "checkpoint_minutes")
    if config.save:
        require_writable("--save", config.save)
        same = bool(config.resume) and Path(str(config.resume)).resolve() == Path(config.save).resolve()
        if same and config.overwrite:
            raise UsageError("--overwrite would delete the checkpoint --resume continues from (drop --overwrite)")
        require_new_or_resumed(_checkpoints(config), same, config.overwrite, f"--save {config.save}")
    if config.metrics:
        require_writable("--metrics", config.metrics)
    H, B = config.hidden, config.batch_size
    require_fits_in_memory(16 * (PIXELS * H + H * CLASSES) + 4 * B * (PIXELS + 3 * H + 3 * CLASSES),
                           physical_memory() if config.device == "cpu" else None,
                           f"--hidden {H} with --batch-size {B}", "--hidden (or --batch-size)")
    world, written_by = parallel.current().world, (saved or {}).get("world_size", 1)
    if saved is not None and (saved.get("position") or {}).get("batch") and written_by != world:
        raise UsageError(f"--resume {config.resume}: written inside an epoch by {written_by} rank(s), which split "
                         f"the epoch's batches between them; resume it on {written_by} (mpirun -n {written_by}), "
                         f"or from a checkpoint written at an epoch's end on any number")
    if saved is not None and saved["epoch"] >= config.epochs:
        raise UsageError(f"--epochs {config.epochs}: {config.resume} has {saved['epoch']} epochs done already; ask "
                         "for more --epochs to continue it")
    if config.data is not None and not config.download and not Path(config.data).is_dir():
        raise UsageError(f"--data {config.data}: not a directory")
    checkpoints = _checkpoints(config)
    if hold is not None and checkpoints is not None:  # another trainer on --save: refused before any line
        hold(TrainerLock(checkpoints.lock, f"--save {config.save}"))
    for line in overrides:
        print(f"resume: {line}")
    return config, saved


def _checkpoints(config: MNISTConfig) -> CheckpointSet | None:
    return CheckpointSet(config.save, config.keep_checkpoints) if config.save else None


def run(args) -> int:
    # (several ranks under mpirun: cli/parallel.py; rank 0 checks, takes --save's lock and holds it)
    with parallel.job(args.device, args.dist_timeout) as ranks, contextlib.ExitStack() as held:
        # the ranks take rank 0's configuration, resolved once
        config, saved = ranks.from_main(lambda: check_arguments(args, held.enter_context))
        return _run(config, saved, ranks)


def _run(config: MNISTConfig, saved: dict | None, ranks: parallel.Ranks) -> int:
    device = resolve_device(config.device)
    if config.download:
        target = Path(config.data) if config.data else default_cache_dir()
        print(f"downloading MNIST into {target}")
        ranks.each_machine(lambda: download_mnist(target, log=print))
        config = dataclasses.replace(config, data=str(target))
    root, kind = find_mnist(config.data)
    name = "Fashion-MNIST" if kind == "fashion-mnist" else "MNIST"
    print(f"data: {name} from {root}")
    train_set, test_set = MNIST(root, train=True), MNIST(root, train=False)

    manual_seed(config.seed)
    try:
        model = MLP(hidden=config.hidden)
    except MemoryError as e:
        raise UsageError(f"out of memory building an MLP with --hidden {config.hidden}{memory_detail(e)}: "
                         "lower it") from None
    pixels = train_set.images.numpy()
    model.set_input_statistics(float(pixels.mean()), float(pixels.std()))
    model.to(device)
    optimizer = (AdamW(model.parameters(), lr=config.lr, eps_inside_sqrt=True) if config.optimizer == "adamw"
                 else SGD(model.parameters(), lr=config.lr, momentum=0.9))
    if ranks.distributed:  # each rank its share of the epoch's shuffle (the same on every rank)
        train_loader = DataLoader(train_set, batch_size=config.batch_size,
                                  sampler=parallel.RankShare(RandomSampler(train_set), ranks.rank, ranks.world))
    else:
        train_loader = DataLoader(train_set, batch_size=config.batch_size, shuffle=True)
    position = EpochPosition()
    start_epoch = 0
    if saved is not None:
        start_epoch, position = _restore(saved, str(config.resume), model, optimizer, ranks.rank)
        for group in optimizer.param_groups:
            group["initial_lr"] = config.lr  # the checkpoint's, or the override: what the schedule scales from
        where = f"{position.batch} of {len(train_loader)} batches into epoch {start_epoch + 1}" if position.batch \
            else f"after epoch {start_epoch}"
        print(f"resumed from {config.resume} {where}")
    steps_per_epoch = len(train_loader)
    # Cosine decay to a tenth of --lr over the whole run: the last steps average out noise.
    schedule = WarmupCosineLR(optimizer, warmup_steps=0, total_steps=config.epochs * steps_per_epoch,
                              min_lr=config.lr / 10, last_epoch=start_epoch * steps_per_epoch + position.batch - 1)
    test_loader = DataLoader(test_set, batch_size=1000)
    print(f"model: {model.num_parameters():,} parameters on {device}, {config.optimizer} lr={config.lr}, "
          f"batch {config.batch_size}, {len(train_set):,} training and {len(test_set):,} test images")
    if ranks.distributed:
        print(f"data parallel: {ranks.world} ranks, each on its share of an epoch in batches of {config.batch_size}: "
              f"{ranks.world * config.batch_size} images a step, {steps_per_epoch} steps an epoch")

    continues_save = (saved is not None and bool(config.save)
                      and Path(str(config.resume)).resolve() == Path(str(config.save)).resolve())
    print(f"checkpoints: {config.save} at the end of each epoch" if config.save else
          "checkpoints: none (no --save PATH): the trained model is not kept")
    main = ranks.is_main  # rank 0 alone locks the run, evaluates, writes metrics and checkpoints
    run = TrainingRun("mnist", _checkpoints(config) if main else None, overwrite=config.overwrite,
                      checkpoint_minutes=config.checkpoint_minutes, metrics=config.metrics if main else None,
                      metrics_key="epoch", metrics_after=start_epoch if saved is not None else None,
                      resumed_step=start_epoch * steps_per_epoch + position.batch if continues_save else None,
                      best_val_loss=(saved or {}).get("run", {}).get("best_val_loss"), report=main, say=_say,
                      locked=True)
    job = _Job(config, run, model, optimizer, schedule, train_loader, device, ranks)
    record: dict = {}
    try:
        with run, compile_notice(lambda line: run.say(line)) as compiled:
            started = time.perf_counter()
            for epoch in range(start_epoch, config.epochs):
                if not job.train_epoch(epoch, position):
                    return run.stop(job.step(epoch, position))
                loss_sum, correct, seen = ranks.sum([position.loss_sum, position.correct, position.seen])
                test_loss = None
                if main:
                    test_loss, test_acc = evaluate(model, test_loader, device)
                    record = {"epoch": epoch + 1, "step": job.step(epoch + 1, EpochPosition()),
                              "train_loss": loss_sum / seen, "train_acc": correct / seen, "test_loss": test_loss,
                              "test_acc": test_acc, "lr": schedule.get_last_lr()[0],
                              "seconds": round(position.seconds, 3),
                              "samples_per_s": round(len(train_set) / max(position.seconds, 1e-9), 1),
                              "title": f"zero mnist: {name}, MLP 784-{config.hidden}-10, {config.optimizer} "
                                       f"lr {config.lr:g}"}
                    print(f"epoch {epoch + 1}/{config.epochs}  train loss {record['train_loss']:.4f} "
                          f"acc {record['train_acc']:.4f}  test loss {test_loss:.4f} acc {test_acc:.4f}  "
                          f"{position.seconds:.1f}s ({record['samples_per_s']:,.0f} samples/s)", flush=True)
                    run.write_metrics(record)
                position = EpochPosition()
                job.save(epoch + 1, position, test_loss)
                if ranks.agree_stop(run) and epoch + 1 < config.epochs:
                    return run.stop(job.step(epoch + 1, position))
            seconds = time.perf_counter() - started
    except MemoryError as e:
        raise UsageError(f"out of memory training --hidden {config.hidden} with --batch-size {config.batch_size}"
                         f"{memory_detail(e)}: lower them") from None
    if main:
        _summary(config, run, record, config.epochs - start_epoch, job.steps_run, ranks.world * job.images_run, seconds,
                 compiled)
    return 0


def _say(line: str) -> None:
    print(line, flush=True)


def _summary(config: MNISTConfig, run: TrainingRun, last: dict, epochs: int, steps: int, images: int, seconds: float,
             compiled) -> None:
    """The closing lines: what was done, how fast, how well, and where it all is."""
    print(f"done: {epochs} epoch{'s' if epochs != 1 else ''} ({steps:,} steps) in {duration(seconds)}, "
          f"{images / max(seconds, 1e-9):,.0f} samples/s; test loss {last['test_loss']:.4f}, "
          f"accuracy {last['test_acc']:.4f}")
    if compiled.count:
        print(f"  (of which {compiled.seconds:.1f} s compiling kernels, first run only)")
    if run.checkpoints is None:
        print("  checkpoint  none: nothing was saved (train with --save PATH to keep the model)")
    else:
        best = f" (best: {run.checkpoints.best.name})" if run.checkpoints.best.is_file() else ""
        print(f"  checkpoint  {run.checkpoints.latest}{best}")
    if config.metrics:
        print(f"  metrics     {config.metrics}")
        print(f"  plot        {run.plot}")
    else:
        print("  metrics     none (--metrics FILE records each epoch, and plots them beside it)")


class EpochPosition:
    """How far into an epoch training is: what a mid-epoch checkpoint must hold to resume it
    exactly. ``shuffle_rng`` is the RNG state the epoch's permutation was drawn from."""

    def __init__(self, batch: int = 0, loss_sum: float = 0.0, correct: int = 0, seen: int = 0,
                 seconds: float = 0.0, shuffle_rng=None):
        self.batch, self.loss_sum, self.correct, self.seen = batch, loss_sum, correct, seen
        self.seconds, self.shuffle_rng = seconds, shuffle_rng

    def state(self) -> dict:
        return {"batch": self.batch, "loss_sum": self.loss_sum, "correct": self.correct, "seen": self.seen,
                "seconds": self.seconds, "shuffle_rng": self.shuffle_rng}


class _Job:
    """The training loop's state, shared by its epochs and its checkpoints."""

    def __init__(self, config: MNISTConfig, run: TrainingRun, model, optimizer, schedule, loader, device,
                 ranks: parallel.Ranks):
        self.config, self.run, self.model, self.optimizer = config, run, model, optimizer
        self.schedule, self.loader, self.device, self.ranks = schedule, loader, device, ranks
        self.trained = ranks.wrap(model)  # DistributedDataParallel with several ranks
        self.steps_run = self.images_run = 0  # by this process, for the summary

    def step(self, epochs_done: int, position: EpochPosition) -> int:
        return epochs_done * len(self.loader) + position.batch

    def save(self, epochs_done: int, position: EpochPosition, test_loss: float | None = None) -> None:
        positions = self.ranks.gather(position.state())  # each rank's place in its share of the epoch
        if not self.ranks.is_main:
            self.run.save({}, 0, [])  # (rank 0 writes it; the others restart their clock with it)
            return
        state = {"job": "mnist", "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "epoch": epochs_done, "step": self.step(epochs_done, position), "position": position.state(),
                 "rng": get_rng_state(), "config": _config(self.config), "world_size": self.ranks.world}
        if self.ranks.distributed:
            state["positions"] = positions
        self.run.save(state, state["step"], self.model.named_parameters(), test_loss)

    def train_epoch(self, epoch: int, position: EpochPosition) -> bool:
        """Train epoch ``epoch`` on from ``position``; False when a stop signal ended it early
        (after a mid-epoch checkpoint)."""
        self.model.train()
        if position.shuffle_rng is None:  # a new epoch: its shuffle is drawn now
            position.shuffle_rng = get_rng_state()
            batches = iter(self.loader)
        else:  # resumed inside the epoch: draw the same shuffle again, skip the batches done
            current = get_rng_state()
            set_rng_state(position.shuffle_rng)
            batches = itertools.islice(iter(self.loader), position.batch, None)
            set_rng_state(current)
        total = len(self.loader)
        started = time.perf_counter()
        with Progress(total, f"epoch {epoch + 1}/{self.config.epochs}", unit="batch", first=position.batch) as progress:
            self.run.say = progress.say  # checkpoint lines above the bar
            try:
                return self._batches(batches, epoch, position, progress, started)
            finally:
                self.run.say = _say

    def _batches(self, batches, epoch: int, position: EpochPosition, progress: Progress, started: float) -> bool:
        total = len(self.loader)
        for images, labels in batches:
            step = self.step(epoch, position) + 1
            images, labels = images.to(self.device), labels.to(self.device)
            try:
                logits = self.trained(images)
                loss = F.cross_entropy(logits, labels)
                # the loss over all ranks, a stop signal and a checkpoint due: agreed by the ranks
                agreed, stop, due = self.ranks.agree(loss, self.run, self.run.checkpoint_due())
                try:
                    loss_value, _ = self.run.check_step(step, agreed)  # before the update: Diverged
                except Diverged as e:
                    raise self.ranks.agreed(e) from None  # every rank saw the same loss
                self.optimizer.zero_grad()
                loss.backward()  # (with several ranks: the gradients averaged over them)
            except ArithmeticError as e:
                raise self.run.arithmetic_failure(step, e) from None
            self.optimizer.step()
            self.schedule.step()
            n = labels.shape[0]
            position.batch += 1
            position.loss_sum += loss_value * n
            position.correct += int((logits.argmax(1) == labels).sum().item())
            position.seen += n
            self.steps_run += 1
            self.images_run += n
            self.run.step = step
            progress.advance()
            if position.batch % 50 == 0:
                progress.status(f"loss {position.loss_sum / position.seen:.4f}")
            if not self.ranks.distributed:  # one process: asked here, as ever
                stop, due = self.run.stop_requested, self.run.checkpoint_due()
            if position.batch < total and (stop or due):
                position.seconds += time.perf_counter() - started
                started = time.perf_counter()
                self.save(epoch, position)
                if stop if self.ranks.distributed else self.run.stop_requested:  # (ranks: what they agreed)
                    return False
        position.seconds += time.perf_counter() - started
        return True


def evaluate(model, loader, device) -> tuple[float, float]:
    """Mean loss and accuracy over a data set, in eval mode and without a graph."""
    total_loss = 0.0
    correct = seen = 0
    with nn.eval_mode(model), no_grad():
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            logits = model(images)
            total_loss += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += int((logits.argmax(1) == labels).sum().item())
            seen += labels.shape[0]
    return total_loss / max(seen, 1), correct / max(seen, 1)


MODEL_KEYS = ("hidden", "optimizer")
TRAIN_KEYS = ("epochs", "lr", "batch_size", "seed")


def _config(config: MNISTConfig) -> dict:
    """The settings a checkpoint records (the keys it always had)."""
    return {k: getattr(config, k) for k in (*MODEL_KEYS, *TRAIN_KEYS)}


def _read_checkpoint(path: str, values: dict, given, overrides: list[str]) -> tuple[dict, dict]:
    """The --resume checkpoint, and the settings it gives the options not given (``values``, the
    command line's; a line for each one given that overrides the checkpoint's goes into
    ``overrides``)."""
    checkpoint = check_checkpoint(load(path), path, "zero mnist",
                                  {"model": dict, "optimizer": dict, "epoch": int, "rng": dict},
                                  {"config": dict, "position": dict, "positions": list, "run": dict})
    epoch = checkpoint["epoch"]
    if not isinstance(epoch, int) or epoch < 0:
        raise DataError(f"--resume: {path}: bad epoch number {epoch!r}")
    config = checkpoint.get("config", {})
    inside_epoch = bool((checkpoint.get("position") or {}).get("batch"))
    fixed = MODEL_KEYS + (("batch_size",) if inside_epoch else ())  # the epoch's position counts its batches
    adjustable = tuple(k for k in TRAIN_KEYS if k not in fixed)
    settled, lines = merge_with_checkpoint(values, given, config, path, fixed=fixed, adjustable=adjustable)
    overrides += lines
    return checkpoint, settled


def _restore(checkpoint: dict, path: str, model, optimizer, rank: int) -> tuple[int, EpochPosition]:
    try:
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        set_rng_state(checkpoint["rng"])  # (the same on every rank: it draws the epochs' shuffles)
        positions = checkpoint.get("positions") or [checkpoint.get("position") or {}]  # each rank's (check_arguments:
        saved = positions[rank] if rank < len(positions) else {}                     # inside an epoch, as many)
        position = EpochPosition(**saved) if saved.get("batch") else EpochPosition()
    except (ZeroError, TypeError, KeyError, ValueError, AttributeError, IndexError) as e:
        raise restore_error(path, e) from None
    return int(checkpoint["epoch"]), position
