"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay."""
from __future__ import annotations

from ..grad_mode import no_grad
from .optimizer import Optimizer, flat_arrays


class SGD(Optimizer):
    """p ← p − lr·d with d = buf (momentum), g + μ·buf (Nesterov) or g (plain), where
    g = ∇p + weight_decay·p and buf = μ·buf + (1 − dampening)·g (buf = g at the first step)."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        for name, value in (("learning rate", lr), ("momentum", momentum), ("weight_decay", weight_decay)):
            if not value >= 0:  # NaN too
                raise ValueError(f"SGD: invalid {name} {value} (must be >= 0)")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    @no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            momentum = group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state.setdefault(p, {})
                first_step = "momentum_buffer" not in state
                if momentum != 0.0 and first_step:
                    state["momentum_buffer"] = p.grad.new_zeros(p.shape)
                buffer = state.get("momentum_buffer")
                param, grad, buf = flat_arrays(p, p.grad, buffer)
                p.device.kernels.sgd_step(param, grad, buf, group["lr"], momentum, group["dampening"],
                                          group["weight_decay"], group["nesterov"], first_step)
                p._bump_version()
