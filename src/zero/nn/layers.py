"""The layers the book builds on tensor ops: Linear, Embedding, LayerNorm, Dropout,
Identity, Flatten. Each holds its parameters and states its forward; the backward comes
from the ops it calls. (The activations are in ``activation.py``, the losses in
``loss.py``, as in PyTorch's ``torch.nn.modules``.)"""
from __future__ import annotations

import math

from ..tensors.creation import empty, ones, zeros
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Linear(Module):
    """y = x Wᵀ + b, with W stored as [out_features, in_features] and read through a
    transposed view (no copy).

    Initialised as PyTorch's: weight and bias uniform on ±1/√in_features. (The book's MLP
    uses He initialisation instead, N(0, 2/in_features) and a zero bias: ``zero.models.MLP``
    applies it with ``nn.init.kaiming_normal_``.)"""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, device=device, dtype=dtype))
        self.bias = Parameter(zeros(out_features, device=device, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):  # (*, in) -> (*, out)
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A table of ``num_embeddings`` vectors; ``forward(ids)`` picks rows: (*) -> (*, dim).
    Initialised as PyTorch's, N(0, 1). (The book's GPT uses N(0, 0.02²): ``zero.models.GPT``
    applies it.)"""

    def __init__(self, num_embeddings: int, embedding_dim: int, *, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight, 0.0, 1.0)

    def forward(self, ids):
        return F.embedding(ids, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Normalise over the last dimensions to mean 0, variance 1, then scale and shift."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 *, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, device=device, dtype=dtype))

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class Dropout(Module):
    """Zero each element with probability p in training (scaling the rest by 1/(1-p));
    the identity in eval mode or when p == 0."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        return F.dropout(x, self.p, training=True)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Dropout2d(Dropout):
    """Zero whole channels of (N, C, H, W) inputs with probability p in training."""

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        return F.dropout2d(x, self.p, training=True)


class Identity(Module):
    def forward(self, x):
        return x


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
