"""Neural-network building blocks: Module, Parameter, layers, initialisers, functional ops.
``zero.nn.parallel`` (DistributedDataParallel, and with it zero.distributed) is imported at
its first use."""
from ..lazy_modules import on_first_use
from . import functional, init, utils
from .attention import MultiheadAttention
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .layers import (GELU, CrossEntropyLoss, Dropout, Dropout2d, Flatten, Identity, LayerNorm, Linear,
                     MSELoss, ReLU, Sigmoid, SiLU, Softmax, Tanh)
from .module import Module, eval_mode
from .parameter import Parameter
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .conv import Conv3d
from .conv_transposed import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .fold import Fold, Unfold
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .pooling import (AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool3d, MaxPool3d, MaxUnpool1d,
                      MaxUnpool2d)
from .upsampling import PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

# normalisation, embeddings, containers, misc layers, Transformer (normtf)
from .container import ParameterDict, ParameterList
from .dropout import AlphaDropout, Dropout1d, Dropout3d, FeatureAlphaDropout
from .flatten import Unflatten
from .linear import Bilinear
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm, RMSNorm
from .sparse import Embedding, EmbeddingBag
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)

__all__ = ["Module", "Parameter", "eval_mode", "Sequential", "ModuleList", "ModuleDict", "Linear", "Embedding",
           "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Dropout", "Dropout2d", "Identity", "ReLU", "GELU", "SiLU",
           "Tanh", "Sigmoid", "Softmax", "Flatten", "CrossEntropyLoss", "MSELoss", "MultiheadAttention",
           "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "functional", "init", "modules", "parallel", "utils"]
__all__ += ["Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Fold", "Unfold", "ZeroPad1d",
            "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
            "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
            "CircularPad1d", "CircularPad2d", "CircularPad3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
            "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "Upsample", "UpsamplingNearest2d",
            "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle"]

__all__ += ["ParameterList", "ParameterDict", "Dropout1d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
            "Unflatten", "Bilinear", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "LocalResponseNorm", "RMSNorm", "EmbeddingBag", "Transformer", "TransformerEncoder",
            "TransformerEncoderLayer", "TransformerDecoder", "TransformerDecoderLayer"]

__getattr__, __dir__ = on_first_use(__name__, {"parallel": "parallel", "modules": "modules"}, globals())
