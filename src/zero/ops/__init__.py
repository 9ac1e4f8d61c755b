"""The operator layer (the book's ``TensorOp`` subclasses, one class per op).

    elementwise  + - * / ** and math functions, comparisons, where, clamp
    reduction    sum, mean, var, std, max, min, argmax, logsumexp
    matmul       1-D, 2-D and batched products
    views        view, reshape, permute, expand, indexing, copies and casts
    joining      cat, stack, split, gather, index_select, embedding, tril/triu
    inplace      add_, mul_, copy_, fill_, normal_ ... for optimizers
    activation   softmax, log_softmax
    loss         cross-entropy (log-softmax + NLL in one op), NLL, MSE
    normalization  layer norm (one op, one pass each way)
    dropout      dropout with a mask regenerated from a seed
    attention    scaled dot-product attention (composition; causal goes to fused/)
    fused        one-op versions of hot compositions: linear, FFN, linear + cross-entropy,
                 flash-style causal attention
"""
from ..tensor import methods as _methods
from . import elementwise, inplace, joining, matmul, reduction, views  # noqa: F401

_methods.bind_ops()
