"""CPU kernels (the book's ``tensor_ops_cpu.cc``).

A kernel takes NumPy arrays (strided views of tensor storage, or Python
scalars) and writes its result into the ``out`` array it is given. It knows
nothing of tensors or autograd. Every device's kernels module offers the same
names with the same signatures, which is all an op relies on.

NumPy does the vectorised work (and BLAS the matrix products); loops that
NumPy would run as several passes over memory are compiled with Numba
(``_jit``). One file per family of kernels:
"""
from .elementwise import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .optim import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .fused import *  # noqa: F401,F403
