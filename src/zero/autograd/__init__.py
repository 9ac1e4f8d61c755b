"""Reverse-mode automatic differentiation on a dynamic graph."""
from __future__ import annotations

from ..errors import AutogradError, describe
from ..grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .engine import backward, queue_callback
from .graph import Graph, draw
from .gradcheck import GradcheckError, gradcheck
from .op import AccumulateGrad, Op
from ..tensors.tensor import Tensor

__all__ = ["Op", "AccumulateGrad", "backward", "queue_callback", "grad", "gradcheck", "GradcheckError", "draw",
           "Graph", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


def grad(outputs: Tensor | tuple[Tensor, ...] | list[Tensor], inputs: Tensor | tuple[Tensor, ...] | list[Tensor],
         grad_outputs: Tensor | tuple[Tensor | None, ...] | list[Tensor | None] | None = None,
         retain_graph: bool = False, allow_unused: bool = False) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned as a tuple; no ``.grad``
    is touched. An input the outputs do not depend on raises unless ``allow_unused``."""
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    inputs = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    if grad_outputs is not None and not isinstance(grad_outputs, (tuple, list)):
        grad_outputs = [grad_outputs]
    for t in inputs:
        if not t.requires_grad:
            raise AutogradError(f"autograd.grad: an input ({describe(t)}) does not require grad")
    result = backward(outputs, grad_outputs, retain_graph=retain_graph, inputs=inputs)
    if not allow_unused and any(g is None for g in result):
        index = next(i for i, g in enumerate(result) if g is None)
        raise AutogradError(f"autograd.grad: input {index} was not used to compute the outputs "
                           "(pass allow_unused=True to get None for it)")
    return result
