"""``OneCycleLR``: the 1cycle policy (Smith & Topin), PyTorch's semantics.

The lr rises from ``max_lr / div_factor`` to ``max_lr`` over the first
``pct_start`` of ``total_steps``, then anneals to ``initial_lr / final_div_factor``
(with ``three_phase=True``: back to the initial lr, then down to the minimum);
momentum (or Adam's β1) moves the opposite way between ``max_momentum`` and
``base_momentum``. Each phase interpolates with

    cos:     end + (start − end) / 2 · (1 + cos(π p))      p = progress through the phase
    linear:  start + (end − start) · p

The schedule's points live in each group (``initial_lr``, ``max_lr``, ``min_lr``,
``max_momentum``, ``base_momentum``), so they travel with the optimizer's state.
"""
from __future__ import annotations

import math

from .scheduler import LRScheduler, check_optimizer, per_group


class OneCycleLR(LRScheduler):
    def __init__(self, optimizer, max_lr, total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not isinstance(value, int) or value <= 0:
                    raise ValueError(f"Expected positive integer {name}, but got {value}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        rise_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            phases = [(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                       "max_momentum"),
                      (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            phases = [(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases: list[dict] = [dict(zip(keys, phase)) for phase in phases]
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            highs = per_group("max_momentum", optimizer, max_momentum)
            lows = per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for group, high, low in zip(optimizer.param_groups, highs, lows):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, progress: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * progress) + 1)
        return (end - start) * progress + start

    def get_lr(self) -> list:
        """The lrs of step ``last_epoch``; also sets each group's momentum (or β1)."""
        self._warn_if_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end: float = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    progress = (step - start) / (end - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], progress))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[phase["start_momentum"]],
                                                               group[phase["end_momentum"]], progress))
                    break
                start = end
        return lrs
