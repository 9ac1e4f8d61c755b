"""The book's MNIST model: one hidden layer.

    [B, 784] -> standardise -> Linear(784, 512) -> ReLU -> Linear(512, 10) -> logits [B, 10]

Beyond the book, the inputs are standardised with the training set's pixel
mean and standard deviation, kept as buffers so a checkpoint carries them
(worth about one point of test accuracy after one epoch of Fashion-MNIST).
"""
from __future__ import annotations

from .. import nn
from ..tensors.creation import tensor


class MLP(nn.Module):
    def __init__(self, in_features: int = 784, hidden: int = 512, classes: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, classes)
        self.register_buffer("input_mean", tensor(0.0))
        self.register_buffer("input_std", tensor(1.0))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The book's He initialisation, N(0, 2 / fan_in), and zero biases (PyTorch's
        nn.Linear default is uniform on ±1/√fan_in instead)."""
        for layer in (self.fc1, self.fc2):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)

    def set_input_statistics(self, mean: float, std: float) -> None:
        self.input_mean.fill_(mean)
        self.input_std.fill_(std)

    def forward(self, x):  # (B, in) -> (B, classes)
        x = (x - self.input_mean) / self.input_std
        return self.fc2(self.fc1(x).relu())
