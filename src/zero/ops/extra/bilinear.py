"""PyTorch's F.bilinear:

    y[..., o] = x1[..., i] · weight[o, i, j] · x2[..., j] + bias[o]

computed as one GEMM and a product-sum: x1 (*, in1) @ weight as (in1, out·in2) gives
(*, out, in2), multiplied by x2 (*, 1, in2) and summed over in2. Autograd runs through the ops.
"""
from __future__ import annotations

from ...errors import ShapeError, describe
from ...tensors.tensor import Tensor
from ..arguments import check_floats
from ...autograd import autocast_hook


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """PyTorch's F.bilinear: input1 (*, in1), input2 (*, in2), weight (out, in1, in2) -> (*, out)."""
    if autocast_hook.state.active:
        input1, input2, weight, bias = autocast_hook.cast("bilinear", input1, input2, weight, bias)
    if not isinstance(weight, Tensor) or weight.ndim != 3:
        raise ShapeError(f"bilinear: weight must be a 3-D tensor [out, in1, in2], got {describe(weight)}")
    out_features, in1, in2 = weight.shape
    for name, x, size in (("input1", input1, in1), ("input2", input2, in2)):
        if not isinstance(x, Tensor) or x.ndim == 0 or x.shape[-1] != size:
            raise ShapeError(f"bilinear: {name} {describe(x)} must end in {size} to match weight "
                             f"{describe(weight)}")
    # one dtype for all four, as PyTorch (it does not promote here; autocast's promote rule does, before)
    check_floats("bilinear", input1=input1, input2=input2, weight=weight, bias=bias)
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ShapeError(f"bilinear: input1 {describe(input1)} and input2 {describe(input2)} must have the same "
                         "leading dimensions")
    table = weight.permute(1, 0, 2).reshape(in1, out_features * in2)                  # (in1, out·in2)
    mixed = (input1 @ table).reshape(input1.shape[:-1] + (out_features, in2))         # (*, out, in2)
    out = (mixed * input2.unsqueeze(-2)).sum(-1)                                      # (*, out)
    return out if bias is None else out + bias
