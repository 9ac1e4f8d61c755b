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
saved.
"""
from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from .. import nn
from ..data import MNIST, DataLoader, default_cache_dir, download_mnist, find_mnist
from ..errors import DataError, UsageError
from ..grad_mode import no_grad
from ..models import MLP
from ..nn import functional as F
from ..optim import SGD, AdamW
from ..optim.lr_scheduler import WarmupCosineLR
from ..random import get_rng_state, manual_seed, set_rng_state
from ..serialization import load
from .arguments import (physical_memory, require_at_least, require_fits_in_memory, require_input_file,
                        require_new_or_resumed, require_number, require_writable, settle_with_checkpoint)
from .checkpoints import CheckpointSet
from .common import progress, resolve_device
from .training_run import TrainingRun

PIXELS, CLASSES = 784, 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR", help="directory with the four MNIST IDX files (raw or .gz)")
    parser.add_argument("--download", action="store_true", help="fetch MNIST into the cache, then train")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--optimizer", choices=("sgd", "adamw"), default="adamw",
                        help="adamw is the book's form, eps inside the square root (AdamW(eps_inside_sqrt=True)); "
                             "sgd uses momentum 0.9")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", metavar="PATH", help="checkpoint written at the end of each epoch (and see above)")
    parser.add_argument("--resume", metavar="PATH", help="continue from a checkpoint written by --save")
    parser.add_argument("--overwrite", action="store_true",
                        help="let --save replace checkpoints of another run (deletes PATH and its numbered ones)")
    parser.add_argument("--checkpoint-minutes", type=float, default=10.0, metavar="M",
                        help="with --save, also checkpoint after M minutes since the last one (0: off)")
    parser.add_argument("--keep-checkpoints", type=int, default=3, metavar="N",
                        help="numbered checkpoints kept beside --save's PATH")
    parser.add_argument("--metrics", metavar="FILE",
                        help="one JSON object per epoch (--resume cuts it back to the checkpoint's epoch)")
    parser.set_defaults(handler=run)


def check_arguments(args) -> dict | None:
    """Every rule on ``zero mnist``'s arguments, before any data is read. With --resume, reads
    the checkpoint first: options not given take its settings; returns it."""
    saved = None
    if args.resume:
        if not Path(args.resume).exists():  # a first save cut before naming the latest: its numbered file
            args.resume = str(CheckpointSet(args.resume).resumable() or args.resume)
        require_input_file("--resume", args.resume)
        saved = _read_checkpoint(args)
    require_at_least(args, 1, "epochs", "batch_size", "hidden", "keep_checkpoints")
    require_at_least(args, 0, "seed")
    require_number(args, "lr", "checkpoint_minutes")
    if args.save:
        require_writable("--save", args.save)
        same = bool(args.resume) and Path(args.resume).resolve() == Path(args.save).resolve()
        if same and args.overwrite:
            raise UsageError("--overwrite would delete the checkpoint --resume continues from (drop --overwrite)")
        require_new_or_resumed(_checkpoints(args), same, args.overwrite, f"--save {args.save}")
    if args.metrics:
        require_writable("--metrics", args.metrics)
    H, B = args.hidden, args.batch_size
    require_fits_in_memory(16 * (PIXELS * H + H * CLASSES) + 4 * B * (PIXELS + 3 * H + 3 * CLASSES),
                           physical_memory() if args.device == "cpu" else None,
                           f"--hidden {H} with --batch-size {B}", "--hidden (or --batch-size)")
    if saved is not None and saved["epoch"] >= args.epochs:
        raise UsageError(f"--epochs {args.epochs}: {args.resume} has {saved['epoch']} epochs done already; ask "
                         "for more --epochs to continue it")
    if args.data is not None and not args.download and not Path(args.data).is_dir():
        raise UsageError(f"--data {args.data}: not a directory")
    return saved


def _checkpoints(args) -> CheckpointSet | None:
    return CheckpointSet(args.save, args.keep_checkpoints) if args.save else None


def run(args) -> int:
    saved = check_arguments(args)
    device = resolve_device(args.device)
    if args.download:
        target = Path(args.data) if args.data else default_cache_dir()
        print(f"downloading MNIST into {target}")
        download_mnist(target, log=print)
        args.data = str(target)
    root, kind = find_mnist(args.data)
    name = "Fashion-MNIST" if kind == "fashion-mnist" else "MNIST"
    print(f"data: {name} from {root}")
    train_set, test_set = MNIST(root, train=True), MNIST(root, train=False)

    manual_seed(args.seed)
    try:
        model = MLP(hidden=args.hidden)
    except MemoryError:
        raise UsageError(f"out of memory building an MLP with --hidden {args.hidden}: lower it") from None
    pixels = train_set.images.numpy()
    model.set_input_statistics(float(pixels.mean()), float(pixels.std()))
    model.to(device)
    optimizer = (AdamW(model.parameters(), lr=args.lr, eps_inside_sqrt=True) if args.optimizer == "adamw"
                 else SGD(model.parameters(), lr=args.lr, momentum=0.9))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    position = EpochPosition()
    start_epoch = 0
    if saved is not None:
        start_epoch, position = _restore(saved, args.resume, model, optimizer)
        for group in optimizer.param_groups:
            group["initial_lr"] = args.lr  # the checkpoint's, or the override: what the schedule scales from
        where = f"{position.batch} of {len(train_loader)} batches into epoch {start_epoch + 1}" if position.batch \
            else f"after epoch {start_epoch}"
        print(f"resumed from {args.resume} {where}")
    steps_per_epoch = len(train_loader)
    # Cosine decay to a tenth of --lr over the whole run: the last steps average out noise.
    schedule = WarmupCosineLR(optimizer, warmup_steps=0, total_steps=args.epochs * steps_per_epoch,
                              min_lr=args.lr / 10, last_epoch=start_epoch * steps_per_epoch + position.batch - 1)
    test_loader = DataLoader(test_set, batch_size=1000)
    print(f"model: {model.num_parameters():,} parameters on {device}, {args.optimizer} lr={args.lr}, "
          f"batch {args.batch_size}, {len(train_set):,} training and {len(test_set):,} test images")

    continues_save = saved is not None and bool(args.save) and Path(args.resume).resolve() == Path(args.save).resolve()
    run = TrainingRun("mnist", _checkpoints(args), overwrite=args.overwrite,
                      checkpoint_minutes=args.checkpoint_minutes, metrics=args.metrics, metrics_key="epoch",
                      metrics_after=start_epoch if saved is not None else None,
                      resumed_step=start_epoch * steps_per_epoch + position.batch if continues_save else None,
                      best_val_loss=(saved or {}).get("run", {}).get("best_val_loss"))
    job = _Job(args, run, model, optimizer, schedule, train_loader, device)
    try:
        with run:
            for epoch in range(start_epoch, args.epochs):
                if not job.train_epoch(epoch, position):
                    return run.stop(job.step(epoch, position))
                test_loss, test_acc = evaluate(model, test_loader, device)
                record = {"epoch": epoch + 1, "train_loss": position.loss_sum / position.seen,
                          "train_acc": position.correct / position.seen, "test_loss": test_loss,
                          "test_acc": test_acc, "seconds": round(position.seconds, 3),
                          "samples_per_s": round(len(train_set) / max(position.seconds, 1e-9), 1)}
                print(f"epoch {epoch + 1}/{args.epochs}  train loss {record['train_loss']:.4f} "
                      f"acc {record['train_acc']:.4f}  test loss {test_loss:.4f} acc {test_acc:.4f}  "
                      f"{position.seconds:.1f}s ({record['samples_per_s']:,.0f} samples/s)")
                run.write_metrics(record)
                position = EpochPosition()
                job.save(epoch + 1, position, test_loss)
                if run.stop_requested and epoch + 1 < args.epochs:
                    return run.stop(job.step(epoch + 1, position))
    except MemoryError:
        raise UsageError(f"out of memory training --hidden {args.hidden} with --batch-size {args.batch_size}: "
                         "lower them") from None
    return 0


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

    def __init__(self, args, run: TrainingRun, model, optimizer, schedule, loader, device):
        self.args, self.run, self.model, self.optimizer = args, run, model, optimizer
        self.schedule, self.loader, self.device = schedule, loader, device

    def step(self, epochs_done: int, position: EpochPosition) -> int:
        return epochs_done * len(self.loader) + position.batch

    def save(self, epochs_done: int, position: EpochPosition, test_loss: float | None = None) -> None:
        state = {"job": "mnist", "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "epoch": epochs_done, "step": self.step(epochs_done, position), "position": position.state(),
                 "rng": get_rng_state(), "config": _config(self.args)}
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
        for images, labels in progress(batches, total - position.batch, f"epoch {epoch + 1}"):
            step = self.step(epoch, position) + 1
            images, labels = images.to(self.device), labels.to(self.device)
            try:
                logits = self.model(images)
                loss = F.cross_entropy(logits, labels)
                loss_value, _ = self.run.check_step(step, loss)  # before the update: Diverged
                self.optimizer.zero_grad()
                loss.backward()
            except ArithmeticError as e:
                raise self.run.arithmetic_failure(step, e) from None
            self.optimizer.step()
            self.schedule.step()
            n = labels.shape[0]
            position.batch += 1
            position.loss_sum += loss_value * n
            position.correct += int((logits.argmax(1) == labels).sum().item())
            position.seen += n
            self.run.step = step
            if position.batch < total and (self.run.stop_requested or self.run.checkpoint_due()):
                position.seconds += time.perf_counter() - started
                started = time.perf_counter()
                self.save(epoch, position)
                if self.run.stop_requested:
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


def _config(args) -> dict:
    return {k: getattr(args, k) for k in (*MODEL_KEYS, *TRAIN_KEYS)}


def _read_checkpoint(args) -> dict:
    """The --resume checkpoint; the options not given take its settings."""
    path = args.resume
    checkpoint = load(path)
    if not isinstance(checkpoint, dict) or any(k not in checkpoint for k in ("model", "optimizer", "epoch", "rng")):
        raise DataError(f"--resume: {path} is not a `zero mnist` checkpoint")
    epoch = checkpoint["epoch"]
    if not isinstance(epoch, int) or epoch < 0:
        raise DataError(f"--resume: {path}: bad epoch number {epoch!r}")
    config = checkpoint.get("config", {})
    inside_epoch = bool((checkpoint.get("position") or {}).get("batch"))
    fixed = MODEL_KEYS + (("batch_size",) if inside_epoch else ())  # the epoch's position counts its batches
    adjustable = tuple(k for k in TRAIN_KEYS if k not in fixed)
    for line in settle_with_checkpoint(args, config, path, fixed=fixed, adjustable=adjustable):
        print(f"resume: {line}")
    return checkpoint


def _restore(checkpoint: dict, path: str, model, optimizer) -> tuple[int, EpochPosition]:
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    set_rng_state(checkpoint["rng"])
    saved = checkpoint.get("position") or {}
    position = EpochPosition(**saved) if saved.get("batch") else EpochPosition()
    return int(checkpoint["epoch"]), position
