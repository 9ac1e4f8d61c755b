"""Batch normalisation: ``F.batch_norm``, ``nn.BatchNorm1d``, ``nn.BatchNorm2d``.

Each channel c of x (N, C, *) is normalised over the batch and the other dimensions:

    training:   y = (x - mean_B) / sqrt(var_B + eps) * weight + bias      var_B biased (over N·*)
                running_mean <- (1 - m) running_mean + m mean_B
                running_var  <- (1 - m) running_var  + m var_B · n/(n - 1)    unbiased, as PyTorch keeps it
    eval:       y = (x - running_mean) / sqrt(running_var + eps) * weight + bias

with momentum m (0.1 by default; ``momentum=None`` keeps a plain average over all batches
seen, counted in ``num_batches_tracked``). The normalisation (``F.batch_norm``) is a
composition of tensor ops, so autograd gives its backward; the running statistics are
updated in place, outside the graph.
"""
from __future__ import annotations

from .. import dtypes
from ..errors import ShapeError, ShapeValueError, describe
from ..grad_mode import no_grad
from ..tensors.creation import ones, tensor, zeros
from ..tensors.tensor import Tensor
from .functional import batch_norm
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    expected_ndim: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        made = dict(device=device, dtype=dtype)
        self.weight = Parameter(ones(num_features, **made)) if affine else None
        self.bias = Parameter(zeros(num_features, **made)) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **made))
            self.register_buffer("running_var", ones(num_features, **made))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self.expected_ndim:
            ranks = " or ".join(f"{n}-D" for n in self.expected_ndim)
            raise ShapeValueError(f"{type(self).__name__}: expected a {ranks} "
                                  f"input, got {describe(x)}")
        if x.shape[1] != self.num_features:
            raise ShapeError(f"{type(self).__name__}({self.num_features}): input {describe(x)} has "
                             f"{x.shape[1]} channels in dimension 1")
        momentum = self.momentum if self.momentum is not None else 0.0
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a plain average of every batch so far
                momentum = 1.0 / int(self.num_batches_tracked.item())
        use_running = not self.training and self.track_running_stats
        return batch_norm(x, self.running_mean if (self.training or use_running) else None,
                          self.running_var if (self.training or use_running) else None,
                          self.weight, self.bias, training=self.training or not self.track_running_stats,
                          momentum=momentum, eps=self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Over (N, C) or (N, C, L) inputs."""

    expected_ndim = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over (N, C, H, W) inputs."""

    expected_ndim = (4,)


class BatchNorm3d(_BatchNorm):
    """Over (N, C, D, H, W) inputs."""

    expected_ndim = (5,)
