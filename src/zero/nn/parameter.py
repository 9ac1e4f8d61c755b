"""Parameter: a tensor the model trains (the book's ``Parameter``).

It requires grad from the start, which makes "this is trainable" a property of
its type. ``Module`` recognises parameters on attribute assignment.
"""
from __future__ import annotations

from ..tensors.creation import empty
from ..tensors.tensor import Tensor


class Parameter(Tensor):
    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter wraps a zero.Tensor, got {type(data).__name__}")
        p = data._alias(cls)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass  # everything happens in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        result = Parameter(self.detach().clone(), self._requires_grad)
        if self.grad is not None:
            result.grad = self.grad.clone()
        memo[id(self)] = result
        return result
