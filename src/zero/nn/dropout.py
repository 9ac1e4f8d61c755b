"""The dropout layers (PyTorch's ``torch.nn.modules.dropout``): elements, whole channels of
1-D, 2-D and 3-D inputs, and the alpha dropouts that keep SELU's self-normalising mean 0
and variance 1. Each is the identity in eval mode or when p == 0."""
from __future__ import annotations

from ..ops.dropout import alpha_dropout, dropout1d, dropout3d, feature_alpha_dropout
from ..tensors.tensor import Tensor
from . import functional as F
from .module import Module


class Dropout(Module):
    """Zero each element with probability p in training (scaling the rest by 1/(1-p));
    the identity in eval mode or when p == 0. ``inplace=True`` writes the result into the
    input and returns it."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        return F.dropout(x, self.p, True, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """Zero whole channels of (N, C, H, W) inputs with probability p in training."""

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        return F.dropout2d(x, self.p, True, self.inplace)


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
