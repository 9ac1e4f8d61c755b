"""Schedules that follow a formula of the step: PyTorch's factor schedules and cosine annealing,
and the book's warm-up + cosine (``WarmupCosineLR``, Zero's own, used by its jobs)::

    lr_t = max_lr · (t + 1) / T_w                                   t < T_w
    lr_t = min_lr + ½ (max_lr − min_lr) (1 + cos(π r_t)),  r_t = (t − T_w) / (T − T_w)

Each docstring gives the closed form; ``get_lr`` computes it step to step where
PyTorch does (so schedulers chain), with PyTorch's order of float operations.
"""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter

from .scheduler import LRScheduler, current_lrs


def warmup_cosine_lr(step: int, max_lr: float, min_lr: float, warmup_steps: int, total_steps: int) -> float:
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if total_steps <= warmup_steps:
        return min_lr
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


class _LambdaScheduler(LRScheduler):
    """One function of the epoch per group, saved (when it is a callable object) as its ``__dict__``."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        elif len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
        else:
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(f, types.FunctionType) else dict(f.__dict__)
                               for f in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        saved = state_dict.pop("lr_lambdas")
        super().load_state_dict(state_dict)
        for f, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                f.__dict__.update(attributes)


class LambdaLR(_LambdaScheduler):
    """lr = initial_lr · lr_lambda(epoch); one function, or a list of one per group."""

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """lr ← lr · lr_lambda(epoch) at each step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        for f in lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]:
            if not callable(f):
                raise TypeError(f"lr_lambda should be a function, but got {type(f).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial:
            return current_lrs(self.optimizer)
        return [g["lr"] * f(self.last_epoch) for f, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """lr = initial_lr · γ^⌊epoch / step_size⌋."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        if step_size <= 0:
            raise ValueError(f"StepLR: step_size must be positive, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return current_lrs(self.optimizer)
        return [lr * self.gamma for lr in current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = initial_lr · γ^(number of milestones ≤ epoch)."""

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch not in self.milestones:
            return current_lrs(self.optimizer)
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(Counter(self.milestones).elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs]

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        self.milestones = Counter({int(k): v for k, v in dict(self.milestones).items()})  # (a checkpoint's dict)


class ConstantLR(LRScheduler):
    """PyTorch's ConstantLR: lr = initial_lr · factor for the first ``total_iters`` steps, then
    initial_lr. (Zero's ConstantLR used to mean "the lr, always": that is ``LambdaLR(opt, lambda _: 1)``.)"""

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return [lr * self.factor for lr in current_lrs(self.optimizer)]
        if self.last_epoch != self.total_iters:
            return current_lrs(self.optimizer)
        return [lr * (1.0 / self.factor) for lr in current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list:
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr = initial_lr · f, f going linearly from start_factor to end_factor over total_iters steps."""

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0, total_iters: int = 5,
                 last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in current_lrs(self.optimizer)]
        if self._is_initial or self.last_epoch > self.total_iters:
            return current_lrs(self.optimizer)
        change = self.end_factor - self.start_factor  # the ratio f(t) / f(t − 1):
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [lr * ratio for lr in current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list:
        change = self.end_factor - self.start_factor
        return [base * (self.start_factor + change * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = initial_lr · γ^epoch."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial:
            return current_lrs(self.optimizer)
        return [lr * self.gamma for lr in current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = η_min + ½ (initial_lr − η_min)(1 + cos(π · epoch / T_max)), computed step to step as
    PyTorch does (each step rescales the current lr, so it chains with other schedulers);
    past T_max it rises again (a period of 2 T_max), without restarts."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        t, period = self.last_epoch, self.T_max
        if self._is_initial:
            return current_lrs(self.optimizer)
        if (t - 1 - period) % (2 * period) == 0:  # leaving the trough: the ratio below would be 0 / 0
            return [g["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / period)) / 2
                    for base, g in zip(self.base_lrs, self.optimizer.param_groups)]
        ratio = (1 + math.cos(math.pi * t / period)) / (1 + math.cos(math.pi * (t - 1) / period))
        return [ratio * (lr - self.eta_min) + self.eta_min for lr in current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class WarmupCosineLR(LRScheduler):
    """The book's schedule (Zero's own, used by its jobs): linear warm-up to each group's
    initial lr over ``warmup_steps``, cosine decay to ``min_lr`` at ``total_steps``, then
    ``min_lr``. A closed form: resuming with ``last_epoch`` gives exactly the uninterrupted
    run's lrs."""

    def __init__(self, optimizer, warmup_steps: int, total_steps: int, min_lr: float = 0.0, last_epoch: int = -1):
        self.warmup_steps, self.total_steps, self.min_lr = warmup_steps, total_steps, min_lr
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        return self._get_closed_form_lr()

    def _get_closed_form_lr(self) -> list:
        return [warmup_cosine_lr(self.last_epoch, base, self.min_lr, self.warmup_steps, self.total_steps)
                for base in self.base_lrs]
