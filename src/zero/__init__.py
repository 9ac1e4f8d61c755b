"""Zero: a small deep-learning training framework, readable next to its book.

    import zero
    x = zero.tensor([[1.0, 2.0]], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([[2., 4.]])

The layers, each importing only from those below it:

    cli                         zero mnist, zero gpt ...
    models                      MLP, GPT
    compat                      PyTorch's addresses: zero.utils.data, zero.cuda.amp, zero.backends.cudnn ...
    nn, optim, data,            modules, optimizers and schedules, datasets and files,
    distributed, amp            process groups, DistributedDataParallel, ZeRO-1; GradScaler
    ops                         one class per op and its functional form; ops/extra: PyTorch's other
                                functions; tensor_methods: the table of Tensor's methods
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

import math as _math
import sys

from . import amp, autograd, compat, cpu, cuda, errors, nn, optim
from . import linalg
from .backends.cuda.matmul import get_float32_matmul_precision, set_float32_matmul_precision
from .backends.device import Device
from .dtypes import (DType, bfloat16, float16, float32, float64, get_default_dtype, int32, int64, promote_types,
                     result_type, set_default_dtype, uint8)
from .dtypes import finfo, iinfo
from .dtypes import int8, int16, uint16, uint32, uint64
from .dtypes import int16 as short
from .ops.extra.tensor_types import CharTensor, ShortTensor
from .dtypes import bool_ as bool
from .lazy_modules import on_first_use
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
# The ops' functional forms, from the files that hold the ops (zero.add is ops/elementwise.py's add)
from .ops.comparison import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, eq, ge, greater, greater_equal, gt,
                             le, less, less_equal, logical_and, logical_not, logical_or, logical_xor, lt, ne,
                             not_equal)
from .ops.conversion import clone
from .ops.elementwise import (abs, absolute, add, cos, exp, log, maximum, minimum, mul, multiply, neg, negative,
                              positive, pow, relu, rsqrt, sgn, sigmoid, sign, sin, sqrt, square, sub, subtract, tanh,
                              true_divide, where)
from .ops.joining import cat, chunk, concat, gather, index_select, split, stack, tril, triu, unbind
from .ops.matmul import matmul
from .ops.reduction import all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, std, sum, var
from .ops.selection import clamp, clamp_max, clamp_min, clip, masked_fill
from .ops.softmax import log_softmax, softmax
from .ops.views import broadcast_to, flatten, permute, reshape, squeeze, t, transpose, unsqueeze
# PyTorch's other functions (ops/extra/)
from .ops.extra.binary_math import (addcdiv, addcmul, arctan2, atan2, div, divide, floor_divide, fmax, fmin, fmod,
                                    hypot, lerp, logaddexp, remainder, xlogy)
from .ops.extra.closeness import allclose, isclose
from .ops.extra.einsum import einsum
from .ops.extra.linalg import (addmm, addmv, baddbmm, bmm, diag, diag_embed, diagonal, dot, ger, kron, mm, mv, outer,
                               tensordot, trace, vdot)
from .ops.extra.norms import dist, norm
from .ops.extra.linalg_aliases import (cholesky, det, inverse, logdet, matrix_power, pinverse, qr, slogdet,
                                      svd)
from .ops.extra.linalg_compositions import matrix_exp
from .ops.extra.products import cumprod, prod
from .ops.extra.rearrange import flip, roll
from .ops.extra.sampling import multinomial
from .ops.extra.scatter import (argwhere, index_add, index_copy, index_fill, masked_select, nonzero, scatter,
                                scatter_add, take, take_along_dim)
from .ops.extra.searching import bincount, bucketize, histc, searchsorted, tril_indices, triu_indices, unique
from .ops.extra.shaping import (atleast_1d, atleast_2d, atleast_3d, block_diag, cartesian_prod, column_stack,
                                concatenate, dsplit, dstack, fliplr, flipud, hsplit, hstack, meshgrid, moveaxis,
                                movedim, narrow, rot90, row_stack, swapaxes, swapdims, tensor_split, tile, unflatten,
                                vsplit, vstack)
from .ops.extra.sorting import argsort, cumsum, sort, topk
from .ops.extra.statistics import aminmax, count_nonzero, median, nanmean, nansum, std_mean, var_mean
from .ops.extra.unary_math import (acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, asin, asinh, atan,
                                   atanh, ceil, cosh, erf, erfc, erfinv, exp2, expm1, fix, floor, frac, isfinite, isinf,
                                   isnan, isneginf, isposinf, log1p, log2, log10, nan_to_num, reciprocal, round,
                                   signbit, sinh, tan, trunc)
from .ops.extra.activations import (celu, celu_, hardshrink, prelu, relu_, rrelu, rrelu_, selu, selu_, threshold,
                                     threshold_)
from .ops.extra.losses import cosine_similarity, kl_div, pairwise_distance
from .backends.cpu.threads import get_num_threads, set_num_threads
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .tensors.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones,
                               ones_like, rand, rand_like, randint, randn, randn_like, randperm, tensor, zeros,
                               zeros_like)
from .tensors.printing import get_printoptions, set_printoptions
from .tensors.tensor import Tensor, is_tensor
from .tensors.tensor import number_of_elements as numel
# -- issue 37 (functions): PyTorch's functions that were missing, the legacy tensor types, Size --
from .ops.extra.scans import cummax, cummin, diff, logcumsumexp
from .ops.extra.order_statistics import kthvalue, mode, nanmedian, nanquantile, quantile
from .ops.extra.more_math import (bitwise_left_shift, bitwise_right_shift, broadcast_shapes, broadcast_tensors,
                                  cdist, combinations, copysign, cross, digamma, equal, lgamma, masked_scatter,
                                  repeat_interleave)
from .ops.extra.random_functions import bernoulli, logspace, normal, randint_like
from .ops.extra.scatter_reduce import scatter_reduce
from .ops.extra.tensor_types import (BFloat16Tensor, BoolTensor, ByteTensor, DoubleTensor, FloatTensor, HalfTensor,
                                     IntTensor, LongTensor)
from .tensors.size import Size
# Mixed precision: zero.autocast and its state functions, PyTorch's names (issue 38: autocast)
from .amp import GradScaler
from .amp.autocast import (autocast, autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
                           get_autocast_cpu_dtype, get_autocast_dtype, get_autocast_gpu_dtype,
                           is_autocast_cache_enabled, is_autocast_cpu_enabled, is_autocast_enabled,
                           set_autocast_cache_enabled, set_autocast_cpu_dtype, set_autocast_cpu_enabled,
                           set_autocast_dtype, set_autocast_enabled, set_autocast_gpu_dtype)
# -- issue 37 (math names): special functions, statistics, windows, old solvers --
from .ops.extra.special_math import (angle, deg2rad, float_power, frexp, gcd, heaviside, i0, igamma, igammac, isin,
                                     isreal, lcm, ldexp, logaddexp2, logit, mvlgamma, nextafter, polygamma, rad2deg,
                                     rsub, sinc)
from .ops.extra.random_draws import binomial, poisson
from .ops.extra.statistics_extra import (addbmm, addr, adjoint, chain_matmul, corrcoef, cov, cumulative_trapezoid,
                                         diagflat, frobenius_norm, gradient, histogram, histogramdd, inner, msort,
                                         norm_except_dim, nuclear_norm, renorm, trapezoid, trapz, unique_consecutive,
                                         unravel_index, vander)
from .ops.extra.windows import bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window
from .ops.extra.linalg_solvers import (cholesky_inverse, cholesky_solve, geqrf, lu, lu_solve, lu_unpack, orgqr,
                                       ormqr, triangular_solve)
from .ops.extra.linalg import addmv as _addmv
from .ops.inplace import in_place as _in_place
# sparse COO tensors (issue 37); mm, matmul and addmm also take a sparse operand (they replace the dense ones)
from . import sparse
from .sparse import Layout as layout
from .sparse import hspmm, smm, sparse_coo, sparse_coo_tensor, spmm, strided

# -- issue 37 (torchnames): the top-level in-place forms, view copies, nn ops at torch's level, settings --
from .ops.inplace_functions import (abs_, acos_, acosh_, arccos_, arccosh_, arcsin_, arcsinh_,
                                    arctan_, arctanh_, asin_, asinh_, atan_, atanh_, ceil_, clamp_, clamp_max_,
                                    clamp_min_, clip_, cos_, cosh_, detach, detach_, erf_, erfc_, exp2_, exp_,
                                    expm1_, fill, fill_, fix_, floor_, frac_, log10_, log1p_, log2_, log_,
                                    nan_to_num_, neg_, negative_, reciprocal_, round_, rsqrt_, sigmoid_, sin_,
                                    sinh_, sqrt_, square_, tan_, tanh_, trunc_, xlogy_, zero_)
from .ops.inplace_functions import deg2rad_, gcd_, i0_, lcm_, ldexp_, logit_, rad2deg_, sinc_

from .nn.torch_level import (adaptive_avg_pool1d, adaptive_max_pool1d, alpha_dropout, alpha_dropout_, avg_pool1d,
                             batch_norm, bilinear, channel_shuffle, constant_pad_nd, conv1d, conv2d, conv3d,
                             conv_transpose1d, conv_transpose2d, conv_transpose3d, convolution, dropout, dropout_,
                             embedding, feature_alpha_dropout, feature_alpha_dropout_, feature_dropout,
                             feature_dropout_, group_norm, instance_norm, layer_norm, max_pool1d,
                             max_pool1d_with_indices, max_pool2d, max_pool3d, native_channel_shuffle, pdist,
                             pixel_shuffle, pixel_unshuffle, rms_norm)

# (torch's top-level losses take the reduction as an int and reduce nothing by default, unlike F's)
from .nn.torch_level import (binary_cross_entropy_with_logits, cosine_embedding_loss, hinge_embedding_loss,
                             margin_ranking_loss, poisson_nll_loss, triplet_margin_loss)
from .nn.torch_level import native_batch_norm, native_dropout, native_group_norm, native_layer_norm
from .nn.torch_level import conv_tbc, embedding_renorm_, gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell
from .nn.torch_level import gru, lstm, rnn_relu, rnn_tanh
from .ops.tensor_extras import conj_physical_, cudnn_is_acceptable, is_distributed, nonzero_static
from .ops.extra.tensor_types import set_default_tensor_type
from .symbolic import sym_float, sym_int, sym_ite, sym_max, sym_min, sym_not, sym_sqrt, sym_sum
from .batching import vmap
from .settings import default_generator, has_lapack, is_inference_mode_enabled, is_vulkan_available, set_flush_denormal

from .ops.view_copies import (alias_copy, can_cast, conj, conj_physical, detach_copy, diagonal_copy, expand_copy,
                              get_device, is_complex, is_conj, is_floating_point, is_neg, is_nonzero, is_same_size,
                              is_signed, is_storage, narrow_copy, permute_copy, ravel, resolve_conj, resolve_neg,
                              select, select_copy, slice_copy, split_copy, split_with_sizes, split_with_sizes_copy,
                              squeeze_copy, t_copy, transpose_copy, typename, unbind_copy, unfold_copy, unsafe_chunk,
                              unsafe_split, unsafe_split_with_sizes, unsqueeze_copy, view_copy)
from .tensors.more_creation import asarray, empty_permuted, empty_strided, from_file, frombuffer, range, scalar_tensor

from .ops.extra.strided_scatters import (as_strided, as_strided_copy, as_strided_scatter, diagonal_scatter, index_put,
                                        index_reduce, put, select_scatter, slice_scatter)
from .ops.inplace_twins import as_strided_, resize_as_
from .ops.inplace_functions import index_put_

__version__ = "0.1.0"

# PyTorch's aliases
nelement = numel
float = float32
double = float64
long = int64
half = float16
dtype = DType
device = Device

int = int32
# mm, matmul and addmm take a sparse operand too (zero.sparse's forms call the dense ones otherwise)
mm, matmul, addmm = spmm, sparse.matmul, sparse.addmm  # noqa: F811
addmv_ = _in_place(_addmv)
# PyTorch's constants
e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None

# PyTorch's addresses for the modules in zero/compat/ (zero.accelerator, zero.cuda.amp, zero.utils ...)
compat.install(sys.modules[__name__])

# Imported at their first use (lazy_modules.py)
__getattr__, __dir__ = on_first_use(__name__, {
    "data": "data", "distributed": "distributed", "profiler": "profiler", "utils": "utils",
    "save": "serialization:save", "load": "serialization:load",
    "onnx": "onnx",
    "serialization": "serialization",
}, globals())

