"""``zero.sparse.as_sparse_gradcheck(gradcheck)``: a gradcheck that takes sparse inputs and
outputs. Finite differences perturb numbers, so each sparse input that requires grad is checked
through its values (its places held fixed), and each sparse output through its dense form."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..tensors.tensor import Tensor
from .tensor import SparseTensor


def as_sparse_gradcheck(gradcheck: Callable[..., bool]) -> Callable[..., bool]:
    """``gradcheck`` (zero.autograd.gradcheck) made to accept sparse COO inputs and outputs."""

    def sparse_gradcheck(fn: Callable[..., Any], inputs: Tensor | Sequence[Any], **kwargs: Any) -> bool:
        given = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
        # a sparse input that requires grad: its values become a leaf of their own
        flat = [x._sparse_values.detach().requires_grad_(True) if isinstance(x, SparseTensor) and x.requires_grad
                else x for x in given]

        def dense_fn(*arguments: Any) -> Any:
            rebuilt = [SparseTensor._make(x._sparse_indices, value, x.shape, x._coalesced)
                       if isinstance(x, SparseTensor) and x.requires_grad else value
                       for x, value in zip(given, arguments)]
            result = fn(*rebuilt)
            if isinstance(result, (tuple, list)):
                return tuple(r.to_dense() if isinstance(r, SparseTensor) else r for r in result)
            return result.to_dense() if isinstance(result, SparseTensor) else result

        return gradcheck(dense_fn, flat, **kwargs)

    sparse_gradcheck.__name__ = sparse_gradcheck.__qualname__ = f"sparse_{getattr(gradcheck, '__name__', 'gradcheck')}"
    return sparse_gradcheck
