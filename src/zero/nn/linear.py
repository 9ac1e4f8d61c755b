"""Bilinear (PyTorch's ``torch.nn.modules.linear``; ``Linear`` and ``Identity`` are in
``layers.py``).

    y[..., o] = x1[..., i] · weight[o, i, j] · x2[..., j] + bias[o]

(``F.bilinear`` is in ``zero.ops.extra.bilinear``.)
"""
from __future__ import annotations

import math

from ..ops.extra.bilinear import bilinear
from ..tensors.creation import empty
from ..tensors.tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter


class Bilinear(Module):
    """y = x1ᵀ A x2 + b per output feature; weight (out, in1, in2) and bias (out,), both
    uniform on ±1/√in1_features as PyTorch's."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        made = dict(device=device, dtype=dtype)
        self.weight = Parameter(empty(out_features, in1_features, in2_features, **made))
        self.bias = Parameter(empty(out_features, **made)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
