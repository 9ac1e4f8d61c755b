"""Stochastic weight averaging and EMA, PyTorch's ``torch.optim.swa_utils``.

    swa_model = AveragedModel(model)                         # a copy whose parameters are averages
    ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=5, anneal_strategy="cos")
    ...  swa_model.update_parameters(model); scheduler.step()
    update_bn(loader, swa_model)                             # BatchNorm statistics for the averaged weights

``AveragedModel.update_parameters(model)``: the first call copies the model's parameters; call n
(n_averaged = n − 1 before it) averages them in by ``avg_fn(averaged, current, n_averaged)`` (one
tensor at a time) or ``multi_avg_fn(averaged_list, current_list, n_averaged)`` (lists, one per
device and dtype) -- by default the running mean ``a + (p − a) / (n_averaged + 1)``. Buffers are
copied from the model, or averaged as the parameters are with ``use_buffers=True``.

``SWALR`` anneals each group's learning rate from its value to ``swa_lr`` over ``anneal_epochs``
steps (``cos``: α = (1 − cos πt)/2, ``linear``: α = t), then holds it -- PyTorch's formula, which
recovers the pre-anneal rate from the current one at every step.

``update_bn(loader, model)`` recomputes every BatchNorm's running statistics as a plain average
over one pass of ``loader`` (its items, or their first element) in train mode, then restores the
momenta and the mode.
"""
from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable

from .. import dtypes
from ..grad_mode import no_grad
from ..nn.batchnorm import _BatchNorm
from ..nn.module import Module
from ..nn.normalization import _InstanceNorm
from ..tensors.creation import tensor
from .lr_scheduler.scheduler import LRScheduler, per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """``multi_avg_fn`` of an exponential moving average: ema ← lerp(ema, current, 1 − decay)."""
    _check_decay(decay)

    def ema_update(ema_params, current_params, _num_averaged) -> None:
        with no_grad():
            for ema, current in zip(ema_params, current_params):
                if ema.is_floating_point():
                    ema.lerp_(current, 1 - decay)
                else:
                    ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """``multi_avg_fn`` of the running mean: a ← lerp(a, current, 1 / (n_averaged + 1))."""

    def swa_update(averaged_params, current_params, num_averaged) -> None:
        n = int(num_averaged)
        with no_grad():
            for averaged, current in zip(averaged_params, current_params):
                if averaged.is_floating_point():
                    averaged.lerp_(current, 1.0 / (n + 1))
                else:
                    averaged.copy_(averaged + (current - averaged) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """``avg_fn`` of an exponential moving average: decay · ema + (1 − decay) · current."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """``avg_fn`` of the running mean: a + (current − a) / (n_averaged + 1)."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (int(num_averaged) + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters are an average of the model's over the calls of
    ``update_parameters`` (see the module's docstring); calling it runs the copy."""

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=dtypes.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s parameters (and buffers, with ``use_buffers``) into this copy's."""
        if self.use_buffers:
            mine: Iterable = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs: Iterable = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        n = int(self.n_averaged.item())
        pairs = []
        with no_grad():
            for averaged, current in zip(mine, theirs):
                current = current.detach().to(averaged.device)
                pairs.append((averaged.detach(), current))
                if n == 0:
                    averaged.detach().copy_(current)
            if n > 0:
                self._average(pairs, n)
            if not self.use_buffers:
                for mine_buffer, their_buffer in zip(self.module.buffers(), model.buffers()):
                    mine_buffer.detach().copy_(their_buffer.detach().to(mine_buffer.device))
            self.n_averaged.add_(1)

    def _average(self, pairs: list, n: int) -> None:
        if self.avg_fn is not None:
            for averaged, current in pairs:
                averaged.copy_(self.avg_fn(averaged, current, self.n_averaged.to(averaged.device)))
            return
        groups: dict = {}
        for averaged, current in pairs:   # one call per device and dtype, as PyTorch's
            groups.setdefault((str(averaged.device), averaged.dtype), []).append((averaged, current))
        running_mean = get_swa_avg_fn()
        for members in groups.values():
            averaged_list = [a for a, _ in members]
            current_list = [c for _, c in members]
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged_list, current_list, self.n_averaged.to(averaged_list[0].device))
            else:
                for averaged, current in members:
                    averaged.copy_(running_mean(averaged, current, n))


def update_bn(loader: Iterable, model: Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers over one pass of ``loader``."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps, then hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        for value, group in zip(per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2 if self._anneal_strategy == "cos" else t

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        previous_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        groups = self.optimizer.param_groups
        return [group["swa_lr"] * alpha + self._get_initial_lr(group["lr"], group["swa_lr"], previous_alpha)
                * (1 - alpha) for group in groups]
