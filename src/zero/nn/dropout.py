"""The other dropout layers (PyTorch's ``torch.nn.modules.dropout``; ``Dropout`` and
``Dropout2d`` are in ``layers.py``): whole channels of 1-D and 3-D inputs, and the alpha
dropouts that keep SELU's self-normalising mean 0 and variance 1. Each is the identity in
eval mode or when p == 0."""
from __future__ import annotations

from ..ops.dropout import alpha_dropout, dropout1d, dropout3d, feature_alpha_dropout
from ..tensors.tensor import Tensor
from .layers import Dropout


class Dropout1d(Dropout):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability p in training."""

    def forward(self, x: Tensor) -> Tensor:
        return dropout1d(x, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability p in training."""

    def forward(self, x: Tensor) -> Tensor:
        return dropout3d(x, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Dropout for SELU networks: dropped elements take SELU's saturation value, then an affine
    map restores mean 0 and variance 1."""

    def forward(self, x: Tensor) -> Tensor:
        return alpha_dropout(x, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels of (N, C, *) inputs."""

    def forward(self, x: Tensor) -> Tensor:
        return feature_alpha_dropout(x, self.p, self.training, self.inplace)
