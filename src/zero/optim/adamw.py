"""AdamW: Adam with decoupled weight decay, as the book writes it.

    m_t = β1 m_{t-1} + (1 − β1) g_t                  (g = −∇ under maximize=True)
    v_t = β2 v_{t-1} + (1 − β2) g_t²
    α_t = lr · √(1 − β2^t) / (1 − β1^t)              (bias correction)
    θ  ← θ − α_t · m_t / √(v_t + ε) − lr · λ · θ     (decay not mixed into the gradient)

Note ε sits inside the square root, as in the book (PyTorch adds it outside:
m̂ / (√v̂ + ε)); the difference matters only when v is tiny. For PyTorch's
update use ``Adam(..., decoupled_weight_decay=True)``. Each parameter is updated
by one fused kernel (``kernels.adamw_step``), not a chain of temporaries.

The state and the groups are PyTorch's (``step``, ``exp_avg``, ``exp_avg_sq``;
``amsgrad``, ``decoupled_weight_decay`` ...), so checkpoints move between the two.
"""
from __future__ import annotations

import math

from .optimizer import Optimizer, check_betas, check_non_negative, execution_options, flat_arrays


class AdamW(Optimizer):
    state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None):
        check_non_negative("AdamW", lr=lr, eps=eps)
        betas = check_betas("AdamW", betas)
        check_non_negative("AdamW", weight_decay=weight_decay)
        _refuse_amsgrad(amsgrad)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize,
                                      **execution_options("AdamW", foreach=foreach, capturable=capturable,
                                                          differentiable=differentiable, fused=fused),
                                      decoupled_weight_decay=True))

    def _init_state(self, p, group) -> dict:
        return {"step": self.new_step(), "exp_avg": p.new_zeros(p.shape), "exp_avg_sq": p.new_zeros(p.shape)}

    def _update(self, p, group) -> None:
        _refuse_amsgrad(group["amsgrad"])  # (a group loaded from PyTorch may ask for it)
        grad = self.gradient(p, group, weight_decay=False)  # the kernel applies the decoupled decay
        state = self.state_for(p, group)
        t = self.advance(state)
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        step_size = lr * math.sqrt(1.0 - beta2 ** t) / (1.0 - beta1 ** t)
        param, grad_array, m, v = flat_arrays(p, grad, state["exp_avg"], state["exp_avg_sq"])
        p.device.kernels.adamw_step(param, grad_array, m, v, lr, beta1, beta2, group["eps"],
                                    group["weight_decay"], step_size)
        p._bump_version()


def _refuse_amsgrad(amsgrad: bool) -> None:
    if amsgrad:
        raise NotImplementedError("AdamW: the book's fused AdamW kernel has no AMSGrad variant; use "
                                  "Adam(..., amsgrad=True, decoupled_weight_decay=True), PyTorch's AdamW update")
