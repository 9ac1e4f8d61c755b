"""Train the book's MLP (784 -> hidden -> ReLU -> 10) with cross-entropy.

The learning rate follows a cosine from --lr down to --lr / 10 over the run,
and inputs are standardised with the training set's pixel statistics.

Data, in this order: --data DIR; $ZERO_DATA/mnist or ~/.cache/zero/mnist;
Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist). Fetch
MNIST into the cache with `zero mnist --download`.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from .. import nn
from ..data import MNIST, DataLoader, default_cache_dir, download_mnist, find_mnist
from ..errors import DataError
from ..grad_mode import no_grad
from ..models import MLP
from ..nn import functional as F
from ..optim import SGD, AdamW
from ..optim.lr_scheduler import WarmupCosineLR
from ..random import get_rng_state, manual_seed, set_rng_state
from ..serialization import load, save
from .common import MetricsFile, progress, require_at_least, resolve_device


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR", help="directory with the four MNIST IDX files (raw or .gz)")
    parser.add_argument("--download", action="store_true", help="fetch MNIST into the cache, then train")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--optimizer", choices=("sgd", "adamw"), default="adamw")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", metavar="PATH", help="checkpoint written at the end of each epoch")
    parser.add_argument("--resume", metavar="PATH", help="continue from a checkpoint written by --save")
    parser.add_argument("--metrics", metavar="FILE", help="append one JSON object per epoch")
    parser.set_defaults(handler=run)


def run(args) -> int:
    require_at_least(args, 1, "epochs", "batch_size", "hidden")
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
    model = MLP(hidden=args.hidden)
    pixels = train_set.images.numpy()
    model.set_input_statistics(float(pixels.mean()), float(pixels.std()))
    model.to(device)
    optimizer = (AdamW(model.parameters(), lr=args.lr) if args.optimizer == "adamw"
                 else SGD(model.parameters(), lr=args.lr, momentum=0.9))
    start_epoch = 0
    if args.resume:
        start_epoch = _resume(args.resume, model, optimizer)
        print(f"resumed from {args.resume} after epoch {start_epoch}")
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    # Cosine decay to a tenth of --lr over the whole run: the last steps average out noise.
    schedule = WarmupCosineLR(optimizer, warmup_steps=0, total_steps=args.epochs * len(train_loader),
                              min_lr=args.lr / 10, last_step=start_epoch * len(train_loader) - 1)
    test_loader = DataLoader(test_set, batch_size=1000)
    print(f"model: {model.num_parameters():,} parameters on {device}, {args.optimizer} lr={args.lr}, "
          f"batch {args.batch_size}, {len(train_set):,} training and {len(test_set):,} test images")

    metrics = MetricsFile(args.metrics, append=bool(args.resume))
    try:
        for epoch in range(start_epoch, args.epochs):
            started = time.perf_counter()
            train_loss, train_acc = _train_epoch(model, optimizer, schedule, train_loader, device, epoch)
            seconds = time.perf_counter() - started
            test_loss, test_acc = evaluate(model, test_loader, device)
            record = {"epoch": epoch + 1, "train_loss": train_loss, "train_acc": train_acc,
                      "test_loss": test_loss, "test_acc": test_acc, "seconds": round(seconds, 3),
                      "samples_per_s": round(len(train_set) / seconds, 1)}
            print(f"epoch {epoch + 1}/{args.epochs}  train loss {train_loss:.4f} acc {train_acc:.4f}  "
                  f"test loss {test_loss:.4f} acc {test_acc:.4f}  {seconds:.1f}s "
                  f"({record['samples_per_s']:,.0f} samples/s)")
            metrics.write(record)
            if args.save:
                save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1,
                      "rng": get_rng_state(), "config": _config(args)}, args.save)
    finally:
        metrics.close()
    return 0


def _train_epoch(model, optimizer, schedule, loader, device, epoch: int) -> tuple[float, float]:
    model.train()
    total_loss = 0.0
    correct = seen = 0
    for images, labels in progress(loader, len(loader), f"epoch {epoch + 1}"):
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        n = labels.shape[0]
        total_loss += loss.item() * n
        correct += int((logits.argmax(1) == labels).sum().item())
        seen += n
    return total_loss / seen, correct / seen


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


def _config(args) -> dict:
    return {"hidden": args.hidden, "optimizer": args.optimizer, "lr": args.lr, "batch_size": args.batch_size,
            "seed": args.seed}


def _resume(path: str, model, optimizer) -> int:
    checkpoint = load(path)
    config = checkpoint.get("config", {})
    hidden = config.get("hidden")
    if hidden is not None and hidden != model.fc1.out_features:
        raise DataError(f"{path}: the checkpoint has --hidden {hidden}, this run {model.fc1.out_features}")
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    set_rng_state(checkpoint["rng"])
    epoch = int(checkpoint["epoch"])
    if epoch < 0:
        raise DataError(f"{path}: bad epoch number {epoch}")
    return epoch
