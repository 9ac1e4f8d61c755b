"""The operator layer (the book's ``TensorOp`` subclasses, one class per op).

    elementwise    + - * / ** and math functions, comparisons, where, clamp
    reduction      sum, mean, var, std, max, min, argmax, logsumexp
    matmul         1-D, 2-D and batched products
    views          view, reshape, permute, expand, squeeze, flatten
    indexing       t[key] (basic: a view; advanced: a copy) and t[key] = value
    conversion     contiguous copies, dtype casts, device transfers
    joining        cat, stack, split, gather, index_select, embedding, tril/triu
    inplace        add_, mul_, copy_, fill_, normal_ ... for optimizers
    softmax        softmax, log_softmax
    loss           cross-entropy (log-softmax + NLL in one op), NLL, MSE
    normalization  layer norm (one op, one pass each way)
    dropout        dropout with a mask regenerated from a seed
    attention      scaled dot-product attention (composition; causal goes to fused/)
    fused          one-op versions of hot compositions: linear, FFN, linear + cross-entropy,
                   flash-style causal attention
    tensor_methods the Tensor methods that apply these ops (a + b, x.sum()), attached here

PyTorch's common functions, beside those (each with its *_methods mixin and *_functions forms):

    unary_math     log1p ... erf/erfinv, the inverse and hyperbolic trigonometry, rounding,
                   isnan ... signbit, nan_to_num
    binary_math    atan2, hypot, logaddexp, xlogy, fmax/fmin, floor_divide/remainder/fmod,
                   div's rounding modes, lerp, addcmul, addcdiv
    products       prod, cumprod (exact gradients through zeros)
    statistics     median, aminmax, nansum, nanmean, count_nonzero, std_mean, var_mean
    norms          vector/matrix norms (zero.linalg), norm, dist
    linalg         mm, bmm, mv, dot, outer, addmm, addmv, baddbmm, diag, diagonal, trace, tensordot, kron
    scatter        scatter, scatter_add, index_add/copy/fill, take, take_along_dim, masked_select, nonzero
    shaping        narrow, tile, movedim, the stacks and splits, meshgrid, rot90, block_diag
    searching      unique, bincount, searchsorted, bucketize, histc, tril/triu_indices
"""
from ..tensors.tensor import Tensor
from . import tensor_methods

tensor_methods.attach_to(Tensor)
