"""PyTorch's addresses for the layers: ``torch.nn.modules`` and its submodules.

Programs import layers from where PyTorch defines them (``from torch.nn.modules.rnn
import LSTM``, ``from torch.nn.modules.loss import _Loss``). Zero's files are cut by the
book's concepts instead, so each PyTorch submodule is a small module made here from one
table: its PyTorch name, and the names it holds, each taken from where Zero keeps it.
A name Zero does not have is absent (``ImportError``), never a stand-in.

    zero.nn.modules.rnn.LSTM is zero.nn.LSTM            (the same class)
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

# PyTorch's submodule -> its public names (each found in zero.nn)
PUBLIC = {
    "activation": ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU",
                   "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU",
                   "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU", "Softsign", "Tanhshrink",
                   "Softmin", "Softmax", "Softmax2d", "LogSoftmax"],
    "batchnorm": ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"],
    "channelshuffle": ["ChannelShuffle"],
    "container": ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"],
    "conv": ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"],
    "distance": ["PairwiseDistance", "CosineSimilarity"],
    "dropout": ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"],
    "flatten": ["Flatten", "Unflatten"],
    "fold": ["Fold", "Unfold"],
    "instancenorm": ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"],
    "linear": ["Bilinear", "Identity", "Linear"],
    "loss": ["L1Loss", "NLLLoss", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss",
             "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss",
             "SoftMarginLoss", "CrossEntropyLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
             "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
             "CTCLoss"],
    "module": ["Module"],
    "normalization": ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"],
    "padding": ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
                "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
                "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"],
    "pixelshuffle": ["PixelShuffle", "PixelUnshuffle"],
    "pooling": ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d",
                "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d",
                "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
                "AdaptiveAvgPool3d"],
    "rnn": ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"],
    "sparse": ["Embedding", "EmbeddingBag"],
    "transformer": ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
                    "TransformerDecoderLayer"],
    "upsampling": ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"],
    "utils": [],
}
# the private names programs import from these submodules (base classes to subclass,
# argument helpers): PyTorch's submodule -> {name: Zero's "module:attribute"}
PRIVATE: dict[str, dict[str, str]] = {
    "batchnorm": {"_BatchNorm": "zero.nn.batchnorm:_BatchNorm"},
    "conv": {"_ConvNd": "zero.nn.conv:_ConvNd", "_ConvTransposeNd": "zero.nn.conv_transposed:_ConvTransposeNd"},
    "instancenorm": {"_InstanceNorm": "zero.nn.normalization:_InstanceNorm"},
    "loss": {"_Loss": "zero.nn.loss:_Loss", "_WeightedLoss": "zero.nn.loss:_WeightedLoss"},
    "padding": {"_ConstantPadNd": "zero.nn.padding:_ConstantPadNd"},
    "pooling": {"_MaxPoolNd": "zero.nn.pooling:_MaxPoolNd", "_MaxUnpoolNd": "zero.nn.pooling:_MaxUnpoolNd",
                "_AdaptiveAvgPoolNd": "zero.nn.pooling:_AdaptiveAvgPoolNd",
                "_AdaptiveMaxPoolNd": "zero.nn.pooling:_AdaptiveMaxPoolNd"},
}


def _submodule(name: str, layers: dict) -> ModuleType:
    """PyTorch's ``torch.nn.modules.<name>``: the names of the table that Zero has."""
    module = ModuleType(f"{__name__}.{name}", f"PyTorch's torch.nn.modules.{name}: Zero's layers of that name.")
    for public in PUBLIC[name]:
        if public in layers:
            setattr(module, public, layers[public])
    for private, source in PRIVATE.get(name, {}).items():
        path, _, attribute = source.partition(":")
        setattr(module, private, getattr(importlib.import_module(path), attribute))
    module.__all__ = [n for n in PUBLIC[name] if n in layers]  # type: ignore[attr-defined]
    return module


_layers = vars(importlib.import_module("zero.nn"))
for _name in PUBLIC:
    _module = sys.modules[f"{__name__}.{_name}"] = _submodule(_name, _layers)
    globals()[_name] = _module                                   # zero.nn.modules.rnn
    for _public in _module.__all__:                              # zero.nn.modules.LSTM, as PyTorch has it
        globals()[_public] = getattr(_module, _public)
del _layers, _name, _module, _public
