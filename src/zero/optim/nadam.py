"""NAdam, PyTorch's: Adam with Nesterov momentum and a momentum schedule (Dozat).

    g  = ∇θ (−∇θ under maximize=True), + λ θ       (L2, weight_decay = λ)
      or θ ← θ (1 − lr λ)                           (decoupled_weight_decay=True)
    μ_t = β1 (1 − ½ · 0.96^(t ψ))                   (ψ = momentum_decay)
    Π ← Π · μ_t                                     (``mu_product``)
    m ← β1 m + (1 − β1) g,   v ← β2 v + (1 − β2) g²
    d  = √(v / (1 − β2^t)) + ε
    θ ← θ − lr (1 − μ_t) / (1 − Π) · g / d − lr μ_{t+1} / (1 − Π μ_{t+1}) · m / d

The state is PyTorch's: ``step``, ``mu_product`` (0-d, kept like the step), ``exp_avg``,
``exp_avg_sq``.
"""
from __future__ import annotations

from .optimizer import Optimizer, check_betas, check_non_negative, execution_options


class NAdam(Optimizer):
    state_names = ("exp_avg", "exp_avg_sq")
    scalar_state_names = ("mu_product",)

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        check_non_negative("NAdam", lr=lr, eps=eps)
        betas = check_betas("NAdam", betas)
        check_non_negative("NAdam", weight_decay=weight_decay, momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize,
                                      **execution_options("NAdam", foreach=foreach, capturable=capturable,
                                                          differentiable=differentiable)))

    def _init_state(self, p, group) -> dict:
        return {"step": self.new_step(), "mu_product": self.new_step().fill_(1.0),
                "exp_avg": p.new_zeros(p.shape), "exp_avg_sq": p.new_zeros(p.shape)}

    def _update(self, p, group) -> None:
        grad, state, t = self.adam_family_start(p, group)
        lr, eps, (beta1, beta2) = group["lr"], group["eps"], group["betas"]
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * decay))
        product = state["mu_product"]
        product.mul_(mu)   # rounded to the step's dtype, as PyTorch's 0-d tensor is
        mu_product = float(product.item())
        m, v = self.update_moments(state, grad, beta1, beta2)
        denominator = (v / (1 - beta2 ** t)).sqrt().add_(eps)
        p.add_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)) / denominator)
        p.add_(m * (-lr * mu_next / (1.0 - mu_product * mu_next)) / denominator)
