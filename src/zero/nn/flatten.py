"""Flatten and Unflatten (PyTorch's ``torch.nn.modules.flatten``)."""
from __future__ import annotations

from ..tensors.tensor import Tensor
from .module import Module


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


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
