"""Zero: a small deep-learning training framework, readable next to its book.

    import zero
    x = zero.tensor([[1.0, 2.0]], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([[2., 4.]])

The layers, each importing only from those below it:

    cli                         zero mnist, zero gpt ...
    models                      MLP, GPT
    nn, optim, data,            modules, optimizers and schedules, datasets and files,
    distributed                 process groups, DistributedDataParallel, ZeRO-1
    ops                         one class per op, and the Tensor methods that apply them
    autograd                    Op, the backward engine, gradcheck
    tensors                     Tensor, TensorMeta, Storage, creation
    backends                    Device; per device an allocator and kernels
    errors, dtypes, random, grad_mode, files, hooks, lazy_modules

``zero.data``, ``zero.distributed``, ``zero.profiler``, ``zero.utils`` and ``zero.save`` /
``zero.load`` are imported at their first use (``zero.data.DataLoader`` works as it reads;
so does ``import zero.data``): a program that never loads a dataset, joins a process group
or saves a checkpoint does not pay for multiprocessing, sockets and file formats at
``import zero``.
"""
from __future__ import annotations

from . import accelerator, amp, autograd, cpu, cuda, errors, nn, optim
from . import linalg
from .backends.cuda.matmul import get_float32_matmul_precision, set_float32_matmul_precision
from .backends.device import Device
from .dtypes import (DType, bfloat16, float16, float32, float64, get_default_dtype, int32, int64, promote_types,
                     result_type, set_default_dtype, uint8)
from .dtypes import finfo, iinfo
from .dtypes import bool_ as bool
from .lazy_modules import on_first_use
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .ops.functions import (abs, add, all, allclose, amax, amin, any, argmax, argmin, argsort, bitwise_and,
                            bitwise_not, bitwise_or, bitwise_xor, broadcast_to, clamp, clip, clone, cos, cumsum, div,
                            einsum, eq, exp, flatten, flip, ge, gt, is_tensor, isclose, le, log, log_softmax,
                            logical_and, logical_not, logical_or, logical_xor, logsumexp, lt, masked_fill, max,
                            maximum, mean, min, minimum, mul, multinomial, ne, neg, nelement, numel, permute, pow,
                            relu, reshape, roll, rsqrt, sigmoid, sign, sin, softmax, sort, sqrt, square, squeeze, std,
                            sub, sum, t, tanh, topk, transpose, unsqueeze, var, where)
# PyTorch's common math functions (branch names)
from .ops.math_functions import (absolute, acos, acosh, addcdiv, addcmul, arccos, arccosh, arcsin, arcsinh, arctan,
                                 arctan2, arctanh, asin, asinh, atan, atan2, atanh, ceil, clamp_max, clamp_min, cosh,
                                 divide, erf, erfc, erfinv, exp2, expm1, fix, floor, floor_divide, fmax, fmin, fmod,
                                 frac, hypot, isfinite, isinf, isnan, isneginf, isposinf, lerp, log1p, log2, log10,
                                 logaddexp, multiply, nan_to_num, negative, positive, reciprocal, remainder, round,
                                 sgn, signbit, sinh, subtract, tan, true_divide, trunc, xlogy)
from .ops.reduction_functions import (aminmax, count_nonzero, cumprod, dist, median, nanmean, nansum, norm, prod,
                                      std_mean, var_mean)
from .ops.linalg_functions import (addmm, addmv, baddbmm, bmm, diag, diag_embed, diagonal, dot, ger, kron, mm, mv,
                                   outer, tensordot, trace, vdot)
from .ops.indexing_functions import (argwhere, atleast_1d, atleast_2d, atleast_3d, bincount, block_diag, bucketize,
                                     cartesian_prod, column_stack, concat, concatenate, dsplit, dstack, fliplr, flipud,
                                     histc, hsplit, hstack, index_add, index_copy, index_fill, masked_select, meshgrid,
                                     moveaxis, movedim, narrow, nonzero, rot90, row_stack, scatter, scatter_add,
                                     searchsorted, swapaxes, swapdims, take, take_along_dim, tensor_split, tile,
                                     tril_indices, triu_indices, unflatten, unique, vsplit, vstack)
from .ops.joining import cat, chunk, gather, index_select, split, stack, tril, triu, unbind
from .ops.matmul import matmul
from .backends.cpu.threads import get_num_threads, set_num_threads
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .tensors.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones,
                               ones_like, rand, rand_like, randint, randn, randn_like, randperm, tensor, zeros,
                               zeros_like)
from .tensors.printing import get_printoptions, set_printoptions
from .tensors.tensor import Tensor

__version__ = "0.1.0"

# PyTorch's aliases
float = float32
double = float64
long = int64
half = float16
dtype = DType
device = Device

# Imported at their first use (lazy_modules.py)
__getattr__, __dir__ = on_first_use(__name__, {
    "data": "data", "distributed": "distributed", "profiler": "profiler", "utils": "utils",
    "save": "serialization:save", "load": "serialization:load",
}, globals())
