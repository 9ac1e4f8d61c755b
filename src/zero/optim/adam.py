"""Adam, PyTorch's: L2 weight decay by default, decoupled (AdamW's) on request, AMSGrad optional.

    g  = ∇θ (−∇θ under maximize=True), + λ θ       (L2, weight_decay = λ)
      or θ ← θ (1 − lr λ)                           (decoupled_weight_decay=True)
    m ← β1 m + (1 − β1) g
    v ← β2 v + (1 − β2) g²
    v̂ ← max(v̂, v) and use v̂ for v                 (amsgrad=True)
    θ ← θ − lr / (1 − β1^t) · m / (√v / √(1 − β2^t) + ε)

ε is added outside the square root, as in PyTorch (``AdamW(eps_inside_sqrt=True)``
is the book's form, ε inside it). Written with tensor ops, so it runs on every device; the
state is PyTorch's: ``step``, ``exp_avg``, ``exp_avg_sq``, ``max_exp_avg_sq``.

``capturable=True``: ``step`` lives on the parameter's device and t stays there -- the
count advanced and 1 − β^t worked out by tensor ops, in float64, never read by the host --
so the step can be captured in a CUDA graph; ``lr`` may be a 0-d tensor there too.
"""
from __future__ import annotations

import math

from ..dtypes import float64
from .optimizer import Optimizer, check_betas, check_lr, check_non_negative, execution_options


class Adam(Optimizer):
    state_names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    counts_on_device = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False):
        check_lr("Adam", lr, foreach, capturable)
        check_non_negative("Adam", lr=lr, eps=eps)
        betas = check_betas("Adam", betas)
        check_non_negative("Adam", weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize,
                                      **execution_options("Adam", foreach=foreach, capturable=capturable,
                                                          differentiable=differentiable, fused=fused),
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_state(self, p, group) -> dict:
        state = {"step": self.init_step(p, group), "exp_avg": p.new_zeros(p.shape), "exp_avg_sq": p.new_zeros(p.shape)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = p.new_zeros(p.shape)
        return state

    def _update(self, p, group) -> None:
        capturable = bool(group.get("capturable"))
        grad, state, t = self.adam_family_start(p, group, on_device=capturable)
        lr, eps, (beta1, beta2) = group["lr"], group["eps"], group["betas"]
        m, v = self.update_moments(state, grad, beta1, beta2)
        if group["amsgrad"]:
            state["max_exp_avg_sq"].copy_(state["max_exp_avg_sq"].maximum(v))
            v = state["max_exp_avg_sq"]
        if capturable:   # t: the count on the device; the corrections are 0-d float64 tensors there
            t = t.to(dtype=float64)
            root_of_correction2 = (1 - beta2 ** t).sqrt()
        else:
            root_of_correction2 = math.sqrt(1 - beta2 ** t)
        denominator = (v.sqrt() / root_of_correction2).add_(eps)
        p.add_(m * (-lr / (1 - beta1 ** t)) / denominator)
