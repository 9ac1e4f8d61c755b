"""Adadelta, PyTorch's: steps sized by the ratio of running RMS of updates and of gradients.

    g  = ∇θ (−∇θ under maximize=True) + λ θ        (L2, weight_decay = λ)
    v ← ρ v + (1 − ρ) g²
    Δ = √(u + ε) / √(v + ε) · g
    u ← ρ u + (1 − ρ) Δ²
    θ ← θ − lr Δ                                   (lr = 1.0 by default: Δ has θ's units)

Written with tensor ops (every device). State: ``step``, ``square_avg`` (v),
``acc_delta`` (u).
"""
from __future__ import annotations

from .optimizer import Optimizer, check_non_negative, execution_options


class Adadelta(Optimizer):
    state_names = ("square_avg", "acc_delta")

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0.0,
                 foreach=None, *, capturable: bool = False, maximize: bool = False, differentiable: bool = False):
        check_non_negative("Adadelta", lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Adadelta: Invalid rho value: {rho}")
        check_non_negative("Adadelta", eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      **execution_options("Adadelta", capturable=capturable, foreach=foreach,
                                                          differentiable=differentiable)))

    def _init_state(self, p, group) -> dict:
        return {"step": self.new_step(), "square_avg": p.new_zeros(p.shape), "acc_delta": p.new_zeros(p.shape)}

    def _update(self, p, group) -> None:
        grad = self.gradient(p, group)
        state = self.state_for(p, group)
        self.advance(state)
        rho, eps = group["rho"], group["eps"]
        v, u = state["square_avg"], state["acc_delta"]
        v.mul_(rho).add_(grad * (1 - rho) * grad)
        delta = (u + eps).sqrt() / (v + eps).sqrt() * grad
        u.mul_(rho).add_(delta * (1 - rho) * delta)
        p.add_(delta, alpha=-group["lr"])
