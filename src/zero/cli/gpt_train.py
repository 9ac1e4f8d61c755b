"""The GPT training loop (the book's stone_gpt), for ``zero gpt train``.

Each step: a random batch (targets shifted by one), the fused loss, backward,
global-norm clipping, the warm-up + cosine learning rate, an AdamW step
(betas 0.9, 0.99). Every --eval-interval steps and at the end: a validation
loss estimate and a short sample in eval mode, then an atomic checkpoint of
model, optimizer, step, RNG states and config into RUN_DIR, from which
--resume continues exactly as if the run had never stopped.
"""
from __future__ import annotations

import time
from pathlib import Path

from .. import nn
from ..data.text import TRAIN_FILE, VAL_FILE, VOCAB_FILE, CharTokenizer, TokenData
from ..errors import DataError
from ..grad_mode import no_grad
from ..models.gpt import GPT, GPTConfig
from ..nn.utils import clip_grad_norm_
from ..optim import AdamW
from ..optim.lr_scheduler import WarmupCosineLR
from ..random import Generator, get_rng_state, manual_seed, set_rng_state
from ..serialization import load, save
from ..tensors.creation import tensor
from .common import MetricsFile, peak_memory, progress, require_at_least, resolve_device, trim_device_pool

CHECKPOINT = "checkpoint.safetensors"
MODEL_KEYS = ("block_size", "n_layer", "n_head", "n_embd", "dropout")


def train(args) -> int:
    _check_arguments(args)
    device = resolve_device(args.device)
    data_dir, run_dir = Path(args.data), Path(args.out)
    tokenizer = CharTokenizer.load(data_dir / VOCAB_FILE)
    train_data = TokenData(data_dir / TRAIN_FILE, len(tokenizer))
    val_data = TokenData(data_dir / VAL_FILE, len(tokenizer))
    config = GPTConfig(vocab_size=len(tokenizer), **{k: getattr(args, k) for k in MODEL_KEYS})

    manual_seed(args.seed)
    batches = Generator(seed=args.seed + 1)  # batch offsets: their own stream, saved in checkpoints
    model = GPT(config).to(device)
    decay, no_decay = _parameter_groups(model)
    optimizer = AdamW([{"params": decay, "weight_decay": args.weight_decay},
                       {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.99))
    first = 0
    if args.resume:
        first = _resume(run_dir / CHECKPOINT, model, optimizer, batches, config, tokenizer)
        print(f"resumed from {run_dir / CHECKPOINT} after step {first}")
    schedule = WarmupCosineLR(optimizer, warmup_steps=args.warmup, total_steps=args.steps, min_lr=args.min_lr,
                              last_step=first - 1)
    print(f"model: {model.num_parameters():,} parameters ({config.n_layer} layers, {config.n_head} heads, "
          f"{config.n_embd} wide, block {config.block_size}, vocabulary {config.vocab_size}) on {device}; "
          f"{len(train_data):,} train / {len(val_data):,} val tokens")

    metrics = MetricsFile(args.metrics, append=args.resume)
    tokens_per_step = args.batch_size * args.block_size
    clock, clock_step = time.perf_counter(), first
    try:
        for step in progress(range(first, args.steps), args.steps - first, "train"):
            lr = schedule.get_last_lr()[0]
            x, y = _batch(train_data, args, batches, device)
            loss = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            grad_norm = clip_grad_norm_(model.parameters(), args.grad_clip) if args.grad_clip > 0 else None
            optimizer.step()
            schedule.step()

            done = step + 1
            evaluate_now = done % args.eval_interval == 0 or done == args.steps
            if done % args.log_interval and not evaluate_now:
                continue
            record = {"step": done, "train_loss": round(loss.item(), 5), "lr": lr,
                      "grad_norm": None if grad_norm is None else round(grad_norm.item(), 5)}
            seconds = (time.perf_counter() - clock) / (done - clock_step)  # loss.item() waited for the device
            record["ms_per_step"] = round(1000 * seconds, 2)
            record["tokens_per_s"] = round(tokens_per_step / seconds, 1)
            if evaluate_now:
                record["val_loss"] = round(estimate_loss(model, val_data, args, device), 5)
            print(_format(record, device), flush=True)
            metrics.write(record)
            if evaluate_now:
                _show_sample(model, tokenizer, device, args.sample_tokens, args.seed)
                _checkpoint(run_dir, model, optimizer, batches, config, tokenizer, args, done)
            clock, clock_step = time.perf_counter(), done
    finally:
        metrics.close()
    return 0


def _check_arguments(args) -> None:
    require_at_least(args, 1, "steps", "batch_size", "block_size", "n_layer", "n_head", "n_embd",
                     "eval_interval", "eval_iters", "log_interval")


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


def _show_sample(model: GPT, tokenizer: CharTokenizer, device, tokens: int, seed: int) -> None:
    if tokens <= 0:
        return
    trim_device_pool(device)  # training-sized cached blocks will not fit a batch of one (the book)
    prompt = "\n" if "\n" in tokenizer.index else tokenizer.chars[0]
    start = tensor(tokenizer.encode(prompt)[None, :].astype("int64"), device=device)
    text = tokenizer.decode(model.generate(start, tokens, temperature=0.8, generator=Generator(seed=seed))[0].tolist())
    trim_device_pool(device)
    print("--- sample ---\n" + text.strip("\n") + "\n--------------")


def _checkpoint(run_dir: Path, model, optimizer, batches, config, tokenizer, args, step: int) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
          "rng": {"default": get_rng_state(), "batches": batches.get_state()},
          "config": {"model": config.to_dict(), "train": _train_settings(args)},
          "vocab": list(tokenizer.chars)}, run_dir / CHECKPOINT)


def _train_settings(args) -> dict:
    keys = ("steps", "batch_size", "lr", "min_lr", "warmup", "weight_decay", "grad_clip", "eval_interval",
            "eval_iters", "seed", "data")
    return {k: getattr(args, k) for k in keys}


def _resume(path: Path, model, optimizer, batches, config: GPTConfig, tokenizer) -> int:
    if not path.is_file():
        raise DataError(f"--resume: no checkpoint at {path}")
    checkpoint = load(path)
    saved = checkpoint["config"]["model"]
    if saved != config.to_dict():
        differs = ", ".join(f"{k}: checkpoint {saved.get(k)} vs now {v}" for k, v in config.to_dict().items()
                            if saved.get(k) != v)
        raise DataError(f"--resume: {path} was trained with another model configuration ({differs})")
    if list(checkpoint["vocab"]) != tokenizer.chars:
        raise DataError(f"--resume: {path} was trained on data with another vocabulary")
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    set_rng_state(checkpoint["rng"]["default"])
    batches.set_state(checkpoint["rng"]["batches"])
    return int(checkpoint["step"])


def _format(record: dict, device) -> str:
    text = (f"step {record['step']:5d}  loss {record['train_loss']:.4f}  lr {record['lr']:.2e}  "
            f"grad norm {record['grad_norm'] if record['grad_norm'] is not None else '-'}  "
            f"{record['ms_per_step']:.0f} ms/step  {record['tokens_per_s']:,.0f} tokens/s")
    if "val_loss" in record:
        text += f"  val loss {record['val_loss']:.4f}  peak memory {peak_memory(device) / 2**20:,.0f} MiB"
    return text
