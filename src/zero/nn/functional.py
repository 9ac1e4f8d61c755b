"""The functional API (``import zero.nn.functional as F``), with PyTorch's signatures.

Thin on purpose: each function checks its arguments and applies an op (or a
short composition of ops). The ops, with their shape rules and backward, live
in ``zero.ops``:

    activations     relu, gelu, silu, sigmoid, tanh      ops.elementwise
    softmax         softmax, log_softmax                  ops.activation
    losses          cross_entropy, nll_loss, mse_loss     ops.loss
    normalisation   layer_norm                            ops.normalization
    regularisation  dropout                               ops.dropout
    attention       scaled_dot_product_attention          ops.attention
    layers          linear, embedding, one_hot            compositions
"""
from __future__ import annotations

from .. import dtypes
from ..errors import DTypeError, ShapeError, ZeroIndexError, describe
from ..ops import elementwise, joining
from ..ops.activation import log_softmax, softmax
from ..ops.attention import scaled_dot_product_attention
from ..ops.dropout import dropout
from ..ops.loss import cross_entropy, mse_loss, nll_loss
from ..ops.normalization import layer_norm
from ..tensor.creation import arange
from ..tensor.tensor import Tensor

__all__ = ["relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "cross_entropy", "nll_loss",
           "mse_loss", "layer_norm", "dropout", "scaled_dot_product_attention", "linear", "embedding",
           "one_hot"]


# -- activations (elementwise ops) ----------------------------------------------------------


def relu(input: Tensor) -> Tensor:  # noqa: A002  (PyTorch's argument names)
    return elementwise.Relu.apply(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x), or its tanh approximation (GPT-2's) with ``approximate="tanh"``."""
    return elementwise.Gelu.apply(input, approximate=approximate)


def silu(input: Tensor) -> Tensor:  # noqa: A002
    return elementwise.Silu.apply(input)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    return elementwise.Sigmoid.apply(input)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    return elementwise.Tanh.apply(input)


# -- layers as compositions -----------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias=None) -> Tensor:  # noqa: A002
    """input @ weightᵀ + bias:  (*, in) x (out, in) -> (*, out)."""
    if not isinstance(weight, Tensor) or weight.ndim not in (1, 2):
        got = describe(weight) if isinstance(weight, Tensor) else type(weight).__name__
        raise ShapeError(f"linear: weight must be a tensor [out_features, in_features], got {got}")
    if not isinstance(input, Tensor) or input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        got = describe(input) if isinstance(input, Tensor) else type(input).__name__
        raise ShapeError(f"linear: input {got} must end in in_features={weight.shape[-1]} to match "
                         f"weight {describe(weight)}")
    out = input @ weight.mT if weight.ndim == 2 else input @ weight   # (*, out)
    return out if bias is None else out + bias


def embedding(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """weight[input]: (*) int -> (*, dim); repeated indices accumulate gradient."""
    return joining.embedding(input, weight)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """(*) int64 class indices -> (*, num_classes) int64 with a 1 at each index.
    ``num_classes=-1`` takes the largest index + 1."""
    if not isinstance(tensor, Tensor) or tensor.dtype not in (dtypes.int64, dtypes.int32):
        got = describe(tensor) if isinstance(tensor, Tensor) else type(tensor).__name__
        raise DTypeError(f"one_hot: expects an int64 tensor of class indices, got {got}")
    if num_classes == -1:
        if not tensor.numel():
            raise ShapeError("one_hot: cannot infer num_classes of an empty tensor; pass num_classes")
        num_classes = int(tensor.max().item()) + 1
    if tensor.numel() and (int(tensor.min().item()) < 0 or int(tensor.max().item()) >= num_classes):
        raise ZeroIndexError(f"one_hot: class values must lie in [0, {num_classes - 1}], got "
                             f"[{int(tensor.min().item())}, {int(tensor.max().item())}]")
    classes = arange(num_classes, dtype=tensor.dtype, device=tensor.device)   # (num_classes,)
    return (tensor.unsqueeze(-1) == classes).long()                            # (*, num_classes)
