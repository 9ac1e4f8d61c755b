"""RAdam, PyTorch's: Adam with the variance of the adaptive step rectified (Liu et al.).

    g  = ∇θ (−∇θ under maximize=True), + λ θ       (L2, weight_decay = λ)
      or θ ← θ (1 − lr λ)                           (decoupled_weight_decay=True)
    m ← β1 m + (1 − β1) g,   v ← β2 v + (1 − β2) g²
    ρ∞ = 2 / (1 − β2) − 1,   ρ_t = ρ∞ − 2 t β2^t / (1 − β2^t)
    ρ_t > 5:  θ ← θ − lr · m / (1 − β1^t) · r_t √(1 − β2^t) / (√v + ε),
              r_t = √((ρ_t − 4)(ρ_t − 2) ρ∞ / ((ρ∞ − 4)(ρ∞ − 2) ρ_t))
    else:     θ ← θ − lr · m / (1 − β1^t)           (plain momentum while v is unreliable)

The state is PyTorch's: ``step``, ``exp_avg``, ``exp_avg_sq``.
"""
from __future__ import annotations

from .optimizer import Optimizer, check_betas, check_non_negative, execution_options


class RAdam(Optimizer):
    state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        check_non_negative("RAdam", lr=lr, eps=eps)
        betas = check_betas("RAdam", betas)
        check_non_negative("RAdam", weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      **execution_options("RAdam", foreach=foreach, capturable=capturable,
                                                          differentiable=differentiable),
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_state(self, p, group) -> dict:
        return {"step": self.new_step(), "exp_avg": p.new_zeros(p.shape), "exp_avg_sq": p.new_zeros(p.shape)}

    def _update(self, p, group) -> None:
        grad, state, t = self.adam_family_start(p, group)
        lr, eps, (beta1, beta2) = group["lr"], group["eps"], group["betas"]
        m, v = self.update_moments(state, grad, beta1, beta2)
        correction1, correction2 = 1 - beta1 ** t, 1 - beta2 ** t
        corrected = m / correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * (beta2 ** t) / correction2
        if rho_t > 5.0:
            rectification = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = (correction2 ** 0.5) / v.sqrt().add_(eps)
            p.sub_(corrected * lr * adaptive * rectification)
        else:
            p.sub_(corrected * lr)
