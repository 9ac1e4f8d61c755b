"""Neural-network building blocks: Module, Parameter, layers, initialisers, functional ops.
``zero.nn.parallel`` (DistributedDataParallel, and with it zero.distributed) is imported at
its first use."""
from ..lazy_modules import on_first_use
from . import functional, init, utils
from .attention import MultiheadAttention
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .layers import (GELU, CrossEntropyLoss, Dropout, Dropout2d, Embedding, Flatten, Identity, LayerNorm, Linear,
                     MSELoss, ReLU, Sigmoid, SiLU, Softmax, Tanh)
from .module import Module, eval_mode
from .parameter import Parameter
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = ["Module", "Parameter", "eval_mode", "Sequential", "ModuleList", "ModuleDict", "Linear", "Embedding",
           "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Dropout", "Dropout2d", "Identity", "ReLU", "GELU", "SiLU",
           "Tanh", "Sigmoid", "Softmax", "Flatten", "CrossEntropyLoss", "MSELoss", "MultiheadAttention",
           "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "functional", "init", "parallel", "utils"]

__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

__getattr__, __dir__ = on_first_use(__name__, {"parallel": "parallel"}, globals())
