"""ASGD, PyTorch's: SGD with a decaying step and a running (Polyak) average of the iterates.

    g  = ∇θ (−∇θ under maximize=True) + λ_w θ     (L2, weight_decay = λ_w)
    θ ← θ (1 − λ η) − η g                          (λ = lambd)
    a ← a + μ (θ − a)                              (``ax``, the average; a copy of θ while μ = 1)
    η ← lr / (1 + λ lr t)^α,   μ ← 1 / max(1, t − t0)

The state is PyTorch's: ``step``, ``eta``, ``mu`` (0-d, kept like the step) and ``ax``.
"""
from __future__ import annotations

from .optimizer import Optimizer, check_non_negative, execution_options


class ASGD(Optimizer):
    state_names = ("ax",)
    scalar_state_names = ("eta", "mu")

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0.0, foreach=None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        check_non_negative("ASGD", lr=lr, weight_decay=weight_decay)
        execution_options("ASGD", differentiable=differentiable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_state(self, p, group) -> dict:
        return {"step": self.new_step(), "eta": self.new_step().fill_(group["lr"]),
                "mu": self.new_step().fill_(1.0), "ax": p.new_zeros(p.shape)}

    def _update(self, p, group) -> None:
        grad = self.gradient(p, group)
        state = self.state_for(p, group)
        t = self.advance(state)
        lr, lambd = group["lr"], group["lambd"]
        eta = float(state["eta"].item())
        p.mul_(1 - lambd * eta)
        p.sub_(grad * eta)
        ax = state["ax"]
        mu = float(state["mu"].item())
        if mu != 1:
            ax.add_((p - ax) * mu)
        else:
            ax.copy_(p)
        state["eta"].fill_(lr / ((1 + lambd * lr * t) ** group["alpha"]))
        state["mu"].fill_(1 / max(1, t - group["t0"]))
