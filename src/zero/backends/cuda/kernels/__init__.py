"""CUDA kernels (the book's ``tensor_ops_gpu.cu``).

The same names and signatures as the CPU kernels (``zero.backends.cpu.kernels``),
so an op never asks which device it runs on. A kernel takes CuPy arrays (strided
views of device storage, or Python scalars) and writes the ``out`` array it is
given; it launches work on the current stream and returns without waiting for
the GPU: the host waits only where it reads a value (``item()``, ``.cpu()``).

    elementwise   CuPy ufuncs (broadcasting, strides); GELU in Triton
    reduction     CuPy reductions
    indexing      CuPy advanced indexing, atomic scatter-adds
    linalg        cuBLAS GEMMs, strided views as transpose flags
    nn            softmax, cross-entropy, layer norm, dropout in Triton; NLL in CuPy
    fused         linear, GELU FFN, linear + cross-entropy (cuBLAS + Triton), flash attention (Triton)
    optim         AdamW and SGD steps in Triton
"""
from .elementwise import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import matmul  # noqa: F401
from .optim import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .fused import *  # noqa: F401,F403
