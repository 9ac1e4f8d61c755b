"""CUDA kernels (the book's ``tensor_ops_gpu.cu``).

The same names and signatures as the CPU kernels (``zero.backends.cpu.kernels``),
so an op never asks which device it runs on. A kernel takes CuPy arrays (strided
views of device storage, or Python scalars) and writes the ``out`` array it is
given; it launches work on the current stream and returns without waiting for
the GPU: the host waits only where it reads a value (``item()``, ``.cpu()``).

    array_kernels (zero.backends.array_kernels) the kernels that are one CuPy call or two,
                  shared with the CPU: ufuncs (broadcasting, strides), where, clamp,
                  reductions, advanced indexing (bounds checked), gather/scatter, NLL
    conv          conv2d forward and backward: Triton im2col/col2im, cuBLAS GEMMs
    elementwise   copy (uploads host arrays); sigmoid, SiLU (CuPy kernels), GELU (Triton)
    indexing      index_add_along (atomic scatter-adds)
    linalg        cuBLAS GEMMs, strided views as transpose flags
    nn            softmax, cross-entropy, layer norm, dropout in Triton
    fused         linear, GELU FFN, linear + cross-entropy (cuBLAS + Triton), flash attention (Triton)
    optim         AdamW and SGD steps, gradient norms and scaling (clip_grad_norm_) in Triton
    pooling       max and average pooling, forward and backward, in Triton
    reduction     sums over leading axes (bias gradients) in Triton
"""
from ..runtime import cupy
from ._arrays import shared_kernels
from .conv import *
from .elementwise import *
from .fused import *
from .indexing import *
from .linalg import *
from .nn import *
from .optim import *
from .pooling import *
from .reduction import *

# The shared CuPy kernels, where this package has no kernel of the same name (sum, squared_norms
# and scale_in_place have Triton ones: reduction, optim).
globals().update({name: kernel for name, kernel in shared_kernels(cupy()).items() if name not in globals()})
del shared_kernels, cupy
