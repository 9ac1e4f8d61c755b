"""Models built only from zero.nn and zero.nn.functional."""
from .mlp import MLP

__all__ = ["MLP"]
