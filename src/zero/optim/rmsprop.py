"""RMSprop, PyTorch's: a running mean of g² scales the step; optionally centred, with momentum.

    g  = ∇θ (−∇θ under maximize=True) + λ θ        (L2, weight_decay = λ)
    v ← α v + (1 − α) g²
    ḡ ← α ḡ + (1 − α) g,  s = √(v − ḡ²) + ε       (centered=True)
                           s = √v + ε              (otherwise)
    b ← μ b + g / s,      θ ← θ − lr b            (momentum μ > 0)
                           θ ← θ − lr g / s        (otherwise)

Written with tensor ops (every device). State: ``step``, ``square_avg``, and
``momentum_buffer`` / ``grad_avg`` when momentum / centering is on.
"""
from __future__ import annotations

from .optimizer import Optimizer, check_non_negative, execution_options


class RMSprop(Optimizer):
    state_names = ("square_avg", "momentum_buffer", "grad_avg")

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0.0,
                 momentum: float = 0.0, centered: bool = False, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False):
        check_non_negative("RMSprop", lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, maximize=maximize,
                                      **execution_options("RMSprop", capturable=capturable, foreach=foreach,
                                                          differentiable=differentiable)))

    def _init_state(self, p, group) -> dict:
        state = {"step": self.new_step(), "square_avg": p.new_zeros(p.shape)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = p.new_zeros(p.shape)
        if group["centered"]:
            state["grad_avg"] = p.new_zeros(p.shape)
        return state

    def _update(self, p, group) -> None:
        grad = self.gradient(p, group)
        state = self.state_for(p, group)
        self.advance(state)
        alpha, lr = group["alpha"], group["lr"]
        v = state["square_avg"]
        v.mul_(alpha).add_(grad * (1 - alpha) * grad)
        if group["centered"]:
            mean = state["grad_avg"]
            mean.add_((grad - mean) * (1 - alpha))
            scale = (v - mean * mean).sqrt()
        else:
            scale = v.sqrt()
        scale.add_(group["eps"])
        if group["momentum"] > 0:
            buffer = state["momentum_buffer"]
            buffer.mul_(group["momentum"]).add_(grad / scale)
            p.add_(buffer, alpha=-lr)
        else:
            p.add_(grad * -lr / scale)
