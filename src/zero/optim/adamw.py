"""AdamW: Adam with decoupled weight decay -- PyTorch's update, or the book's on request.

    m_t = β1 m_{t-1} + (1 − β1) g_t                  (g = −∇ under maximize=True)
    v_t = β2 v_{t-1} + (1 − β2) g_t²
    θ  ← θ − lr · m̂_t / (√v̂_t + ε) − lr · λ · θ     m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t)

This is PyTorch's AdamW (ε outside the square root). The book puts ε inside it,
θ ← θ − α_t · m_t / √(v_t + ε) with α_t = lr · √(1 − β2^t) / (1 − β1^t); select it
with ``eps_inside_sqrt=True`` (Zero's GPT and MNIST jobs do). The two agree when v is
large against ε and part where it is tiny: with ε = 1e-8 a parameter whose gradients
are about 1e-6 moves 0.99 lr per step in PyTorch's form and 0.002 lr in the book's.

Both are one kernel: m / (√(v + ε_in) + ε_out) with the bias correction folded into
the step size, ε_in = 0 and ε_out = ε √(1 − β2^t) for PyTorch's form (the same number,
rearranged), ε_in = ε and ε_out = 0 for the book's. Each parameter is updated by one
fused pass, not a chain of temporaries; the parameters of a group go to the kernels
together (``kernels.adamw_step_many``: on a GPU one launch for all of them).

The state and the groups are PyTorch's (``step``, ``exp_avg``, ``exp_avg_sq``;
``amsgrad``, ``decoupled_weight_decay`` ...), so checkpoints move between the two;
``eps_inside_sqrt`` belongs to the optimizer, not to its state (give it again on resume).

``capturable=True`` (a step inside a CUDA graph, issue 38): each ``step`` is a 0-d tensor on
its parameter's device, and the group goes to ``kernels.adamw_step_many_capturable``, which
advances the counts and works out the bias corrections on the device -- the host reads
nothing, and a replayed step counts on. ``lr`` may be a 0-d tensor on that device, read
there by the kernel: ``group["lr"].fill_(new)`` (a scheduler's write to a tensor lr) reaches
the next replay; a float lr is fixed in a captured step, as in PyTorch. The result is the
plain step's: the same scalars, on the CPU the same bits.
"""
from __future__ import annotations

from ..backends.kernel_contract import adamw_scalars
from ..tensors.tensor import Tensor
from .optimizer import Optimizer, check_betas, check_lr, check_non_negative, execution_options, flat_arrays


class AdamW(Optimizer):
    state_names = ("exp_avg", "exp_avg_sq")
    counts_on_device = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None,
                 eps_inside_sqrt: bool = False):
        check_lr("AdamW", lr, foreach, capturable)
        check_non_negative("AdamW", lr=lr, eps=eps)
        betas = check_betas("AdamW", betas)
        check_non_negative("AdamW", weight_decay=weight_decay)
        _refuse_amsgrad(amsgrad)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize,
                                      **execution_options("AdamW", foreach=foreach, capturable=capturable,
                                                          differentiable=differentiable, fused=fused),
                                      decoupled_weight_decay=True))
        self.eps_inside_sqrt = bool(eps_inside_sqrt)  # not a group key: groups keep PyTorch's keys

    def _init_state(self, p, group) -> dict:
        return {"step": self.init_step(p, group), "exp_avg": p.new_zeros(p.shape), "exp_avg_sq": p.new_zeros(p.shape)}

    def _update_group(self, params: list, group: dict) -> None:
        """The update of every parameter of ``group`` with a gradient, one kernel call for
        each set that shares a device and a step count (usually all of them)."""
        _refuse_amsgrad(group["amsgrad"])  # (a group loaded from PyTorch may ask for it)
        if group.get("capturable"):
            self._update_group_on_device(params, group)
            return
        beta1, beta2 = group["betas"]
        lr, eps = group["lr"], group["eps"]
        if isinstance(lr, Tensor):   # (read by the host: PyTorch's plain step does the same)
            lr = lr.item()
        batches: dict = {}   # (device, step) -> params, grads, exp_avgs, exp_avg_sqs (1-D arrays), tensors
        for p in params:
            grad = self.gradient(p, group, weight_decay=False)  # the kernel applies the decoupled decay
            state = self.state_for(p, group)
            batch = batches.setdefault((p.device, self.advance(state)), ([], [], [], [], []))
            for column, value in zip(batch, (*flat_arrays(p, grad, state["exp_avg"], state["exp_avg_sq"]), p)):
                column.append(value)
        for (device, t), (param, grad_array, m, v, tensors) in batches.items():
            eps_inside, eps_outside, step_size = adamw_scalars(lr, t, beta1, beta2, eps, self.eps_inside_sqrt)
            device.kernels.adamw_step_many(param, grad_array, m, v, lr, beta1, beta2, eps_inside, eps_outside,
                                           group["weight_decay"], step_size)
            for p in tensors:
                p._bump_version()

    def _update_group_on_device(self, params: list, group: dict) -> None:
        """The capturable update: one kernel call for each device's parameters, given their
        counts (0-d arrays) and the lr (a number, or a 0-d array on the device) to read there."""
        beta1, beta2 = group["betas"]
        batches: dict = {}   # device -> params, grads, exp_avgs, exp_avg_sqs, steps (arrays), tensors
        for p in params:
            grad = self.gradient(p, group, weight_decay=False)
            state = self.state_for(p, group)
            step = self.device_step(state, p)
            batch = batches.setdefault(p.device, ([], [], [], [], [], []))
            arrays = (*flat_arrays(p, grad, state["exp_avg"], state["exp_avg_sq"]), step._array, (p, step))
            for column, value in zip(batch, arrays):
                column.append(value)
        for device, (param, grad_array, m, v, steps, tensors) in batches.items():
            device.kernels.adamw_step_many_capturable(param, grad_array, m, v, steps, _lr_on(device, group["lr"]),
                                                      beta1, beta2, group["eps"], self.eps_inside_sqrt,
                                                      group["weight_decay"])
            for p, step in tensors:
                p._bump_version()
                step._bump_version()


def _lr_on(device, lr):
    """The lr as a capturable kernel takes it: a tensor on ``device`` as its 0-d array (read
    by the kernel when it runs); a number, or a tensor elsewhere read now (fixed in a capture)."""
    if not isinstance(lr, Tensor):
        return lr
    if lr.device != device:
        return lr.item()
    return lr.contiguous()._array.reshape(())


def _refuse_amsgrad(amsgrad: bool) -> None:
    if amsgrad:
        raise NotImplementedError("AdamW: the fused AdamW kernel has no AMSGrad variant; use "
                                  "Adam(..., amsgrad=True, decoupled_weight_decay=True), the same update")
