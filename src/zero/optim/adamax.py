"""Adamax, PyTorch's: Adam with the infinity norm in place of the second moment.

    g  = ∇θ (−∇θ under maximize=True) + λ θ       (L2, weight_decay = λ)
    m ← β1 m + (1 − β1) g
    u ← max(β2 u, |g| + ε)
    θ ← θ − lr / (1 − β1^t) · m / u

The state is PyTorch's: ``step``, ``exp_avg``, ``exp_inf``.
"""
from __future__ import annotations

from .optimizer import Optimizer, check_betas, check_non_negative, execution_options


class Adamax(Optimizer):
    state_names = ("exp_avg", "exp_inf")

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, foreach=None, *, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        check_non_negative("Adamax", lr=lr, eps=eps)
        betas = check_betas("Adamax", betas)
        check_non_negative("Adamax", weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      **execution_options("Adamax", foreach=foreach, differentiable=differentiable,
                                                          capturable=capturable)))

    def _init_state(self, p, group) -> dict:
        return {"step": self.new_step(), "exp_avg": p.new_zeros(p.shape), "exp_inf": p.new_zeros(p.shape)}

    def _update(self, p, group) -> None:
        grad = self.gradient(p, group)
        state = self.state_for(p, group)
        t = self.advance(state)
        lr, eps, (beta1, beta2) = group["lr"], group["eps"], group["betas"]
        m, u = state["exp_avg"], state["exp_inf"]
        m.add_((grad - m) * (1 - beta1))
        u.copy_((u * beta2).maximum(grad.abs() + eps))
        p.add_(m * (-lr / (1 - beta1 ** t)) / u)
