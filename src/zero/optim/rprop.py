"""Rprop, PyTorch's: a step size per weight, grown while the gradient keeps its sign and
shrunk when it flips; only the gradient's sign moves the weight.

    s = sign(g · g_prev):  η ← clamp(η · η+ (s > 0) | η · η− (s < 0) | η (s = 0), step_sizes)
    g ← 0 where s < 0 (no move, and no sign to compare next step)
    θ ← θ − sign(g) · η,   g_prev ← g

The state is PyTorch's: ``step``, ``prev``, ``step_size`` (each weight's η, first ``lr``).
"""
from __future__ import annotations

from ..ops.elementwise import where
from .optimizer import Optimizer, execution_options


class Rprop(Optimizer):
    state_names = ("prev", "step_size")

    def __init__(self, params, lr: float = 1e-2, etas: tuple = (0.5, 1.2), step_sizes: tuple = (1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False, differentiable: bool = False):
        if not 0.0 <= lr:
            raise ValueError(f"Rprop: Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Rprop: Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize,
                                      **execution_options("Rprop", foreach=foreach, differentiable=differentiable,
                                                          capturable=capturable)))

    def _init_state(self, p, group) -> dict:
        return {"step": self.new_step(), "prev": p.new_zeros(p.shape),
                "step_size": p.new_zeros(p.shape).fill_(group["lr"])}

    def _update(self, p, group) -> None:
        grad = self.gradient(p, group)
        state = self.state_for(p, group)
        self.advance(state)
        (eta_minus, eta_plus), (smallest, largest) = group["etas"], group["step_sizes"]
        prev, step_size = state["prev"], state["step_size"]
        product = grad * prev
        factor = where(product > 0, eta_plus, where(product < 0, eta_minus, grad.new_ones(grad.shape)))
        step_size.mul_(factor).clamp_(smallest, largest)
        grad = where(product < 0, 0.0, grad)
        p.sub_(grad.sign() * step_size)
        prev.copy_(grad)
