"""The GPT trainer (the book's stone_gpt loop): model, optimizer, schedule and data, and a step.

What a training step is, and nothing else -- the job around it (``gpt_train``) keeps
the run safe: the lock, rank agreement, the divergence guard, signals, checkpoints,
metrics and progress. Each step, as in nanoGPT:

    x, y = a random batch (targets shifted by one)
    loss = model(x, y)                       the fused linear + cross-entropy
    loss.backward()                          (several ranks: gradients averaged in backward)
    clip the gradients' global norm to --grad-clip
    AdamW step (betas 0.9, 0.99), then the warm-up + cosine learning rate

``evaluate()`` estimates the validation loss; ``state()`` / ``load_state()`` are
what a checkpoint holds of it.
"""
from __future__ import annotations

import math
from collections.abc import Callable

from .. import dtypes, nn
from ..amp import GradScaler, autocast
from ..grad_mode import no_grad
from ..models.gpt import GPT
from ..nn.utils import clip_grad_norm_
from ..optim import AdamW
from ..optim.lr_scheduler import WarmupCosineLR
from ..optim.lr_scheduler.schedules import warmup_cosine_lr
from ..random import Generator, get_rng_state, manual_seed, set_rng_state
from ..tensors.creation import tensor
from ..tensors.tensor import Tensor
from . import parallel
from .gpt_config import GPTTrainConfig
from .gpt_graph_step import GraphedStep, reason_not_graphed


def _no_guard(loss, grad_norm):
    return loss.item(), None if grad_norm is None else grad_norm.item()


class Trainer:
    """``Trainer(config, vocab_size, train_data, val_data, device, draw)``; ``draw(data, rng)``
    gives a batch (x, y) of ``data`` on the device, its offsets drawn from ``rng``."""

    def __init__(self, config: GPTTrainConfig, vocab_size: int, train_data, val_data, device,
                 draw: Callable):
        self.config, self.device, self.draw = config, device, draw
        self.train_data, self.val_data = train_data, val_data
        ranks = parallel.current()
        manual_seed(config.seed)
        # the batches' offsets: a stream of their own
        self.batches = Generator(seed=parallel.stream_seed(config.seed + 1, ranks.rank))
        self.model = GPT(config.model_config(vocab_size)).to(device)
        if ranks.rank > 0:  # dropout masks of its own on each rank (rank 0's weights reach all: DDP)
            manual_seed(parallel.stream_seed(config.seed, ranks.rank))
        decay, no_decay = parameter_groups(self.model)
        # On CUDA the optimizer's step counts and learning rate live on the device (capturable=True),
        # so a step replayed as a CUDA graph counts on and follows the schedule; op by op too, so
        # both run the same kernels. The book's AdamW (see --help).
        self.on_device = device.type == "cuda"
        self.optimizer = AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                {"params": no_decay, "weight_decay": 0.0}], lr=self._lr_holder(config.lr),
                               betas=(0.9, 0.99), eps_inside_sqrt=True, capturable=self.on_device)
        self.schedule: WarmupCosineLR | None = None
        self.trained = self.model  # what the step calls: DistributedDataParallel with several ranks
        # --dtype float16: dynamic loss scaling (float16's range is small); otherwise every call of it
        # passes through (no arithmetic: a float32 or bfloat16 step is as without it)
        self.scaler = GradScaler(device.type, enabled=config.dtype == "float16")
        # on CUDA the step is replayed as graphs (None: op by op, and why is in graph_off)
        self.graph_off = reason_not_graphed(config, device)
        self.graphed = GraphedStep(self) if self.graph_off is None else None

    def start(self, first: int = 0) -> None:
        """Ready to train from step ``first`` (after ``load_state``, if resumed): the schedule, placed
        at that step, and the model as the ranks train it."""
        config = self.config
        self.schedule = WarmupCosineLR(self.optimizer, warmup_steps=config.warmup, total_steps=config.steps,
                                       min_lr=config.min_lr, last_epoch=first - 1)
        self.trained = parallel.current().wrap(self.model)  # (evaluation uses the model itself)

    @property
    def lr(self) -> float:
        """The learning rate of the next step (worked out here: on CUDA the groups' is on the device)."""
        assert self.schedule is not None, "Trainer.start() first"
        config = self.config
        return warmup_cosine_lr(self.schedule.last_epoch, config.lr, config.min_lr, config.warmup, config.steps)

    def _lr_holder(self, lr: float):
        """What a group's lr is: a number, or on CUDA a 0-d tensor there that the schedule fills."""
        return tensor(lr, device=self.device) if self.on_device else lr

    def step(self, guard: Callable = _no_guard):
        """One optimizer step. ``guard(loss, grad_norm)`` runs before the update is applied (the job's
        rank agreement and divergence guard: it raises to stop the update) and its result is
        the step's; by default the loss and the norm as floats. On CUDA the step is replayed
        as graphs after a warm-up (``gpt_graph_step``), unless --no-cuda-graph."""
        assert self.schedule is not None, "Trainer.start() first"
        x, y = self.draw(self.train_data, self.batches)
        if self.graphed is not None:
            return self.graphed(x, y, guard)
        return self.eager_step(x, y, guard)

    def eager_step(self, x, y, guard: Callable):
        """``step`` on the batch ``x, y``, op by op."""
        assert self.schedule is not None, "Trainer.start() first"
        with self.precision():
            loss = self.trained(x, y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()  # (float16: the loss scaled, so small gradients stay representable)
        self.scaler.unscale_(self.optimizer)  # (the gradients at their true size again, for the clip)
        # --grad-clip 0: no clipping (a limit of inf scales by exactly 1), but the norm is still
        # computed: the divergence guard reads it
        clip = self.config.grad_clip if self.config.grad_clip > 0 else math.inf
        grad_norm = clip_grad_norm_(self.model.parameters(), clip)
        # float16's overflow: the scaler skips this update and lowers its scale; not a divergence
        skipped = self.scaler.is_enabled() and not math.isfinite(grad_norm.item())
        checked = guard(loss, None if skipped else grad_norm)
        self.scaler.step(self.optimizer)  # (optimizer.step(), unless the scaler skips it)
        self.scaler.update()
        self.schedule.step()
        return checked

    def evaluate(self) -> dict:
        """The validation record: ``val_loss``, the mean loss over --eval-iters random batches, in
        eval mode (no dropout), no graph. A fixed stream of its own, so evaluating never shifts
        the training batches."""
        rng = Generator(seed=self.config.seed + 2)
        total = 0.0
        with nn.eval_mode(self.model), no_grad(), self.precision():
            for _ in range(self.config.eval_iters):
                x, y = self.draw(self.val_data, rng)
                total += self.model(x, y).item()
        return {"val_loss": total / self.config.eval_iters}

    def precision(self) -> autocast:
        """--dtype bfloat16 or float16: the forward under autocast in that dtype (weights,
        gradients and the optimizer's state stay float32); float32: autocast off."""
        low = dtypes.float16 if self.config.dtype == "float16" else dtypes.bfloat16
        return autocast(self.device.type, dtype=low, enabled=self.config.dtype != "float32")

    # -- checkpoints ----------------------------------------------------------------------------
    def state(self) -> dict:
        """The model's and the optimizer's state (and float16's loss scale), as a checkpoint holds them:
        the same on every device (step counts on the CPU, learning rates as numbers)."""
        scaler = {"scaler": self.scaler.state_dict()} if self.scaler.is_enabled() else {}
        return {"model": self.model.state_dict(), "optimizer": _plain(self.optimizer.state_dict()), **scaler}

    def rng_state(self) -> dict:
        """This rank's random streams: the default one (dropout) and the batches'."""
        return {"default": get_rng_state(), "batches": self.batches.get_state()}

    def load_state(self, checkpoint: dict) -> int:
        """Continue from ``checkpoint`` (``state()``, the ranks' ``rng_state()`` and its step):
        returns the step. The config's --lr and --weight-decay (the checkpoint's, or given
        now) replace the optimizer's saved ones."""
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if self.scaler.is_enabled() and checkpoint.get("scaler"):  # (a float32/bfloat16 run's: the scale starts anew)
            self.scaler.load_state_dict(checkpoint["scaler"])
        step = int(checkpoint["step"])
        ranks, seed = parallel.current(), self.config.seed
        streams = checkpoint["rng"].get("ranks") or [checkpoint["rng"]]  # one per rank that wrote it
        if ranks.rank < len(streams):  # the stream this rank had: exactly where it stopped
            set_rng_state(streams[ranks.rank]["default"])
            self.batches.set_state(streams[ranks.rank]["batches"])
        else:  # a rank the checkpoint's run did not have: streams of its own, started anew at this step
            manual_seed(parallel.stream_seed(seed + step, ranks.rank))
            self.batches.manual_seed(parallel.stream_seed(seed + 1 + step, ranks.rank))
        self.optimizer.param_groups[0]["weight_decay"] = self.config.weight_decay
        for group in self.optimizer.param_groups:
            group["initial_lr"] = self.config.lr  # what the schedule scales from
            group["capturable"] = self.on_device   # (the checkpoint's groups came with the device it ran on)
            group["lr"] = self._lr_holder(self.config.lr)  # (start() places the schedule, which sets it)
        return step


def _plain(optimizer_state: dict) -> dict:
    """An optimizer's state_dict as a CPU run writes it: a capturable run's device step counts
    and lr tensors become CPU counts and numbers (read here, between steps)."""
    state = {index: {key: value.cpu() if key == "step" else value for key, value in entry.items()}
             for index, entry in optimizer_state["state"].items()}
    groups = [{**group, "capturable": False,
               **{key: float(group[key]) for key in ("lr", "initial_lr") if isinstance(group.get(key), Tensor)}}
              for group in optimizer_state["param_groups"]]
    return {**optimizer_state, "state": state, "param_groups": groups}


def parameter_groups(model: GPT) -> tuple[list, list]:
    """Weight decay on matrices (linear weights, embeddings); none on biases and norms."""
    decay: list = []
    no_decay: list = []
    for _, p in model.named_parameters():
        (decay if p.ndim >= 2 else no_decay).append(p)
    return decay, no_decay
