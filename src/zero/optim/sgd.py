"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay: PyTorch's SGD.

    g  = ∇θ + λ θ                       (λ = weight_decay; −∇θ under maximize=True)
    b  = g                              at the first step (momentum μ ≠ 0)
    b ← μ b + (1 − τ) g                 after it (τ = dampening)
    d  = g + μ b (nesterov), b (momentum) or g (neither)
    θ ← θ − lr · d

Each parameter is updated by one fused kernel (``kernels.sgd_step``), not a chain of
temporaries. The state is PyTorch's: ``momentum_buffer``, and nothing when μ = 0.

In a captured CUDA graph (issue 38; PyTorch's SGD has no ``capturable`` either) the kernel's
numbers are the capture's: ``lr`` (a tensor lr is read by the host, as PyTorch's SGD reads
it), so a schedule does not reach a replay, and the first-step flag, which is false from
the step that makes the momentum buffer on -- capture after a warm-up step, as PyTorch asks.
"""
from __future__ import annotations

from ..tensors.tensor import Tensor
from .optimizer import Optimizer, check_lr, check_non_negative, execution_options, flat_arrays


class SGD(Optimizer):
    state_names = ("momentum_buffer",)

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None):
        check_lr("SGD", lr, None, False)
        check_non_negative("SGD", lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize,
                                      **execution_options("SGD", foreach=foreach, differentiable=differentiable,
                                                          fused=fused)))

    def _update(self, p, group) -> None:
        grad = self.gradient(p, group, weight_decay=False)  # the kernel adds the decay
        momentum = group["momentum"]
        buffer, first_step = None, False
        if momentum != 0:
            state = self.state[p]
            buffer = state.get("momentum_buffer")
            if buffer is None:
                self.refuse_new_state_in_a_capture(p)
                buffer = state["momentum_buffer"] = p.new_zeros(p.shape)
                first_step = True
        param, grad_array, buffer_array = flat_arrays(p, grad, buffer)
        lr = group["lr"]
        p.device.kernels.sgd_step(param, grad_array, buffer_array, lr.item() if isinstance(lr, Tensor) else lr,
                                  momentum, group["dampening"], group["weight_decay"], group["nesterov"], first_step)
        p._bump_version()
