"""Schedulers made of schedulers: one after another (``SequentialLR``) or all at once
(``ChainedScheduler``), PyTorch's semantics and state_dict layout."""
from __future__ import annotations

from bisect import bisect_right

from .scheduler import SchedulerOfSchedulers, current_lrs, set_group_value


class SequentialLR(SchedulerOfSchedulers):
    """``schedulers[i]`` runs from ``milestones[i - 1]`` to ``milestones[i]``; at a milestone the
    next one starts from its epoch 0 (its closed form at 0, where it has one).

    Building it undoes the first step each scheduler made when it was built, resets the
    lrs to ``initial_lr`` and makes the first scheduler's first step again."""

    def __init__(self, optimizer, schedulers: list, milestones: list, last_epoch: int = -1):
        self._check_schedulers(optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            set_group_value(group, "lr", group["initial_lr"])
        for scheduler in schedulers:
            _undo_first_step(scheduler)
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _undo_first_step(scheduler) -> None:
    inner = getattr(scheduler, "_schedulers", None)
    if inner is not None:
        for s in inner:
            _undo_first_step(s)
    elif hasattr(scheduler, "last_epoch"):
        scheduler.last_epoch -= 1


class ChainedScheduler(SchedulerOfSchedulers):
    """Each ``step()`` steps every scheduler in turn (chainable ones compose their factors)."""

    def __init__(self, schedulers, optimizer=None):
        optimizer = optimizer or (schedulers[0].optimizer if len(schedulers) else None)
        self._check_schedulers(optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = current_lrs(schedulers[-1].optimizer)

    def step(self) -> None:  # type: ignore[override]
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = current_lrs(self._schedulers[-1].optimizer)
