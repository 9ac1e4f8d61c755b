"""``GradScaler``: dynamic loss scaling, as PyTorch's ``torch.amp.GradScaler`` does it.

Small float16 gradients underflow to zero; scaling the loss by S before backward
scales every gradient by S and keeps them representable. One iteration::

    scaler.scale(loss).backward()   # gradients are S · ∇
    scaler.unscale_(optimizer)      # optional (to clip): ∇ ← ∇ / S, and check for inf / nan
    scaler.step(optimizer)          # unscale_ if not done; optimizer.step() only if all finite
    scaler.update()                 # overflow: S ← S · backoff_factor, count reset;
                                    # else after growth_interval clean steps: S ← S · growth_factor

The non-finite check reads no value per parameter: each gradient contributes
max |∇| (inf or nan when it holds an inf or a nan: the maximum propagates nan),
the contributions of each device are stacked and reduced on that device, and
``found_inf`` = 1.0 unless that maximum is < inf. ``step`` reads one number per
device. (It checks the gradients after unscaling, so an unscale that overflows
counts as an overflow.)

S is a float32 number kept on the host -- ``step`` has read the overflow flags by
the time ``update`` needs them, so nothing else waits for a device -- and rounds
as PyTorch's float32 scale tensor does. The arithmetic is that of the gradients'
dtype, so it is exact and testable in float32 on the CPU. ``enabled=False`` makes
every method a pass-through: ``scale`` returns its argument, ``step`` calls
``optimizer.step()``.
"""
from __future__ import annotations

import enum
import math
import warnings
from collections import defaultdict

import numpy as np

from .. import dtypes
from ..backends.cuda import runtime as cuda_runtime
from ..grad_mode import no_grad
from ..ops.comparison import logical_not
from ..ops.joining import stack
from ..tensors.tensor import Tensor


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _float32(value: float) -> float:
    """``value`` rounded to float32, as PyTorch's float32 scale tensor holds it (inf past the range)."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


_NO_SCALE = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."


class GradScaler:
    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = enabled
        if str(device).split(":")[0] == "cuda" and enabled and not cuda_runtime.is_available():
            warnings.warn("GradScaler is enabled, but CUDA is not available.  Disabling. (Pass device='cpu' to "
                          "scale gradients on the CPU.)", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError(f"GradScaler: the growth factor must be > 1.0, got {growth_factor}")
            if backoff_factor >= 1.0:
                raise ValueError(f"GradScaler: the backoff factor must be < 1.0, got {backoff_factor}")
            self._init_scale = init_scale
            self._scale: float | None = None  # set by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: int | None = None
            self._per_optimizer_states: defaultdict = defaultdict(_fresh_optimizer_state)

    def _check_scale(self, what: str) -> float:
        if self._scale is None:
            raise RuntimeError(f"Attempted {what} but _scale is None.  {_NO_SCALE}")
        return self._scale

    # -- the iteration --------------------------------------------------------------------------
    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples/iterables of them) times the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = _float32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker
        scale = self._scale

        def apply(value):
            if isinstance(value, Tensor):
                return value * scale
            if isinstance(value, (list, tuple)):
                return type(value)(apply(v) for v in value)
            if hasattr(value, "__iter__") and not isinstance(value, (str, bytes, dict)):
                return map(apply, value)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale: float, allow_fp16: bool) -> dict:
        """Multiply every gradient by ``inv_scale`` in place; {device: found_inf} (0-d float32)."""
        peaks: defaultdict = defaultdict(list)  # device -> 0-d max |grad|: inf or nan where one is not finite
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad.mul_(inv_scale)
                    peak = grad.abs().amax() if grad.numel() else grad.new_zeros(())
                    peaks[grad.device].append(peak.float())
            return {device: logical_not(stack(values).amax() < math.inf).float()
                    for device, values in peaks.items()}

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place (call it before clipping them),
        and record whether any is inf or nan. At most once per optimizer between updates."""
        if not self._enabled:
            return
        scale = self._check_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = _float32(1.0 / scale)  # the reciprocal in float64, rounded to float32, as PyTorch's
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inverse, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``unscale_(optimizer)`` unless done, then ``optimizer.step(*args, **kwargs)`` -- skipped
        when a gradient is inf or nan. Returns what ``optimizer.step`` returned (None if skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        found = state["found_inf_per_device"]
        if not found:
            raise RuntimeError("No inf checks were recorded for this optimizer (it has no gradients).")
        result = None
        if not sum(float(flag) for flag in found.values()):  # one read per device
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Adjust the scale after this iteration's steps (or set it: a float, or a 1-element
        float32 tensor), and forget the iteration's per-optimizer records."""
        if not self._enabled:
            return
        scale = self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.dtype is not dtypes.float32 or new_scale.requires_grad:
                    raise ValueError("new_scale should be a float or a 1-element float32 tensor with "
                                     "requires_grad=False.")
                new_scale = new_scale.item()
            self._scale = _float32(new_scale)
        else:
            flags = [flag for state in self._per_optimizer_states.values()
                     for flag in state["found_inf_per_device"].values()]
            if not flags:
                raise RuntimeError("No inf checks were recorded prior to update.")
            assert self._growth_tracker is not None
            if sum(float(flag) for flag in flags):
                self._scale = _float32(scale * self._backoff_factor)
                self._growth_tracker = 0
            elif self._growth_tracker + 1 == self._growth_interval:
                grown = _float32(scale * self._growth_factor)
                if math.isfinite(grown):
                    self._scale = grown
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    # -- settings and checkpoints ---------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """PyTorch's five entries (``scale``, ``growth_factor``, ``backoff_factor``,
        ``growth_interval``, ``_growth_tracker``); {} when disabled. Save it after ``update()``."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = _float32(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker
