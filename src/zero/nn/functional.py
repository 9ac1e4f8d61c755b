"""The functional API (``import zero.nn.functional as F``), with PyTorch's signatures.

Thin on purpose: each function checks its arguments and applies an op (or a
short composition of ops). The ops, with their shape rules and backward, live
in ``zero.ops``:

    activations     gelu, sigmoid, tanh                   ops.elementwise (the same functions)
                    relu, silu (with inplace), leaky_relu, ops.extra.activations
                    elu, selu, celu, softplus, mish, ...,
                    the in-place relu_, elu_ ...
    softmax         softmax, log_softmax                  ops.softmax
    losses          cross_entropy, nll_loss, mse_loss     ops.loss
                    binary_cross_entropy(_with_logits),   ops.extra.losses
                    l1, smooth_l1, huber, kl_div, ...,
                    cosine_similarity, pairwise_distance
    convolution     conv1d, conv2d                        ops.extra.convolution
    pooling         max_pool1d/2d, avg_pool1d/2d,         ops.extra.pooling
                    adaptive_avg_pool1d/2d
    normalisation   layer_norm                            ops.normalization
                    batch_norm                            composition (here)
    regularisation  dropout                               ops.dropout
    attention       scaled_dot_product_attention          ops.fused (causal) / ops.attention
    fused layers    linear, ffn, linear_cross_entropy,    ops.fused
                    self_attention
    lookups         embedding, one_hot                    ops.joining / compositions
    padding         pad                                    ops.extra.rearrange
"""
from __future__ import annotations

from .. import dtypes
from ..errors import DTypeError, ShapeError, describe
from ..errors import IndexRangeError, ShapeValueError  # (issue 37: the builtin classes PyTorch raises)
from ..grad_mode import no_grad
from ..ops import attention, fused, joining
from ..ops.elementwise import gelu, sigmoid, tanh
from ..ops.extra import convolution, pooling, rearrange
from ..ops.extra import convolution3d, pooling3d, transposed_convolution, upsampling
from ..ops.extra import fold as _fold
from ..ops.dropout import dropout, dropout2d
from ..ops.dropout import alpha_dropout, dropout1d, dropout3d, feature_alpha_dropout
from ..ops.extra import embedding as extra_embedding
from ..ops.extra.bilinear import bilinear
from ..ops.extra.embedding import embedding_bag
from ..ops.extra.nn_compositions import (channel_shuffle, gumbel_softmax, lp_pool1d, lp_pool2d, lp_pool3d, pdist,
                                         triplet_margin_with_distance_loss)
from ..ops.extra.normalization_extra import group_norm, instance_norm, local_response_norm, normalize, rms_norm
from ..ops.loss import cross_entropy, mse_loss, nll_loss
from ..ops.extra.activations import (celu, celu_, elu, elu_, glu, hardshrink, hardsigmoid, hardswish, hardtanh,
                                     hardtanh_, leaky_relu, leaky_relu_, logsigmoid, mish, prelu, relu, relu6, relu_,
                                     rrelu, rrelu_, selu, selu_, silu, softmin, softplus, softshrink, softsign,
                                     tanhshrink, threshold, threshold_)
from ..ops.extra.losses import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
                                cosine_similarity, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div,
                                l1_loss, margin_ranking_loss, multi_margin_loss, multilabel_soft_margin_loss,
                                pairwise_distance,
                                poisson_nll_loss, smooth_l1_loss, soft_margin_loss, triplet_margin_loss)
from ..ops.normalization import layer_norm
from ..ops.softmax import log_softmax, softmax
from ..tensors.creation import arange
from ..tensors.tensor import Tensor

__all__ = ["relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "cross_entropy", "nll_loss",
           "mse_loss", "layer_norm", "dropout", "dropout2d", "scaled_dot_product_attention", "linear", "ffn",
           "self_attention", "linear_cross_entropy", "embedding", "one_hot", "pad", "batch_norm", "conv1d",
           "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d"]
# PyTorch's other activations (ops/extra/activations.py) and losses (ops/extra/losses.py)
__all__ += ["relu_", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_", "glu", "softplus",
            "softsign", "mish", "hardswish", "hardsigmoid", "hardtanh", "hardtanh_", "relu6", "prelu", "logsigmoid",
            "softmin", "threshold", "threshold_", "tanhshrink", "softshrink", "hardshrink", "rrelu", "rrelu_",
            "binary_cross_entropy", "binary_cross_entropy_with_logits", "l1_loss", "smooth_l1_loss", "huber_loss",
            "kl_div", "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "soft_margin_loss",
            "multilabel_soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss", "hinge_embedding_loss",
            "cosine_similarity", "pairwise_distance", "multi_margin_loss"]


# -- layers ---------------------------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias=None) -> Tensor:  # noqa: A002
    """input @ weightᵀ + bias:  (*, in) x (out, in) -> (*, out), one fused op (one GEMM, the
    bias added in place). A 1-D weight (in,) gives (*,)."""
    if not isinstance(weight, Tensor) or weight.ndim not in (1, 2):
        got = describe(weight)
        raise ShapeError(f"linear: weight must be a tensor [out_features, in_features], got {got}")
    if not isinstance(input, Tensor) or input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        got = describe(input)
        raise ShapeError(f"linear: input {got} must end in in_features={weight.shape[-1]} to match "
                         f"weight {describe(weight)}")
    if weight.ndim == 1:
        out = input @ weight                                            # (*,)
        return out if bias is None else out + bias
    return fused.linear(input, weight, bias)                            # (*, out)


def ffn(input: Tensor, w1: Tensor, b1, w2: Tensor, b2, approximate: str = "none",  # noqa: A002
        recompute=None) -> Tensor:
    """gelu(input @ w1ᵀ + b1) @ w2ᵀ + b2 as one op: (*, C) -> (*, C2) with w1 (H, C),
    w2 (C2, H). Backward starts from the (*, H) hidden layer input @ w1ᵀ, kept when it
    is at most 256 MiB, recomputed when larger or when ``recompute`` is True (False:
    always kept)."""
    return fused.ffn(input, w1, b1, w2, b2, approximate=approximate, recompute=recompute)


def self_attention(qkv: Tensor, n_head: int, is_causal: bool = True) -> Tensor:
    """Multi-head attention of the heads packed in qkv (B, T, 3C) -> (B, T, C), one fused op
    (Zero's; what split, view, transpose, scaled_dot_product_attention and the transpose
    back compute, with fewer copies)."""
    return fused.self_attention(qkv, n_head, is_causal=is_causal)


def linear_cross_entropy(input: Tensor, weight: Tensor, target: Tensor, ignore_index: int = -100,  # noqa: A002
                         reduction: str = "mean", chunk_size=None) -> Tensor:
    """cross_entropy(input @ weightᵀ, target) as one op that holds at most one chunk of
    logits: input (*, C), weight (V, C) (e.g. a tied embedding), target (*) int. Works on
    ``chunk_size`` rows at a time (default: a chunk of logits takes about 8 MiB on the
    CPU); when all rows fit in one chunk, forward's logits are kept for backward instead of
    recomputed."""
    return fused.linear_cross_entropy(input, weight, target, ignore_index=ignore_index, reduction=reduction,
                                      chunk_size=chunk_size)


# -- convolution and pooling ----------------------------------------------------------------


def conv1d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1) -> Tensor:
    """(N, C, L) x (O, C/groups, k) -> (N, O, L'), or unbatched (C, L) -> (O, L'). ``padding``:
    an int, "valid" or "same" (stride 1)."""
    return convolution.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1) -> Tensor:
    """(N, C, H, W) x (O, C/groups, kH, kW) -> (N, O, H', W'), or unbatched (C, H, W). stride,
    padding, dilation: an int or a pair; ``padding`` also "valid" or "same" (stride 1)."""
    return convolution.conv2d(input, weight, bias, stride, padding, dilation, groups)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,  # noqa: A002
               return_indices: bool = False):
    return pooling.max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                            return_indices)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,  # noqa: A002
               return_indices: bool = False):
    """The largest element of each window (stride defaults to kernel_size); with
    ``return_indices`` also its position h * W + w in its plane, int64."""
    return pooling.max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                            return_indices)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True) -> Tensor:
    return pooling.avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    return pooling.avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    return pooling.adaptive_avg_pool("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average over PyTorch's adaptive windows to ``output_size`` (an int, a pair, None keeps a size)."""
    return pooling.adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None, training: bool = False,  # noqa: A002
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """PyTorch's ``F.batch_norm`` over x (N, C, *), per channel (the formulas are in
    ``zero.nn.batchnorm``): batch statistics in training, updating the running ones (C,)
    in place when given; the running statistics otherwise (None: the batch's always)."""
    if not isinstance(input, Tensor) or input.ndim < 2:
        raise ShapeError(f"batch_norm: expected an input (N, C, ...), got {describe(input)}")
    parameter = weight if weight is not None else running_mean
    if input.dtype.itemsize == 2 and isinstance(parameter, Tensor) and parameter.dtype is not input.dtype:
        # a 16-bit input (autocast's) with float32 parameters: in float32, the result in the input's dtype
        return batch_norm(input.float(), running_mean, running_var, weight, bias, training, momentum,
                          eps).to(input.dtype)
    channels = input.shape[1]
    broadcast = (1, channels) + (1,) * (input.ndim - 2)            # (1, C, 1, ...)
    dims = (0,) + tuple(range(2, input.ndim))
    use_batch = training or running_mean is None or running_var is None
    if use_batch:
        count = input.numel() // channels
        if count <= 1:
            raise ShapeValueError(f"batch_norm: expected more than 1 value per channel when training, got "
                                  f"{describe(input)}")
        mean = input.mean(dims, keepdim=True)
        centred = input - mean
        var = (centred * centred).mean(dims, keepdim=True)
        if training and running_mean is not None and running_var is not None:
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.reshape(channels).detach() * momentum)
                running_var.mul_(1 - momentum).add_(var.reshape(channels).detach() * (momentum * count / (count - 1)))
        out = centred / (var + eps).sqrt()
    else:
        out = (input - running_mean.reshape(broadcast)) / (running_var.reshape(broadcast) + eps).sqrt()
    if weight is not None:
        out = out * weight.reshape(broadcast)
    if bias is not None:
        out = out + bias.reshape(broadcast)
    return out


# -- attention --------------------------------------------------------------------------------


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale=None,
                                 generator=None) -> Tensor:
    """softmax(query @ keyᵀ * scale + mask) @ value, PyTorch's semantics: query (..., L, E),
    key (..., S, E), value (..., S, Ev) -> (..., L, Ev).

    Causal self-attention without a mask or dropout (L == S, the same leading dimensions)
    runs as the fused flash-style op, which keeps no (..., L, S) tensor for backward; every
    other case runs as the composition of basic ops in ``ops.attention``."""
    if (is_causal and attn_mask is None and dropout_p == 0.0
            and all(isinstance(t, Tensor) and t.ndim >= 2 for t in (query, key, value))
            and query.shape[-2] == key.shape[-2]
            and query.shape[:-2] == key.shape[:-2] == value.shape[:-2]):
        return fused.flash_attention(query, key, value, scale=scale, is_causal=True)
    return attention.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                                  is_causal=is_causal, scale=scale, generator=generator)


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:  # noqa: A002
    """Pad (or, with negative amounts, crop) the last dimensions: ``pad`` lists (before,
    after) pairs from the last dimension backwards; mode "constant" (``value``, default 0),
    "reflect", "replicate" or "circular" (PyTorch's F.pad)."""
    return rearrange.pad(input, pad, mode, value)


# -- lookups ----------------------------------------------------------------------------------


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """weight[input]: (*) int -> (*, dim); repeated indices accumulate gradient. PyTorch's
    options (padding_idx, max_norm, scale_grad_by_freq) are in ``ops.extra.embedding``;
    sparse=True is refused (no sparse gradients)."""
    if padding_idx is None and max_norm is None and not scale_grad_by_freq and not sparse:
        return joining.embedding(input, weight)
    return extra_embedding.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """(*) int64 class indices -> (*, num_classes) int64 with a 1 at each index.
    ``num_classes=-1`` takes the largest index + 1."""
    if not isinstance(tensor, Tensor) or tensor.dtype not in (dtypes.int64, dtypes.int32):
        got = describe(tensor)
        raise DTypeError(f"one_hot: expects an int64 tensor of class indices, got {got}")
    if num_classes == -1:
        if not tensor.numel():
            raise ShapeError("one_hot: cannot infer num_classes of an empty tensor; pass num_classes")
        num_classes = int(tensor.max().item()) + 1
    if tensor.numel() and (int(tensor.min().item()) < 0 or int(tensor.max().item()) >= num_classes):
        raise IndexRangeError(f"one_hot: class values must lie in [0, {num_classes - 1}], got "
                             f"[{int(tensor.min().item())}, {int(tensor.max().item())}]")
    classes = arange(num_classes, dtype=tensor.dtype, device=tensor.device)   # (num_classes,)
    return (tensor.unsqueeze(-1) == classes).long()                            # (*, num_classes)


# -- transposed and 3-D convolution, fold/unfold, 3-D and adaptive max pooling, resampling ----------
# (ops.extra.transposed_convolution, convolution3d, fold, pooling3d, upsampling)

__all__ += ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv3d", "unfold", "fold", "max_pool3d",
            "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "max_unpool1d",
            "max_unpool2d", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
            "pixel_unshuffle"]


def conv_transpose1d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups: int = 1, dilation=1) -> Tensor:
    """(N, C, L) x (C, O/groups, k) -> (N, O, (L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1)."""
    return transposed_convolution.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                                                   dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups: int = 1, dilation=1) -> Tensor:
    """(N, C, H, W) x (C, O/groups, kH, kW) -> (N, O, H', W'): the gradient of conv2d with
    respect to its input; each size (in - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1."""
    return transposed_convolution.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                                   dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups: int = 1, dilation=1) -> Tensor:
    """(N, C, D, H, W) x (C, O/groups, kD, kH, kW) -> (N, O, D', H', W')."""
    return convolution3d.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv3d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1) -> Tensor:
    """(N, C, D, H, W) x (O, C/groups, kD, kH, kW) -> (N, O, D', H', W'); ``padding`` also
    "valid" or "same" (stride 1)."""
    return convolution3d.conv3d(input, weight, bias, stride, padding, dilation, groups)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:  # noqa: A002
    """im2col: (N, C, H, W) -> (N, C kH kW, L), each column one sliding window's elements."""
    return _fold.unfold(input, kernel_size, dilation, padding, stride)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:  # noqa: A002
    """col2im: (N, C kH kW, L) -> (N, C, *output_size), summing where windows overlap."""
    return _fold.fold(input, output_size, kernel_size, dilation, padding, stride)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,  # noqa: A002
               return_indices: bool = False):
    """The largest element of each box window; with ``return_indices`` also d H W + h W + w."""
    return pooling3d.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    return pooling3d.avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    return pooling.adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):  # noqa: A002
    return pooling3d.adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):  # noqa: A002
    """The largest element of PyTorch's adaptive windows; with ``return_indices`` also h W + w."""
    return pooling3d.adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None) -> Tensor:
    return upsampling.max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None) -> Tensor:
    """max_pool2d's partial inverse: each value put at its index, zeros elsewhere."""
    return upsampling.max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    """Resample the spatial dims of (N, C, *spatial) to ``size`` or by ``scale_factor``: modes
    "nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area"."""
    return upsampling.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
             align_corners=None) -> Tensor:
    """The older name of ``interpolate``."""
    return upsampling.interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    return upsampling.interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    return upsampling.interpolate(input, size, scale_factor, "bilinear", align_corners=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C r², H, W) -> (*, C, H r, W r)."""
    return upsampling.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C, H r, W r) -> (*, C r², H, W)."""
    return upsampling.pixel_unshuffle(input, downscale_factor)

# -- normalisation, embeddings, bilinear, dropouts (normtf) ------------------------------------------
#   group_norm, instance_norm, rms_norm,      ops.extra.normalization_extra (on the layer-norm op)
#   normalize, local_response_norm
#   embedding_bag                              ops.extra.embedding
#   bilinear                                   ops.extra.bilinear (one GEMM and a product-sum)
#   dropout1d, dropout3d, alpha_dropout,       ops.dropout
#   feature_alpha_dropout

__all__ += ["group_norm", "instance_norm", "rms_norm", "normalize", "local_response_norm", "embedding_bag",
            "bilinear", "dropout1d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


# -- smaller compositions: channel shuffle, power-average pooling, pdist, Gumbel-softmax, ---------
# a triplet loss with any distance, and the pools' *_with_indices names (ops.extra.nn_compositions)

native_channel_shuffle = channel_shuffle
__all__ += ["channel_shuffle", "native_channel_shuffle", "gumbel_softmax", "lp_pool1d", "lp_pool2d", "lp_pool3d",
            "pdist", "triplet_margin_with_distance_loss", "max_pool1d_with_indices", "max_pool2d_with_indices",
            "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices"]


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode: bool = False, return_indices: bool = True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode: bool = False, return_indices: bool = True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode: bool = False, return_indices: bool = True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = True):  # noqa: A002
    return adaptive_max_pool1d(input, output_size, return_indices)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = True):  # noqa: A002
    return adaptive_max_pool2d(input, output_size, return_indices)
