"""The book's MNIST model: one hidden layer.

    [B, 784] -> Linear(784, 512) -> ReLU -> Linear(512, 10) -> logits [B, 10]
"""
from __future__ import annotations

from .. import nn


class MLP(nn.Module):
    def __init__(self, in_features: int = 784, hidden: int = 512, classes: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):  # (B, in) -> (B, classes)
        return self.fc2(self.fc1(x).relu())
