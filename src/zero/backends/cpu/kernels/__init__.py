"""CPU kernels (the book's ``tensor_ops_cpu.cc``).

A kernel takes NumPy arrays (strided views of tensor storage, or Python
scalars) and writes its result into the ``out`` array it is given. It knows
nothing of tensors or autograd. Every device's kernels module offers the same
names with the same signatures, which is all an op relies on.

NumPy does the vectorised work (and BLAS the matrix products); loops that
NumPy would run as several passes over memory are compiled with Numba
(``_jit``). Where to find a kernel:

    array_kernels   (zero.backends.array_kernels) the kernels that are one NumPy call or
                    two, shared with CUDA: arithmetic, comparisons, where, clamp, unary
                    math, reductions, indexing, gather/scatter
    conv            conv2d forward and backward: im2col (Numba), BLAS GEMMs, col2im
    elementwise     copy; where, relu and its backward on contiguous floats; sigmoid,
                    SiLU, both GELUs (Numba loops); add, sub, mul, div on both cores
                    when large
    indexing        index_select (NumPy's take, unbuffered), index_add_along (a Numba
                    loop for embeddings)
    linalg          matmul through BLAS
    nn              softmax, cross-entropy, NLL, layer norm, dropout (Numba loops)
    fused           linear, FFN, linear + cross-entropy, flash attention
    optim           AdamW and SGD steps (Numba loops)
    pooling         max and average pooling, forward and backward (Numba loops)
"""
import numpy as np

from ...array_kernels import array_kernels

globals().update(array_kernels(np))  # first: a module below may replace one by a faster one (where, relu, index_select)
del np, array_kernels

from .conv import *  # noqa: E402
from .elementwise import *  # noqa: E402
from .fused import *  # noqa: E402
from .indexing import *  # noqa: E402
from .linalg import *  # noqa: E402
from .nn import *  # noqa: E402
from .optim import *  # noqa: E402
from .pooling import *  # noqa: E402
