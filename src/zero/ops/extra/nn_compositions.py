"""PyTorch's smaller ``nn.functional`` functions that are short compositions of Zero's ops
(their backward comes from the ops they call):

    channel_shuffle(x, g)     (N, C, *) -> the C channels as g groups, interleaved
    lp_pool{1,2,3}d           (sum over each window of x^p)^(1/p): an average pool of x^p
                              times the window's size, then the p-th root
    pdist(x, p)               (N, M) -> the N (N - 1) / 2 distances between rows i < j
    gumbel_softmax(logits)    softmax((logits + Gumbel noise) / tau); ``hard``: the one-hot of
                              its largest, with the soft sample's gradient
    triplet_margin_with_distance_loss
                              max(margin + d(a, p) - d(a, n), 0) with any distance d
"""
from __future__ import annotations

import math
from collections.abc import Callable

from ...errors import describe
from ...tensors.creation import rand_like, tensor
from ...tensors.tensor import Tensor
from ..arguments import Sizes
from ..elementwise import minimum, relu, sign
from ..softmax import softmax
from .convolution import int_tuple
from ..loss import check_reduction
from ..new_memory import new_memory
from .losses import pairwise_distance
from .pooling import avg_pool
from .pooling3d import avg_pool3d
from ...autograd import autocast_hook


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with C = g k: channel i g + j of the result is channel j k + i of the input."""
    if not isinstance(input, Tensor) or input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{describe(input)}")
    channels = input.shape[1]
    if not isinstance(groups, int) or groups <= 0 or channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} channels and "
                           f"{groups} groups.")
    batch, rest = input.shape[0], input.shape[2:]
    grouped = input.reshape(batch, groups, channels // groups, *rest)          # (N, g, C/g, *)
    return new_memory(grouped.transpose(1, 2).reshape(batch, channels, *rest), input)


def _lp_pool(op: str, dims: int, input: Tensor, norm_type: float, kernel_size: int | Sizes,
             stride: int | Sizes | None, ceil_mode: bool) -> Tensor:
    kernel = int_tuple(op, "kernel_size", kernel_size, dims, 1)
    powered = input.pow(norm_type)
    if dims == 3:
        pooled = avg_pool3d(powered, kernel_size, stride, 0, ceil_mode)
    else:
        pooled = avg_pool(op, dims, powered, kernel_size, stride, 0, ceil_mode)
    # (sign · relu(|·|) keeps a negative average of odd powers negative, as PyTorch does)
    return (sign(pooled) * relu(pooled.abs())).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int | Sizes, stride: int | Sizes | None = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: int | Sizes, stride: int | Sizes | None = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: int | Sizes, stride: int | Sizes | None = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows i < j of (N, M), in the order (0, 1), (0, 2) ...
    (N - 2, N - 1)."""
    if autocast_hook.state.active:
        input, = autocast_hook.cast("pdist", input)
    if not isinstance(input, Tensor) or input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {describe(input)}")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    rows = input.shape[0]
    first = [i for i in range(rows) for _ in range(i + 1, rows)]
    second = [j for i in range(rows) for j in range(i + 1, rows)]
    if not first:
        return input.new_zeros((0,))
    differences = (input.index_select(0, tensor(first, device=input.device))
                   - input.index_select(0, tensor(second, device=input.device)))       # (pairs, M)
    return differences.norm(p=p, dim=1)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution: softmax((logits + g) / tau) with g =
    -log(E), E ~ Exponential(1); ``hard``: the one-hot of its largest entry, whose
    gradient is the soft sample's (y_hard - y.detach() + y)."""
    uniform = rand_like(logits).clamp_(min=1e-20)            # (0, 1): -log of it is Exponential(1)
    gumbels = (logits - (-uniform.log()).log()) / tau
    soft = softmax(gumbels, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = logits.new_zeros(logits.shape).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    check_reduction("triplet_margin_with_distance_loss", reduction)
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    to_positive, to_negative = distance(anchor, positive), distance(anchor, negative)
    if swap:
        to_negative = minimum(to_negative, distance(positive, negative))
    loss = relu(margin + to_positive - to_negative)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()

