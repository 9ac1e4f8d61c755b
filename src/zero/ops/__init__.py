"""The operator layer (the book's ``TensorOp`` subclasses): one class per op, and beside it,
in the same file, its functional form (``def exp(input): return Exp.apply(input)``).

The book's ops:

    elementwise    + - * / ** (broadcast, promoted), neg, abs, exp, log, sqrt, sin, cos, tanh,
                   the activations sigmoid, relu, silu, gelu, and where
    comparison     == != < <= > >=, logical and/or/xor/not, bitwise & | ^ ~
    selection      clamp, masked_fill
    reduction      sum, mean, var, std, max, min, amax, argmax, logsumexp, all, any
    softmax        softmax, log_softmax
    matmul         1-D, 2-D and batched products (the book's stride-aware MatMul)
    views          view, reshape, permute, transpose, expand, squeeze, flatten, .T
    indexing       t[key] (basic: a view; advanced: a copy) and t[key] = value
    conversion     contiguous copies, dtype casts, device transfers (the book's DeviceTransfer)
    joining        cat, stack, split, gather, index_select, embedding, tril/triu
    inplace        add_, mul_, copy_, fill_, normal_ ... (for optimizers and initialisers)
    loss           cross-entropy (log-softmax + NLL in one op), NLL, MSE
    normalization  layer norm (one op, one pass each way)
    dropout        dropout with a mask regenerated from a seed
    attention      scaled dot-product attention (composition; causal goes to fused/)
    fused/         the book's fused ops: linear + bias, FFN, linear + cross-entropy,
                   flash-style causal attention
    broadcast, arguments, index_checks   what ops share: sum_to_shape, argument checks

    tensor_methods the table that makes these functions Tensor's methods (x.exp(), a + b,
                   x.log1p_()), attached to Tensor here

``extra/`` holds PyTorch's functions beyond the book (math functions, linear algebra,
statistics, scatters, sorting, searching, convolution, pooling ...), built the same way.
Where an op starts in a new file, it is one file: its class and its functional form there,
a line in ``tensor_methods`` if it is a method, and a line in ``zero/__init__.py`` if it is
a ``zero.`` function.
"""
from ..tensors.tensor import Tensor
from . import tensor_methods

tensor_methods.attach_to(Tensor)
