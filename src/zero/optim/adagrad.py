"""Adagrad, PyTorch's: each coordinate's step shrinks with the sum of its squared gradients.

    g  = ∇θ (−∇θ under maximize=True) + λ θ        (L2, weight_decay = λ)
    lr_t = lr / (1 + (t − 1) · lr_decay)
    s ← s + g²                                      (s starts at initial_accumulator_value)
    θ ← θ − lr_t · g / (√s + ε)

Written with tensor ops (every device). As in PyTorch the state (``step``,
``sum``) is made for every parameter when the optimizer is built.
"""
from __future__ import annotations

from .optimizer import Optimizer, check_non_negative, execution_options


class Adagrad(Optimizer):
    state_names = ("sum",)

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None):
        check_non_negative("Adagrad", lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, eps=eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, maximize=maximize,
                                      **execution_options("Adagrad", foreach=foreach, differentiable=differentiable,
                                                          fused=fused)))
        for group in self.param_groups:
            for p in group["params"]:
                self.state_for(p, group)

    def _init_state(self, p, group) -> dict:
        return {"step": self.new_step(), "sum": p.new_full(p.shape, group["initial_accumulator_value"])}

    def _update(self, p, group) -> None:
        grad = self.gradient(p, group)
        state = self.state_for(p, group)
        t = self.advance(state)
        lr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
        total = state["sum"]
        total.add_(grad * grad)
        p.add_(grad * -lr / total.sqrt().add_(group["eps"]))
