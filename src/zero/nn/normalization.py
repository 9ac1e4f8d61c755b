"""Normalisation layers beyond batch norm (``batchnorm.py``): LayerNorm, GroupNorm,
InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm (PyTorch's ``torch.nn.modules.normalization`` and
``.instancenorm``). The arithmetic is in ``zero.ops.extra.normalization_extra``.

    GroupNorm(G, C)        (N, C, *): statistics per sample over each group of C/G channels
    InstanceNorm{1,2,3}d   (N, C, *) or unbatched (C, *): per sample and channel; by default
                           no affine and no running statistics (PyTorch's defaults)
    RMSNorm(shape)         over the trailing ``shape``: x / rms(x) · weight (no mean, no bias)
"""
from __future__ import annotations

from ..errors import ShapeValueError, describe
from ..grad_mode import no_grad
from ..ops.extra.normalization_extra import group_norm, instance_norm, local_response_norm, rms_norm
from ..ops.normalization import normalized_shape_of
from ..tensors.creation import ones, zeros
from ..tensors.tensor import Tensor
from . import functional as F
from .batchnorm import _BatchNorm
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """Normalise over the last dimensions to mean 0, variance 1, then scale and shift."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
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
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        made = dict(device=device, dtype=dtype)
        self.weight = Parameter(ones(num_channels, **made)) if affine else None
        self.bias = Parameter(zeros(num_channels, **made)) if affine and bias else None

    def reset_parameters(self) -> None:
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1.0)
            if self.bias is not None:
                self.bias.zero_()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(_BatchNorm):
    """Parameters and buffers as batch norm's (PyTorch's _NormBase); a different forward."""

    batched_ndim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        name = type(self).__name__
        if not isinstance(input, Tensor) or input.ndim not in (self.batched_ndim - 1, self.batched_ndim):
            raise ShapeValueError(f"{name}: expected a {self.batched_ndim - 1}-D (unbatched) or "
                                  f"{self.batched_ndim}-D input, got {describe(input)}")
        channel_dim = input.ndim - self.batched_ndim + 1
        if input.shape[channel_dim] != self.num_features and self.affine:
            raise ValueError(f"{name}: expected input's size at dim={channel_dim} to match num_features "
                             f"({self.num_features}), but got {describe(input)}")
        unbatched = input.ndim == self.batched_ndim - 1
        x = input.unsqueeze(0) if unbatched else input
        use_input_stats = self.training or not self.track_running_stats
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                            self.momentum if self.momentum is not None else 0.1, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Over (N, C, L) or unbatched (C, L) inputs."""

    batched_ndim = 3


class InstanceNorm2d(_InstanceNorm):
    """Over (N, C, H, W) or unbatched (C, H, W) inputs."""

    batched_ndim = 4


class InstanceNorm3d(_InstanceNorm):
    """Over (N, C, D, H, W) or unbatched (C, D, H, W) inputs."""

    batched_ndim = 5


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = normalized_shape_of(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = (Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
                       if elementwise_affine else None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            with no_grad():
                self.weight.fill_(1.0)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
