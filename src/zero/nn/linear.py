"""Identity, Linear and Bilinear (PyTorch's ``torch.nn.modules.linear``).

    y[..., o] = x1[..., i] · weight[o, i, j] · x2[..., j] + bias[o]

(``F.bilinear`` is in ``zero.ops.extra.bilinear``.)
"""
from __future__ import annotations

import math

from ..ops.extra.bilinear import bilinear
from ..tensors.creation import empty, zeros
from ..tensors.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments, as PyTorch's."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Linear(Module):
    """y = x Wᵀ + b, with W stored as [out_features, in_features] and read through a
    transposed view (no copy).

    Initialised as PyTorch's: weight and bias uniform on ±1/√in_features. (The book's MLP
    uses He initialisation instead, N(0, 2/in_features) and a zero bias: ``zero.models.MLP``
    applies it with ``nn.init.kaiming_normal_``.)"""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
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
