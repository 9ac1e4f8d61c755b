"""Neural-network building blocks: Module, Parameter, layers, initialisers, functional ops."""
from . import functional, init, parallel, utils
from .attention import MultiheadAttention
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .layers import (GELU, CrossEntropyLoss, Dropout, Dropout2d, Embedding, Flatten, Identity, LayerNorm, Linear,
                     MSELoss, ReLU, Sigmoid, SiLU, Softmax, Tanh)
from .module import Module, eval_mode
from .parameter import Parameter

__all__ = ["Module", "Parameter", "eval_mode", "Sequential", "ModuleList", "ModuleDict", "Linear", "Embedding",
           "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Dropout", "Dropout2d", "Identity", "ReLU", "GELU", "SiLU",
           "Tanh", "Sigmoid", "Softmax", "Flatten", "CrossEntropyLoss", "MSELoss", "MultiheadAttention", "functional",
           "init", "parallel", "utils"]
