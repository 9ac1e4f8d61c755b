"""Unflatten (PyTorch's ``torch.nn.modules.flatten``; ``Flatten`` is in ``layers.py``)."""
from __future__ import annotations

from ..tensors.tensor import Tensor
from .module import Module


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size``: (*, d, *) -> (*, s0, s1, ..., *); one
    entry may be -1 (inferred). A view where the input allows one."""

    def __init__(self, dim: int | str, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise TypeError("Unflatten: named dimensions (a str dim) need named tensors, which Zero does not have")
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
