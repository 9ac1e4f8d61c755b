"""The scheduler base class, ``LRScheduler``: PyTorch's protocol for setting ``group["lr"]``.

- Building a scheduler sets each group's ``initial_lr`` (when ``last_epoch=-1``)
  and makes the first step, so the optimizer holds the lr of step 0;
  ``last_epoch=n`` resumes after step n and needs ``initial_lr`` in every group
  (it comes with a loaded optimizer state) -- a KeyError otherwise.
- ``step()`` goes *after* ``optimizer.step()``: the first ``step()`` warns when no
  optimizer step came before it.
- ``get_lr()`` gives the lrs of step ``last_epoch``; most are chainable (they scale
  the group's current lr, so two schedulers on one optimizer compose), and
  ``_get_closed_form_lr()``, where there is one, computes them from ``base_lrs``
  alone (used by the deprecated ``step(epoch)``).
- ``get_last_lr()`` is the list of lrs the last step set; ``state_dict()`` is every
  attribute but the optimizer, under PyTorch's names, so the dicts move between the two.
- A group whose ``lr`` is a tensor (``capturable=True``: a captured step reads it on the
  device) keeps that tensor: each new value is written into it with ``fill_``
  (``set_group_value``), never put in its place, so the next replay of the graph reads it;
  ``initial_lr``, ``base_lrs`` and ``get_last_lr()`` hold copies of it (PyTorch's rules).
"""
from __future__ import annotations

import warnings

from ...tensors.tensor import Tensor
from ..optimizer import Optimizer

EPOCH_DEPRECATED = ("The epoch parameter in `scheduler.step()` is deprecated: call `scheduler.step()` without it. "
                    "With an epoch the closed form is used instead of the chainable form, where there is one.")


def current_lrs(optimizer, key: str = "lr") -> list:
    """Each group's ``key``: a copy of it where it is a tensor (so a list kept does not change
    when the next step writes into the group's)."""
    return [group[key].clone() if isinstance(group[key], Tensor) else group[key] for group in optimizer.param_groups]


def set_group_value(group: dict, key: str, value) -> None:
    """group[key] = value, or, where group[key] is a tensor, the value written into it (with
    ``fill_``): a captured step reads that tensor, so it must stay the same one."""
    current = group[key]
    if isinstance(current, Tensor):
        current.fill_(value.reshape(()) if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def per_group(name: str, optimizer, value) -> list:
    """One value per parameter group: ``value`` repeated, or a list/tuple of the right length."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups: {name} has "
                             f"{len(value)} values, param_groups has {len(optimizer.param_groups)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


def check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    """Base class: a subclass defines ``get_lr()`` (and ``_get_closed_form_lr()`` if it has one)."""

    _get_lr_called_within_step = False
    _is_initial = False
    steps_on_a_metric = False  # True for ReduceLROnPlateau: step(metric)

    def __init__(self, optimizer, last_epoch: int = -1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"].clone() if isinstance(group["lr"], Tensor) else group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a "
                               f"scheduler with last_epoch={last_epoch}: load the optimizer's state_dict first, "
                               "or build the scheduler with last_epoch=-1 for a fresh run")
        self.base_lrs = current_lrs(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        raise NotImplementedError

    def get_last_lr(self) -> list:
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`: call them in the "
                          "opposite order, optimizer.step() first, or the first value of the learning rate "
                          "schedule is skipped", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATED, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            set_group_value(group, "lr", lr)
        self._last_lr = current_lrs(self.optimizer)

    def _warn_if_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, use `get_last_lr()`",
                          UserWarning, stacklevel=3)

    def state_dict(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        if "last_step" in state_dict and "last_epoch" not in state_dict:  # Zero's layout before PyTorch's
            state_dict["last_epoch"] = state_dict.pop("last_step")
        self.__dict__.update(state_dict)


class SchedulerOfSchedulers(LRScheduler):
    """What ``SequentialLR`` and ``ChainedScheduler`` share: schedulers of one optimizer, saved
    in the state dict as their own state dicts under ``_schedulers``."""

    _schedulers: list

    def _check_schedulers(self, optimizer, schedulers) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if getattr(scheduler, "steps_on_a_metric", False):  # ReduceLROnPlateau
                raise ValueError(f"{name} does not support `{type(scheduler).__name__}`, whose step() needs "
                                 f"a metric, but got one at index {i}")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but the "
                                 f"{type(scheduler).__name__} at index {i} has another one")

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, state in zip(self._schedulers, saved):
            scheduler.load_state_dict(state)
