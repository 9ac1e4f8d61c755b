"""``zero gpt train``'s configuration, resolved once into a frozen ``GPTTrainConfig``.

Four layers, each overriding the one before:

    the parser's defaults  <  --preset  <  the --resume checkpoint's settings  <  options given

``resolve_config`` merges them, refuses what a resumed run may not change (the model's
shape and the preset: ``FIXED_KEYS``) and what no run may have (a --lr that is not a
number ...), and returns the one object the rest of the job reads: ``config.lr``,
``config.steps``. Which options the command line gave, ``args.given``, is recorded by
the parser (``parser.Parser``); an option given with its default value still counts as
given. The checkpoint keeps ``train_settings(config)`` and ``model_settings`` under the
keys it always had, so checkpoints written before the config existed resume.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..errors import UsageError
from ..models.gpt import GPTConfig
from . import presets
from .arguments import (merge_with_checkpoint, require_at_least, require_multiple, require_not_above,
                        require_number, require_writable)

MODEL_KEYS = ("block_size", "n_layer", "n_head", "n_embd", "dropout")
TRAIN_KEYS = ("steps", "batch_size", "lr", "min_lr", "warmup", "weight_decay", "grad_clip", "eval_interval",
              "eval_iters", "log_interval", "seed", "data", "metrics")
FIXED_KEYS = (*MODEL_KEYS, "preset")  # what a resumed run cannot change
PATH_KEYS = ("data", "metrics")  # recorded absolute
METRICS = "metrics.jsonl"

_DEFAULT = presets.PRESETS[presets.DEFAULT]


@dataclass(frozen=True)
class GPTTrainConfig:
    """Everything a ``zero gpt train`` run does, settled (the defaults: ``--preset cpu``)."""

    # where: the run's directory, the data (None: the default corpus, prepared when training starts)
    out: str = "runs/gpt"
    data: str | None = None
    metrics: str | None = None  # (resolved: RUN_DIR/metrics.jsonl unless given)
    device: str = "cpu"
    dtype: str = "float32"  # --dtype: bfloat16 or float16 run the forward under zero.autocast (issue 38)
    cuda_graph: bool = True  # on CUDA, the step replayed as CUDA graphs after a warm-up (--no-cuda-graph: off)
    preset: str = presets.DEFAULT
    # the model
    n_layer: int = _DEFAULT["n_layer"]
    n_head: int = _DEFAULT["n_head"]
    n_embd: int = _DEFAULT["n_embd"]
    block_size: int = _DEFAULT["block_size"]
    dropout: float = _DEFAULT["dropout"]
    # the optimisation: batches, AdamW, the warm-up + cosine schedule, clipping
    batch_size: int = _DEFAULT["batch_size"]
    steps: int = _DEFAULT["steps"]
    lr: float = _DEFAULT["lr"]
    min_lr: float = _DEFAULT["min_lr"]
    warmup: int = _DEFAULT["warmup"]
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    seed: int = 1337
    # evaluation and logging
    eval_interval: int = _DEFAULT["eval_interval"]
    eval_iters: int = _DEFAULT["eval_iters"]
    log_interval: int = _DEFAULT["log_interval"]
    sample_tokens: int = _DEFAULT["sample_tokens"]
    # the run's safety: checkpoints, resuming, several ranks
    checkpoint_minutes: float = 10.0
    keep_checkpoints: int = 3
    resume: str | None = None
    overwrite: bool = False
    dist_timeout: float = 1800.0
    dry_run: bool = False

    def model_config(self, vocab_size: int) -> GPTConfig:
        """The model's shape (the data decides the vocabulary)."""
        return GPTConfig(vocab_size=vocab_size, **{k: getattr(self, k) for k in MODEL_KEYS})


def train_settings(config: GPTTrainConfig) -> dict:
    """What a checkpoint records under ``config["train"]`` (its keys as they always were); its
    paths absolute, so that a run resumed from another working directory reads the same data
    and extends the same metrics file."""
    values = asdict(config)
    settings = {k: values[k] for k in (*TRAIN_KEYS, "preset")}
    return {k: os.path.abspath(v) if k in PATH_KEYS and v is not None else v for k, v in settings.items()}


def checkpoint_settings(checkpoint: dict) -> dict:
    """A checkpoint's recorded settings, train and model together (``train_settings``, ``GPTConfig``)."""
    config = checkpoint["config"]
    return {**config.get("train", {}), **config.get("model", {})}


def resolve_config(args, saved: dict | None = None, path=None) -> tuple[GPTTrainConfig, list[str]]:
    """The run's configuration from the parsed command line ``args`` and, on --resume, the
    checkpoint's settings ``saved`` (``checkpoint_settings``; ``path``: where it was read,
    for the messages). Returns it with a line for each option given that overrides the
    checkpoint's. Every rule on the values is checked here (one line each, UsageError)."""
    given = frozenset(getattr(args, "given", ()))
    names = [f.name for f in fields(GPTTrainConfig)]
    values = {name: getattr(args, name) for name in names if hasattr(args, name)}
    overrides: list[str] = []
    if saved is not None:
        for key in PATH_KEYS:  # a path given here is compared, and recorded, as the absolute path it names
            if key in given and values.get(key) is not None:
                values[key] = os.path.abspath(values[key])
        settled, overrides = merge_with_checkpoint(values, given, saved, path, fixed=FIXED_KEYS,
                                                   adjustable=TRAIN_KEYS)
        values.update(settled)
    preset = values.get("preset", presets.DEFAULT)
    if preset not in presets.PRESETS:
        raise UsageError(f"--preset must be one of {', '.join(presets.PRESETS)}, got {preset!r}")
    for name, value in presets.PRESETS[preset].items():  # what nothing above set
        if values.get(name) is None:
            values[name] = value
    if values.get("dtype") is None:
        values["dtype"] = default_dtype(values.get("device", GPTTrainConfig.device))
    if values.get("metrics") is None:
        values["metrics"] = str(Path(values.get("out", GPTTrainConfig.out)) / METRICS)
    config = GPTTrainConfig(**values)
    check(config)
    return config, overrides


def default_dtype(device: str) -> str:
    """--dtype's default: bfloat16 on a GPU that computes it natively (nanoGPT's rule), else float32."""
    from .. import cuda

    on_gpu = str(device).strip().lower().startswith("cuda")
    return "bfloat16" if on_gpu and cuda.is_bf16_supported(including_emulation=False) else "float32"


def check(config: GPTTrainConfig) -> None:
    """The rules on the values (the paths' and the memory's are the job's: ``gpt_train.check``)."""
    require_at_least(config, 1, "steps", "batch_size", "block_size", "n_layer", "n_head", "n_embd",
                     "eval_interval", "eval_iters", "log_interval", "keep_checkpoints")
    require_at_least(config, 0, "warmup", "sample_tokens", "seed")
    require_multiple(config, "n_embd", "n_head")
    require_number(config, "lr", "min_lr", "weight_decay", "grad_clip", "checkpoint_minutes")
    require_number(config, "dropout", below=1.0)
    require_not_above(config, "min_lr", "lr")
    require_writable("--metrics", config.metrics)
