"""AdamW: Adam with decoupled weight decay, as the book writes it.

    m_t = β1 m_{t-1} + (1 − β1) g_t
    v_t = β2 v_{t-1} + (1 − β2) g_t²
    α_t = lr · √(1 − β2^t) / (1 − β1^t)              (bias correction)
    θ  ← θ − α_t · m_t / √(v_t + ε) − lr · λ · θ     (decay not mixed into the gradient)

Note ε sits inside the square root, as in the book (PyTorch adds it outside:
m̂ / (√v̂ + ε)); the difference matters only when v is tiny. Each parameter is
updated by one fused kernel (``kernels.adamw_step``), not a chain of temporaries.
"""
from __future__ import annotations

import math

from ..grad_mode import no_grad
from .optimizer import Optimizer, flat_arrays


class AdamW(Optimizer):
    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01):
        for name, value in (("learning rate", lr), ("epsilon", eps), ("weight_decay", weight_decay)):
            if not value >= 0:  # NaN too
                raise ValueError(f"AdamW: invalid {name} {value} (must be >= 0)")
        for index, beta in enumerate(betas):
            if not 0 <= beta < 1:
                raise ValueError(f"AdamW: invalid beta parameter at index {index}: {beta} (must be in [0, 1))")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    @no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state.get(p)
                if state is None:
                    state = self.state[p] = {"step": 0, "exp_avg": p.new_zeros(p.shape),
                                             "exp_avg_sq": p.new_zeros(p.shape)}
                state["step"] += 1
                t = state["step"]
                step_size = lr * math.sqrt(1.0 - beta2 ** t) / (1.0 - beta1 ** t)
                param, grad, m, v = flat_arrays(p, p.grad, state["exp_avg"], state["exp_avg_sq"])
                p.device.kernels.adamw_step(param, grad, m, v, lr, beta1, beta2, group["eps"],
                                            group["weight_decay"], step_size)
                p._bump_version()
