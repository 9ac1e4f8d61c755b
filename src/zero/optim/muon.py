"""Muon, PyTorch's (``torch.optim.Muon``): momentum SGD whose update is orthogonalised by a
Newton-Schulz iteration, for the 2-d parameters of hidden layers (Jordan et al.).

    B ← lerp(B, g, 1 − μ)                              (momentum buffer; μ = momentum)
    B̃ = lerp(g, B, μ) with nesterov, else B
    O = NS(B̃): X = B̃ / max(‖B̃‖, ε) (transposed when taller than wide), then ns_steps times
        G = X Xᵀ,   X ← a X + (b G + c G²) X           ((a, b, c) = ns_coefficients)
    θ ← θ (1 − lr λ)                                   (decoupled weight decay, λ = weight_decay)
    θ ← θ − lr' O,  lr' = lr · √max(1, rows/cols)  ("original"),  0.2 lr √max(rows, cols)
                                                       ("match_rms_adamw")

As PyTorch's, the iteration runs in bfloat16: every intermediate is rounded to bfloat16 where
PyTorch's is (computed in float32, rounded by Veltkamp's splitting -- exact round-to-nearest-even,
with no bfloat16 arrays, so it runs on any device), and the update is added to the float
parameter. The state is PyTorch's: ``momentum_buffer``.
"""
from __future__ import annotations

import math

from .. import dtypes
from ..grad_mode import no_grad
from ..tensors.tensor import Tensor
from .optimizer import Optimizer

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5
_SPLITTER = float(2 ** 16 + 1)   # float32 keeps 24 significant bits, bfloat16 8: split off the top 8


def _bfloat16_rounded(x: Tensor) -> Tensor:
    """``x`` (float32) rounded to the nearest bfloat16 value, kept in float32."""
    scaled = x * _SPLITTER
    return scaled - (scaled - x)


def _orthogonalized(update: Tensor, coefficients: tuple, steps: int, eps: float) -> Tensor:
    """PyTorch's Newton-Schulz iteration, with its bfloat16 roundings (see the module's docstring)."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    x = _bfloat16_rounded(update.to(dtypes.float32))
    tall = update.shape[0] > update.shape[1]
    if tall:
        x = x.T
    norm = _bfloat16_rounded(x.norm()).clamp(min=eps)
    x = _bfloat16_rounded(x / _bfloat16_rounded(norm))
    for _ in range(steps):
        gram = _bfloat16_rounded(x @ x.T)
        gram_update = _bfloat16_rounded(gram * b + (gram @ gram) * c)
        x = _bfloat16_rounded(x * a + gram_update @ x)
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    state_names = ("momentum_buffer",)

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple = (DEFAULT_A, DEFAULT_B, DEFAULT_C), eps: float = EPS,
                 ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None):
        lr = float(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.shape}")

    def _init_state(self, p, group) -> dict:
        return {"momentum_buffer": p.new_zeros(p.shape)}

    def _update(self, p, group) -> None:
        grad = p.grad
        if grad.dim() != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        state = self.state_for(p, group)
        momentum, lr = group["momentum"], group["lr"]
        buffer = state["momentum_buffer"]
        with no_grad():
            buffer.lerp_(grad, 1 - momentum)
            update = grad.lerp(buffer, momentum) if group["nesterov"] else buffer
            update = _orthogonalized(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
            p.mul_(1 - lr * group["weight_decay"])
            p.add_(update.to(p.dtype), alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
