"""Models built only from zero.nn and zero.nn.functional."""
from .gpt import GPT, GPTConfig
from .mlp import MLP

__all__ = ["GPT", "GPTConfig", "MLP"]
