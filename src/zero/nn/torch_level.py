"""``nn.functional``'s ops as PyTorch exposes them at the top level: ``zero.conv2d``,
``zero.batch_norm``, ``zero.dropout`` ...

Most take ``F``'s arguments and are ``F``'s functions themselves (``zero.conv2d is
F.conv2d``). Where ``torch.<name>``'s signature differs from ``F.<name>``'s, the function
here takes torch's and calls F's:

    batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)
    instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled)
    layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
    group_norm(input, num_groups, weight, bias, eps, cudnn_enabled)
    embedding(weight, indices, padding_idx=-1, scale_grad_by_freq, sparse)     (-1: none)
    dropout(input, p, train) and alpha_dropout, feature_dropout, feature_alpha_dropout, and
    their in-place forms dropout_ ... (an out-of-range p is a RuntimeError here, as in torch)
    adaptive_max_pool1d(input, output_size) -> (values, indices)
    constant_pad_nd(input, pad, value=0)
    convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    the losses: the reduction an int (0 none, 1 mean, 2 sum), none by default
    native_layer_norm, native_batch_norm, native_group_norm, native_dropout: the result and
    the statistics (or dropout's mask) PyTorch's kernels return beside it
    lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell: one step of the recurrent layers' op;
    lstm, gru, rnn_tanh, rnn_relu: stacked layers from a flat parameter list (not packed input)
    conv_tbc (time, batch, channels), embedding_renorm_

(``cudnn_enabled`` says whether PyTorch may use cuDNN; Zero's kernels are its own, so it
changes nothing.)
"""
from __future__ import annotations

from collections.abc import Sequence

from .. import dtypes
from ..errors import ShapeError, describe
from ..ops.dropout import _channel_dropout
from ..ops.extra.embedding import renorm_rows_
from ..ops.extra.recurrent import recurrence
from ..ops.joining import cat, stack
from ..tensors.creation import ones_like, rand
from ..tensors.tensor import Tensor
from . import functional as F

conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d
avg_pool1d, adaptive_avg_pool1d = F.avg_pool1d, F.adaptive_avg_pool1d
max_pool1d, max_pool2d, max_pool3d = F.max_pool1d, F.max_pool2d, F.max_pool3d
max_pool1d_with_indices = F.max_pool1d_with_indices
rms_norm, bilinear, pdist = F.rms_norm, F.bilinear, F.pdist
channel_shuffle, native_channel_shuffle = F.channel_shuffle, F.native_channel_shuffle
pixel_shuffle, pixel_unshuffle = F.pixel_shuffle, F.pixel_unshuffle


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002  (PyTorch's names)
               running_mean: Tensor | None, running_var: Tensor | None, training: bool, momentum: float,
               eps: float, cudnn_enabled: bool = True) -> Tensor:
    """``torch.batch_norm``: F.batch_norm with torch's argument order."""
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in evaluation mode")
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                  running_mean: Tensor | None, running_var: Tensor | None, use_input_stats: bool, momentum: float,
                  eps: float, cudnn_enabled: bool = True) -> Tensor:
    """``torch.instance_norm``: F.instance_norm with torch's argument order."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    """``torch.layer_norm``: F.layer_norm (and a cudnn_enable flag that changes nothing here)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    """``torch.group_norm``: F.group_norm (and a cudnn_enabled flag that changes nothing here)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """``torch.embedding``: weight first; ``padding_idx`` -1 is none (F.embedding's None)."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int]) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``torch.adaptive_max_pool1d``: the values and their indices, always."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:  # noqa: A002
    """``torch.constant_pad_nd``: F.pad in "constant" mode."""
    return F.pad(input, pad, "constant", value)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],  # noqa: A002
                padding: Sequence[int], dilation: Sequence[int], transposed: bool, output_padding: Sequence[int],
                groups: int) -> Tensor:
    """``torch.convolution``: the 1-, 2- or 3-D convolution (or transposed convolution) the
    weight's dimensions say."""
    spatial = weight.ndim - 2 if isinstance(weight, Tensor) else 0
    if spatial not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-, 4- or 5-D weight, got {describe(weight)}")
    if transposed:
        transposed_convs = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
        return transposed_convs[spatial](input, weight, bias, stride, padding, output_padding, groups, dilation)
    return {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[spatial](input, weight, bias, stride, padding, dilation, groups)


# -- dropout at torch's level: (input, p, train) -------------------------------------------------


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_input(op: str, input: Tensor) -> None:  # noqa: A002
    if isinstance(input, Tensor) and input.ndim < 2:
        raise ShapeError(f"{op}: Feature dropout requires at least 2 dimensions in the input, got {describe(input)}")


def dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.dropout``: F.dropout(input, p, train)."""
    _check_p(p)
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    _check_p(p)
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.alpha_dropout``: F.alpha_dropout(input, p, train)."""
    _check_p(p)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    _check_p(p)
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.feature_dropout``: whole feature maps (dimensions 2 on) of x (N, C, *) zeroed."""
    _check_p(p)
    _feature_input("feature_dropout", input)
    return _channel_dropout("feature_dropout", input.ndim - 2, input, p, train, False, None)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    _check_p(p)
    _feature_input("feature_dropout_", input)
    return _channel_dropout("feature_dropout_", input.ndim - 2, input, p, train, True, None)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.feature_alpha_dropout``: F.feature_alpha_dropout(input, p, train)."""
    _check_p(p)
    _feature_input("feature_alpha_dropout", input)
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    _check_p(p)
    _feature_input("feature_alpha_dropout_", input)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


# -- losses at torch's level: the reduction an int (0 'none', 1 'mean', 2 'sum'), and -- unlike
# F's -- no reduction unless asked (what torch's top-level forms give when it is left out) ------

REDUCTIONS = {1: "mean", 2: "sum"}


def _reduction(reduction: int) -> str:
    if isinstance(reduction, str) or not isinstance(reduction, int):
        raise TypeError(f"reduction must be an int at torch's level (0: 'none', 1: 'mean', 2: 'sum'), "
                        f"got {reduction!r}; F's losses take the name")
    return REDUCTIONS.get(reduction, "none")


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    """``torch.binary_cross_entropy_with_logits``: (input, target, weight, pos_weight, reduction)."""
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """``torch.cosine_embedding_loss``: (input1, input2, target, margin, reduction)."""
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         reduction: int = 0) -> Tensor:
    """``torch.hinge_embedding_loss``: (input, target, margin, reduction)."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``torch.margin_ranking_loss``: (input1, input2, target, margin, reduction)."""
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    """``torch.triplet_margin_loss``: (anchor, positive, negative, margin, p, eps, swap, reduction)."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,  # noqa: A002
                     reduction: int) -> Tensor:
    """``torch.poisson_nll_loss``: (input, target, log_input, full, eps, reduction), all required."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


# -- the native_ forms: the result and the statistics the backward would keep ------------------------


def _mean_and_rstd(x: Tensor, dims: tuple[int, ...], eps: float, keepdim: bool) -> tuple[Tensor, Tensor]:
    mean = x.mean(dims, keepdim=keepdim)
    return mean, (x.var(dims, correction=0, keepdim=keepdim) + eps).rsqrt()


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,  # noqa: A002
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.native_layer_norm``: (out, mean, rstd), the statistics over the normalized
    dimensions kept as size-1 dimensions."""
    dims = tuple(range(input.ndim - len(tuple(normalized_shape)), input.ndim))
    mean, rstd = _mean_and_rstd(input, dims, eps, keepdim=True)
    return F.layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool, momentum: float,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.native_batch_norm``: (out, save_mean, save_invstd) -- the batch's statistics per
    channel in training, empty tensors otherwise."""
    out = batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    if not training:
        empty = input.new_zeros((0,))
        return out, empty, empty.clone()
    dims = (0,) + tuple(range(2, input.ndim))
    mean, invstd = _mean_and_rstd(input.detach(), dims, eps, keepdim=False)
    return out, mean, invstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int,  # noqa: A002
                      HxW: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.native_group_norm``: (out, mean, rstd), the statistics (N, group)."""
    if tuple(input.shape[:2]) != (N, C) or input.numel() != N * C * HxW:
        raise ShapeError(f"native_group_norm: N={N}, C={C}, HxW={HxW} do not describe {describe(input)}")
    mean, rstd = _mean_and_rstd(input.reshape(N, group, -1), (2,), eps, keepdim=False)
    return F.group_norm(input, group, weight, bias, eps), mean, rstd


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``torch.native_dropout``: (out, mask), the mask a bool tensor of the elements kept."""
    _check_p(p)
    if not train:
        return input.clone(), ones_like(input, dtype=dtypes.bool_)
    keep = rand(tuple(input.shape), dtype=input.dtype, device=input.device) >= p
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    return input * keep.to(input.dtype) * scale, keep


# -- one step of a recurrent cell; conv_tbc; embedding_renorm_ -----------------------------------------


def _cell(mode: str, input: Tensor, h: Tensor, c: Tensor | None, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
          b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor:
    """The states after one step (the recurrence over a sequence of one): (2, N, H), or for an
    LSTM (2, 2, N, H) -- hidden and cell states, before and after."""
    if input.ndim != 2 or h.ndim != 2:
        raise ShapeError(f"{mode.lower()}_cell: expected a 2-D input (N, I) and state (N, H), got "
                         f"{describe(input)} and {describe(h)}")
    return recurrence(mode, input.unsqueeze(0), h, c, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,  # noqa: A002
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """``torch.lstm_cell``: one LSTM step from hx = (h, c) (N, H) each: the new (h, c)."""
    h, c = hx
    states = _cell("LSTM", input, h, c, w_ih, w_hh, b_ih, b_hh)
    return states[0, 1], states[1, 1]


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.gru_cell``: one GRU step from hx (N, H): the new hidden state."""
    return _cell("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[1]


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.rnn_tanh_cell``: tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _cell("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)[1]


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.rnn_relu_cell``: relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _cell("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[1]


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:  # noqa: A002
    """``torch.conv_tbc``: a 1-D convolution over time of x (T, B, C_in) with weight
    (k, C_in, C_out) and bias (C_out,): (T', B, C_out)."""
    if input.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise RuntimeError(f"conv_tbc: expected input (T, B, C), weight (k, C_in, C_out) and bias (C_out,), got "
                           f"{describe(input)}, {describe(weight)}, {describe(bias)}")
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)    # (B, C_out, T')
    return out.permute(2, 0, 1).contiguous()


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:  # noqa: A002
    """``torch.embedding_renorm_``: the rows of ``input`` (an embedding table) that ``indices``
    picks and whose norm exceeds ``max_norm``, scaled down to it in place."""
    renorm_rows_(input, indices, max_norm, norm_type)
    return input


# -- the recurrent layers at torch's level: (input, hx, params, has_biases, num_layers, dropout,
# train, bidirectional, batch_first), params w_ih, w_hh[, b_ih, b_hh] per layer and direction ----


def _layers(mode: str, input: Tensor, h0: Tensor, c0: Tensor | None, params: Sequence[Tensor],  # noqa: A002
            has_biases: bool, num_layers: int, dropout: float, train: bool, bidirectional: bool,
            batch_first: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    directions, per = (2 if bidirectional else 1), (4 if has_biases else 2)
    if len(params) != num_layers * directions * per:
        raise RuntimeError(f"{mode.lower()}: expected {num_layers * directions * per} parameters "
                           f"({num_layers} layers, {directions} directions, {per} each), got {len(params)}")
    if input.ndim != 3:
        raise ShapeError(f"{mode.lower()}: expected a 3-D input, got {describe(input)}")
    x = input.transpose(0, 1) if batch_first else input                          # (L, N, I)
    last_h: list[Tensor] = []
    last_c: list[Tensor] = []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            k = layer * directions + direction
            w = params[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            states = recurrence(mode, x, h0[k], None if c0 is None else c0[k], w[0], w[1], b_ih, b_hh,
                                reverse=direction == 1)
            hidden, cells = (states[0], states[1]) if c0 is not None else (states, None)   # (L + 1, N, H)
            outputs.append(hidden[1:] if direction == 0 else hidden[:-1])
            last = -1 if direction == 0 else 0
            last_h.append(hidden[last])
            if cells is not None:
                last_c.append(cells[last])
        x = outputs[0] if directions == 1 else cat(outputs, 2)
        if train and dropout > 0 and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    output = x.transpose(0, 1) if batch_first else x
    return output, stack(last_h), (stack(last_c) if c0 is not None else None)


def lstm(input: Tensor, hx: Sequence[Tensor], params: Sequence[Tensor], has_biases: bool,  # noqa: A002
         num_layers: int, dropout: float, train: bool, bidirectional: bool,
         batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.lstm``: (output, h_n, c_n) of a stacked LSTM from hx = (h0, c0)."""
    h0, c0 = hx
    output, h_n, c_n = _layers("LSTM", input, h0, c0, params, has_biases, num_layers, dropout, train,
                               bidirectional, batch_first)
    assert c_n is not None
    return output, h_n, c_n


def gru(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool, num_layers: int,  # noqa: A002
        dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor]:
    """``torch.gru``: (output, h_n) of a stacked GRU."""
    output, h_n, _ = _layers("GRU", input, hx, None, params, has_biases, num_layers, dropout, train,
                             bidirectional, batch_first)
    return output, h_n


def rnn_tanh(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool, num_layers: int,  # noqa: A002
             dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor]:
    """``torch.rnn_tanh``: (output, h_n) of a stacked tanh RNN."""
    output, h_n, _ = _layers("RNN_TANH", input, hx, None, params, has_biases, num_layers, dropout, train,
                             bidirectional, batch_first)
    return output, h_n


def rnn_relu(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool, num_layers: int,  # noqa: A002
             dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor]:
    """``torch.rnn_relu``: (output, h_n) of a stacked relu RNN."""
    output, h_n, _ = _layers("RNN_RELU", input, hx, None, params, has_biases, num_layers, dropout, train,
                             bidirectional, batch_first)
    return output, h_n
