"""Schedules that cycle or decay to zero, PyTorch's semantics:

- ``CosineAnnealingWarmRestarts`` (SGDR): cosine from initial_lr to ``eta_min`` over T_i
  steps, then a restart, T_i growing by ``T_mult`` each cycle;
- ``CyclicLR``: the lr moves between ``base_lr`` and ``max_lr`` (triangular,
  triangular2 -- the amplitude halves each cycle --, exp_range -- it shrinks by γ each
  step --, or a ``scale_fn`` of the cycle or of the step), the momentum the opposite way;
- ``PolynomialLR``: lr = initial_lr · (1 − min(t, total_iters) / total_iters)^power.
"""
from __future__ import annotations

import math
import types
import warnings

from .scheduler import LRScheduler, check_optimizer, current_lrs, per_group, set_group_value


class PolynomialLR(LRScheduler):
    """lr = initial_lr · (1 − min(epoch, total_iters) / total_iters)^power, step to step (chainable)."""

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        t = self.last_epoch
        if self._is_initial or t == 0 or t > self.total_iters:
            return current_lrs(self.optimizer)
        factor = ((1.0 - t / self.total_iters) / (1.0 - (t - 1) / self.total_iters)) ** self.power
        return [lr * factor for lr in current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list:
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """lr = η_min + ½ (initial_lr − η_min)(1 + cos(π T_cur / T_i)); T_cur counts the steps
    since the last restart, T_i (first ``T_0``) is multiplied by ``T_mult`` at each restart.
    ``step(epoch)`` takes a fractional epoch (steps within an epoch), as PyTorch's does."""

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`: call them in the "
                          "opposite order, optimizer.step() first, or the first value of the learning rate "
                          "schedule is skipped", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:   # the cycle n that holds ``epoch``: T_0 (T_mult^n − 1) / (T_mult − 1) ≤ epoch
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            set_group_value(group, "lr", lr)
        self._last_lr = current_lrs(self.optimizer)


class CyclicLR(LRScheduler):
    """The cyclical learning rate policy (Smith): each cycle rises over ``step_size_up`` steps
    from ``base_lr`` to ``max_lr`` and falls over ``step_size_down`` (default: the same); the
    amplitude is scaled by ``scale_fn(cycle)`` (``scale_mode="cycle"``) or ``scale_fn(step)``
    (``"iterations"``). With ``cycle_momentum`` the momentum (or β1) goes from ``max_momentum``
    down to ``base_momentum`` as the lr rises, and back."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up: int = 2000, step_size_down: int | None = None,
                 mode: str = "triangular", gamma: float = 1.0, scale_fn=None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                set_group_value(group, "lr", lr)
        self.max_lrs = per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self) -> list:
        """The lrs of step ``last_epoch``; also sets each group's momentum (or β1)."""
        self._warn_if_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        fraction = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle) if self.scale_mode == "cycle" else self.scale_fn(self.last_epoch)
        lrs = [low + (high - low) * fraction * scale for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, high - (high - low) * fraction * scale)
        return lrs

    def state_dict(self) -> dict:
        """PyTorch's layout: a custom ``scale_fn`` is saved as its ``__dict__`` when it is a
        callable object, as None when it is a function (give it again to the constructor)."""
        state = super().state_dict()
        custom = state.pop("_scale_fn_custom", None)
        state["_scale_fn_custom"] = None if custom is None or isinstance(custom, types.FunctionType) \
            else dict(custom.__dict__)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = {k: v for k, v in state_dict.items() if k != "_scale_fn_ref"}
        saved = state_dict.pop("_scale_fn_custom", None)
        super().load_state_dict(state_dict)
        if saved is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(saved)
