"""PyTorch's functions beyond the book's ops, built as the book's are (one class per op, its
functional form beside it), on top of them:

    unary_math     log1p ... erf/erfinv, the inverse and hyperbolic trigonometry, rounding,
                   isnan ... signbit, nan_to_num
    binary_math    atan2, hypot, logaddexp, xlogy, fmax/fmin, floor_divide/remainder/fmod,
                   div's rounding modes, lerp, addcmul, addcdiv
    closeness      isclose, allclose
    products       prod, cumprod (exact gradients through zeros)
    statistics     median, aminmax, nansum, nanmean, count_nonzero, std_mean, var_mean
    norms          vector/matrix norms (zero.linalg), norm, dist
    linalg         mm, bmm, mv, dot, outer, addmm, addmv, baddbmm, diag, diagonal, trace,
                   tensordot, kron
    einsum         einsum (as permutes, reshapes and one batched product)
    sorting        sort, argsort, topk, cumsum
    sampling       multinomial
    rearrange      flip, roll, repeat, pad
    scatter        scatter, scatter_add, index_add/copy/fill, take, take_along_dim,
                   masked_select, nonzero
    shaping        narrow, tile, movedim, the stacks and splits, meshgrid, rot90, block_diag
    searching      unique, bincount, searchsorted, bucketize, histc, tril/triu_indices
    convolution    conv1d, conv2d (im2col and a product)
    pooling        max, average and adaptive average pooling
"""
