"""Learning-rate schedules. Each sets ``group["lr"]`` of its optimizer's groups from the
step count (the book's ``SetLr`` each step).

The GPT job uses the book's linear warm-up then cosine decay::

    lr_t = max_lr · (t + 1) / T_w                                   t < T_w
    lr_t = min_lr + ½ (max_lr − min_lr) (1 + cos(π r_t)),  r_t = (t − T_w) / (T − T_w)

``warmup_cosine_lr`` is that formula as a plain function; the classes wrap it
(and constant and step schedules) in PyTorch's ``scheduler.step()`` interface.
"""
from __future__ import annotations

import math


def warmup_cosine_lr(step: int, max_lr: float, min_lr: float, warmup_steps: int, total_steps: int) -> float:
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if total_steps <= warmup_steps:
        return min_lr
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


class LRScheduler:
    """Base class: ``lr_at(step, base_lr)`` defines the schedule. The learning rate for
    step 0 is set at construction; each ``step()`` moves to the next."""

    def __init__(self, optimizer, last_step: int = -1):
        self.optimizer = optimizer
        self.base_lrs = [group.setdefault("initial_lr", group["lr"]) for group in optimizer.param_groups]
        self.last_step = last_step
        self.step()

    def lr_at(self, step: int, base_lr: float) -> float:
        raise NotImplementedError

    def step(self) -> None:
        self.last_step += 1
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = self.lr_at(self.last_step, base)

    def get_last_lr(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {"last_step": self.last_step, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state: dict) -> None:
        self.last_step = state["last_step"]
        self.base_lrs = list(state["base_lrs"])
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = self.lr_at(self.last_step, base)


class WarmupCosineLR(LRScheduler):
    """The book's schedule: linear warm-up to each group's lr, cosine decay to ``min_lr``
    at ``total_steps``, then ``min_lr``."""

    def __init__(self, optimizer, warmup_steps: int, total_steps: int, min_lr: float = 0.0, last_step: int = -1):
        self.warmup_steps, self.total_steps, self.min_lr = warmup_steps, total_steps, min_lr
        super().__init__(optimizer, last_step)

    def lr_at(self, step: int, base_lr: float) -> float:
        return warmup_cosine_lr(step, base_lr, self.min_lr, self.warmup_steps, self.total_steps)


class ConstantLR(LRScheduler):
    """The learning rate the optimizer was built with, always."""

    def lr_at(self, step: int, base_lr: float) -> float:
        return base_lr


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` steps."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_step: int = -1):
        if step_size <= 0:
            raise ValueError(f"StepLR: step_size must be positive, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_step)

    def lr_at(self, step: int, base_lr: float) -> float:
        return base_lr * self.gamma ** (step // self.step_size)
