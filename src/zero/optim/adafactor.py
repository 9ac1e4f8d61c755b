"""Adafactor, PyTorch's (``torch.optim.Adafactor``): Adam's second moment kept as row and column
factors for a matrix, with a relative step size and update clipping (Shazeer & Stern).

For a parameter θ with gradient g (−g under maximize=True), at step t:

    β2ᵗ' = t^beta2_decay                                (1 − β2 of the step)
    ρ    = min(lr, 1/√t),   α = max(ε2, RMS(θ)) · ρ
    θ   ← θ (1 − lr λ)                                  (decoupled weight decay, weight_decay = λ)
    a matrix (dim ≥ 2, factored over the last two dims):
        R ← lerp(R, mean of g² over the last dim, β2ᵗ'),   C ← lerp(C, mean of g² over the dim before, β2ᵗ')
        V = R C / max(mean of R over its rows, ε1)
    else: V ← lerp(V, g², β2ᵗ')
    U = g / √max(V, ε1²),   θ ← θ − α / max(1, RMS(U) / d) · U

ε1 is ``eps[0]``, or the parameter dtype's machine epsilon when None (as PyTorch, the first
parameter's of the group). The state is PyTorch's: ``step``, and ``row_var``/``col_var`` (a matrix)
or ``variance``.
"""
from __future__ import annotations

from .. import dtypes
from .optimizer import Optimizer, execution_options


class Adafactor(Optimizer):
    def __init__(self, params, lr: float = 1e-2, beta2_decay: float = -0.8, eps: tuple = (None, 1e-3),
                 d: float = 1.0, weight_decay: float = 0.0, *, foreach=None, maximize: bool = False):
        lr = float(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      **execution_options("Adafactor", foreach=foreach), maximize=maximize))

    def _init_state(self, p, group) -> dict:
        state = {"step": self.new_step()}
        if p.dim() > 1:
            state["row_var"] = p.new_zeros((*p.shape[:-1], 1))
            state["col_var"] = p.new_zeros((*p.shape[:-2], 1, p.shape[-1]))
        else:
            state["variance"] = p.new_zeros(p.shape)
        return state

    def _update_group(self, params: list, group: dict) -> None:
        eps1 = group["eps"][0]
        if eps1 is None:
            eps1 = dtypes.finfo(params[0].dtype).eps
        for p in params:
            self._factored_update(p, group, eps1)

    def _factored_update(self, p, group: dict, eps1: float) -> None:
        grad = self.gradient(p, group, weight_decay=False)
        state = self.state_for(p, group)
        t = self.advance(state)
        lr, eps2, d, decay = group["lr"], group["eps"][1], group["d"], group["weight_decay"]
        beta2_complement = t ** group["beta2_decay"]
        rho = min(lr, 1.0 / t ** 0.5)
        alpha = max(eps2, float(p.norm().item()) / p.numel() ** 0.5) * rho
        if decay != 0:
            p.mul_(1 - lr * decay)
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.shape[-1]), beta2_complement)
            col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.shape[-2]), beta2_complement)
            estimate = row_var @ col_var
            estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, beta2_complement)
            estimate = variance.clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denominator = max(1.0, float(update.norm().item()) / (update.numel() ** 0.5 * d))
        p.add_(update, alpha=-alpha / denominator)
