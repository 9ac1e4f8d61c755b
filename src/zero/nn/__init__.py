"""Neural-network building blocks: Module, Parameter, layers, initialisers, functional ops.

One file per family of layers, named as PyTorch's ``torch.nn.modules`` files are
(``zero.nn.modules.<name>`` answers to each PyTorch path): the book's layers (Linear,
Embedding, LayerNorm, Dropout, the activations, cross-entropy) and, beside them, the rest
of PyTorch's. ``zero.nn.parallel`` (DistributedDataParallel, and with it zero.distributed)
and ``zero.nn.modules`` are imported at their first use.
"""
from ..lazy_modules import on_first_use
from . import functional, init, utils
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, RReLU, Sigmoid, SiLU, Softmax, Softmax2d,
                         Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .attention import MultiheadAttention
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d
from .conv_transposed import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .linear import Bilinear, Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CosineSimilarity, CrossEntropyLoss,
                   GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss,
                   MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PairwiseDistance, PoissonNLLLoss, SmoothL1Loss,
                   SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from .module import Module, eval_mode
from .normalization import (GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm, LocalResponseNorm,
                            RMSNorm)
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .parameter import Parameter
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d,
                      MaxUnpool1d, MaxUnpool2d)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .upsampling import (ChannelShuffle, PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d,
                         UpsamplingNearest2d)

# every layer imported above, and the names that are not layers
__all__ = sorted(name for name, value in globals().items() if isinstance(value, type) and issubclass(value, Module))
__all__ += ["Parameter", "eval_mode", "functional", "init", "modules", "parallel", "utils"]

__getattr__, __dir__ = on_first_use(__name__, {"parallel": "parallel", "modules": "modules"}, globals())
